"""The files at the site's root, around the editions: the front door, 404 page, sitemap, wheel.

None assumes the site is served at a domain's root: the 404 page finds the book's folder
from its own address, and the sitemap's addresses come from the base URL. Their words
come from each edition's ``sphinx.po`` catalog, like the theme's.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit
from xml.sax.saxutils import escape, quoteattr

from tensorbook_build.catalogs import translations
from tensorbook_build.settings import (
    EDITIONS,
    LAYOUT,
    NOT_SITE_PAGES,
    PROJECT,
    SOURCE_LANGUAGE,
    STATIC,
    WHEELS,
    Edition,
    Layout,
    site_pages,
    wheel_name,
)


@dataclass(frozen=True)
class _LocalEdition:
    """An edition as the site's templates see it: its words come from its catalog."""

    code: str
    name: str
    tag: str
    words: Mapping[str, str]

    def gettext(self, message: str) -> str:
        return self.words.get(message, message)


def write_sitemap(site: Path, editions: Iterable[Edition], base_url: str) -> None:
    """Write ``site/sitemap.xml``: every page of every edition, its translations as alternates."""
    tags = {e.code: e.tag for e in editions}
    pages = {
        code: [p for p in site_pages(site / code) if Path(p).name not in NOT_SITE_PAGES]
        for code in tags
        if (site / code).is_dir()
    }
    entries = []
    for code, names in pages.items():
        for name in names:
            alternates = "".join(
                f'\n    <xhtml:link rel="alternate" hreflang={quoteattr(tags[other])}'
                f" href={quoteattr(base_url + other + '/' + quote(name))}/>"
                for other, other_names in pages.items()
                if name in other_names
            )
            entries.append(
                f"  <url>\n    <loc>{escape(base_url + code + '/' + quote(name))}</loc>"
                f"{alternates}\n  </url>"
            )
    (site / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
        ' xmlns:xhtml="http://www.w3.org/1999/xhtml">\n' + "\n".join(entries) + "\n</urlset>\n",
        encoding="utf-8",
    )


def write_wheel(folder: Path, root: Path = LAYOUT.root) -> Path:
    """Build the reader's wheel, ``tensorbook`` alone, from ``root`` into ``folder``; its path.

    ``pyproject.toml``'s build backend (installed, so nothing is fetched) builds it with
    ``SOURCE_DATE_EPOCH`` (1980-01-01 unless set), so one source gives the same bytes.
    """
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    hook = f"import sys, {pyproject['build-system']['build-backend']} as b"
    command = [sys.executable, "-c", f"{hook}; print(b.build_wheel(sys.argv[1]))"]
    folder.mkdir(parents=True, exist_ok=True)
    # a process of its own: the hook runs in the source tree, and SOURCE_DATE_EPOCH
    # must not reach Sphinx, which would date the pages by it
    environment = {"SOURCE_DATE_EPOCH": "315532800", **os.environ}
    built = subprocess.check_output(
        [*command, str(folder.resolve())], cwd=root, env=environment, text=True
    )
    return folder / built.splitlines()[-1]


def site_files() -> list[str]:
    """What :func:`write_site_files` writes, relative to the site."""
    wheel = f"{WHEELS}/{wheel_name(importlib.metadata.version(PROJECT))}"
    return ["index.html", "404.html", "sitemap.xml", wheel]


def write_site_files(
    site: Path,
    base_url: str,
    *,
    editions: Iterable[Edition] = EDITIONS,
    layout: Layout = LAYOUT,
) -> None:
    """Write the front door (``index.html``), ``404.html``, ``sitemap.xml`` and the wheel."""
    editions = list(editions)
    local = []
    for e in editions:
        catalog = layout.catalogs(e.code) / "sphinx.po"
        words = {} if e.code == SOURCE_LANGUAGE else translations(catalog)
        local.append(_LocalEdition(e.code, e.name, e.tag, words))
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    templates = Environment(
        loader=FileSystemLoader(layout.conf / "_templates" / "site"),
        autoescape=True,
        undefined=StrictUndefined,
        keep_trailing_newline=True,
    )
    common = {
        "project": PROJECT,
        "editions": local,
        # the edition a reader is sent to by default: the source, else (a translation
        # built alone, --language) the first edition the site has
        "source": next((e for e in local if e.code == SOURCE_LANGUAGE), local[0]),
    }
    # the favicon inline, as the data of a data: URL, readable and valid inside href="..."
    svg = (layout.conf / STATIC / "favicon.svg").read_text(encoding="utf-8")
    svg = " ".join(line.strip() for line in svg.splitlines() if not line.startswith("<?"))
    svg = svg.replace("%", "%25").replace("#", "%23").replace('"', "'")
    pages = {
        "index.html": templates.get_template("language_index.html").render(**common),
        "404.html": templates.get_template("not_found.html").render(
            **common, favicon=f"data:image/svg+xml,{svg}", base_path=urlsplit(base_url).path
        ),
    }
    site.mkdir(parents=True, exist_ok=True)
    for name, text in pages.items():
        (site / name).write_text(text, encoding="utf-8")
    write_sitemap(site, editions, base_url)
    write_wheel(site / WHEELS, layout.root)
