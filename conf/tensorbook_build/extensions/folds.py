"""The book's folds, exercise solutions and recorded outputs, in each format.

In HTML a fold is a native ``<details>`` with a ``<summary>`` (no script, no
stylesheet); in the PDF, where nothing folds, its label is a bold line before its content.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from docutils import nodes
from sphinx.application import Sphinx

# on paper: the label, kept with what follows, and the space that closes the fold
LATEX_SUMMARY = ("\n\\par\\medskip\\noindent\\textbf{", "}\\par\\nopagebreak\n")
LATEX_END = ("\n\\par\\medskip\n", "")


class Writer(Protocol):
    """What these write into: the HTML and LaTeX translators' list of output strings."""

    body: list[str]


def _writes(markup: str) -> Callable[[Writer, nodes.Node], None]:
    def visit(self: Writer, node: nodes.Node) -> None:
        if markup:
            self.body.append(markup)

    return visit


def add_node(
    app: Sphinx, node: type[nodes.Element], html: tuple[str, str], latex: tuple[str, str] = ("", "")
) -> None:
    """Register ``node``: the markup written before and after its children, none in plain text."""
    app.add_node(
        node,
        html=(_writes(html[0]), _writes(html[1])),
        latex=(_writes(latex[0]), _writes(latex[1])),
        text=(skip, None),
    )


def skip(self: nodes.NodeVisitor, node: nodes.Node) -> None:
    """Leave the node and its children out."""
    raise nodes.SkipNode
