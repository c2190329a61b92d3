"""A page's cells (:func:`read_page`), and what its execution depends on.

jupyter-cache keys a notebook on its code alone, so each page gets a hidden cell
(:func:`context_cell`) naming the device, torch and a hash of every module it imports.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from myst_nb.core.read import read_myst_markdown_notebook  # documented: MyST-NB's Python API
from nbformat import NotebookNode

from tensorbook.recording import module_hashes, package_files

HIDDEN = "remove-cell"
"""MyST-NB's tag of a cell that the page runs and does not show."""


@dataclass(frozen=True)
class Cell:
    """One cell of a page, as MyST-NB reads it: the only reading the build makes."""

    index: int  # in the page's notebook, markdown cells counted (MyST-NB's cell_index)
    kind: str  # nbformat's cell_type: "code", "markdown" or "raw"
    source: str  # a code cell's without its options
    metadata: dict[str, Any]  # a code cell's options (:tags: ...), a markdown cell's +++ {...}
    line: int  # the page's line, counted from 1, of the source's first line that is not blank

    @property
    def tags(self) -> list[str]:
        """Its ``tags`` option."""
        return list(self.metadata.get("tags", []))


@dataclass(frozen=True)
class Page:
    """A MyST-NB page: its front matter and its cells."""

    metadata: dict[str, Any]
    cells: tuple[Cell, ...]

    @property
    def code(self) -> dict[int, str]:
        """Each code cell's source, by its index."""
        return {cell.index: cell.source for cell in self.cells if cell.kind == "code"}


def read_notebook(text: str) -> NotebookNode:
    """A page's text as the notebook MyST-NB makes of it, a new one at each call."""
    return read_myst_markdown_notebook(text, add_source_map=True)


@lru_cache(maxsize=64)  # a page is read by several adapters; the result is not changed
def read_page(text: str) -> Page:
    r"""A page's text as MyST-NB reads it to execute it, for every part of the build.

    >>> page = read_page("# A\n\n```{code-cell} ipython3\n:tags: [hide-input]\n\n1 + 1\n```\n")
    >>> [(c.index, c.kind, c.source, c.tags, c.line) for c in page.cells]
    [(0, 'markdown', '# A', [], 1), (1, 'code', '1 + 1', ['hide-input'], 6)]
    """
    notebook = read_notebook(text)
    starts, lines, cells = notebook.metadata.pop("source_map"), text.splitlines(), []
    for index, (c, start) in enumerate(zip(notebook.cells, starts, strict=True)):
        body = c.source.strip("\n").split("\n")  # found in the page from where it starts
        found = (n for n in range(start, len(lines)) if lines[n : n + len(body)] == body)
        cells.append(Cell(index, c.cell_type, c.source, dict(c.metadata), next(found, start) + 1))
    return Page(dict(notebook.metadata), tuple(cells))


def page_hashes(code: Iterable[str], src_dir: Path) -> dict[Path, tuple[str, str]]:
    """For each module the cells' ``code`` depends on: its file, dotted name and hash.

    They are what a reader's receipt hashes (:func:`tensorbook.recording.module_hashes`).
    """
    package = src_dir / "tensorbook"
    hashes = module_hashes([*code, ""], package)[-1]  # "": a page without code imports nothing
    files = package_files(package)
    return {files[name]: (name, digest) for name, digest in hashes.items()}


def page_dependencies(code: Iterable[str], src_dir: Path) -> list[str]:
    """Every package module that the cells' ``code`` imports, directly or not, sorted."""
    return [name for name, _ in page_hashes(code, src_dir).values()]


def context_cell(context: str, hashes: dict[str, str]) -> str:
    """The hidden cell appended to a page: comments only, but part of the cache key."""
    lines = [
        "# Added by the build (tensorbook_build.execute): jupyter-cache keys on code,",
        "# so these comments make the cached outputs depend on what produced them.",
        f"# {context}",
        *(f"# {name}: {digest}" for name, digest in hashes.items()),
    ]
    body = "\n".join(lines)
    return f"\n\n```{{code-cell}} ipython3\n:tags: [remove-cell]\n\n{body}\n```\n"


def keyed_source(text: str, context: str, src_dir: Path) -> tuple[str, list[Path]]:
    """A page's text as it executes: with :func:`context_cell`; and the modules' files.

    The execute stage runs this text, and Sphinx reads it (``source-read``), so that
    MyST-NB finds the stage's outputs under the same key.
    """
    hashes = page_hashes(read_page(text).code.values(), src_dir)
    return text + context_cell(context, dict(hashes.values())), list(hashes)
