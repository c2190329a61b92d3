"""Sphinx adapter for :mod:`tensorbook_build.pictures`: the book's pictures, inline.

A picture's SVG output is put in the page itself (a MyST-NB MIME renderer plugin, named
in ``pyproject.toml``), not linked as an image: its words are text of the page and its
ink the page's colour (``currentColor``). A translated edition puts its words in its
own (``sphinx.po``); the PDF gets a TikZ drawing.
"""

from __future__ import annotations

from typing import ClassVar

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import get_translation

from tensorbook_build.pictures import is_picture, picture_latex, translate_picture
from tensorbook_build.settings import SOURCE_LANGUAGE
from tensorbook_build.upstream import MimeData, NbElementRenderer

CLASS = "tb-picture"


class InlinePictures:
    """MyST-NB's MIME renderer plugin (``myst_nb.mime_renderers``) for the pictures."""

    mime_priority_overrides: ClassVar[list[tuple[str, str, int]]] = [("latex", "image/svg+xml", 5)]

    @staticmethod
    def handle_mime(
        renderer: NbElementRenderer,  # noqa: ARG004 - the plugin protocol's signature
        data: MimeData,
        inline: bool,
    ) -> list[nodes.Element] | None:
        """A raw node holding the picture, or ``None`` for any other output."""
        if inline or data.mime_type != "image/svg+xml" or not is_picture(data.string):
            return None
        return [nodes.raw("", data.string, format="html", classes=["output", CLASS])]


def _render_pictures(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    translate = get_translation("sphinx")
    for node in list(doctree.findall(nodes.raw)):
        if CLASS not in node["classes"]:
            continue
        svg = node.astext()
        if app.config.language != SOURCE_LANGUAGE:
            svg = translate_picture(svg, translate)
        if app.builder.format == "latex":
            replacement = nodes.raw("", picture_latex(svg), format="latex", classes=[CLASS])
        else:
            replacement = nodes.raw("", svg, format="html", classes=node["classes"])
        node.replace_self(replacement)


def setup(app: Sphinx) -> dict[str, object]:
    """Translate and, for the PDF, redraw each picture once its page is resolved."""
    app.connect("doctree-resolved", _render_pictures)
    app.add_latex_package("tikz")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
