"""The ``mathml`` HTML math renderer: the pages' TeX made MathML at build time.

latex2mathml converts it, so reading the math needs no script (Sphinx's MathJax, from a CDN).
"""

from __future__ import annotations

import re

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.application import Sphinx
from sphinx.locale import _
from sphinx.util import logging
from sphinx.writers.html5 import HTML5Translator

from tensorbook_build.upstream import get_node_equation_number

logger = logging.getLogger(__name__)

# latex2mathml lays out `split` as an aligned table but not the amsmath
# environments that mean the same thing in a display, so those are renamed.
_ALIGN_ENVIRONMENTS = re.compile(r"\\(begin|end)\{(?:aligned|align\*?|eqnarray\*?)\}")


def display_parts(tex: str) -> list[str]:
    r"""A display's equations, each as latex2mathml lays it out best.

    Examples
    --------
    >>> display_parts(r"a &= b \\ c &= d" "\n\n" r"\begin{aligned}x\end{aligned}")
    ['\\begin{split}a &= b \\\\ c &= d\\end{split}', '\\begin{split}x\\end{split}']
    """
    tex = _ALIGN_ENVIRONMENTS.sub(lambda m: rf"\{m.group(1)}{{split}}", tex)
    parts = []
    for part in (p for p in tex.split("\n\n") if p.strip()):
        lines = r"\\" in part and r"\begin{" not in part
        parts.append(r"\begin{split}" + part + r"\end{split}" if lines else part)
    return parts


def _convert(translator: HTML5Translator, node: nodes.Element, tex: str, display: str) -> str:
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


def visit_math(translator: HTML5Translator, node: nodes.math) -> None:
    """Inline math."""
    translator.body.append(translator.starttag(node, "span", "", CLASS="math notranslate"))
    translator.body.append(_convert(translator, node, node.astext(), "inline"))
    translator.body.append("</span>")
    raise nodes.SkipNode


def visit_displaymath(translator: HTML5Translator, node: nodes.math_block) -> None:
    """A display, with its equation number and permalink when it has one."""
    translator.body.append(translator.starttag(node, "div", CLASS="math notranslate"))
    if node.get("number"):
        number = get_node_equation_number(translator, node)
        translator.body.append(f'<span class="eqno">({number})')
        translator.add_permalink_ref(node, _("Link to this equation"))
        translator.body.append("</span>")
    for part in display_parts(node.astext()):
        translator.body.append(_convert(translator, node, part, "block"))
    translator.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app: Sphinx) -> dict[str, object]:
    """Register the renderer; ``conf.py`` selects it with ``html_math_renderer``."""
    app.add_html_math_renderer(
        "mathml", inline_renderers=(visit_math, None), block_renderers=(visit_displaymath, None)
    )
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
