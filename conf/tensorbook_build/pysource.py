"""A Python object's real source, without its docstrings, for the ``{pysource}`` directive.

The book's programs carry numpydoc docstrings with doctests; quoted in a page,
those would bury the dozen lines the text is about, so the directive
(:mod:`tensorbook_build.extensions.pysource`) leaves out the docstrings of the
object and of anything defined in it::

    ```{pysource} ../src/tensorbook/numpy_net.py
    :pyobject: gradients
    ```
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

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
    """The dotted name of a module file below a ``src`` folder, else its stem.

    Examples
    --------
    >>> module_name(Path("book/src/tensorbook/numpy_net.py")), module_name(Path("x/tool.py"))
    ('tensorbook.numpy_net', 'tool')
    """
    parts = path.with_suffix("").parts
    return ".".join(parts[parts.index("src") + 1 :]) if "src" in parts else parts[-1]
