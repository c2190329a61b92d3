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


def _check_pairs(_app: Sphinx, doctree: nodes.document) -> None:
    folds.check_pairs(doctree, deeper_start, deeper_end, "deeper")


def setup(app: Sphinx) -> dict[str, object]:
    """Register the nodes, the directives and the pairing check."""
    label = "Deeper: how torch picks a result's type"  # an example, for the error message
    folds.add_fold(app, "deeper", folds.Fold(deeper_start, deeper_summary, deeper_end, label))
    hooks.connect(app, __name__)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
