"""Training for real: minibatches from a DataLoader, a held-out set, and saved weights.

The book's other networks fit 64 random targets, which teaches the mechanics but not
whether anything was learned. Here the targets come from a fixed *teacher* network
plus noise, so that a model can learn a rule that holds beyond its training examples,
and a held-out set measures whether it did. ``python -m tensorbook.training`` trains
the student and prints its training and held-out losses after every epoch.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from tensorbook import cli
from tensorbook.problem import Sizes

__all__ = [
    "TEACHER_SIZES",
    "Split",
    "evaluate",
    "loader",
    "main",
    "make_student",
    "teacher_data",
    "train_epochs",
]

TEACHER_SIZES = Sizes(n=1024, d_in=100, h=64, d_out=10)
"""The data's sizes: ``n`` examples in all, of which a quarter are held out."""


@dataclass(frozen=True)
class Split:
    """Training and held-out examples, as datasets of ``(x, y)`` pairs."""

    train: TensorDataset
    held_out: TensorDataset


def teacher_data(
    sizes: Sizes = TEACHER_SIZES, *, noise: float = 0.1, seed: int = 0, held_out: float = 0.25
) -> Split:
    """Draw inputs, label them with a random two-layer teacher plus noise, and split them.

    Raises
    ------
    ValueError
        If ``held_out`` leaves no example on one side.

    Examples
    --------
    >>> split = teacher_data(Sizes(n=8, d_in=3, h=4, d_out=2), held_out=0.25)
    >>> len(split.train), len(split.held_out)
    (6, 2)
    >>> x, y = split.train[0]
    >>> tuple(x.shape), tuple(y.shape), x.dtype
    ((3,), (2,), torch.float32)
    """
    test = round(sizes.n * held_out)
    if not 0 < test < sizes.n:
        msg = f"held_out={held_out} leaves no example on one side of {sizes.n}"
        raise ValueError(msg)
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(sizes.n, sizes.d_in, generator=generator)
    w1 = torch.randn(sizes.d_in, sizes.h, generator=generator) / sizes.d_in**0.5
    w2 = torch.randn(sizes.h, sizes.d_out, generator=generator) / sizes.h**0.5
    y = torch.relu(x @ w1) @ w2 + noise * torch.randn(sizes.n, sizes.d_out, generator=generator)
    return Split(TensorDataset(x[test:], y[test:]), TensorDataset(x[:test], y[:test]))


def make_student(sizes: Sizes = TEACHER_SIZES, *, dropout: float = 0.1, seed: int = 0) -> nn.Module:
    """A two-layer network with biases, torch's default initialisation, and dropout.

    Examples
    --------
    >>> make_student(Sizes(n=8, d_in=3, h=4, d_out=2))
    Sequential(
      (0): Linear(in_features=3, out_features=4, bias=True)
      (1): ReLU()
      (2): Dropout(p=0.1, inplace=False)
      (3): Linear(in_features=4, out_features=2, bias=True)
    )
    """
    with torch.random.fork_rng(devices=[]):  # the weights depend on seed alone
        torch.manual_seed(seed)
        return nn.Sequential(
            nn.Linear(sizes.d_in, sizes.h),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(sizes.h, sizes.d_out),
        )


def loader(
    dataset: TensorDataset, batch_size: int = 32, *, seed: int = 0
) -> DataLoader[tuple[torch.Tensor, ...]]:
    """Batches of ``batch_size`` examples, shuffled anew each epoch by a seeded generator.

    Examples
    --------
    >>> data = TensorDataset(torch.arange(5.0).unsqueeze(1), torch.zeros(5, 1))
    >>> order = [x.flatten().tolist() for x, _ in loader(data, batch_size=2)]
    >>> [len(batch) for batch in order], sorted(sum(order, []))
    ([2, 2, 1], [0.0, 1.0, 2.0, 3.0, 4.0])
    >>> order == [x.flatten().tolist() for x, _ in loader(data, batch_size=2)]  # same seed
    True
    """
    return DataLoader(
        dataset, batch_size=batch_size, shuffle=True, generator=torch.Generator().manual_seed(seed)
    )


def evaluate(model: nn.Module, dataset: TensorDataset, device: torch.device) -> float:
    """The mean squared error on ``dataset``, in evaluation mode and without autograd.

    The model's mode is restored afterwards, so this can be called in the
    middle of training.

    Examples
    --------
    >>> model = nn.Linear(1, 1, bias=False).to(device)
    >>> _ = nn.init.ones_(model.weight)
    >>> data = TensorDataset(torch.ones(4, 1), torch.full((4, 1), 3.0))
    >>> evaluate(model, data, device), model.training
    (4.0, True)
    """
    was_training = model.training
    model.eval()
    x, y = (t.to(device) for t in dataset.tensors)
    with torch.inference_mode():
        loss = nn.functional.mse_loss(model(x), y).item()
    model.train(was_training)
    return loss


def train_epochs(
    model: nn.Module,
    batches: DataLoader[tuple[torch.Tensor, ...]],
    optimizer: torch.optim.Optimizer,
    device: torch.device,
    *,
    epochs: int,
    after_epoch: Callable[[int, float], object] | None = None,
) -> list[float]:
    """Train for ``epochs`` passes over ``batches``; return each epoch's mean training loss.

    ``after_epoch(epoch, loss)`` runs after every epoch (to evaluate or print).

    Examples
    --------
    >>> split = teacher_data(Sizes(n=64, d_in=4, h=8, d_out=1))
    >>> model = make_student(Sizes(n=64, d_in=4, h=8, d_out=1)).to(device)
    >>> optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    >>> losses = train_epochs(model, loader(split.train), optimizer, device, epochs=20)
    >>> len(losses), losses[-1] < losses[0]
    (20, True)
    """
    model.train()
    losses = []
    for epoch in range(epochs):
        total, count = torch.zeros((), device=device), 0
        for batch_x, batch_y in batches:
            x, y = batch_x.to(device), batch_y.to(device)
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.detach() * len(x)
            count += len(x)
        losses.append((total / count).item())
        if after_epoch is not None:
            after_epoch(epoch, losses[-1])
    return losses


def main(argv: Sequence[str] | None = None) -> int:
    """Train the student on the teacher's data with Adam; print both losses every epoch."""
    args = cli.parse_args(argv, module=__spec__.name, description=__doc__, steps=False, dtype=False)
    split = teacher_data(seed=args.seed)
    model = make_student(seed=args.seed).to(args.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def report(epoch: int, loss: float) -> None:
        held_out = evaluate(model, split.held_out, args.device)
        print(f"epoch {epoch:>2}  training loss {loss:.4f}  held-out loss {held_out:.4f}")

    train_epochs(
        model, loader(split.train, seed=args.seed), optimizer, args.device, epochs=20,
        after_epoch=report,
    )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
