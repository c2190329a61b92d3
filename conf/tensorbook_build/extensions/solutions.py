"""Sphinx adapter: exercise solutions, folded until the reader opens them, run by the build.

A solution is made of ordinary executed cells between two markers, so it runs at build
time like every cell, and a solution that ends with a failing assertion fails the build::

    ```{solution-start}
    Solution
    ```

    ```{code-cell} ipython3
    ...
    assert ...
    ```

    ```{solution-end}
    ```

The start marker's content is the label the reader clicks, a translatable message like
any paragraph. In HTML the markers become a native ``<details>`` element with that label
as its ``<summary>``: no script and no stylesheet, so the site stays as light as it is.
In the PDF, where nothing folds, the label is a bold line before the solution's cells.
A start without its end (or the reverse), or a pair split across sections, stops the
build naming the page and the line.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective
from sphinx.writers.html5 import HTML5Translator
from sphinx.writers.latex import LaTeXTranslator


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
    where = f"{node.source}:{node.line}: {message}"
    raise ExtensionError(where)


def _visit_start(self: HTML5Translator, node: solution_start) -> None:
    self.body.append('<details class="solution">')


def _visit_summary(self: HTML5Translator, node: solution_summary) -> None:
    self.body.append("<summary>")


def _depart_summary(self: HTML5Translator, node: solution_summary) -> None:
    self.body.append("</summary>")


def _visit_end(self: HTML5Translator, node: solution_end) -> None:
    self.body.append("</details>")


# On paper nothing folds: a solution is its label, in bold, then its cells.
def _visit_summary_latex(self: LaTeXTranslator, node: solution_summary) -> None:
    self.body.append("\n\\par\\medskip\\noindent\\textbf{")


def _depart_summary_latex(self: LaTeXTranslator, node: solution_summary) -> None:
    self.body.append("}\\par\\nopagebreak\n")


def _visit_end_latex(self: LaTeXTranslator, node: solution_end) -> None:
    self.body.append("\n\\par\\medskip\n")


def _nothing(self: object, node: nodes.Node) -> None:
    pass


def _skip(self: object, node: nodes.Node) -> None:
    raise nodes.SkipNode


def setup(app: Sphinx) -> dict[str, object]:
    """Register the nodes, the directives and the pairing check."""
    app.add_node(
        solution_start,
        html=(_visit_start, _nothing),
        latex=(_nothing, _nothing),
        text=(_skip, None),
    )
    app.add_node(
        solution_summary,
        html=(_visit_summary, _depart_summary),
        latex=(_visit_summary_latex, _depart_summary_latex),
        text=(_skip, None),
    )
    app.add_node(
        solution_end,
        html=(_visit_end, _nothing),
        latex=(_visit_end_latex, _nothing),
        text=(_skip, None),
    )
    app.add_directive("solution-start", SolutionStart)
    app.add_directive("solution-end", SolutionEnd)
    app.connect("doctree-read", _check_pairs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
