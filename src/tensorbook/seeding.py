"""One seed for every random number generator the book touches."""

from __future__ import annotations

import random

import numpy as np
import torch

__all__ = ["DEFAULT_SEED", "seed_everything"]

DEFAULT_SEED = 0
"""The seed every page and every program starts from unless told otherwise."""


def seed_everything(seed: int = DEFAULT_SEED) -> np.random.Generator:
    """Seed Python's, NumPy's and torch's generators (CUDA's included).

    Parameters
    ----------
    seed : int
        A non-negative integer.

    Returns
    -------
    numpy.random.Generator
        A fresh NumPy generator seeded with ``seed``, for code that prefers an
        explicit generator to NumPy's global state.

    Raises
    ------
    ValueError
        If ``seed`` is negative.

    Examples
    --------
    >>> _ = seed_everything(3)
    >>> a = torch.rand(2)
    >>> _ = seed_everything(3)
    >>> torch.equal(a, torch.rand(2))
    True
    >>> int(seed_everything(5).integers(10)) == int(seed_everything(5).integers(10))
    True
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        msg = f"seed must be a non-negative int, not {seed!r}"
        raise ValueError(msg)
    random.seed(seed)
    np.random.seed(seed)  # noqa: NPY002 - the legacy global state, seeded for any code that uses it
    torch.manual_seed(seed)  # seeds every CUDA device too
    return np.random.default_rng(seed)
