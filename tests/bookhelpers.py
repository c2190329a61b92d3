"""Helpers shared by the tests that build the book."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from book_build import book_languages, sphinx_command, write_language_index

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
"""The book's executed pages in reading order."""

LANGUAGES, SOURCE_LANGUAGE = book_languages()


def build_book(
    site: Path,
    *,
    docs: Path = ROOT / "docs",
    conf: Path = ROOT / "conf",
    languages: Sequence[str] | None = None,
) -> subprocess.CompletedProcess:
    """Build as ``nox -s docs`` does, each edition in turn, the source first, into
    ``site/<language>``; return the first failed build, or the last one."""
    result = None
    for language in languages or list(LANGUAGES):
        result = subprocess.run(
            sphinx_command(site, language=language, docs=docs, conf=conf),
            check=False,
            capture_output=True,
            text=True,
            timeout=900,
        )
        if result.returncode != 0:
            return result
    write_language_index(site, LANGUAGES, SOURCE_LANGUAGE)
    return result


def page(root: Path, name: str, language: str = SOURCE_LANGUAGE) -> str:
    """A built page's HTML; ``root`` is the build folder that holds ``html/``."""
    return (root / "html" / language / f"{name}.html").read_text(encoding="utf-8")
