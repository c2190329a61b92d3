"""Train any version of the two-layer network on copies of the book's problem.

Each version has its own ``train``, the loop its chapter teaches, which takes the data
and the weights in that version's form: NumPy arrays, tensors, tensors that autograd
follows, or a module that holds the weights. A :class:`TrainOn` makes those copies of
a problem, on a device and in a dtype, and runs the loop. It is each version's
``train_on``: what ``python -m tensorbook.<version>`` runs, and what
:mod:`tensorbook.compare` trains.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeAlias

import torch
from torch import nn

from tensorbook.problem import STEPS, Problem, as_tensors

__all__ = ["Start", "TrainOn"]

Start: TypeAlias = (
    Literal["arrays", "tensors", "leaves"] | Callable[[torch.Tensor, torch.Tensor], nn.Module]
)
"""What a version's ``train`` starts from, made from a problem's ``x``, ``y``, ``w1``, ``w2``.

``"arrays"``: NumPy arrays, on the CPU only, ``train(x, y, w1, w2)``; ``"tensors"``:
tensors, ``train(x, y, w1, w2)``; ``"leaves"``: tensors whose weights require grad,
autograd's leaves; a callable: the module it makes from the weights,
``train(model(w1, w2), x, y)``.
"""


@dataclass(frozen=True)
class TrainOn:
    """A version's ``train`` started from copies of a problem: call it to train.

    ``train`` is called with the copies in the form ``start`` names (:data:`Start`) and
    with ``steps`` and ``print_every``; it returns the loss before each step, as every
    version's ``train`` does. ``dtype`` is the one used where a call names none.

    Examples
    --------
    >>> from tensorbook.problem import Sizes, make_problem
    >>> def train(x, y, w1, w2, *, steps, print_every):
    ...     return [float(w1.requires_grad)] * steps
    >>> p = make_problem(Sizes(n=8, d_in=5, h=4, d_out=2))
    >>> TrainOn(train, "leaves")(p, device, steps=2)
    [1.0, 1.0]
    >>> TrainOn(train, "arrays")(p, torch.device("cuda"))
    Traceback (most recent call last):
    ...
    ValueError: NumPy runs on the CPU only, not on cuda
    """

    # each version's train has its own signature, which start says how to fill
    train: Callable[..., list[float]]
    start: Start
    dtype: torch.dtype = torch.float32

    def __call__(
        self,
        problem: Problem,
        device: torch.device,
        dtype: torch.dtype | None = None,
        *,
        steps: int = STEPS,
        print_every: int = 100,
    ) -> list[float]:
        """Train on copies of ``problem``'s data and weights, on ``device``; return the losses.

        The problem itself is left as it was.
        """
        dtype = self.dtype if dtype is None else dtype
        start = self.start
        if start == "arrays":
            if device.type != "cpu":
                msg = f"NumPy runs on the CPU only, not on {device}"
                raise ValueError(msg)
            like = torch.empty(0, dtype=dtype).numpy().dtype
            arrays = (a.astype(like) for a in (problem.x, problem.y, problem.w1, problem.w2))
            return self.train(*arrays, steps=steps, print_every=print_every)
        x, y, w1, w2 = as_tensors(problem, device, dtype)
        if callable(start):
            return self.train(start(w1, w2), x, y, steps=steps, print_every=print_every)
        if start == "leaves":
            w1, w2 = w1.requires_grad_(), w2.requires_grad_()
        return self.train(x, y, w1, w2, steps=steps, print_every=print_every)
