"""Doctests run with a seeded world and the book's device in their namespace.

``pytest --device cuda`` (``nox -s doctest -- --device cuda``) runs the doctests, the
tests and the book's build on that device; it stops at once, saying why, where the
device cannot be had. Without it the device is ``TENSORBOOK_DEVICE``'s, else the CPU.
"""

import os
from pathlib import Path

import numpy as np
import pytest
import torch

from tensorbook.device import DeviceUnavailableError, choose_device, resolve_device
from tensorbook.environment import DEVICE_VARIABLE
from tensorbook.seeding import seed_everything

# a download's first cell, kept as a file (tensorbook_build.reader): importing it installs
collect_ignore = ["conf/tensorbook_build/reader/install_cell.py"]


def pytest_addoption(parser):
    # here, at the root, so that pytest knows both options before it collects anything
    # (from tests/conftest.py, `pytest --built-book build` without a path was refused)
    parser.addoption(
        "--built-book",
        type=Path,
        default=None,
        help="check this build folder (e.g. build, from nox -s docs) instead of building "
        "the book; the tests that read the build's own log still build it",
    )
    parser.addoption(
        "--device",
        default=None,
        help=f"cpu, cuda or cuda:N for the doctests, the programs and the book "
        f"(default: ${DEVICE_VARIABLE}, else cpu); never falls back",
    )


def pytest_configure(config):
    """Resolve the device once, and hand it on through the environment, so that the
    programs the tests start and the book's kernels use it too."""
    try:
        choice = choose_device(config.getoption("--device"), given_by="--device", default="cpu")
    except (ValueError, DeviceUnavailableError) as error:
        msg = f"cannot test: {error}"
        raise pytest.UsageError(msg) from None
    os.environ[DEVICE_VARIABLE] = config.option.device = choice.device


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
