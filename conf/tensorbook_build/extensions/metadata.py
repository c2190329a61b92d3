"""Sphinx adapter: what a page says about itself to browsers, search engines and social sites.

Each page gets a canonical address, a description (its first paragraph, in the
edition's language) and Open Graph / Twitter card metadata pointing to the book's
social card. The addresses are absolute, made from ``tensorbook_base_url`` (see
``tensorbook_build.site.site_base_url``) and the edition's folder; they are metadata only, so
the site still works wherever it is served.

sphinxext-opengraph was weighed for this and is not used: it has no ``og:locale``
per edition and no ``<meta name="description">``, which the two editions need.
"""

from __future__ import annotations

import html
import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config

from tensorbook_build.settings import EDITIONS

SOCIAL_CARD = "_static/social-card.png"
SOCIAL_CARD_SIZE = (1200, 630)
DESCRIPTION_LIMIT = 200
_TAG = re.compile(r"<[^>]+>")
_OG_LOCALES = {edition.code: edition.og_locale for edition in EDITIONS}


def shorten(text: str, limit: int = DESCRIPTION_LIMIT) -> str:
    """One line of at most ``limit`` characters, cut at a space where there is one.

    >>> shorten("A tensor is an array.  It has a shape.", 26)
    'A tensor is an array. It…'
    >>> shorten("张量是一个数组。", 5)
    '张量是一…'
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + "…"


def first_paragraph(doctree: nodes.document) -> str:
    """The text of a page's first paragraph of prose (not a table cell, not an output)."""
    for paragraph in doctree.findall(nodes.paragraph):
        if any(isinstance(a, (nodes.table, nodes.field_list)) for a in _ancestors(paragraph)):
            continue
        text = paragraph.astext().strip()
        if text:
            return text
    return ""


def _ancestors(node: nodes.Node) -> list[nodes.Node]:
    found = []
    while node.parent is not None:
        node = node.parent
        found.append(node)
    return found


def _set_base_url(app: Sphinx, config: Config) -> None:
    if config.tensorbook_base_url:
        config.html_baseurl = f"{config.tensorbook_base_url}{config.language}/"


def _add_metadata(
    app: Sphinx, pagename: str, templatename: str, context: dict, doctree: nodes.document | None
) -> None:
    config = app.config
    if not config.html_baseurl:
        return
    title = html.unescape(_TAG.sub("", context.get("title", ""))) or config.project
    description = shorten(first_paragraph(doctree)) if doctree is not None else ""
    page_url = f"{config.html_baseurl}{pagename}.html"
    tags = {
        "og:site_name": config.project,
        "og:title": title,
        "og:type": "article" if doctree is not None else "website",
        "og:url": page_url,
        "og:locale": _OG_LOCALES[config.language],
        "og:image": f"{config.html_baseurl}{SOCIAL_CARD}",
        "og:image:width": str(SOCIAL_CARD_SIZE[0]),
        "og:image:height": str(SOCIAL_CARD_SIZE[1]),
        "og:image:alt": f"{config.project}: PyTorch from the ground up",
    }
    if description:
        tags["og:description"] = description
    lines = [f'<meta property="{k}" content="{html.escape(v)}" />' for k, v in tags.items()]
    lines.append('<meta name="twitter:card" content="summary_large_image" />')
    if description:
        lines.append(f'<meta name="description" content="{html.escape(description)}" />')
    context["metatags"] = context.get("metatags", "") + "\n" + "\n".join(lines)


def setup(app: Sphinx) -> dict[str, object]:
    """Register the base address and the metadata."""
    app.add_config_value("tensorbook_base_url", "", "html", types=(str,))
    app.connect("config-inited", _set_base_url)
    app.connect("html-page-context", _add_metadata)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
