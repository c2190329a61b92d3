"""The files at the site's root, around the editions: the 404 page and the sitemap.

``book_build.build_site`` writes them once every edition is built. None of them may
assume that the site is served at a domain's root: the 404 page finds the book's
folder from the address it was served at, and the sitemap's absolute addresses come
from the base URL the site is published under (:func:`site_base_url`).
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit
from xml.sax.saxutils import escape, quoteattr

CONF_DIR = Path(__file__).resolve().parent
LOCAL_BASE_URL = "http://localhost:8000/"
"""Where ``python -m http.server -d build/html`` serves a local build."""
NOT_SITE_PAGES = {"search.html", "genindex.html"}
"""Pages a search engine should not list: they have no content of their own."""


def site_base_url(environ: Mapping[str, str] = os.environ) -> str:
    """The address the site is published at, ending in ``/``.

    ``TENSORBOOK_BASE_URL`` (set by the GitHub Pages workflow), else Read the Docs'
    ``READTHEDOCS_CANONICAL_URL``, else where a local build is served.

    >>> site_base_url({"TENSORBOOK_BASE_URL": "https://example.org/tensorbook"})
    'https://example.org/tensorbook/'
    >>> site_base_url({})
    'http://localhost:8000/'
    >>> site_base_url({"TENSORBOOK_BASE_URL": "example.org/book"})
    Traceback (most recent call last):
    ...
    ValueError: TENSORBOOK_BASE_URL must be an absolute http(s) address, not 'example.org/book'
    """
    for name in ("TENSORBOOK_BASE_URL", "READTHEDOCS_CANONICAL_URL"):
        value = environ.get(name, "").strip()
        if value:
            parts = urlsplit(value)
            if parts.scheme not in {"http", "https"} or not parts.netloc:
                raise ValueError(f"{name} must be an absolute http(s) address, not {value!r}")
            return value.rstrip("/") + "/"
    return LOCAL_BASE_URL


def language_tag(code: str) -> str:
    """``zh_CN`` -> ``zh-CN``: gettext's spelling to HTML's.

    >>> language_tag("zh_CN"), language_tag("en")
    ('zh-CN', 'en')
    """
    return code.replace("_", "-")


def _fill(template: str, values: Mapping[str, str]) -> str:
    for key, value in values.items():
        template = template.replace(f"@{key}@", value)
    return template


def write_not_found_page(
    site: Path, languages: Mapping[str, str], source: str, base_url: str
) -> Path:
    """Write ``site/404.html``, which hosts serve in place of any missing page.

    It is served at the missing page's address, at any depth, so it loads nothing:
    style and icon are inline, and a small script finds the book's folder in the
    address (the part before ``/en/`` or ``/zh_CN/``), falling back to the base URL's
    path, which is also what the links say without the script.
    """
    base_path = urlsplit(base_url).path
    links = "\n".join(
        f'      <li><a class="edition" data-edition="{code}" href="{base_path}{code}/index.html" '
        f'hreflang="{language_tag(code)}" lang="{language_tag(code)}">{html.escape(name)}</a></li>'
        for code, name in languages.items()
    )
    template = (CONF_DIR / "not_found.html").read_text(encoding="utf-8")
    favicon = (CONF_DIR / "_static" / "favicon.svg").read_text(encoding="utf-8")
    page = _fill(
        template,
        {
            "FAVICON": "data:image/svg+xml," + _svg_data(favicon),
            "EDITIONS": json.dumps(list(languages)),
            "BASE_PATH": json.dumps(base_path),
            "LINKS": links,
            "LANG": language_tag(source),
        },
    )
    target = site / "404.html"
    target.write_text(page, encoding="utf-8")
    return target


def _svg_data(svg: str) -> str:
    """An SVG as the data of a ``data:`` URL, readable and valid inside ``href="..."``."""
    compact = " ".join(line.strip() for line in svg.splitlines() if not line.startswith("<?"))
    return compact.replace("%", "%25").replace("#", "%23").replace('"', "'").replace("\n", "")


def site_pages(site: Path, languages: Mapping[str, str]) -> dict[str, list[str]]:
    """Each edition's pages, as paths relative to its folder, sorted.

    A page of one edition that another lacks is left in: the sitemap then says so by
    leaving out the alternate.
    """
    return {
        code: sorted(
            p.relative_to(site / code).as_posix()
            for p in (site / code).rglob("*.html")
            if p.name not in NOT_SITE_PAGES and "_static" not in p.parts
        )
        for code in languages
        if (site / code).is_dir()
    }


def write_sitemap(site: Path, languages: Mapping[str, str], base_url: str) -> Path:
    """Write ``site/sitemap.xml``: every page of every edition, with its translations
    as alternates. (No robots.txt: crawlers read one only at a domain's root, and the
    book may be served below it.)"""
    pages = site_pages(site, languages)
    entries = []
    for code, names in pages.items():
        for name in names:
            alternates = "".join(
                f'\n    <xhtml:link rel="alternate" hreflang={quoteattr(language_tag(other))}'
                f" href={quoteattr(base_url + other + '/' + name)}/>"
                for other, other_names in pages.items()
                if name in other_names
            )
            entries.append(
                f"  <url>\n    <loc>{escape(base_url + code + '/' + name)}</loc>"
                f"{alternates}\n  </url>"
            )
    sitemap = site / "sitemap.xml"
    sitemap.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
        ' xmlns:xhtml="http://www.w3.org/1999/xhtml">\n' + "\n".join(entries) + "\n</urlset>\n",
        encoding="utf-8",
    )
    return sitemap
