"""Every page names what it was built from, and links where to report a problem."""

from __future__ import annotations

import html
import platform
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from docutils.utils import new_document
from tests.support.book import CHAPTERS, page

import tensorbook
from tensorbook_build.extensions import provenance as adapter
from tensorbook_build.provenance import Commit, report_url, source_commit
from tensorbook_build.settings import LANGUAGES, LAYOUT


def _git(root: Path, *arguments: str, date: str = "2026-03-04T05:06:07+00:00") -> str:
    environment = {
        "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@example.org",
        "GIT_COMMITTER_NAME": "a",
        "GIT_COMMITTER_EMAIL": "a@example.org",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "PATH": "/usr/bin:/bin",
        "HOME": str(root),
    }
    done = subprocess.run(
        ["git", "-C", str(root), *arguments],
        capture_output=True,
        text=True,
        check=True,
        env=environment,
    )
    return done.stdout.strip()


@pytest.fixture
def repository(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# A page\n")
    (tmp_path / "notes.txt").write_text("not a source of the book\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "first")
    return tmp_path


def test_the_commit_and_its_own_date_not_the_clock(repository):
    commit = source_commit(repository, ("docs",), {})
    assert commit == Commit(_git(repository, "rev-parse", "HEAD"), "2026-03-04")


def test_uncommitted_changes_to_the_sources_are_said(repository):
    (repository / "notes.txt").write_text("changed, but not a source\n")
    assert not source_commit(repository, ("docs",), {}).modified
    (repository / "docs" / "page.md").write_text("# A changed page\n")
    assert source_commit(repository, ("docs",), {}).modified


def test_a_named_commit_wins_over_an_older_git_copied_with_the_files(repository):
    named = {"TENSORBOOK_COMMIT": "abc123", "TENSORBOOK_COMMIT_DATE": "2026-01-02"}
    (repository / "docs" / "page.md").write_text("# Files newer than the copied .git\n")
    assert source_commit(repository, ("docs",), named) == Commit("abc123", "2026-01-02")


def test_outside_git_the_environment_names_the_commit_or_nobody_does(tmp_path):
    named = {"TENSORBOOK_COMMIT": "abc123", "TENSORBOOK_COMMIT_DATE": "2026-01-02"}
    assert source_commit(tmp_path, (), named) == Commit("abc123", "2026-01-02")
    assert source_commit(tmp_path, (), {}) is None


def _context(repository_url: str, commit: Commit) -> dict:
    config = SimpleNamespace(
        release="1.2.3",
        tensorbook_repository=repository_url,
        tensorbook_base_url="https://example.org/book/",
        language="zh_CN",
    )
    doctree = new_document("cuda")
    doctree["tensorbook_device_line"] = "Executed on CPU (x86_64) · torch 2.13.0"
    # what html_context gives every page (config-inited)
    context: dict = {"tensorbook_commit": commit, "tensorbook_has_pdf": False}
    adapter._on_html_page_context(
        SimpleNamespace(config=config), "cuda", "page.html", context, doctree
    )
    return context


def test_a_configured_repository_gets_a_report_prefilled_with_the_page_and_the_build():
    commit = Commit("abcdef0123456789", "2026-11-22", modified=True)
    context = _context("https://github.com/o/tensorbook", commit)
    url = urlsplit(context["tensorbook_report"])
    assert (url.netloc, url.path) == ("github.com", "/o/tensorbook/issues/new")
    query = parse_qs(url.query)
    assert query["title"] == ["cuda (zh_CN): "]
    body = query["body"][0].splitlines()
    assert body[:4] == [
        "Page: https://example.org/book/zh_CN/cuda.html",
        "Language: zh_CN",
        "Commit: abcdef0123456789 (2026-11-22) with uncommitted changes",
        "Device line: Executed on CPU (x86_64) · torch 2.13.0",
    ]


def test_no_repository_no_report_link():
    assert _context("", Commit("abcdef0123456789", "2026-11-22"))["tensorbook_report"] == ""


def test_an_unknown_commit_is_reported_as_such():
    url = report_url("https://r", page="p", language="en", commit=None, device_line="")
    body = parse_qs(urlsplit(url).query)["body"][0]
    assert "Commit: not known" in body
    assert "Device line: none on this page" in body


@pytest.mark.book
@pytest.mark.parametrize("language", LANGUAGES)
def test_every_page_names_the_version_and_the_commit_of_its_source(built_book, language):
    commit = source_commit(LAYOUT.root, ("docs", "conf", "src"))
    assert commit is not None, "the tests run in a git checkout"
    for chapter in CHAPTERS:
        footer = page(built_book, chapter, language).split('class="component-provenance">')[1]
        text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", footer.split("</p>")[0])).split())
        assert f"tensorbook {tensorbook.__version__}" in text, (chapter, text)
        assert commit.short in text, (chapter, text)
        assert commit.date in text, (chapter, text)
        # no repository is configured for the tests' build: no report link
        assert "issues/new" not in footer.split("</p>")[0]


@pytest.mark.book
def test_the_device_line_names_python_and_numpy_in_both_editions(built_book):
    english = page(built_book, "tensors")
    chinese = page(built_book, "tensors", "zh_CN")
    wanted = f"Python {platform.python_version()} · NumPy {np.__version__}"
    assert "Executed on CPU" in english or "Executed on GPU" in english
    assert wanted in english
    assert wanted in chinese
    assert "运行于" in chinese


@pytest.mark.book
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_footer_names_the_authors_in_the_page_s_language(built_book, language):
    """conf.py's author, which the theme would print untranslated, is in the templates."""
    conf = (LAYOUT.conf / "conf.py").read_text(encoding="utf-8")
    author = re.search(r'^author = "(.+)"$', conf, re.MULTILINE)[1]
    for template in ("author.html", "copyright.html"):
        assert author in (LAYOUT.conf / "_templates" / template).read_text(encoding="utf-8")
    footer = page(built_book, "tensors", language).split('class="bd-footer-content"')[1]
    english = language == "en"
    assert (author in footer) == english, (language, footer[:400])
