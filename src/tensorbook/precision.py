"""Why float32 training stalls: the weight updates that rounding throws away.

A float32 weight ``w`` can only move to another float32, so it changes by at least the
gap to its neighbour in the step's direction (below a power of two that gap is half
the one above). When a step ``lr * g`` is smaller than half that gap, ``w - lr * g``
rounds back to ``w`` and the update is lost. :func:`train_counting_lost_updates`
trains the book's network in float32 and counts those losses;
:func:`train_with_master_weights` keeps the weights in float64 (the forward and
backward pass stay float32), the way mixed-precision training keeps float32 master
copies of low-precision weights. ``python -m tensorbook.precision`` runs both.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from tensorbook import cli, manual_net
from tensorbook.losslog import LossLog
from tensorbook.problem import LEARNING_RATE, STEPS, as_tensors, make_problem

__all__ = [
    "LostUpdates",
    "lost_fraction",
    "main",
    "spacing",
    "train_counting_lost_updates",
    "train_with_master_weights",
]


def spacing(w: torch.Tensor) -> torch.Tensor:
    """The gap between each entry of ``w`` and the next number of its dtype, away from 0.

    Examples
    --------
    >>> spacing(torch.tensor([1.0, -1.0, 1024.0])).tolist()
    [1.1920928955078125e-07, 1.1920928955078125e-07, 0.0001220703125]
    >>> spacing(torch.tensor([1.0], dtype=torch.float64)).item() == 2.0**-52
    True
    """
    away = torch.where(w < 0, -torch.inf, torch.inf).to(w.dtype)
    return (torch.nextafter(w, away) - w).abs()


def lost_fraction(w: torch.Tensor, update: torch.Tensor) -> float:
    """The fraction of nonzero ``update`` entries that leave ``w`` unchanged in ``w - update``.

    Examples
    --------
    >>> w = torch.tensor([1.0, 1.0, 1.0, 1.0])
    >>> update = torch.tensor([-1e-3, -1e-8, -5e-8, 0.0])  # w - update moves w up
    >>> lost_fraction(w, update)  # below 6e-8, half of 1.0's spacing, rounds back to 1.0
    0.6666666666666666
    """
    moving = update != 0
    if not bool(moving.any()):
        return 0.0
    lost = (w - update == w) & moving
    return lost.sum().item() / moving.sum().item()


@dataclass(frozen=True)
class LostUpdates:
    """At one step: the fraction of nonzero updates lost to rounding, for each weight.

    ``median_ratio`` is the median, over the nonzero updates of ``w1``, of
    ``|lr * g|`` divided by the spacing of ``w1``: below 0.5, most updates vanish.
    """

    step: int
    w1: float
    w2: float
    median_ratio: float


def train_counting_lost_updates(
    x: torch.Tensor,
    y: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    *,
    lr: float = LEARNING_RATE,
    steps: int = STEPS,
    at: Iterable[int] = (),
    print_every: int = 0,
) -> tuple[list[float], list[LostUpdates]]:
    """Train like :func:`tensorbook.manual_net.train`, counting lost updates at steps ``at``.

    Returns the losses and one :class:`LostUpdates` for each step in ``at``.

    Examples
    --------
    >>> from tensorbook.problem import Sizes
    >>> x, y, w1, w2 = as_tensors(make_problem(Sizes(8, 5, 4, 2)), device)
    >>> losses, lost = train_counting_lost_updates(x, y, w1, w2, lr=1e-2, steps=3, at=[0, 2])
    >>> len(losses), [entry.step for entry in lost], lost[0].w1
    (3, [0, 2], 0.0)
    """
    wanted = set(at)
    log = LossLog(steps, print_every)
    counted = []
    for step in range(steps):
        loss, grad_w1, grad_w2 = manual_net.gradients(x, y, w1, w2)
        log.record(step, loss)
        update_w1, update_w2 = lr * grad_w1, lr * grad_w2
        if step in wanted:
            moving = update_w1 != 0
            ratio = (update_w1.abs() / spacing(w1))[moving].median().item()
            counted.append(
                LostUpdates(step, lost_fraction(w1, update_w1), lost_fraction(w2, update_w2), ratio)
            )
        w1 -= update_w1
        w2 -= update_w2
    return log.losses, counted


def train_with_master_weights(
    x: torch.Tensor,
    y: torch.Tensor,
    w1: torch.Tensor,
    w2: torch.Tensor,
    *,
    master: torch.dtype = torch.float64,
    lr: float = LEARNING_RATE,
    steps: int = STEPS,
    print_every: int = 0,
) -> list[float]:
    """Train with the forward and backward pass in ``w1``'s dtype, the weights kept in ``master``.

    Each step rounds the master weights to the compute dtype, computes the loss
    and gradients there, and adds the update to the master copies, where it is
    not rounded away. ``w1`` and ``w2`` are left as they were.

    Examples
    --------
    >>> from tensorbook.problem import Sizes
    >>> x, y, w1, w2 = as_tensors(make_problem(Sizes(8, 5, 4, 2)), device)
    >>> losses = train_with_master_weights(x, y, w1, w2, lr=1e-2, steps=30)
    >>> losses[-1] < losses[0] / 10, w1.dtype
    (True, torch.float32)
    """
    compute = w1.dtype
    master_w1, master_w2 = w1.to(master), w2.to(master)
    log = LossLog(steps, print_every)
    for step in range(steps):
        loss, grad_w1, grad_w2 = manual_net.gradients(
            x, y, master_w1.to(compute), master_w2.to(compute)
        )
        log.record(step, loss)
        master_w1 -= lr * grad_w1.to(master)
        master_w2 -= lr * grad_w2.to(master)
    return log.losses


def main(argv: Sequence[str] | None = None) -> int:
    """Train in float32 twice, plainly and with float64 master weights; print what was lost."""
    args = cli.parse_args(argv, module=__spec__.name, description=__doc__, dtype=False)
    problem = make_problem(seed=args.seed)
    at = sorted({min(100, args.steps - 1), args.steps // 2, args.steps - 1})
    losses, lost = train_counting_lost_updates(
        *as_tensors(problem, args.device), steps=args.steps, at=at
    )
    for entry in lost:
        print(
            f"step {entry.step:>4}: updates lost to rounding: w1 {entry.w1:.1%}, "
            f"w2 {entry.w2:.1%}; median |lr*g| / spacing(w1) {entry.median_ratio:.2g}"
        )
    kept = train_with_master_weights(*as_tensors(problem, args.device), steps=args.steps)
    print(f"final loss, float32 weights: {losses[-1]:.2e}")
    print(f"final loss, float64 master weights: {kept[-1]:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
