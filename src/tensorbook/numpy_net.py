"""A two-layer ReLU network in plain NumPy, with gradients written by hand.

Run it with ``python -m tensorbook.numpy_net``: it trains on the book's
problem and prints the loss every 100 steps.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np
import torch

from tensorbook import cli
from tensorbook.losslog import LossLog
from tensorbook.problem import LEARNING_RATE, STEPS, check_shapes
from tensorbook.versions import TrainOn

__all__ = ["forward", "gradients", "main", "train", "train_on"]


def forward(x: np.ndarray, w1: np.ndarray, w2: np.ndarray) -> tuple[np.ndarray, ...]:
    """Compute the hidden pre-activation, the hidden ReLU and the prediction.

    Returns
    -------
    h, h_relu, y_pred : numpy.ndarray
        ``x @ w1``, ``max(h, 0)`` and ``h_relu @ w2``; the backward pass needs
        all three.

    Examples
    --------
    >>> x = np.array([[1.0, -2.0]])
    >>> w1 = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> w2 = np.array([[2.0], [3.0]])
    >>> h, h_relu, y_pred = forward(x, w1, w2)
    >>> h_relu, y_pred
    (array([[1., 0.]]), array([[2.]]))
    """
    h = x @ w1
    h_relu = np.maximum(h, 0)
    y_pred = h_relu @ w2
    return h, h_relu, y_pred


def gradients(
    x: np.ndarray, y: np.ndarray, w1: np.ndarray, w2: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray]:
    """Return the summed squared error and its gradients with respect to ``w1`` and ``w2``.

    Raises
    ------
    ValueError
        If the shapes do not fit, naming all four.

    Examples
    --------
    >>> x, y = np.array([[1.0, -2.0]]), np.array([[1.0]])
    >>> w1, w2 = np.eye(2), np.array([[2.0], [3.0]])
    >>> loss, grad_w1, grad_w2 = gradients(x, y, w1, w2)
    >>> loss, grad_w2.ravel().tolist(), grad_w1[:, 0].tolist()
    (1.0, [2.0, 0.0], [4.0, -8.0])
    >>> bool((grad_w1[:, 1] == 0).all())  # the second hidden unit was off: no gradient
    True
    """
    check_shapes(x, y, w1, w2)
    h, h_relu, y_pred = forward(x, w1, w2)
    loss = float(np.square(y_pred - y).sum())

    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h_relu = grad_y_pred @ w2.T
    grad_h = grad_h_relu.copy()
    grad_h[h < 0] = 0  # no gradient flows back through a ReLU that output 0
    grad_w1 = x.T @ grad_h
    return loss, grad_w1, grad_w2


def train(
    x: np.ndarray,
    y: np.ndarray,
    w1: np.ndarray,
    w2: np.ndarray,
    *,
    lr: float = LEARNING_RATE,
    steps: int = STEPS,
    print_every: int = 100,
) -> list[float]:
    """Run ``steps`` steps of gradient descent, updating ``w1`` and ``w2`` in place.

    Returns the loss before each step.

    Examples
    --------
    >>> from tensorbook.problem import Sizes, make_problem
    >>> p = make_problem(Sizes(n=8, d_in=5, h=4, d_out=2))
    >>> losses = train(p.x, p.y, p.w1, p.w2, lr=1e-2, steps=30, print_every=0)
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


train_on = TrainOn(train, "arrays", torch.float64)
"""Train on copies of a problem's arrays, on the CPU; what ``python -m tensorbook.numpy_net``
runs."""


def main(argv: Sequence[str] | None = None) -> int:
    """Train on the book's problem and print the loss every 100 steps."""
    return cli.run_training(argv, train_on, module=__spec__.name, description=__doc__)


if __name__ == "__main__":
    sys.exit(main())
