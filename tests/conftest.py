"""Fixtures shared by the test modules: the devices that exist, and small problems."""

from __future__ import annotations

import pytest
import torch

from tensorbook.problem import Sizes, make_problem

CUDA_MISSING = "needs a CUDA device; torch.cuda.is_available() is False on this machine"


def _devices() -> list:
    return [
        pytest.param(torch.device("cpu"), id="cpu"),
        pytest.param(
            torch.device("cuda", 0),
            id="cuda",
            marks=[
                pytest.mark.cuda,
                pytest.mark.skipif(not torch.cuda.is_available(), reason=CUDA_MISSING),
            ],
        ),
    ]


@pytest.fixture(params=_devices())
def device(request) -> torch.device:
    """Each device this machine has; a missing GPU skips its cases with the reason."""
    return request.param


@pytest.fixture
def small_problem():
    """A problem small enough for float64 comparisons to run in milliseconds."""
    return make_problem(Sizes(n=16, d_in=30, h=20, d_out=5), seed=1)
