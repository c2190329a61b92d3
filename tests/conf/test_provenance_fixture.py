"""The provenance adapter on a fixture book: the footer's commit, the device line, the report.

The book is two pages, one of which executes the chapters' first cell, in a git
repository of its own whose one commit is dated in the past, built by the driver on the
test session's device (``--device``) with a repository to report to. What the pages say
is compared with what git, torch and the machine say, never with a written value.
"""

from __future__ import annotations

import datetime as dt
import platform
import re
import subprocess
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
import torch
from tests.support.fixture_book import NOTEBOOK, TRANSLATION, FixtureBook, catalog

import tensorbook
from tensorbook.wording import DEVICE_LINE, ON_CPU, ON_GPU, THREAD, THREADS, fill, parse
from tensorbook_build.settings import KERNEL_THREADS, LANGUAGES

# built by the driver, with Sphinx, as the book is: the book tier's, in seconds
pytestmark = pytest.mark.book

PAGES = {
    "index": "# The fixture book\n\nIts first page.\n\n```{toctree}\npage\n```\n",
    "page": NOTEBOOK
    + "# A page\n\n"
    + "```{code-cell} ipython3\n:tags: [remove-input]\n\nfrom tensorbook import page\n\n"
    + "device = page.start()\n```\n\nIts one sentence.\n",
}
TRANSLATED = {
    "index": {"The fixture book": "夹具书", "Its first page.": "它的第一页。"},
    "page": {"A page": "一页", "Its one sentence.": "它唯一的一句话。"},
}
COMMITTED = "2026-03-04T05:06:07+00:00"  # the commit's date: not the day the test runs
BASE_URL = "https://example.org/book/"
REPOSITORY = "https://example.org/reports/tensorbook"


def _git(tree: Path, *arguments: str) -> str:
    who = {f"GIT_{role}_{what}": value for role in ("AUTHOR", "COMMITTER")
           for what, value in (("NAME", "a"), ("EMAIL", "a@example.org"), ("DATE", COMMITTED))}  # fmt: skip
    done = subprocess.run(
        ["git", "-C", str(tree), *arguments],
        capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin", "HOME": str(tree), **who},
    )  # fmt: skip
    return done.stdout.strip()


@pytest.fixture(scope="module")
def book(request, tmp_path_factory) -> tuple[FixtureBook, str]:
    """The fixture book committed and built on the session's device; the commit's hash."""
    catalogs = {name: catalog(messages) for name, messages in TRANSLATED.items()}
    book = FixtureBook(tmp_path_factory.mktemp("provenance"), PAGES, catalogs)
    tree = book.layout.root
    (tree / ".gitignore").write_text("/build/\n", encoding="utf-8")
    for arguments in (("init", "-q"), ("add", "."), ("commit", "-q", "-m", "the fixture")):
        _git(tree, *arguments)
    given = {
        "TENSORBOOK_BASE_URL": BASE_URL,
        "TENSORBOOK_REPOSITORY": REPOSITORY,
        "TENSORBOOK_COMMIT": "",  # a GPU machine's kit names its clone's: git's here
    }
    device = request.config.getoption("--device")
    built = book.build(env=given, device=device)
    assert built.returncode == 0, built.output[-3000:]
    return book, _git(tree, "rev-parse", "HEAD")


def _footer(html: str) -> str:
    """The footer's provenance paragraph, as its text."""
    paragraph = html.split('class="component-provenance">', 1)[1].split("</p>", 1)[0]
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", paragraph)).split())


@pytest.mark.parametrize("language", list(LANGUAGES))
@pytest.mark.parametrize("name", list(PAGES))
def test_the_footer_names_the_version_and_the_commit_with_its_own_date(book, language, name):
    built, sha = book
    footer = _footer(built.page(name, language))
    assert f"tensorbook {tensorbook.__version__} · " in footer
    assert sha[:12] in footer
    assert COMMITTED[:10] in footer
    assert dt.datetime.now(dt.UTC).date().isoformat() not in footer  # not the clock
    assert "未提交" not in footer
    assert "uncommitted" not in footer


def _device_line(html: str) -> str:
    """The text of the output the provenance adapter marked as the page's device line."""
    block = re.search(r'class="[^"]*\btb-device-line\b[^"]*"[^>]*>(.*?)</pre>', html, re.DOTALL)
    assert block is not None, "no output marked tb-device-line"
    return unescape(re.sub(r"<[^>]+>", "", block[1])).strip()


def test_the_device_line_names_the_device_torch_and_threads_the_build_ran_with(book, request):
    built, _ = book
    fields = parse(DEVICE_LINE, _device_line(built.page("page")))
    assert fields is not None
    device = torch.device(request.config.getoption("--device"))
    if device.type == "cuda":
        index = device.index or 0
        name = torch.cuda.get_device_name(index)
        where = fill(ON_GPU, name=name, index=index, cuda=torch.version.cuda)
    else:
        where = fill(ON_CPU, machine=platform.machine())
    assert fields == {
        "where": where,
        "torch": torch.__version__,
        "threads": fill(THREADS if KERNEL_THREADS != 1 else THREAD, count=KERNEL_THREADS),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }


def _report(html: str) -> dict[str, str]:
    """The footer's report link: where it leads, its title, and its body's fields."""
    paragraph = html.split('class="component-provenance">', 1)[1].split("</p>", 1)[0]
    links = re.findall(r'<a href="([^"]+)"', paragraph)
    assert len(links) == 1, paragraph
    url = urlsplit(unescape(links[0]))
    query = parse_qs(url.query)
    body = dict(line.split(": ", 1) for line in query["body"][0].splitlines() if ": " in line)
    return {"at": f"{url.scheme}://{url.netloc}{url.path}", "title": query["title"][0], **body}


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_the_report_link_names_the_page_its_commit_and_the_device_line_in_english(book, language):
    """A report is read by the maintainers: the device line goes in as printed, in English,
    even from an edition that shows it translated."""
    built, sha = book
    report = _report(built.page("page", language))
    assert report == {
        "at": f"{REPOSITORY}/issues/new",
        "title": f"page ({language}): ",
        "Page": f"{BASE_URL}{language}/page.html",
        "Language": language,
        "Commit": f"{sha} ({COMMITTED[:10]})",
        "Device line": _device_line(built.page("page")),
    }
    if language == TRANSLATION:  # the page shows it in its words, the report as printed
        assert _device_line(built.page("page", language)) != report["Device line"]


def test_a_page_without_a_device_line_says_so_in_its_report(book):
    built, _ = book
    assert "tb-device-line" not in built.page("index")
    assert _report(built.page("index"))["Device line"] == "none on this page"
