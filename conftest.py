"""Doctests run with a seeded world and the book's device in their namespace."""

import numpy as np
import pytest
import torch

from tensorbook.device import resolve_device
from tensorbook.seeding import seed_everything


@pytest.fixture(autouse=True)
def _seeded_doctest_namespace(doctest_namespace):
    """Seed every generator and give doctests ``np``, ``torch`` and ``device``.

    ``device`` comes from ``TENSORBOOK_DEVICE`` (``nox -s doctest -- --device
    cuda`` sets it), so the same doctests run on the CPU and on a GPU.
    """
    seed_everything(0)
    doctest_namespace["np"] = np
    doctest_namespace["torch"] = torch
    doctest_namespace["device"] = resolve_device()
