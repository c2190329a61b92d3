"""Sphinx adapter: exercise solutions, folded until the reader opens them, run by the build.

A solution is the executed cells between ``{solution-start}``, whose content is the
label the reader clicks (translated like any paragraph), and ``{solution-end}``. A start
without its end (or the reverse), or a pair split across sections, is an error naming
the page and the line.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from tensorbook_build.extensions import folds

logger = logging.getLogger(__name__)


# docutils names its node classes in lower case; these follow it
class solution_summary(nodes.Part, nodes.TextElement):
    """The clickable label; its text is translated like a paragraph's."""


class solution_start(nodes.General, nodes.Element):
    """Where a solution opens."""


class solution_end(nodes.General, nodes.Element):
    """Where a solution closes."""


class SolutionStart(SphinxDirective):
    """``{solution-start}``, whose content is the label the reader clicks."""

    has_content = True

    def run(self) -> list[nodes.Node]:
        """The start marker, holding the label."""
        text = "\n".join(self.content).strip()
        if not text:
            msg = "solution-start needs a label as its content, e.g. 'Solution'"
            raise self.error(msg)
        start = solution_start()
        self.set_source_info(start)
        textnodes, messages = self.state.inline_text(text, self.lineno)
        summary = solution_summary(text, "", *textnodes)
        self.set_source_info(summary)
        start += summary
        return [start, *messages]


class SolutionEnd(SphinxDirective):
    """``{solution-end}``."""

    def run(self) -> list[nodes.Node]:
        """The end marker."""
        end = solution_end()
        self.set_source_info(end)
        return [end]


def _check_pairs(_app: Sphinx, doctree: nodes.document) -> None:
    """Every start is followed, among its siblings, by its end, with no start between."""
    for parent in doctree.findall(nodes.Element):
        open_start: solution_start | None = None
        for child in parent.children:
            if isinstance(child, solution_start):
                if open_start is not None:
                    _fail(open_start, "solution-start without a solution-end before the next")
                open_start = child
            elif isinstance(child, solution_end):
                if open_start is None:
                    _fail(child, "solution-end without a solution-start before it")
                open_start = None
        if open_start is not None:
            _fail(open_start, "solution-start without a solution-end in the same section")


def _fail(node: nodes.Node, message: str) -> None:
    logger.error(message, location=node, type="tensorbook", subtype="solutions")


def setup(app: Sphinx) -> dict[str, object]:
    """Register the nodes, the directives and the pairing check."""
    folds.add_node(app, solution_start, ('<details class="solution">', ""))
    folds.add_node(app, solution_summary, ("<summary>", "</summary>"), folds.LATEX_SUMMARY)
    folds.add_node(app, solution_end, ("</details>", ""), folds.LATEX_END)
    app.add_directive("solution-start", SolutionStart)
    app.add_directive("solution-end", SolutionEnd)
    app.connect("doctree-read", _check_pairs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
