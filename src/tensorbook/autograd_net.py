"""The two-layer network again, with autograd computing the backward pass.

Only the forward pass is written; ``loss.backward()`` fills ``w1.grad`` and
``w2.grad``. Run it with ``python -m tensorbook.autograd_net``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

import torch

from tensorbook import cli
from tensorbook.losslog import LossLog
from tensorbook.problem import LEARNING_RATE, STEPS, check_tensors
from tensorbook.versions import TrainOn

__all__ = ["Activation", "gradients", "main", "predict", "train", "train_on"]

Activation = Callable[[torch.Tensor], torch.Tensor]
"""A function from the hidden pre-activation to the hidden output."""


def _clamp_relu(h: torch.Tensor) -> torch.Tensor:
    return h.clamp(min=0)


def predict(
    x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, relu: Activation = _clamp_relu
) -> torch.Tensor:
    """The forward pass: ``relu(x @ w1) @ w2``, recorded by autograd.

    Examples
    --------
    >>> x = torch.tensor([[1.0, -2.0]], device=device)
    >>> w1 = torch.eye(2, device=device, requires_grad=True)
    >>> w2 = torch.tensor([[2.0], [3.0]], device=device, requires_grad=True)
    >>> y_pred = predict(x, w1, w2)
    >>> y_pred.tolist(), y_pred.grad_fn.name()
    ([[2.0]], 'MmBackward0')
    """
    return relu(x.mm(w1)).mm(w2)


def gradients(
    x: torch.Tensor,
    y: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    relu: Activation = _clamp_relu,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Return the loss and autograd's gradients for ``w1`` and ``w2``, leaving them unchanged.

    The weights are detached copies here, so the caller's tensors gain no
    ``.grad``; :func:`train` shows the usual in-place style.

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
    w1 = w1.detach().clone().requires_grad_()
    w2 = w2.detach().clone().requires_grad_()
    loss = (predict(x, w1, w2, relu) - y).pow(2).sum()
    grad_w1, grad_w2 = torch.autograd.grad(loss, (w1, w2))
    return loss.detach(), grad_w1, grad_w2


def train(
    x: torch.Tensor,
    y: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    *,
    relu: Activation = _clamp_relu,
    lr: float = LEARNING_RATE,
    steps: int = STEPS,
    print_every: int = 100,
) -> list[float]:
    """Gradient descent with autograd; ``w1`` and ``w2`` must require grad.

    The weights are updated in place under :func:`torch.no_grad`, and their
    gradients zeroed after each step, because ``backward`` adds to ``.grad``.

    Examples
    --------
    >>> from tensorbook.problem import Sizes, as_tensors, make_problem
    >>> x, y, w1, w2 = as_tensors(make_problem(Sizes(8, 5, 4, 2)), device)
    >>> train(x, y, w1, w2, steps=1)
    Traceback (most recent call last):
    ...
    ValueError: w1 and w2 must require grad: call w1.requires_grad_() and w2.requires_grad_() first
    >>> losses = train(x, y, w1.requires_grad_(), w2.requires_grad_(), lr=1e-2, steps=30,
    ...                print_every=0)
    >>> len(losses), losses[-1] < losses[0] / 10
    (30, True)
    """
    check_tensors(x, y, w1, w2)
    if not (w1.requires_grad and w2.requires_grad):
        msg = "w1 and w2 must require grad: call w1.requires_grad_() and w2.requires_grad_() first"
        raise ValueError(msg)
    log = LossLog(steps, print_every)
    for step in range(steps):
        loss = (predict(x, w1, w2, relu) - y).pow(2).sum()
        log.record(step, loss)
        loss.backward()
        assert w1.grad is not None  # backward has just filled both
        assert w2.grad is not None
        with torch.no_grad():  # the update itself must not become part of the graph
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()
    return log.losses


train_on = TrainOn(train, "leaves")
"""Train on copies of a problem's data and weights; what ``python -m tensorbook.autograd_net`` runs."""


def main(argv: Sequence[str] | None = None) -> int:
    """Train on the book's problem and print the loss every 100 steps."""
    return cli.run_training(argv, train_on, module=__spec__.name, description=__doc__)


if __name__ == "__main__":
    sys.exit(main())
