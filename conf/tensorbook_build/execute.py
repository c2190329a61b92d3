"""What a page's execution depends on: its code, and the modules it imports.

jupyter-cache keys a notebook on its code alone, so each page gets a hidden cell
(:func:`context_cell`) naming the device, torch and a hash of every module it imports.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import re
from collections.abc import Container
from functools import cache
from pathlib import Path

_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)
_CODE_CELL = re.compile(
    r"^(?P<fence>`{3,}|~{3,})\{code-cell\}[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$",
    re.DOTALL | re.MULTILINE,
)


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
    """Map every module of the package under ``src_dir`` to its file."""
    root = src_dir / "tensorbook"
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(src_dir).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


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


def page_code(source: str) -> list[str]:
    """The code of each ``code-cell`` of a MyST-NB page, without its option lines."""
    cells = []
    for match in _CODE_CELL.finditer(source):
        lines = match.group("body").splitlines()
        if lines and lines[0].strip() == "---":  # a YAML block of options
            end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), 0)
            lines = lines[end + 1 :]
        while lines and lines[0].startswith(":"):  # short-form options such as :tags:
            lines = lines[1:]
        cells.append("\n".join(lines))
    return cells


def _parse_cell(code: str) -> ast.AST | None:
    # IPython magics and shell escapes are not Python; they import nothing of ours
    kept = [line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))]
    for text in (code, "\n".join(kept)):
        with contextlib.suppress(SyntaxError):
            return ast.parse(text)
    return None


def page_dependencies(source: str, src_dir: Path) -> list[str]:
    """Every package module that the page's code imports, directly or not, sorted."""
    graph = _module_dependencies(src_dir)  # each module's, its parent packages included
    pending = set()
    for code in page_code(source):
        tree = _parse_cell(code)
        if tree is not None:
            pending |= _imported_modules(tree, graph)
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


def page_hashes(source: str, src_dir: Path) -> dict[Path, tuple[str, str]]:
    """For each module the page depends on: its file, its dotted name and its hash."""
    modules = package_modules(src_dir)
    return {
        modules[name]: (name, _file_hash(modules[name]))
        for name in page_dependencies(source, src_dir)
    }


def is_text_notebook(source: str) -> bool:
    """Whether a page is a MyST-NB notebook (``file_format: mystnb`` in its front matter)."""
    front = _FRONT_MATTER.match(source)
    return bool(front and re.search(r"^file_format:\s*mystnb\s*$", front[1], re.MULTILINE))


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
