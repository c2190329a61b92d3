"""What the tests share about the book: its pages, and building it or a copy of it."""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from tensorbook_build.build import Step, build_site
from tensorbook_build.settings import LANGUAGES, LAYOUT, SOURCE_LANGUAGE, Layout

ROOT = LAYOUT.root
CUDA_MISSING = "needs a CUDA device; torch.cuda.is_available() is False on this machine"
"""Why a CUDA case is skipped here."""

CHAPTERS = [
    "index",
    "tensors",
    "numpy_bridge",
    "warmup_numpy",
    "tensors_by_hand",
    "autograd",
    "autograd_network",
    "nn_optim",
    "training",
    "classification",
    "images",
    "cuda",
    "speed",
]
"""The book's executed pages in reading order."""

RECORDED_FOLD = re.compile(r'<details class="tb-recorded">(.*?)</details>', re.DOTALL)
"""A fold of another device's recorded outputs in a built page; its group, the inside."""

__all__ = [
    "CHAPTERS",
    "CUDA_MISSING",
    "LANGUAGES",
    "RECORDED_FOLD",
    "ROOT",
    "SOURCE_LANGUAGE",
    "build_book",
    "copy_of_the_book",
    "own_outputs",
    "page",
    "pages_logged",
    "readme_command",
]


def readme_command(session: str) -> str:
    """The README's command line for ``nox -s <session>`` (its first block), as given."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    return next(x for x in lines if f"nox -s {session}" in x).split("#")[0].strip()


def build_book(
    site: Path,
    *,
    tree: Path = ROOT,
    languages: Sequence[str] | None = None,
    extra: Sequence[str] = (),
) -> Step:
    """Build the checkout, or a copy of it at ``tree``, as ``nox -s docs`` does.

    It is :func:`tensorbook_build.build.build_site`, capturing the output; it returns
    the first step that failed, or the last one, with what every step printed, in order.
    """
    steps = build_site(site, languages, layout=Layout(tree), extra=extra, capture=True)
    return Step(steps[-1].name, steps[-1].returncode, "".join(s.output for s in steps))


def copy_of_the_book(destination: Path, parts: Sequence[str] = ("docs", "conf", "src")) -> Path:
    """A copy of the book to build or break, in ``destination/tree``.

    ``docs/``, ``conf/`` and ``src/``, or the ``parts`` named, with an empty ``docs/``
    where it is not copied, and the files the reader's wheel is built from; returns the
    tree.
    """
    tree = destination / "tree"
    for part in parts:
        shutil.copytree(ROOT / part, tree / part, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, tree / name)
    (tree / "docs").mkdir(parents=True, exist_ok=True)
    return tree


def pages_logged(output: str, message: str) -> list[str]:
    """The pages of which a build logged ``message``: the stage's ``executed``, MyST-NB's
    ``Using cached notebook``..."""
    return sorted(re.findall(rf"([\w.-]+\.md): {message}", output))


def page(root: Path, name: str, language: str = SOURCE_LANGUAGE) -> str:
    """A built page's HTML; ``root`` is the build folder that holds ``html/``."""
    return (root / "html" / language / f"{name}.html").read_text(encoding="utf-8")


def own_outputs(html: str) -> str:
    """A built page without its folds of other devices' recorded outputs: the build's own."""
    return RECORDED_FOLD.sub("", html)
