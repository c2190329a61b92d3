"""Sphinx adapter: optional deeper material, folded under a label, executed like the rest.

A deeper section is the prose and executed cells between ``{deeper-start}``, whose
content is the label the reader clicks (translated like any paragraph), and
``{deeper-end}``. The beginner's path reads past it closed; what it says is still run and
checked by the build, as every cell is. In HTML it is a ``<details class="deeper">``;
in the PDF its label is a bold line. A start without its end (or the reverse), or a pair
split across sections, is an error naming the page and the line, as for solutions.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx

from tensorbook_build.extensions import folds, hooks


# docutils names its node classes in lower case; these follow it
class deeper_summary(nodes.Part, nodes.TextElement):
    """The clickable label; its text is translated like a paragraph's."""


class deeper_start(nodes.General, nodes.Element):
    """Where a deeper section opens."""


class deeper_end(nodes.General, nodes.Element):
    """Where a deeper section closes."""


class DeeperStart(folds.MarkerStart):
    """``{deeper-start}``, whose content is the label the reader clicks."""

    start, summary, fold_name = deeper_start, deeper_summary, "deeper"
    example_label = "Deeper: how torch picks a result's type"


class DeeperEnd(folds.MarkerEnd):
    """``{deeper-end}``."""

    end = deeper_end


def _check_pairs(_app: Sphinx, doctree: nodes.document) -> None:
    """Every start is followed, among its siblings, by its end, with no start between."""
    folds.check_pairs(doctree, deeper_start, deeper_end, "deeper")


def setup(app: Sphinx) -> dict[str, object]:
    """Register the nodes, the directives and the pairing check."""
    folds.add_node(app, deeper_start, ('<details class="deeper">', ""))
    folds.add_node(app, deeper_summary, ("<summary>", "</summary>"), folds.LATEX_SUMMARY)
    folds.add_node(app, deeper_end, ("</details>", ""), folds.LATEX_END)
    app.add_directive("deeper-start", DeeperStart)
    app.add_directive("deeper-end", DeeperEnd)
    hooks.connect(app, __name__)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
