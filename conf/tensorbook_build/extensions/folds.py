"""Sphinx adapter: the book's folds (exercise solutions, deeper sections, recorded outputs).

In HTML a fold is a native ``<details>`` with a ``<summary>`` (no script, no
stylesheet); in the PDF, where nothing folds, its label is a bold line before its content.
A fold written in a page is a pair of markers around prose and executed cells, a start
whose content is the label the reader clicks (translated like any paragraph) and an end:
``{solution-start}`` and ``{solution-end}`` around an exercise's solution,
``{deeper-start}`` and ``{deeper-end}`` around optional material a beginner reads past
(its cells run and are checked like every other). A start without its end (or the
reverse), or a pair split across sections, is an error naming the page and the line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, Protocol

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from tensorbook_build.extensions import hooks

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


# docutils names its node classes in lower case; these follow it
class fold_summary(nodes.Part, nodes.TextElement):
    """A written fold's clickable label; its text is translated like a paragraph's."""


class solution_start(nodes.General, nodes.Element):
    """Where an exercise's solution opens."""


class solution_end(nodes.General, nodes.Element):
    """Where an exercise's solution closes."""


class deeper_start(nodes.General, nodes.Element):
    """Where a deeper section opens."""


class deeper_end(nodes.General, nodes.Element):
    """Where a deeper section closes."""


class Fold(NamedTuple):
    """A kind of fold written in the pages: its markers' nodes, and a label for errors."""

    start: type[nodes.Element]  # the start marker, which holds the summary
    end: type[nodes.Element]
    example_label: str


FOLDS = {  # by the markers' directive name without -start or -end
    "solution": Fold(solution_start, solution_end, "Solution"),
    "deeper": Fold(deeper_start, deeper_end, "Deeper: how torch picks a result's type"),
}


class MarkerStart(SphinxDirective):
    """A fold's start marker, whose content is the label the reader clicks."""

    has_content = True

    def run(self) -> list[nodes.Node]:
        """The start marker, holding the label."""
        name = self.name.removesuffix("-start")
        fold = FOLDS[name]
        text = "\n".join(self.content).strip()
        if not text:
            msg = f"{name}-start needs a label as its content, e.g. {fold.example_label!r}"
            raise self.error(msg)
        start = fold.start()
        self.set_source_info(start)
        textnodes, messages = self.state.inline_text(text, self.lineno)
        summary = fold_summary(text, "", *textnodes)
        self.set_source_info(summary)
        start += summary
        return [start, *messages]


class MarkerEnd(SphinxDirective):
    """A fold's end marker."""

    def run(self) -> list[nodes.Node]:
        """The end marker."""
        end = FOLDS[self.name.removesuffix("-end")].end()
        self.set_source_info(end)
        return [end]


def _check_pairs(_app: Sphinx, doctree: nodes.document) -> None:
    """Log an error at each start marker not followed, among its siblings, by its end."""
    for name, fold in FOLDS.items():
        for parent in doctree.findall(nodes.Element):
            open_start: nodes.Element | None = None
            for child in parent.children:
                if isinstance(child, fold.start):
                    if open_start is not None:
                        _fail(open_start, f"{name}-start without a {name}-end before the next")
                    open_start = child
                elif isinstance(child, fold.end):
                    if open_start is None:
                        _fail(child, f"{name}-end without a {name}-start before it")
                    open_start = None
            if open_start is not None:
                _fail(open_start, f"{name}-start without a {name}-end in the same section")


def _fail(node: nodes.Node, message: str) -> None:
    logger.error(message, location=node, type="tensorbook", subtype="folds")


def setup(app: Sphinx) -> dict[str, object]:
    """Register each written fold's nodes and markers, folding as ``<details class=name>``."""
    add_node(app, fold_summary, ("<summary>", "</summary>"), LATEX_SUMMARY)
    for name, fold in FOLDS.items():
        add_node(app, fold.start, (f'<details class="{name}">', ""))
        add_node(app, fold.end, ("</details>", ""), LATEX_END)
        app.add_directive(f"{name}-start", MarkerStart)
        app.add_directive(f"{name}-end", MarkerEnd)
    hooks.connect(app, __name__)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
