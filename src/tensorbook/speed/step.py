"""The timed step: the book's training step, written so that it never waits for a GPU.

One step of the two-layer network (forward, loss, backward, update), in NumPy and in
torch, as the book writes it, with two changes that keep a GPU's queue full: the loss
stays a tensor, and ReLU's gradient mask is applied with ``masked_fill_``. Beside it,
what the step costs, ``2 N D_in H + 3 N H D_out`` multiply-adds of its five matrix
products at two operations each (the element-wise work left out), and the learning
rate that keeps a large step finite.
"""

from __future__ import annotations

import numpy as np
import torch

from tensorbook.problem import LEARNING_RATE, TUTORIAL_SIZES, Sizes

__all__ = ["numpy_step", "step_flops", "timing_lr", "torch_step"]


def timing_lr(sizes: Sizes) -> float:
    """The learning rate of the timed steps: the book's, scaled down as the step grows.

    At the book's learning rate the larger problems diverge within a few steps, and
    overflowing to ``inf`` and ``nan`` would change what is timed; the size of a
    finite step does not change the time of a float32 product.

    >>> timing_lr(TUTORIAL_SIZES) == LEARNING_RATE
    True
    """
    return LEARNING_RATE * step_flops(TUTORIAL_SIZES) / step_flops(sizes)


def step_flops(sizes: Sizes) -> int:
    """Floating-point operations of the five matrix products in one training step.

    >>> step_flops(Sizes(n=64, d_in=1000, h=100, d_out=10))
    25984000
    """
    n, d_in, h, d_out = sizes.n, sizes.d_in, sizes.h, sizes.d_out
    return 2 * (2 * n * d_in * h + 3 * n * h * d_out)


def numpy_step(x: np.ndarray, y: np.ndarray, w1: np.ndarray, w2: np.ndarray, lr: float) -> float:
    """One step of gradient descent in NumPy, updating ``w1`` and ``w2`` in place.

    Returns the loss before the update, as the training loops do.

    >>> from tensorbook.problem import make_problem
    >>> p = make_problem(Sizes(8, 5, 4, 2))
    >>> w1, w2 = p.w1.copy(), p.w2.copy()
    >>> first = numpy_step(p.x, p.y, w1, w2, lr=1e-2)
    >>> numpy_step(p.x, p.y, w1, w2, lr=1e-2) < first
    True
    """
    h = x @ w1
    h_relu = np.maximum(h, 0)
    diff = h_relu @ w2 - y
    loss = float((diff * diff).sum())
    grad_y = 2.0 * diff
    grad_w2 = h_relu.T @ grad_y
    grad_h = grad_y @ w2.T
    grad_h[h < 0] = 0
    grad_w1 = x.T @ grad_h
    w1 -= lr * grad_w1
    w2 -= lr * grad_w2
    return loss


def torch_step(
    x: torch.Tensor, y: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, lr: float
) -> torch.Tensor:
    """The same step with torch tensors on any device; nothing in it waits for a GPU.

    The loss comes back as a 0-d tensor. ReLU's mask is applied with
    ``masked_fill_``, the operator that the book's ``grad_h[h < 0] = 0`` comes to
    (:func:`tensorbook.speed.waits.mask_operators` shows the way), called directly.

    >>> from tensorbook.problem import as_tensors, make_problem
    >>> p = make_problem(Sizes(8, 5, 4, 2))
    >>> x, y, w1, w2 = as_tensors(p, device, torch.float64)
    >>> reference = (p.w1.copy(), p.w2.copy())
    >>> loss = torch_step(x, y, w1, w2, lr=1e-2)
    >>> expected = numpy_step(p.x, p.y, *reference, lr=1e-2)
    >>> bool(abs(loss.item() - expected) < 1e-9 * expected)
    True
    >>> bool(np.allclose(w1.cpu().numpy(), reference[0], rtol=1e-12, atol=0))
    True
    """
    h = x.mm(w1)
    h_relu = h.clamp(min=0)
    diff = h_relu.mm(w2) - y
    loss = diff.pow(2).sum()
    grad_y = 2.0 * diff
    grad_w2 = h_relu.t().mm(grad_y)
    grad_h = grad_y.mm(w2.t()).masked_fill_(h < 0, 0)
    grad_w1 = x.t().mm(grad_h)
    w1.sub_(lr * grad_w1)
    w2.sub_(lr * grad_w2)
    return loss
