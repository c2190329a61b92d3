"""Render the book's math to MathML while building, so no script is needed to read it.

Sphinx's default renderer, MathJax, is a large script fetched from a CDN at
read time; the book must load nothing from another host. Browsers render
MathML Core natively, so the TeX in the pages is converted once here, with
latex2mathml, and the page carries the result.
"""

from __future__ import annotations

import re

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

# latex2mathml lays out `split` as an aligned table but not the amsmath
# environments that mean the same thing in a display, so those are renamed.
_ALIGN_ENVIRONMENTS = re.compile(r"\\(begin|end)\{(?:aligned|align\*?|eqnarray\*?)\}")


def _to_mathml(translator, node: nodes.Element, tex: str, display: str) -> str:
    try:
        return convert(tex, display=display)
    except Exception as error:  # noqa: BLE001 - latex2mathml raises many types, all bad TeX
        logger.warning(
            "cannot convert this TeX to MathML (%s: %s): %s",
            type(error).__name__,
            error,
            tex,
            location=node,
            type="mathml",
        )
        return f"<code>{translator.encode(tex)}</code>"


def visit_math(translator, node: nodes.math) -> None:
    translator.body.append(translator.starttag(node, "span", "", CLASS="math notranslate"))
    translator.body.append(_to_mathml(translator, node, node.astext(), "inline"))
    translator.body.append("</span>")
    raise nodes.SkipNode


def visit_displaymath(translator, node: nodes.math_block) -> None:
    translator.body.append(translator.starttag(node, "div", CLASS="math notranslate"))
    if node.get("number"):
        number = get_node_equation_number(translator, node)
        translator.body.append(f'<span class="eqno">({number})')
        translator.add_permalink_ref(node, _("Link to this equation"))
        translator.body.append("</span>")
    tex = _ALIGN_ENVIRONMENTS.sub(lambda m: rf"\{m.group(1)}{{split}}", node.astext())
    for part in (p for p in tex.split("\n\n") if p.strip()):
        if r"\\" in part and r"\begin{" not in part:
            part = r"\begin{split}" + part + r"\end{split}"
        translator.body.append(_to_mathml(translator, node, part, "block"))
    translator.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer(
        "mathml", inline_renderers=(visit_math, None), block_renderers=(visit_displaymath, None)
    )
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
