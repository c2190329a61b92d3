"""The book's folds (exercise solutions, deeper sections, recorded outputs), in each format.

In HTML a fold is a native ``<details>`` with a ``<summary>`` (no script, no
stylesheet); in the PDF, where nothing folds, its label is a bold line before its content.
A fold written in a page is a pair of markers around executed cells, a start holding the
label and an end; :func:`check_pairs` stops a build whose markers do not pair.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, Protocol

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

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


class Fold(NamedTuple):
    """A kind of fold written in the pages: its nodes, and a label for the error message."""

    start: type[nodes.Element]  # the start marker, which holds the summary
    summary: type[nodes.TextElement]  # the label: a text element, translated like a paragraph
    end: type[nodes.Element]
    example_label: str


_FOLDS: dict[str, Fold] = {}  # by the markers' directive name without -start or -end


def add_fold(app: Sphinx, name: str, fold: Fold) -> None:
    """Register ``{name}-start`` and ``{name}-end``, folding in HTML as ``<details class=name>``."""
    _FOLDS[name] = fold
    add_node(app, fold.start, (f'<details class="{name}">', ""))
    add_node(app, fold.summary, ("<summary>", "</summary>"), LATEX_SUMMARY)
    add_node(app, fold.end, ("</details>", ""), LATEX_END)
    app.add_directive(f"{name}-start", MarkerStart)
    app.add_directive(f"{name}-end", MarkerEnd)


class MarkerStart(SphinxDirective):
    """A fold's start marker, whose content is the label the reader clicks."""

    has_content = True

    def run(self) -> list[nodes.Node]:
        """The start marker, holding the label."""
        name = self.name.removesuffix("-start")
        fold = _FOLDS[name]
        text = "\n".join(self.content).strip()
        if not text:
            msg = f"{name}-start needs a label as its content, e.g. {fold.example_label!r}"
            raise self.error(msg)
        start = fold.start()
        self.set_source_info(start)
        textnodes, messages = self.state.inline_text(text, self.lineno)
        summary = fold.summary(text, "", *textnodes)
        self.set_source_info(summary)
        start += summary
        return [start, *messages]


class MarkerEnd(SphinxDirective):
    """A fold's end marker."""

    def run(self) -> list[nodes.Node]:
        """The end marker."""
        end = _FOLDS[self.name.removesuffix("-end")].end()
        self.set_source_info(end)
        return [end]


def check_pairs(
    doctree: nodes.document, start: type[nodes.Element], end: type[nodes.Element], name: str
) -> None:
    """Log an error at each ``start`` not followed, among its siblings, by its ``end``.

    ``name`` is the markers' directive name without ``-start``/``-end`` (``solution``):
    the message names the marker the author wrote, and the location the page and line.
    """
    for parent in doctree.findall(nodes.Element):
        open_start: nodes.Element | None = None
        for child in parent.children:
            if isinstance(child, start):
                if open_start is not None:
                    _fail(open_start, f"{name}-start without a {name}-end before the next")
                open_start = child
            elif isinstance(child, end):
                if open_start is None:
                    _fail(child, f"{name}-end without a {name}-start before it")
                open_start = None
        if open_start is not None:
            _fail(open_start, f"{name}-start without a {name}-end in the same section")


def _fail(node: nodes.Node, message: str) -> None:
    logger.error(message, location=node, type="tensorbook", subtype="folds")
