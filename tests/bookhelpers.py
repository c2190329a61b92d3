"""Helpers shared by the tests that build the book."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from book_build import EditionBuild, book_languages, build_site

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
    "speed",
]
"""The book's executed pages in reading order."""

LANGUAGES, SOURCE_LANGUAGE = book_languages()


def readme_command(session: str) -> str:
    """The README's command line for ``nox -s <session>`` (its first block), as given."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    return next(x for x in lines if f"nox -s {session}" in x).split("#")[0].strip()


def build_book(
    site: Path,
    *,
    docs: Path = ROOT / "docs",
    conf: Path = ROOT / "conf",
    languages: Sequence[str] | None = None,
) -> EditionBuild:
    """Build as ``nox -s docs`` does (``book_build.build_site``), capturing the output;
    return the first edition that failed, or the last one built."""
    return build_site(site, languages, docs=docs, conf=conf, capture=True)[-1]


def pages_logged(output: str, message: str) -> list[str]:
    """The pages of which a build logged MyST-NB's ``message`` (``Executing notebook``...)."""
    return sorted(re.findall(rf"([\w.-]+\.md): {message}", output))


def page(root: Path, name: str, language: str = SOURCE_LANGUAGE) -> str:
    """A built page's HTML; ``root`` is the build folder that holds ``html/``."""
    return (root / "html" / language / f"{name}.html").read_text(encoding="utf-8")
