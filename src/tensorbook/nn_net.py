"""The two-layer network built from torch.nn layers and trained by torch.optim.

The layers have no bias, so the model holds exactly the weights of the
hand-written versions and, started from them, follows the same path.
Run it with ``python -m tensorbook.nn_net``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import torch
from torch import nn

from tensorbook import cli
from tensorbook.losslog import LossLog
from tensorbook.problem import LEARNING_RATE, STEPS, check_tensors
from tensorbook.versions import TrainOn

__all__ = ["build_model", "gradients", "main", "train", "train_on"]


def build_model(w1: torch.Tensor, w2: torch.Tensor) -> nn.Sequential:
    """Make ``Linear → ReLU → Linear`` holding copies of ``w1`` and ``w2``.

    ``nn.Linear`` stores its weight as ``(out_features, in_features)`` and
    computes ``x @ weight.T``, so it receives the transposes.

    Examples
    --------
    >>> model = build_model(torch.ones(3, 4, device=device), torch.ones(4, 2, device=device))
    >>> model
    Sequential(
      (0): Linear(in_features=3, out_features=4, bias=False)
      (1): ReLU()
      (2): Linear(in_features=4, out_features=2, bias=False)
    )
    >>> build_model(torch.ones(3, 4), torch.ones(5, 2))
    Traceback (most recent call last):
    ...
    ValueError: w1 (3, 4) and w2 (5, 2) do not fit: w1's columns must equal w2's rows
    """
    if w1.dim() != 2 or w2.dim() != 2 or w1.shape[1] != w2.shape[0]:
        msg = (
            f"w1 {tuple(w1.shape)} and w2 {tuple(w2.shape)} do not fit: "
            "w1's columns must equal w2's rows"
        )
        raise ValueError(msg)
    (d_in, h), d_out = w1.shape, w2.shape[1]
    hidden, output = nn.Linear(d_in, h, bias=False), nn.Linear(h, d_out, bias=False)
    model = nn.Sequential(hidden, nn.ReLU(), output).to(device=w1.device, dtype=w1.dtype)
    with torch.no_grad():
        hidden.weight.copy_(w1.t())
        output.weight.copy_(w2.t())
    return model


def _linears(model: nn.Sequential) -> tuple[nn.Linear, nn.Linear]:
    """The hidden and output layers of a model made like :func:`build_model`'s."""
    hidden, output = model[0], model[2]
    if not (isinstance(hidden, nn.Linear) and isinstance(output, nn.Linear)):
        msg = f"expected the layers build_model makes (Linear, ReLU, Linear), not {model}"
        raise TypeError(msg)
    return hidden, output


def _checked(model: nn.Sequential, x: torch.Tensor, y: torch.Tensor) -> None:
    hidden, output = _linears(model)
    check_tensors(x, y, hidden.weight.t(), output.weight.t())


def gradients(
    x: torch.Tensor, y: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Return the loss and the gradients for ``w1`` and ``w2`` as an ``nn`` model computes them.

    Examples
    --------
    >>> x = torch.tensor([[1.0, -2.0]], device=device)
    >>> y = torch.tensor([[1.0]], device=device)
    >>> w1, w2 = torch.eye(2, device=device), torch.tensor([[2.0], [3.0]], device=device)
    >>> loss, grad_w1, grad_w2 = gradients(x, y, w1, w2)
    >>> loss.item(), grad_w2.flatten().tolist(), grad_w1[:, 0].tolist()
    (1.0, [2.0, 0.0], [4.0, -8.0])
    >>> bool((grad_w1[:, 1] == 0).all())  # the second hidden unit was off: no gradient
    True
    """
    check_tensors(x, y, w1, w2)
    model = build_model(w1, w2)
    loss = nn.functional.mse_loss(model(x), y, reduction="sum")
    loss.backward()
    hidden, output = _linears(model)
    grad_w1, grad_w2 = hidden.weight.grad, output.weight.grad
    assert grad_w1 is not None  # backward has just filled both
    assert grad_w2 is not None
    return loss.detach(), grad_w1.t(), grad_w2.t()


def train(
    model: nn.Sequential,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    lr: float = LEARNING_RATE,
    steps: int = STEPS,
    print_every: int = 100,
) -> list[float]:
    """Train ``model`` with ``optim.SGD`` on the summed squared error; return the losses.

    Examples
    --------
    >>> from tensorbook.problem import Sizes, as_tensors, make_problem
    >>> x, y, w1, w2 = as_tensors(make_problem(Sizes(8, 5, 4, 2)), device)
    >>> losses = train(build_model(w1, w2), x, y, lr=1e-2, steps=30, print_every=0)
    >>> len(losses), losses[-1] < losses[0] / 10
    (30, True)
    """
    _checked(model, x, y)
    loss_fn = nn.MSELoss(reduction="sum")
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    log = LossLog(steps, print_every)
    for step in range(steps):
        loss = loss_fn(model(x), y)
        log.record(step, loss)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return log.losses


train_on = TrainOn(train, build_model)
"""Train a model made by :func:`build_model` on copies of a problem; what ``python -m
tensorbook.nn_net`` runs."""


def main(argv: Sequence[str] | None = None) -> int:
    """Train on the book's problem and print the loss every 100 steps."""
    return cli.run_training(argv, train_on, module=__spec__.name, description=__doc__)


if __name__ == "__main__":
    sys.exit(main())
