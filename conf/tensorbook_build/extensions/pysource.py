"""Sphinx adapter: ``{pysource}``, a Python object's real source without its docstrings.

The docstrings of the object and of all it defines are left out; the file is read at
build time, and is a dependency of the page::

    ```{pysource} ../src/tensorbook/numpy_net.py
    :pyobject: gradients
    ```
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from tensorbook_build.upstream import container_wrapper

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _find(tree: ast.Module, dotted: str) -> _Definition | None:
    body, scope = tree.body, None
    for name in dotted.split("."):
        found = [n for n in body if isinstance(n, _DEFINITIONS)]
        scope = next((n for n in found if n.name == name), None)
        if scope is None:
            return None
        body = scope.body
    return scope


def source_without_docstrings(text: str, dotted: str) -> str | None:
    """The source of ``dotted`` in ``text``, decorators included, docstrings left out."""
    node = _find(ast.parse(text), dotted)
    if node is None:
        return None
    lines = text.splitlines()
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    dropped: set[int] = set()
    for inner in ast.walk(node):
        if isinstance(inner, _DEFINITIONS) and ast.get_docstring(inner) is not None:
            doc = inner.body[0]
            dropped.update(range(doc.lineno, (doc.end_lineno or doc.lineno) + 1))
    last = node.end_lineno or node.lineno  # parsed from source, so never None
    kept = [lines[i - 1] for i in range(first, last + 1) if i not in dropped]
    # a blank line left where a docstring stood directly above the body is noise
    cleaned = [line for i, line in enumerate(kept) if line.strip() or (i and kept[i - 1].strip())]
    return textwrap.dedent("\n".join(cleaned)).strip("\n")


def module_name(path: Path) -> str:
    """The dotted name of a module file below the last ``src`` folder, else its stem.

    >>> module_name(Path("/home/reader/src/book/src/tensorbook/speed/step.py"))
    'tensorbook.speed.step'
    """
    parts = path.with_suffix("").parts
    if "src" not in parts:
        return parts[-1]
    return ".".join(parts[len(parts) - parts[::-1].index("src") :])


class PySource(SphinxDirective):
    """``{pysource} <file>`` with ``:pyobject: name``."""

    required_arguments = 1
    option_spec: ClassVar = {"pyobject": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        """The object's source as a captioned code block."""
        relative, absolute = self.env.relfn2path(self.arguments[0])
        self.env.note_dependency(relative)
        dotted = self.options.get("pyobject")
        if not dotted:
            msg = "pysource needs :pyobject: naming a function or class"
            raise self.error(msg)
        try:
            text = Path(absolute).read_text(encoding="utf-8")
        except OSError as error:
            msg = f"cannot read {self.arguments[0]}: {error}"
            raise self.error(msg) from None
        code = source_without_docstrings(text, dotted)
        if code is None:
            msg = f"{self.arguments[0]} defines no function or class {dotted!r}"
            raise self.error(msg)
        literal = nodes.literal_block(code, code, language="python")
        self.set_source_info(literal)
        caption = f"{module_name(Path(absolute))}.{dotted} (docstring left out)"
        return [container_wrapper(self, literal, caption)]


def setup(app: Sphinx) -> dict[str, object]:
    """Register the directive."""
    app.add_directive("pysource", PySource)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
