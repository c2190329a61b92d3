"""Translator pieces for the book's folds: exercise solutions and recorded outputs.

In HTML a fold is a native ``<details>`` with a ``<summary>`` (no script, no
stylesheet); in the PDF, where nothing folds, its label is a bold line before its content.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from docutils import nodes


class Writer(Protocol):
    """What these write into: the HTML and LaTeX translators' list of output strings."""

    body: list[str]


def writes(markup: str) -> Callable[[Writer, nodes.Node], None]:
    """A visitor that writes ``markup`` into the translator's body (HTML or LaTeX)."""

    def visit(self: Writer, node: nodes.Node) -> None:
        self.body.append(markup)

    return visit


# on paper: the label, kept with what follows, and the space that closes the fold
latex_summary = (writes("\n\\par\\medskip\\noindent\\textbf{"), writes("}\\par\\nopagebreak\n"))
latex_fold_end = writes("\n\\par\\medskip\n")


def nothing(self: nodes.NodeVisitor, node: nodes.Node) -> None:
    """Write nothing, and go on into the node's children."""


def skip(self: nodes.NodeVisitor, node: nodes.Node) -> None:
    """Leave the node and its children out (the plain-text builder)."""
    raise nodes.SkipNode
