"""Helpers shared by the tests that build the book."""

from __future__ import annotations

import subprocess
from pathlib import Path

from book_build import sphinx_command

ROOT = Path(__file__).resolve().parent.parent

CHAPTERS = [
    "index",
    "tensors",
    "numpy_bridge",
    "cuda",
    "warmup_numpy",
    "tensors_by_hand",
    "autograd",
    "autograd_network",
]
"""The book's pages in reading order."""


def build_book(out: Path, *, docs: Path = ROOT / "docs", conf: Path = ROOT / "conf"):
    """Build with the same command as ``nox -s docs``; return the finished process."""
    return subprocess.run(
        sphinx_command(out, docs=docs, conf=conf),
        check=False,
        capture_output=True,
        text=True,
        timeout=900,
    )
