"""The regression problem that every two-layer network in the book solves.

Random inputs ``x`` of shape ``(N, D_in)`` are mapped to random targets ``y``
of shape ``(N, D_out)`` through a hidden layer of width ``H``. The data and
the initial weights are drawn once, in float64 NumPy arrays, so that the
NumPy net, the hand-written torch net, the autograd net and the ``nn`` net
can all start from exactly the same numbers; :func:`as_tensors` copies them
onto a device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

__all__ = [
    "LEARNING_RATE",
    "STEPS",
    "TUTORIAL_SIZES",
    "Problem",
    "Sizes",
    "as_tensors",
    "check_shapes",
    "check_tensors",
    "make_problem",
]


@dataclass(frozen=True)
class Sizes:
    """Batch size ``n``, input width ``d_in``, hidden width ``h``, output width ``d_out``."""

    n: int
    d_in: int
    h: int
    d_out: int

    def __post_init__(self) -> None:
        """Refuse a size that is not a positive int."""
        for name in ("n", "d_in", "h", "d_out"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                msg = f"Sizes.{name} must be a positive int, not {value!r}"
                raise ValueError(msg)


TUTORIAL_SIZES = Sizes(n=64, d_in=1000, h=100, d_out=10)
"""The sizes the book trains at: N, D_in, H, D_out = 64, 1000, 100, 10."""

LEARNING_RATE = 1e-6
"""Step size for plain gradient descent on the summed squared error."""

STEPS = 500
"""How many gradient steps each network takes in the book."""


@dataclass(frozen=True)
class Problem:
    """Inputs, targets and initial weights, all float64 NumPy arrays."""

    x: np.ndarray
    y: np.ndarray
    w1: np.ndarray
    w2: np.ndarray

    @property
    def sizes(self) -> Sizes:
        """The sizes read back from the arrays' shapes."""
        n, d_in = self.x.shape
        h, d_out = self.w2.shape
        return Sizes(n=n, d_in=d_in, h=h, d_out=d_out)


def make_problem(sizes: Sizes = TUTORIAL_SIZES, seed: int = 0) -> Problem:
    """Draw data and initial weights from a standard normal distribution.

    Parameters
    ----------
    sizes : Sizes
        The shapes to draw.
    seed : int
        Seed of the NumPy generator; the same seed gives the same problem.

    Returns
    -------
    Problem
        ``x`` ``(n, d_in)``, ``y`` ``(n, d_out)``, ``w1`` ``(d_in, h)`` and
        ``w2`` ``(h, d_out)``, in float64.

    Examples
    --------
    >>> p = make_problem(Sizes(n=4, d_in=3, h=5, d_out=2), seed=1)
    >>> p.x.shape, p.y.shape, p.w1.shape, p.w2.shape
    ((4, 3), (4, 2), (3, 5), (5, 2))
    >>> p.x.dtype
    dtype('float64')
    >>> bool((p.x == make_problem(p.sizes, seed=1).x).all())
    True
    """
    rng = np.random.default_rng(seed)
    return Problem(
        x=rng.standard_normal((sizes.n, sizes.d_in)),
        y=rng.standard_normal((sizes.n, sizes.d_out)),
        w1=rng.standard_normal((sizes.d_in, sizes.h)),
        w2=rng.standard_normal((sizes.h, sizes.d_out)),
    )


class _Shaped(Protocol):
    @property
    def shape(self) -> tuple[int, ...]: ...


def check_shapes(x: _Shaped, y: _Shaped, w1: _Shaped, w2: _Shaped) -> Sizes:
    """Check that ``x``, ``y``, ``w1`` and ``w2`` fit together; return their sizes.

    Works for NumPy arrays and torch tensors alike, so that every net rejects a
    wrong shape with the same message before any arithmetic can fail deep
    inside a matrix product.

    Raises
    ------
    ValueError
        Naming every shape and the rule it breaks.

    Examples
    --------
    >>> p = make_problem(Sizes(n=4, d_in=3, h=5, d_out=2))
    >>> check_shapes(p.x, p.y, p.w1, p.w2)
    Sizes(n=4, d_in=3, h=5, d_out=2)
    >>> check_shapes(p.x, p.y, p.w1.T, p.w2)
    Traceback (most recent call last):
    ...
    ValueError: shapes do not fit: x (4, 3), y (4, 2), w1 (5, 3), w2 (5, 2); \
x's columns (3) must equal w1's rows (5); w1's columns (3) must equal w2's rows (5); \
expected x (N, D_in), y (N, D_out), w1 (D_in, H), w2 (H, D_out)
    """
    shapes = {name: tuple(a.shape) for name, a in (("x", x), ("y", y), ("w1", w1), ("w2", w2))}
    described = ", ".join(f"{name} {shape}" for name, shape in shapes.items())
    expected = "expected x (N, D_in), y (N, D_out), w1 (D_in, H), w2 (H, D_out)"

    not_matrices = [name for name, shape in shapes.items() if len(shape) != 2]
    if not_matrices:
        msg = f"shapes do not fit: {described}; {', '.join(not_matrices)} must be 2-D; {expected}"
        raise ValueError(msg)

    rules = [
        ("x's columns", shapes["x"][1], "w1's rows", shapes["w1"][0]),
        ("w1's columns", shapes["w1"][1], "w2's rows", shapes["w2"][0]),
        ("y's rows", shapes["y"][0], "x's rows", shapes["x"][0]),
        ("y's columns", shapes["y"][1], "w2's columns", shapes["w2"][1]),
    ]
    broken = [f"{a} ({m}) must equal {b} ({k})" for a, m, b, k in rules if m != k]
    if broken:
        msg = f"shapes do not fit: {described}; {'; '.join(broken)}; {expected}"
        raise ValueError(msg)
    return Sizes(n=shapes["x"][0], d_in=shapes["x"][1], h=shapes["w1"][1], d_out=shapes["y"][1])


def as_tensors(
    problem: Problem, device: torch.device, dtype: torch.dtype = torch.float32
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Copy the problem's ``x``, ``y``, ``w1`` and ``w2`` into new tensors on ``device``.

    The copies never share memory with the NumPy arrays, so training them in
    place leaves the problem untouched for the next network.

    Examples
    --------
    >>> p = make_problem(Sizes(n=2, d_in=3, h=4, d_out=1))
    >>> x, y, w1, w2 = as_tensors(p, device, torch.float64)
    >>> x.dtype, w1.shape, x.device == device
    (torch.float64, torch.Size([3, 4]), True)
    >>> w1.zero_().sum().item(), bool(p.w1.any())
    (0.0, True)
    """
    if not dtype.is_floating_point:
        msg = f"dtype must be a floating-point type, not {dtype}"
        raise ValueError(msg)
    arrays = (problem.x, problem.y, problem.w1, problem.w2)
    x, y, w1, w2 = (torch.tensor(a, dtype=dtype, device=device) for a in arrays)
    return x, y, w1, w2


def check_tensors(x: torch.Tensor, y: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> Sizes:
    """Like :func:`check_shapes`, and also check that all four share a device and dtype.

    Raises
    ------
    ValueError
        Naming the shapes, the devices or the dtypes that disagree.

    Examples
    --------
    >>> x, y, w1, w2 = as_tensors(make_problem(Sizes(2, 3, 4, 1)), device)
    >>> check_tensors(x, y, w1.double(), w2)
    Traceback (most recent call last):
    ...
    ValueError: dtypes differ: x torch.float32, y torch.float32, w1 torch.float64, w2 torch.float32
    """
    sizes = check_shapes(x, y, w1, w2)
    named = (("x", x), ("y", y), ("w1", w1), ("w2", w2))
    if len({t.device for _, t in named}) > 1:
        raise ValueError("devices differ: " + ", ".join(f"{n} {t.device}" for n, t in named))
    if len({t.dtype for _, t in named}) > 1:
        raise ValueError("dtypes differ: " + ", ".join(f"{n} {t.dtype}" for n, t in named))
    return sizes
