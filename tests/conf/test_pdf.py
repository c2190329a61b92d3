"""A PDF of each edition: every chapter in it, every glyph drawn, every font embedded.

These tests read the PDFs that ``nox -s pdf`` makes (``python -m tensorbook_build.pdf``
builds them into the build folder, then runs this file against it with
``--built-book``); they need Debian's TeX and poppler, which that session installs.
"""

from __future__ import annotations

import html
import re
import subprocess
from pathlib import Path

import pytest
from tests.support.book import CHAPTERS, LANGUAGES, page

from tensorbook_build.pdf import missing_glyphs
from tensorbook_build.settings import pdf_name

pytestmark = pytest.mark.pdf
ROOT_PAGE = "index"


def _text(path: Path) -> str:
    done = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True)
    return done.stdout


def _squeezed(text: str) -> str:
    """Text without any white space: a PDF breaks and spaces lines its own way."""
    return re.sub(r"\s+", "", text)


def _plain(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


@pytest.fixture(scope="module", params=list(LANGUAGES))
def edition(request, built_book) -> tuple[str, Path]:
    language = request.param
    path = built_book / "html" / language / pdf_name(language)
    if not path.is_file():
        pytest.fail(f"no {path}: build the PDFs first (nox -s pdf does, then runs these tests)")
    return language, path


def test_a_book_length_pdf(edition):
    _, path = edition
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True)
    pages = int(re.search(r"^Pages:\s+(\d+)", info.stdout, re.MULTILINE).group(1))
    assert 30 <= pages <= 300, pages


def test_every_chapter_s_title_and_opening_are_in_it(edition, built_book):
    language, path = edition
    text = _squeezed(_text(path))
    for chapter in CHAPTERS:
        shown = page(built_book, chapter, language)
        title = _plain(re.search(r"<h1>(.*?)</h1>", shown, re.DOTALL).group(1))
        title = title.replace("#", "").strip()
        if chapter != ROOT_PAGE:  # the root page's title is the PDF's title page
            assert _squeezed(title) in text, (language, chapter, title)
        article = shown[shown.index("<article") :]
        opening = _plain(re.search(r"<p>(.*?)</p>", article, re.DOTALL).group(1))
        sample = _squeezed(opening)[:40]
        assert sample in text, (language, chapter, sample)
        if language.startswith("zh"):
            assert re.search(r"[\u4e00-\u9fff]", sample), "the sample is in Chinese"


def test_no_glyph_is_missing_and_every_font_is_embedded(edition, built_book):
    language, path = edition
    log = (built_book / "latex" / language / "tensorbook.log").read_text(errors="replace")
    assert missing_glyphs(log) == []
    assert "\ufffd" not in _text(path)
    fonts = subprocess.run(["pdffonts", str(path)], capture_output=True, text=True, check=True)
    _, _, *rows = fonts.stdout.splitlines()
    assert rows, "no fonts listed"
    for row in rows:  # ... emb sub uni object ID: a long name shifts the columns
        assert row.split()[-5] == "yes", row
    if language.startswith("zh"):
        assert any("CJK" in row for row in rows), "no CJK font in the Chinese edition"


def test_each_edition_s_pages_link_its_pdf(edition, built_book):
    language, _ = edition
    for chapter in CHAPTERS:
        assert f'href="{pdf_name(language)}"' in page(built_book, chapter, language)


def test_a_font_without_chinese_is_caught(tmp_path):
    """The check can fail: Chinese set in FreeSerif alone is reported glyph by glyph."""
    (tmp_path / "t.tex").write_text(
        "\\documentclass{article}\\usepackage{fontspec}\\setmainfont{FreeSerif}"
        "\\begin{document}张量\\end{document}\n",
        encoding="utf-8",
    )
    subprocess.run(
        ["xelatex", "-interaction=nonstopmode", "t.tex"], cwd=tmp_path, capture_output=True,
        check=False,
    )  # fmt: skip
    found = missing_glyphs((tmp_path / "t.log").read_text(errors="replace"))
    assert [char for char, _ in found] == ["张 (U+5F20)", "量 (U+91CF)"]
