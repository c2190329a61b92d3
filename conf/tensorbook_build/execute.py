"""A page's cells (:func:`read_page`), and what its execution depends on.

jupyter-cache keys a notebook on its code alone, so each page gets a hidden cell
(:func:`context_cell`) naming the device, torch and a hash of every module it imports.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
from collections.abc import Container, Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from myst_nb.core.read import read_myst_markdown_notebook  # documented: MyST-NB's Python API
from nbformat import NotebookNode

from tensorbook.recording import package_files

HIDDEN = "remove-cell"
"""MyST-NB's tag of a cell that the page runs and does not show."""


def _imported_modules(tree: ast.AST, known: Container[str]) -> set[str]:
    """The package's modules that this syntax tree imports."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(name for name in names if name in known)
    return found


@cache
def package_modules(src_dir: Path) -> dict[str, Path]:
    """Map every module of the package under ``src_dir`` to its file, as a receipt names it."""
    return package_files(src_dir / "tensorbook")


@cache
def _module_dependencies(src_dir: Path) -> dict[str, set[str]]:
    modules = package_modules(src_dir)
    graph = {}
    for name, path in modules.items():
        deps = _imported_modules(ast.parse(path.read_text(encoding="utf-8")), modules)
        # importing a.b.c runs a/__init__ and a/b/__init__ first
        parts = name.split(".")
        deps.update(".".join(parts[:i]) for i in range(1, len(parts)))
        deps.discard(name)
        graph[name] = deps
    return graph


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


def _parse_cell(code: str) -> ast.AST | None:
    # IPython magics and shell escapes are not Python; they import nothing of ours
    kept = [line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))]
    for text in (code, "\n".join(kept)):
        with contextlib.suppress(SyntaxError):
            return ast.parse(text)
    return None


@cache  # the ledger asks for every prefix of a page's cells: each cell is parsed once
def _cell_imports(code: str, src_dir: Path) -> frozenset[str]:
    """The package's modules that one cell's ``code`` imports itself."""
    tree = _parse_cell(code)
    return (
        frozenset()
        if tree is None
        else frozenset(_imported_modules(tree, _module_dependencies(src_dir)))
    )


def page_dependencies(code: Iterable[str], src_dir: Path) -> list[str]:
    """Every package module that the cells' ``code`` imports, directly or not, sorted."""
    graph = _module_dependencies(src_dir)  # each module's, its parent packages included
    pending = set().union(*(_cell_imports(code_cell, src_dir) for code_cell in code))
    closure: set[str] = set()
    while pending:
        name = pending.pop()
        closure.add(name)
        pending |= graph[name] - closure  # so nothing in closure is pending again
    return sorted(closure)


@cache
def _file_hash(path: Path) -> str:
    """A short hash of a module's bytes, read once per build."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def page_hashes(code: Iterable[str], src_dir: Path) -> dict[Path, tuple[str, str]]:
    """For each module the cells' ``code`` depends on: its file, dotted name and hash."""
    modules = package_modules(src_dir)
    return {
        modules[name]: (name, _file_hash(modules[name]))
        for name in page_dependencies(code, src_dir)
    }


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
