"""Classification: three interleaved spirals, logits, cross-entropy and accuracy.

The data are points in the plane, each labelled with the arm of a spiral it lies on,
drawn by a seeded generator, so they need no download and their decision boundary can
be drawn. ``python -m tensorbook.classification`` trains a small network on them and
prints its training loss and its validation loss and accuracy after every epoch, then
the test accuracy of the weights it keeps.
"""

from __future__ import annotations

import argparse
import copy
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from tensorbook import cli

__all__ = [
    "CLASSES",
    "History",
    "Points",
    "Score",
    "Splits",
    "Standardize",
    "batches",
    "evaluate",
    "fit",
    "main",
    "make_classifier",
    "predict",
    "spiral_splits",
    "spirals",
    "train_epoch",
]

CLASSES = 3
"""The number of spiral arms, and so of classes."""
LossFunction = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
"""A batch's mean loss from its logits and its labels."""


def spirals(
    n: int, *, classes: int = CLASSES, noise: float = 0.5, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` points on ``classes`` interleaved spiral arms, and the arm of each.

    Each arm winds outwards from near the origin through nine tenths of a turn;
    ``noise`` shifts every angle by a normal draw times ``noise``, so that the arms
    overlap, most near the centre. The points are float32 on
    the CPU and the labels int64 (``0`` to ``classes - 1``), in arm order.

    Raises
    ------
    ValueError
        If ``n`` is not a positive multiple of ``classes``.

    Examples
    --------
    >>> points, labels = spirals(6, generator=torch.Generator().manual_seed(0))
    >>> tuple(points.shape), points.dtype, labels.tolist()
    ((6, 2), torch.float32, [0, 0, 1, 1, 2, 2])
    >>> spirals(7, generator=torch.Generator())
    Traceback (most recent call last):
    ...
    ValueError: n=7 points cannot be shared equally among 3 classes: give a multiple of 3
    """
    if n < 1 or n % classes:
        msg = (
            f"n={n} points cannot be shared equally among {classes} classes: "
            f"give a multiple of {classes}"
        )
        raise ValueError(msg)
    labels = torch.arange(classes).repeat_interleave(n // classes)
    radius = torch.rand(n, generator=generator) * 0.9 + 0.1
    angle = (
        2 * math.pi * (labels / classes + radius)
        + noise * torch.randn(n, generator=generator)
    )  # fmt: skip
    points = torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=1)
    return points, labels


class Standardize:
    """Shift and scale each feature with a mean and a standard deviation fixed in advance.

    Examples
    --------
    >>> scale = Standardize.fit(torch.tensor([[0.0, 10.0], [2.0, 30.0]]))
    >>> scale.mean.tolist(), scale.std.tolist()
    ([1.0, 20.0], [1.0, 10.0])
    >>> scale(torch.tensor([3.0, 20.0])).tolist()
    [2.0, 0.0]
    """

    def __init__(self, mean: torch.Tensor, std: torch.Tensor) -> None:
        self.mean = mean
        self.std = std

    @classmethod
    def fit(cls, points: torch.Tensor) -> Standardize:
        """Take each column's mean and standard deviation from ``points`` (the population's)."""
        return cls(points.mean(dim=0), points.std(dim=0, correction=0))

    def __call__(self, point: torch.Tensor) -> torch.Tensor:
        """The point standardized: each feature minus its mean, over its deviation."""
        return (point - self.mean) / self.std


class Points(Dataset[tuple[torch.Tensor, torch.Tensor]]):
    """Points and their labels, as a dataset of ``(point, label)`` pairs.

    ``transform``, when given, is applied to each point as it is read.

    Raises
    ------
    ValueError
        If there is not one label per point.

    Examples
    --------
    >>> data = Points(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([0, 1]),
    ...               transform=lambda p: 2 * p)
    >>> len(data), data[1]
    (2, (tensor([6., 8.]), tensor(1)))
    >>> Points(torch.zeros(3, 2), torch.zeros(2))
    Traceback (most recent call last):
    ...
    ValueError: 3 points but 2 labels: give one label per point
    """

    def __init__(
        self,
        points: torch.Tensor,
        labels: torch.Tensor,
        transform: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ) -> None:
        if len(points) != len(labels):
            msg = f"{len(points)} points but {len(labels)} labels: give one label per point"
            raise ValueError(msg)
        self.points = points
        self.labels = labels
        self.transform = transform

    def __len__(self) -> int:
        """The number of examples."""
        return len(self.labels)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The example at ``index``: its point, transformed, and its label."""
        point = self.points[index]
        if self.transform is not None:
            point = self.transform(point)
        return point, self.labels[index]


@dataclass(frozen=True)
class Splits:
    """Training, validation and test examples, standardized with the training statistics.

    ``scale`` holds the training split's mean and deviation, which every split uses.
    """

    train: Points
    validation: Points
    test: Points
    scale: Standardize


def spiral_splits(
    *, train: int = 150, validation: int = 150, test: int = 600, noise: float = 0.5, seed: int = 0
) -> Splits:
    """Draw spiral points and deal them into three shuffled splits, standardized alike.

    Every split is standardized with the training split's mean and deviation.

    Examples
    --------
    >>> splits = spiral_splits(train=6, validation=3, test=3)
    >>> len(splits.train), len(splits.validation), len(splits.test)
    (6, 3, 3)
    >>> splits.train.transform is splits.test.transform is splits.scale
    True
    """
    generator = torch.Generator().manual_seed(seed)
    points, labels = spirals(train + validation + test, noise=noise, generator=generator)
    order = torch.randperm(len(labels), generator=generator)
    points, labels = points[order], labels[order]
    scale = Standardize.fit(points[:train])
    ends = (train, train + validation)
    return Splits(
        Points(points[: ends[0]], labels[: ends[0]], scale),
        Points(points[ends[0] : ends[1]], labels[ends[0] : ends[1]], scale),
        Points(points[ends[1] :], labels[ends[1] :], scale),
        scale,
    )


def batches(
    dataset: Dataset[tuple[torch.Tensor, torch.Tensor]], batch_size: int = 16, *, seed: int = 0
) -> DataLoader[tuple[torch.Tensor, torch.Tensor]]:
    """Batches of ``batch_size`` examples, in a new order every epoch, from a seeded generator.

    Examples
    --------
    >>> data = Points(torch.arange(10.0).reshape(5, 2), torch.arange(5))
    >>> loader = batches(data, 2)
    >>> first, second = ([labels.tolist() for _, labels in loader] for _ in range(2))
    >>> [len(batch) for batch in first], sorted(sum(first, [])), first != second
    ([2, 2, 1], [0, 1, 2, 3, 4], True)
    """
    return DataLoader(
        dataset, batch_size=batch_size, shuffle=True, generator=torch.Generator().manual_seed(seed)
    )


def make_classifier(hidden: int = 64, *, classes: int = CLASSES, seed: int = 0) -> nn.Module:
    """Two hidden ReLU layers from a point to one logit per class, with torch's default start.

    Examples
    --------
    >>> make_classifier(8)
    Sequential(
      (0): Linear(in_features=2, out_features=8, bias=True)
      (1): ReLU()
      (2): Linear(in_features=8, out_features=8, bias=True)
      (3): ReLU()
      (4): Linear(in_features=8, out_features=3, bias=True)
    )
    """
    with torch.random.fork_rng(devices=[]):  # the weights depend on seed alone
        torch.manual_seed(seed)
        return nn.Sequential(
            nn.Linear(2, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, classes),
        )


@dataclass(frozen=True)
class Score:
    """A model's mean cross-entropy loss and its accuracy (a fraction) on a dataset."""

    loss: float
    accuracy: float


def evaluate(
    model: nn.Module, dataset: Dataset[tuple[torch.Tensor, torch.Tensor]], device: torch.device
) -> Score:
    """Loss and accuracy on the whole of ``dataset``, in evaluation mode, without autograd.

    The model's mode is restored afterwards.

    Examples
    --------
    >>> model = nn.Linear(2, 3).to(device)
    >>> data = Points(torch.zeros(4, 2), torch.tensor([0, 1, 2, 0]))
    >>> _ = nn.init.zeros_(model.weight), nn.init.zeros_(model.bias)
    >>> score = evaluate(model, data, device)  # equal logits: a third for each class
    >>> round(score.loss, 4) == round(math.log(3), 4), score.accuracy
    (True, 0.5)
    """
    was_training = model.training
    model.eval()
    whole = DataLoader(dataset, batch_size=len(dataset))  # type: ignore[arg-type]
    points, labels = next(iter(whole))
    points, labels = points.to(device), labels.to(device)
    with torch.inference_mode():
        logits = model(points)
        loss = nn.functional.cross_entropy(logits, labels).item()
        accuracy = (logits.argmax(dim=1) == labels).float().mean().item()
    model.train(was_training)
    return Score(loss, accuracy)


def predict(
    model: nn.Module, points: torch.Tensor, *, scale: Standardize, device: torch.device
) -> torch.Tensor:
    """The class ``model`` predicts for each of the raw ``points``, on the CPU.

    The points are standardized with ``scale`` first, as the model's training data were.

    Examples
    --------
    >>> model = nn.Linear(2, 3).to(device)
    >>> _ = nn.init.eye_(model.weight), nn.init.zeros_(model.bias)
    >>> scale = Standardize(torch.zeros(2), torch.ones(2))
    >>> predict(model, torch.tensor([[5.0, 1.0], [0.0, 2.0]]), scale=scale, device=device)
    tensor([0, 1])
    """
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        logits: torch.Tensor = model(scale(points).to(device))
        classes = logits.argmax(dim=1).cpu()
    model.train(was_training)
    return classes


def train_epoch(
    model: nn.Module,
    loader: DataLoader[tuple[torch.Tensor, torch.Tensor]],
    optimizer: torch.optim.Optimizer,
    device: torch.device,
    loss_function: LossFunction = nn.functional.cross_entropy,
) -> float:
    """One pass over ``loader``, one optimizer step a batch; the epoch's mean training loss.

    ``loss_function(logits, labels)`` is the batch's mean loss; cross-entropy unless given.

    Examples
    --------
    >>> splits = spiral_splits()
    >>> model = make_classifier().to(device)
    >>> optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    >>> losses = [train_epoch(model, batches(splits.train), optimizer, device) for _ in range(5)]
    >>> losses[-1] < losses[0]
    True
    """
    model.train()
    total, count = torch.zeros((), device=device), 0
    for batch_points, batch_labels in loader:
        points, labels = batch_points.to(device), batch_labels.to(device)
        loss = loss_function(model(points), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.detach() * len(labels)
        count += len(labels)
    return (total / count).item()


@dataclass
class History:
    """What :func:`fit` measured after each epoch, and the epoch whose weights it kept."""

    train_loss: list[float] = field(default_factory=list)
    validation: list[Score] = field(default_factory=list)
    learning_rate: list[float] = field(default_factory=list)
    kept: int = -1
    """The epoch (from 0) whose weights the model holds at the end."""

    @property
    def validation_loss(self) -> list[float]:
        """The validation loss after each epoch."""
        return [score.loss for score in self.validation]


def fit(
    model: nn.Module,
    splits: Splits,
    optimizer: torch.optim.Optimizer,
    device: torch.device,
    *,
    epochs: int,
    scheduler: torch.optim.lr_scheduler.LRScheduler | None = None,
    patience: int | None = None,
    seed: int = 0,
    after_epoch: Callable[[int, History], object] | None = None,
) -> History:
    """Train for up to ``epochs`` epochs, scoring the validation split after each.

    ``scheduler`` steps once an epoch. With ``patience``, training stops early once
    the validation loss has not improved for ``patience`` epochs, and the model is
    given back the weights of its best epoch; without it, the model keeps its last.
    ``after_epoch(epoch, history)`` runs after each epoch (to print).

    Raises
    ------
    ValueError
        If ``epochs`` or ``patience`` is not positive.

    Examples
    --------
    >>> splits = spiral_splits()
    >>> model = make_classifier().to(device)
    >>> optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    >>> history = fit(model, splits, optimizer, device, epochs=40, patience=3)
    >>> best = min(history.validation_loss)
    >>> history.validation_loss[history.kept] == best, len(history.train_loss) <= 40
    (True, True)
    >>> evaluate(model, splits.validation, device).loss == best
    True
    >>> fit(model, splits, optimizer, device, epochs=0)
    Traceback (most recent call last):
    ...
    ValueError: epochs=0: train for at least one epoch
    """
    if epochs < 1:
        msg = f"epochs={epochs}: train for at least one epoch"
        raise ValueError(msg)
    if patience is not None and patience < 1:
        msg = f"patience={patience}: give a number of epochs, at least 1, or None to never stop"
        raise ValueError(msg)
    loader = batches(splits.train, seed=seed)
    history = History()
    best_state: dict[str, torch.Tensor] = {}
    for epoch in range(epochs):
        history.learning_rate.append(optimizer.param_groups[0]["lr"])
        history.train_loss.append(train_epoch(model, loader, optimizer, device))
        history.validation.append(evaluate(model, splits.validation, device))
        if scheduler is not None:
            scheduler.step()
        if after_epoch is not None:
            after_epoch(epoch, history)
        if patience is None:
            history.kept = epoch
        elif history.kept < 0 or history.validation_loss[-1] < min(history.validation_loss[:-1]):
            history.kept = epoch
            best_state = copy.deepcopy(model.state_dict())
        elif epoch - history.kept >= patience:
            break
    if best_state:
        model.load_state_dict(best_state)
    return history


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        msg = f"expected a number of at least 0, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if not value >= 0:  # also refuses nan
        msg = f"expected a number of at least 0, got {value}"
        raise argparse.ArgumentTypeError(msg)
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Train a classifier on the spirals with Adam; print the scores every epoch."""

    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--epochs", type=cli.positive_int, default=200, help="most epochs (default: 200)"
        )
        parser.add_argument(
            "--weight-decay",
            type=_non_negative,
            default=0.0,
            help="AdamW's weight decay (default: 0)",
        )
        parser.add_argument(
            "--patience",
            type=cli.positive_int,
            default=None,
            help="stop after this many epochs without a better validation loss (default: never)",
        )

    args = cli.parse_args(
        argv, module=__spec__.name, description=__doc__, steps=False, dtype=False, extra=options
    )
    splits = spiral_splits(seed=args.seed)
    model = make_classifier(seed=args.seed).to(args.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=args.weight_decay)

    def report(epoch: int, history: History) -> None:
        score = history.validation[-1]
        print(
            f"epoch {epoch:>3}  training loss {history.train_loss[-1]:.4f}  "
            f"validation loss {score.loss:.4f}  accuracy {score.accuracy:.1%}"
        )

    history = fit(
        model, splits, optimizer, args.device, epochs=args.epochs, patience=args.patience,
        seed=args.seed, after_epoch=report,
    )  # fmt: skip
    test = evaluate(model, splits.test, args.device)
    print(f"kept the weights of epoch {history.kept}: test accuracy {test.accuracy:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
