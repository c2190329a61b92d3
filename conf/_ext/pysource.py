"""``{pysource}``: show a Python object's real source, without its docstring.

The book's programs carry numpydoc docstrings with doctests; quoted in a page,
those would bury the dozen lines the text is about. This directive reads the
object from the file as it is at build time (so the page cannot drift from the
code), leaves out the docstrings of the object and of anything defined in it,
and records the file as a dependency of the page, so editing it rebuilds the
page::

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
from sphinx.directives.code import container_wrapper
from sphinx.util.docutils import SphinxDirective

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _find(tree: ast.Module, dotted: str) -> ast.AST | None:
    scope: ast.AST = tree
    for name in dotted.split("."):
        found = [n for n in getattr(scope, "body", []) if isinstance(n, _DEFINITIONS)]
        scope = next((n for n in found if n.name == name), None)
        if scope is None:
            return None
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
            dropped.update(range(doc.lineno, doc.end_lineno + 1))
    kept = [lines[i - 1] for i in range(first, node.end_lineno + 1) if i not in dropped]
    # a blank line left where a docstring stood directly above the body is noise
    cleaned = [line for i, line in enumerate(kept) if line.strip() or (i and kept[i - 1].strip())]
    return textwrap.dedent("\n".join(cleaned)).strip("\n")


class PySource(SphinxDirective):
    required_arguments = 1
    option_spec: ClassVar = {"pyobject": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        relative, absolute = self.env.relfn2path(self.arguments[0])
        self.env.note_dependency(relative)
        dotted = self.options.get("pyobject")
        if not dotted:
            raise self.error("pysource needs :pyobject: naming a function or class")
        try:
            text = Path(absolute).read_text(encoding="utf-8")
        except OSError as error:
            raise self.error(f"cannot read {self.arguments[0]}: {error}") from None
        code = source_without_docstrings(text, dotted)
        if code is None:
            raise self.error(f"{self.arguments[0]} defines no function or class {dotted!r}")
        literal = nodes.literal_block(code, code, language="python")
        self.set_source_info(literal)
        parts = Path(absolute).with_suffix("").parts
        module = ".".join(parts[parts.index("src") + 1 :]) if "src" in parts else parts[-1]
        caption = f"{module}.{dotted} (docstring left out)"
        return [container_wrapper(self, literal, caption)]


def setup(app):
    app.add_directive("pysource", PySource)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
