"""Sphinx adapter: exercise solutions, folded until the reader opens them, run by the build.

A solution is the executed cells between ``{solution-start}``, whose content is the
label the reader clicks (translated like any paragraph), and ``{solution-end}``. A start
without its end (or the reverse), or a pair split across sections, is an error naming
the page and the line.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx

from tensorbook_build.extensions import folds, hooks


# docutils names its node classes in lower case; these follow it
class solution_summary(nodes.Part, nodes.TextElement):
    """The clickable label; its text is translated like a paragraph's."""


class solution_start(nodes.General, nodes.Element):
    """Where a solution opens."""


class solution_end(nodes.General, nodes.Element):
    """Where a solution closes."""


def _check_pairs(_app: Sphinx, doctree: nodes.document) -> None:
    folds.check_pairs(doctree, solution_start, solution_end, "solution")


def setup(app: Sphinx) -> dict[str, object]:
    """Register the nodes, the directives and the pairing check."""
    fold = folds.Fold(solution_start, solution_summary, solution_end, example_label="Solution")
    folds.add_fold(app, "solution", fold)
    hooks.connect(app, __name__)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
