"""Where the site is published, on a fixture book: canonical links, sitemap, 404 page.

The same two pages are built twice by the driver, both editions: published below a path
(``TENSORBOOK_BASE_URL``) and with no address given, for a local server. The addresses
for search engines and cards come from the base URL; every link a reader follows is
relative, so the site works wherever it is served. The real book's site is
tests/conf/test_hosting.py's, the acceptance tier.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from tests.support.fixture_book import TRANSLATION, FixtureBook, catalog

from tensorbook_build.links import broken_links
from tensorbook_build.settings import LANGUAGES, LOCAL_BASE_URL, NOT_SITE_PAGES, edition, site_pages

# built by the driver, with Sphinx, as the book is: the book tier's, in seconds
pytestmark = pytest.mark.book

SENTENCE = "Its one sentence, [and a link home](../index.md)."  # a page in a folder
PAGES = {
    "index": "# The fixture book\n\nIts first page.\n\n```{toctree}\nchapter/page\n```\n",
    "chapter/page": f"# A page\n\n{SENTENCE}\n",
}
TRANSLATED = {
    "index": {"The fixture book": "夹具书", "Its first page.": "它的第一页。"},
    "chapter/page": {
        "A page": "一页",
        SENTENCE: "它唯一的一句话，[以及回首页的链接](../index.md)。",
    },
}
PUBLISHED = "https://example.org/sub/book"  # as a host gives it: no slash at the end
ADDRESSES = {
    "published": ({"TENSORBOOK_BASE_URL": PUBLISHED}, PUBLISHED + "/"),
    # none given: python -m http.server's, and Read the Docs' variable is not set either
    "local": ({"TENSORBOOK_BASE_URL": "", "READTHEDOCS_CANONICAL_URL": ""}, LOCAL_BASE_URL),
}


@pytest.fixture(scope="module", params=list(ADDRESSES))
def site(request, tmp_path_factory) -> tuple[Path, str]:
    """The fixture book built with each address (or none); its site and its base URL."""
    given, base_url = ADDRESSES[request.param]
    catalogs = {name: catalog(messages) for name, messages in TRANSLATED.items()}
    book = FixtureBook(tmp_path_factory.mktemp(request.param), PAGES, catalogs)
    built = book.build(env=given)
    assert built.returncode == 0, built.output[-3000:]
    return book.site, base_url


def _pages(site: Path) -> list[tuple[str, str]]:
    """Every content page of every edition: its edition and its path in it."""
    return [
        (language, name)
        for language in LANGUAGES
        for name in site_pages(site / language)
        if Path(name).name not in NOT_SITE_PAGES
    ]


def test_each_page_s_canonical_link_and_card_name_its_address_at_the_base_url(site):
    folder, base_url = site
    pages = _pages(folder)
    assert len(pages) == 2 * len(PAGES)
    for language, name in pages:
        html = (folder / language / name).read_text(encoding="utf-8")
        address = f"{base_url}{language}/{name}"
        assert f'<link rel="canonical" href="{address}" />' in html, (language, name)
        assert f'<meta property="og:url" content="{address}" />' in html, (language, name)
        card = (
            f'<meta property="og:image" content="{base_url}{language}/_static/social-card.png" />'
        )
        assert card in html, (language, name)
        assert (folder / language / "_static" / "social-card.png").is_file()


def test_the_sitemap_lists_every_page_at_the_base_url_with_its_translations(site):
    folder, base_url = site
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9", "x": "http://www.w3.org/1999/xhtml"}
    urls = {
        u.findtext("s:loc", namespaces=ns): u for u in ET.parse(folder / "sitemap.xml").getroot()
    }
    assert set(urls) == {f"{base_url}{language}/{name}" for language, name in _pages(folder)}
    for loc, url in urls.items():
        name = loc.removeprefix(base_url).split("/", 1)[1]
        alternates = {a.get("hreflang"): a.get("href") for a in url.findall("x:link", ns)}
        assert alternates == {edition(code).tag: f"{base_url}{code}/{name}" for code in LANGUAGES}


def test_the_404_page_sends_a_reader_to_each_edition_below_the_base_url_s_path(site):
    """A host serves 404.html at any missing address: its links start at the site's path
    (its script corrects them where the site is served elsewhere, which the browser suite
    follows)."""
    folder, base_url = site
    html = (folder / "404.html").read_text(encoding="utf-8")
    path = urlsplit(base_url).path
    links = dict(re.findall(r'data-edition="([^"]+)" href="([^"]+)"', html))
    assert links == {code: f"{path}{code}/index.html" for code in LANGUAGES}
    for href in links.values():  # where the site is served at the base URL, each is there
        assert (folder / href.removeprefix(path)).is_file(), href
    assert f"var basePath = {json.dumps(path)};" in html


def test_every_link_a_reader_follows_is_relative_and_leads_somewhere(site):
    """No link but the metadata for search engines and cards names the base URL or starts
    at the domain's root, so the site works at its address, below it, or from a folder.
    The 404 page's links are the exception, and its own test's."""
    folder, base_url = site
    broken = [str(link) for link in broken_links(folder) if link.page != "404.html"]
    assert broken == []
    pages = ["index.html", *(f"{language}/{name}" for language, name in _pages(folder))]
    for page in pages:  # the front door, and every page of every edition
        html = (folder / page).read_text(encoding="utf-8")
        followed = re.sub(r'<link rel="(?:canonical|alternate)"[^>]*>', "", html)
        absolute = re.findall(r'(?:href|src)="((?:[a-z]+:)?/[^"]*)"', followed)
        assert absolute == [], page
        assert base_url not in followed.replace(f'content="{base_url}', ""), page
    front_door = (folder / "index.html").read_text(encoding="utf-8")
    for code in LANGUAGES:
        assert f'<a href="{code}/index.html"' in front_door


def test_a_translation_built_alone_gets_the_site_s_files_naming_only_it(tmp_path):
    """``--language zh_CN`` into a new folder: the front door and the 404 page send a reader
    to the one edition there (they named the source edition, and its writer crashed)."""
    catalogs = {name: catalog(messages) for name, messages in TRANSLATED.items()}
    book = FixtureBook(tmp_path, PAGES, catalogs)
    built = book.build([TRANSLATION])
    assert built.returncode == 0, built.output[-3000:]
    folder = book.site
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == sorted([TRANSLATION, "wheels"])
    front_door = (folder / "index.html").read_text(encoding="utf-8")
    assert re.findall(r'<a href="([^"]+)"', front_door) == [f"{TRANSLATION}/index.html"]
    for href in re.findall(r'href="([^"]+)"', front_door):  # its icon too
        assert (folder / href).is_file(), href
    assert f'<html lang="{edition(TRANSLATION).tag}"' in front_door
    not_found = (folder / "404.html").read_text(encoding="utf-8")
    assert re.findall(r'data-edition="([^"]+)"', not_found) == [TRANSLATION]
