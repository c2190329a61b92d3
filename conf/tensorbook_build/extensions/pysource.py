"""Sphinx adapter for :mod:`tensorbook_build.pysource`: the ``{pysource}`` directive.

It reads the object from the file as it is at build time (so the page cannot drift
from the code), leaves out the docstrings, and records the file as a dependency of
the page, so editing it rebuilds the page.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from tensorbook_build.pysource import module_name, source_without_docstrings
from tensorbook_build.upstream import container_wrapper


class PySource(SphinxDirective):
    """``{pysource} <file>`` with ``:pyobject: name``."""

    required_arguments = 1
    option_spec: ClassVar = {"pyobject": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        """The object's source as a captioned code block."""
        relative, absolute = self.env.relfn2path(self.arguments[0])
        self.env.note_dependency(relative)
        dotted = self.options.get("pyobject")
        if not dotted:
            msg = "pysource needs :pyobject: naming a function or class"
            raise self.error(msg)
        try:
            text = Path(absolute).read_text(encoding="utf-8")
        except OSError as error:
            msg = f"cannot read {self.arguments[0]}: {error}"
            raise self.error(msg) from None
        code = source_without_docstrings(text, dotted)
        if code is None:
            msg = f"{self.arguments[0]} defines no function or class {dotted!r}"
            raise self.error(msg)
        literal = nodes.literal_block(code, code, language="python")
        self.set_source_info(literal)
        caption = f"{module_name(Path(absolute))}.{dotted} (docstring left out)"
        return [container_wrapper(self, literal, caption)]


def setup(app: Sphinx) -> dict[str, object]:
    """Register the directive."""
    app.add_directive("pysource", PySource)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
