"""The two-layer network with torch tensors and a backward pass written by hand.

The arithmetic is the NumPy net's, line for line; what torch adds is the
device. Run it with ``python -m tensorbook.manual_net --device cuda`` on a GPU.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import torch

from tensorbook import cli
from tensorbook.losslog import LossLog
from tensorbook.problem import LEARNING_RATE, STEPS, check_tensors
from tensorbook.versions import TrainOn

__all__ = ["forward", "gradients", "main", "train", "train_on"]


def forward(
    x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Compute ``h = x @ w1``, ``h_relu = relu(h)`` and ``y_pred = h_relu @ w2``.

    Examples
    --------
    >>> x = torch.tensor([[1.0, -2.0]], device=device)
    >>> w1 = torch.eye(2, device=device)
    >>> w2 = torch.tensor([[2.0], [3.0]], device=device)
    >>> h, h_relu, y_pred = forward(x, w1, w2)
    >>> h_relu.tolist(), y_pred.tolist()
    ([[1.0, 0.0]], [[2.0]])
    """
    h = x.mm(w1)
    h_relu = h.clamp(min=0)  # ReLU: negative entries become 0
    y_pred = h_relu.mm(w2)
    return h, h_relu, y_pred


def gradients(
    x: torch.Tensor, y: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Return the summed squared error (a 0-d tensor) and its gradients for ``w1``, ``w2``.

    Raises
    ------
    ValueError
        If the shapes do not fit, or the tensors' devices or dtypes differ.

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
    >>> gradients(x, y, w1[:1], w2)
    Traceback (most recent call last):
    ...
    ValueError: shapes do not fit: x (1, 2), y (1, 1), w1 (1, 2), w2 (2, 1); x's columns (2) ...
    """
    check_tensors(x, y, w1, w2)
    h, h_relu, y_pred = forward(x, w1, w2)
    loss = (y_pred - y).pow(2).sum()

    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.t().mm(grad_y_pred)
    grad_h_relu = grad_y_pred.mm(w2.t())
    grad_h = grad_h_relu.clone()
    grad_h[h < 0] = 0  # no gradient flows back through a ReLU that output 0
    grad_w1 = x.t().mm(grad_h)
    return loss, grad_w1, grad_w2


def train(
    x: torch.Tensor,
    y: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    *,
    lr: float = LEARNING_RATE,
    steps: int = STEPS,
    print_every: int = 100,
) -> list[float]:
    """Run ``steps`` steps of gradient descent, updating ``w1`` and ``w2`` in place.

    Returns the loss before each step.

    Examples
    --------
    >>> from tensorbook.problem import Sizes, as_tensors, make_problem
    >>> x, y, w1, w2 = as_tensors(make_problem(Sizes(8, 5, 4, 2)), device)
    >>> losses = train(x, y, w1, w2, lr=1e-2, steps=30, print_every=0)
    >>> len(losses), losses[-1] < losses[0] / 10
    (30, True)
    """
    log = LossLog(steps, print_every)
    for step in range(steps):
        loss, grad_w1, grad_w2 = gradients(x, y, w1, w2)
        log.record(step, loss)
        w1 -= lr * grad_w1
        w2 -= lr * grad_w2
    return log.losses


train_on = TrainOn(train, "tensors")
"""Train on copies of a problem's data and weights; what ``python -m tensorbook.manual_net`` runs."""


def main(argv: Sequence[str] | None = None) -> int:
    """Train on the book's problem and print the loss every 100 steps."""
    return cli.run_training(argv, train_on, module=__spec__.name, description=__doc__)


if __name__ == "__main__":
    sys.exit(main())
