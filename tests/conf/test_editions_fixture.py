"""The editions adapter on a fixture book: a translated page, the switcher, a catalog's faults.

The book is two pages and their ``zh_CN`` catalogs (tests/support/fixture_book.py), built
by the driver as ``nox -s docs`` builds the real one; the real book's editions are
tests/conf/test_editions.py's, the acceptance tier.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.support.fixture_book import NOTEBOOK, TRANSLATION, FixtureBook, catalog

from tensorbook_build.settings import LANGUAGES, edition

# built by the driver, with Sphinx, as the book is: the book tier's, in seconds
pytestmark = pytest.mark.book

PAGES = {
    "index": "# The fixture book\n\nIts first page.\n\n```{toctree}\npage\n```\n",
    "page": NOTEBOOK
    + "# A page\n\n"
    + "```{code-cell} ipython3\n:tags: [remove-input]\n\nfrom tensorbook import page\n\n"
    + "device = page.start()\n```\n\n"
    + "A sentence the translator translated.\n",
}
TRANSLATED = {
    "index": {"The fixture book": "夹具书", "Its first page.": "它的第一页。"},
    "page": {"A page": "一页", "A sentence the translator translated.": "译者译过的一句话。"},
}


@pytest.fixture(scope="module")
def book(tmp_path_factory) -> FixtureBook:
    """The fixture book, both editions built."""
    catalogs = {name: catalog(messages) for name, messages in TRANSLATED.items()}
    book = FixtureBook(tmp_path_factory.mktemp("editions"), PAGES, catalogs)
    built = book.build()
    assert built.returncode == 0, built.output[-3000:]
    return book


def _article(html: str) -> str:
    return html[html.index("<article") : html.index("</article>")]


def test_a_translated_page_shows_its_catalog_s_words(book):
    english, translated = book.page("page"), book.page("page", TRANSLATION)
    assert f'<html lang="{edition(TRANSLATION).tag}"' in translated
    assert "译者译过的一句话。" in _article(translated)
    assert "A sentence the translator translated." not in _article(translated)
    assert "A sentence the translator translated." in _article(english)


def test_what_a_program_printed_is_in_the_edition_s_words(book):
    """The device line, printed in English by the page's first cell (tensorbook.wording),
    is shown in the translated edition's words; the English edition shows it as printed."""
    english = book.page("page")
    translated = _article(book.page("page", TRANSLATION))
    assert "Executed on " in english
    assert "Executed on " not in translated
    assert "运行于 " in translated


@pytest.mark.parametrize("language", list(LANGUAGES))
@pytest.mark.parametrize("name", list(PAGES))
def test_the_switcher_links_the_page_in_every_other_edition(book, language, name):
    html = book.page(name, language)
    switcher = re.search(r'<nav class="tb-language-switcher".*?</nav>', html, re.DOTALL)
    assert switcher is not None, html[:2000]
    links = dict(
        re.findall(r'<a class="tb-language" href="([^"]+)" hreflang="([^"]+)"', switcher[0])
    )
    others = [code for code in LANGUAGES if code != language]
    assert links == {f"../{code}/{name}.html": edition(code).tag for code in others}
    for href in links:
        assert (book.site / language / href).resolve() == book.site / href.removeprefix("../")
        assert (book.site / language / href).is_file(), href
    current = re.findall(r'lang="([^"]+)" aria-current="page"', switcher[0])
    assert current == [edition(language).tag]
    # and the same alternates in the page's head, for search engines
    head = html[: html.index("</head>")]
    alternates = re.findall(r'<link rel="alternate" hreflang="([^"]+)" href="([^"]+)"', head)
    assert dict(alternates) == {tag: href for href, tag in links.items()}


# -- A catalog that does not follow the English -----------------------------------------

FAULTY = {"index": "# Title\n\nFirst sentence.\n\nSecond sentence.\n\nThird sentence.\n"}
FAULTY_TRANSLATED = {
    "Title": "标题",
    "First sentence.": "第一句。",
    "Second sentence.": "第二句。",
    "Third sentence.": "第三句。",
}


def _translated_build(root: Path, po: str) -> tuple[FixtureBook, str]:
    """The translated edition built with ``po`` as its page's catalog; the book, its log."""
    book = FixtureBook(root, FAULTY, {"index": po})
    built = book.build([TRANSLATION])
    assert built.returncode != 0, built.output[-3000:]
    return book, built.output


def test_an_untranslated_or_fuzzy_message_fails_the_build_naming_its_page_and_line(tmp_path):
    """Sphinx would show either in English; the build names each where it is, and what to do."""
    untranslated = {**FAULTY_TRANSLATED, "Second sentence.": ""}
    book, log = _translated_build(tmp_path, catalog(untranslated, fuzzy={"Third sentence."}))
    page = book.layout.docs / "index.md"
    lines = page.read_text(encoding="utf-8").splitlines()
    plain = re.sub(r"\x1b\[[0-9;]*m", "", log)  # Sphinx colours its warnings on some terminals
    warnings = [line for line in plain.splitlines() if "not translated" in line]
    fix = f"docs/locales/{TRANSLATION}/LC_MESSAGES/index.po"
    assert warnings == [
        f"{page}:{lines.index(english) + 1}: WARNING: not translated into {TRANSLATION}: "
        f"'{english}' (run `nox -s translate`, then translate it in {fix}) "
        "[tensorbook.untranslated]"
        for english in ("Second sentence.", "Third sentence.")
    ]


def test_a_broken_catalog_stops_the_build_at_once_naming_its_file_and_line(tmp_path):
    po = catalog(FAULTY_TRANSLATED).replace('msgstr "第二句。"', 'msgstr "第二句。')  # unclosed
    book, log = _translated_build(tmp_path, po)
    lines = book.catalog("index").read_text(encoding="utf-8").splitlines()
    line = lines.index('msgstr "第二句。') + 1
    assert f"{book.catalog('index')}:{line}: not a comment, keyword or quoted string" in log
    assert "reading sources" not in log  # stopped before any page was read
    assert "Traceback" not in log
