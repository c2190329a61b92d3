"""The book's pictures (:mod:`tensorbook.draw`), inline, in each edition and each format.

A picture's SVG output is put in the page itself (a MyST-NB MIME renderer plugin, named
in ``conf/pyproject.toml``), not linked as an image. A page draws it once, in the source
edition's words: :func:`translate_picture` puts them in an edition's words and
:func:`picture_latex` writes a TikZ drawing for the PDF, since LaTeX cannot include an SVG.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html import escape, unescape
from typing import ClassVar

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import get_translation

from tensorbook.draw.words import WORDS
from tensorbook.wording import fill, parse
from tensorbook_build.extensions import hooks
from tensorbook_build.settings import SOURCE_LANGUAGE
from tensorbook_build.upstream import MimeData, NbElementRenderer

CLASS = "tb-picture"
_MARKED = re.compile(r'(<(text|title|desc)\b[^>]*?\bdata-w="(\w+)"[^>]*>)([^<]*)(</\2>)')
_TAG = re.compile(r"<(/?)(\w+)([^>]*?)/?>([^<]*)")
_ATTRIBUTE = re.compile(r'([\w:-]+)="([^"]*)"')
_LATEX_SPECIAL = {c: "\\" + c for c in "#$%&_{}"} | {
    "\\": r"\textbackslash{}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
PDF_WIDTH = 340.0  # points; the text is about 360 wide
PDF_HEIGHT = 480.0  # points; a TikZ drawing cannot break across pages: a taller one hit the footer


def is_picture(svg: str) -> bool:
    """Whether ``svg`` is one of the book's pictures (its root has class ``tb-picture``)."""
    return svg.lstrip().startswith("<svg") and 'class="tb-picture"' in svg.split(">", 1)[0]


def as_recorded(svg: str, label: str) -> str:
    """``svg``, drawn on another device: a measurement's words about this build become ``label``.

    A picture labelled "measured" is a measurement: its label and its description (which
    says it was measured while the page was built) are replaced, in the edition's words
    already, so no longer marked for translation.

    >>> as_recorded('<svg><desc data-w="d">this build</desc><text data-w="measured">here</text>'
    ...             '<text data-w="x">1 µs</text></svg>', "r")
    '<svg><desc>r</desc><text>r</text><text data-w="x">1 µs</text></svg>'
    """
    if 'data-w="measured"' not in svg:
        return svg

    def one(m: re.Match[str]) -> str:
        if m[2] == "text" and m[3] != "measured":
            return m[0]
        return m[1] + m[4] + escape(label, quote=False) + m[5]

    return re.sub(r'(<(desc|text)\b[^>]*?)\s+data-w="(\w+)"([^>]*>)[^<]*(</\2>)', one, svg)


def translate_picture(svg: str, translate: Callable[[str], str | None]) -> str:
    """``svg`` with each marked word (``data-w="<key>"``) in ``translate``'s words, its fields kept.

    A word whose key or text no template (:mod:`tensorbook.draw.words`) matches is left as it is.
    """

    def one(match: re.Match[str]) -> str:
        template = WORDS.get(match[3])
        fields = parse(template, unescape(match[4])) if template else None
        if template is None or fields is None:
            return match[0]
        words = translate(template) or template
        return match[1] + escape(fill(words, **fields), quote=False) + match[5]

    return _MARKED.sub(one, svg)


def picture_latex(svg: str) -> str:
    r"""The picture as a TikZ drawing, scaled to fit :data:`PDF_WIDTH` and :data:`PDF_HEIGHT`.

    It reads only the few elements :class:`tensorbook.draw.svg.Canvas` writes.

    Examples
    --------
    >>> svg = ('<svg class="tb-picture" viewBox="0 0 100 40"><title>t</title>'
    ...        '<g fill="#4d8fe8" fill-opacity="0.32" stroke="currentColor">'
    ...        '<rect x="0" y="0" width="10" height="5"/></g>'
    ...        '<text x="5" y="20" data-w="result">a_b</text></svg>')
    >>> print(picture_latex(svg))
    \begin{center}\begin{tikzpicture}[x=1pt,y=-1pt]
    \draw[fill={rgb,255:red,77;green,143;blue,232},fill opacity=0.32] (0,0) rectangle (10,5);
    \node[anchor=base west,inner sep=0,font=\fontsize{12}{14.4}\selectfont] at (5,20) {a\_b};
    \end{tikzpicture}\end{center}
    """
    head = dict(_ATTRIBUTE.findall(svg.split(">", 1)[0]))
    width, height = (float(n) for n in head["viewBox"].split()[2:])
    scale = min(1.0, PDF_WIDTH / width, PDF_HEIGHT / height)
    lines = [rf"\begin{{center}}\begin{{tikzpicture}}[x={_fmt(scale)}pt,y=-{_fmt(scale)}pt]"]
    stack: list[dict[str, str]] = [{}]
    for closing, tag, attributes, text in _TAG.findall(svg):
        inherited = stack[-1] | dict(_ATTRIBUTE.findall(attributes))
        if tag == "g" and closing:
            stack.pop()
        elif tag == "g":
            stack.append(inherited)
        elif not closing and tag not in ("title", "desc", "svg"):
            lines.append(_element(tag, inherited, text, scale))
    lines.append(r"\end{tikzpicture}\end{center}")
    return "\n".join(line for line in lines if line)


def _fmt(value: float) -> str:
    return f"{round(value, 3) + 0.0:g}"


def _element(tag: str, a: dict[str, str], text: str, scale: float) -> str:
    options = []
    if a.get("fill", "none") not in ("none", "currentColor"):
        red, green, blue = (int(a["fill"].lstrip("#")[i : i + 2], 16) for i in (0, 2, 4))
        options.append(f"fill={{rgb,255:red,{red};green,{green};blue,{blue}}}")
        if "fill-opacity" in a:
            options.append(f"fill opacity={a['fill-opacity']}")
    if "stroke-dasharray" in a:
        options.append("dashed")
    if tag == "rect":
        x, y, w, h = (float(a[name]) for name in ("x", "y", "width", "height"))
        if "stroke" not in a and not options:
            return ""
        command = r"\draw" if "stroke" in a else r"\fill"
        shown = f"[{','.join(options)}]" if options else ""
        return f"{command}{shown} ({_fmt(x)},{_fmt(y)}) rectangle ({_fmt(x + w)},{_fmt(y + h)});"
    if tag == "line":  # in ink: dashed, or faint (a grid line)
        kept = [o for o in options if o == "dashed"]
        if "stroke-opacity" in a:
            kept.append(f"draw opacity={a['stroke-opacity']}")
        shown = f"[{','.join(kept)}]" if kept else ""
        return f"\\draw{shown} ({a['x1']},{a['y1']}) -- ({a['x2']},{a['y2']});"
    if tag == "polyline":  # a chart's line, in its colour
        red, green, blue = (int(a["stroke"].lstrip("#")[i : i + 2], 16) for i in (0, 2, 4))
        points = " -- ".join(f"({p})" for p in a["points"].split())
        return (
            f"\\draw[draw={{rgb,255:red,{red};green,{green};blue,{blue}}},line width=1.5] {points};"
        )
    if tag == "circle":
        return f"\\fill[{','.join(options)}] ({a['cx']},{a['cy']}) circle [radius={a['r']}];"
    if tag == "polygon":
        points = " -- ".join(f"({p})" for p in a["points"].split())
        return f"\\fill {points} -- cycle;"
    if tag == "text":
        size = float(a.get("font-size", "12")) * scale
        anchor = {"middle": "base", "end": "base east"}.get(a.get("text-anchor", ""), "base west")
        font = rf"\fontsize{{{_fmt(size)}}}{{{_fmt(size * 1.2)}}}\selectfont"
        if "monospace" in a.get("style", ""):
            font += r"\ttfamily"
        if a.get("font-weight") == "bold":
            font += r"\bfseries"
        return (
            f"\\node[anchor={anchor},inner sep=0,font={font}] at ({a['x']},{a['y']}) "
            f"{{{''.join(_LATEX_SPECIAL.get(c, c) for c in unescape(text))}}};"
        )
    return ""


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
    hooks.connect(app, __name__)
    app.add_latex_package("tikz")
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
