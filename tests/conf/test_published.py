"""The book as its publishing workflow makes it: Colab's links, published notebooks, receipts.

A copy of the book is built, both editions, from the outputs the book already executed,
with a repository and a site address configured (as ``pages.yml`` gives them), after a
receipt of the speed chapter, made here on the CPU by the reader's program, was
imported into it. Its notebooks are then published to a bare repository by the function
the workflow calls. About 4 minutes on 2 cores: the speed chapter's run and the two
editions' renders.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from html import unescape
from pathlib import Path

import nbformat
import pytest
from tests.support.book import (
    CHAPTERS,
    LANGUAGES,
    RECORDED_FOLD,
    SOURCE_LANGUAGE,
    copy_of_the_book,
    page,
)

from tensorbook.recording import BOOK
from tensorbook_build.build import build_site
from tensorbook_build.ledger import FOLDER
from tensorbook_build.notebooks import BRANCH, COLAB, publish
from tensorbook_build.receipts import import_receipt
from tensorbook_build.settings import Layout

pytestmark = [pytest.mark.book, pytest.mark.slow]

REPOSITORY = "https://github.com/example-owner/tensorbook"
SITE = "https://example.org/tensorbook/"
COLAB_LINK = re.compile(r'<a href="([^"]+)" class="tb-colab"')
CONTRIBUTED = {  # the whole recording is the reader's report, not its machine alone
    "en": "contributed by a reader: the machine, the versions and the outputs are the "
    "reader's report, unchecked by the book",
    "zh_CN": "由读者贡献：机器、版本和输出均为读者自报，本书未核实",
}
NO_PICTURE = {"en": "a reader's recording keeps no pictures", "zh_CN": "读者录制的结果不含图片"}
NO_CPU = {"en": "no run on the same machine's CPU", "zh_CN": "同一台机器在 CPU 上"}
DIFFERS = {"en": "differs from this page's output", "zh_CN": "与本页的输出不同"}


@dataclass(frozen=True)
class Published:
    build: Path  # holds html/
    remote: Path  # the bare repository the notebooks were published to
    receipt: dict
    receipt_output: str


def _head() -> str:
    done = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture(scope="module")
def published(built_book, tmp_path_factory) -> Published:
    root = tmp_path_factory.mktemp("published")
    notebook = built_book / "html" / SOURCE_LANGUAGE / "downloads" / "tensorbook-speed.ipynb"
    book = nbformat.read(notebook, as_version=4).metadata[BOOK]
    assert book["commit"].split("+")[0] == _head(), "the built book is not HEAD's"
    out = root / "receipt.json"
    made = subprocess.run(
        [sys.executable, "-m", "tensorbook.receipt", "speed", "--notebook", str(notebook),
         "--out", str(out), "--device", "cpu"],
        capture_output=True, text=True, check=False, cwd=root,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    receipt = json.loads(out.read_text(encoding="utf-8"))
    # a tree with uncommitted changes builds "<sha>+modified", which the import refuses;
    # the cells are still checked against HEAD's
    receipt["provenance"]["commit"] = receipt["provenance"]["commit"].split("+")[0]
    out.write_text(json.dumps(receipt), encoding="utf-8")
    tree = copy_of_the_book(root)
    import_receipt(out, recorded=tree / "docs" / FOLDER)
    shutil.copytree(built_book / ".jupyter_cache", root / "build" / ".jupyter_cache")
    environment = {"TENSORBOOK_REPOSITORY": REPOSITORY, "TENSORBOOK_BASE_URL": SITE}
    for built in build_site(
        root / "build" / "html", layout=Layout(tree), env=environment, capture=True
    ):
        assert built.returncode == 0, built.output
    remote = root / "remote.git"
    subprocess.run(["git", "init", "--quiet", "--bare", str(remote)], check=True)
    publish(root / "build" / "html", str(remote), "test: the notebooks")
    return Published(root / "build", remote, receipt, made.stdout)


def test_the_receipt_compares_the_reader_s_figures_with_the_book_s(published):
    said = published.receipt_output
    assert "which the book measured on a GPU: NVIDIA H200 · torch " in said, said
    assert "the other figures the chapter's text quotes are from a CPU" in said
    assert "built the book" not in said  # the book's build is not the reader's business
    assert "Files pane" not in said  # not run on Colab
    lines = (
        r"one .item\(\) of a number already computed: yours [\d.]+ µs; the book's [\d.]+ µs",
        (r"one step, torch beside NumPy at the largest sizes: yours [\d.]+x as fast "
         r"\(at [\d, ]+\); the book's [\d.]+x as fast \(at 4096, 4096, 4096, 4096\)"),
        r"the step replayed as a CUDA graph: yours none \(your run printed .*CUDA graphs",
    )  # fmt: skip
    for line in lines:
        assert re.search(rf"^  {line}", said, re.MULTILINE), (line, said)
    assert "item_us" not in said
    assert "speedup_largest" not in said
    assert re.search(r"^  code cell 19 of 19: [\d.]+ s$", said, re.MULTILINE), said
    # made from the session's book, built without a repository: it names nowhere to send it
    assert "names no repository to send it to" in said


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_a_cpu_receipt_of_the_speed_chapter_is_shown_as_contributed(published, language):
    html = page(published.build, "speed", language)
    model = published.receipt["provenance"]["model"]
    folds = [
        unescape(f) for f in RECORDED_FOLD.findall(html) if CONTRIBUTED[language] in unescape(f)
    ]
    assert folds, f"no fold labelled {CONTRIBUTED[language]!r}"
    assert all(model in fold for fold in folds), model
    # a CPU's recording has no CPU beside it: no note that one is missing
    assert not any(NO_CPU[language] in fold for fold in folds)
    # a picture cell's fold says its picture is not kept, not that it differs over nothing
    drawn = {
        c["index"] for c in published.receipt["cells"] if any("image" in o for o in c["outputs"])
    }
    texts = {
        c["index"] for c in published.receipt["cells"] if any("text" in o for o in c["outputs"])
    }
    assert drawn - texts, "the speed chapter's receipt has a cell that only draws"
    pictures = [f for f in folds if NO_PICTURE[language] in f]
    assert len(pictures) == len(drawn - texts), len(pictures)
    assert not any(DIFFERS[language] in f for f in pictures)
    status = unescape(page(published.build, "status", language))
    assert f"{CONTRIBUTED[language]} · {model} · " in status
    if language != SOURCE_LANGUAGE:  # Chinese sets its semicolons full-width
        row = next(line for line in status.splitlines() if CONTRIBUTED[language] in line)
        assert "; " not in row, row


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_a_chapter_s_last_cell_says_how_to_send_a_receipt_and_where(published, language):
    downloads = published.build / "html" / language / "downloads"
    for chapter in ("speed", "warmup_numpy"):  # device-dependent cells, and none
        notebook = nbformat.read(downloads / f"tensorbook-{chapter}.ipynb", as_version=4)
        last = notebook.cells[-1]
        command = (
            f"!{{sys.executable}} -m tensorbook.receipt {chapter} --notebook "
            f"{SITE}{language}/downloads/tensorbook-{chapter}.ipynb"
        )
        sends = last.cell_type == "markdown" and command in last.source
        assert sends == (chapter == "speed"), last.source
        # a new issue, filled in with the chapter and its edition, as "Report a problem" is
        assert sends <= (
            f"<{REPOSITORY}/issues/new?title=Receipt%3A%20{chapter}%20%28{language}%29"
            in last.source
        )
        assert "GitHub" in last.source or not sends  # that an issue is public, under their account


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_a_chapter_that_takes_receipts_links_to_sending_one_from_its_footer(published, language):
    """As "Report a problem" is: a new issue, filled in with the chapter and its edition."""
    for chapter in ("speed", "warmup_numpy"):  # device-dependent cells, and none
        html = unescape(page(published.build, chapter, language))
        footer = html[html.index('class="component-provenance"') :]
        sends = f"{REPOSITORY}/issues/new?title=Receipt%3A%20{chapter}%20%28{language}%29"
        assert (sends in footer) == (chapter == "speed"), chapter
        assert "Report a problem" in footer or language != SOURCE_LANGUAGE


def _show(remote: Path, path: str) -> str | None:
    done = subprocess.run(
        ["git", "-C", str(remote), "show", f"{BRANCH}:{path}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return done.stdout if done.returncode == 0 else None


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_every_chapter_opens_in_colab_from_the_published_branch(published, language):
    owner_name = REPOSITORY.removeprefix("https://github.com/")
    for chapter in CHAPTERS:
        links = COLAB_LINK.findall(page(published.build, chapter, language))
        assert len(links) == 1, f"{chapter}: {len(links)} Colab links"
        prefix = f"{COLAB}/{owner_name}/blob/{BRANCH}/"
        assert links[0].startswith(prefix), links[0]
        text = _show(published.remote, links[0].removeprefix(prefix))
        assert text is not None, f"{chapter}: {links[0]} is not on the {BRANCH} branch"
        notebook = nbformat.reads(text, as_version=4)
        first = next(c for c in notebook.cells if c.cell_type == "code")
        assert f'"{SITE}wheels/' in first.source, (
            f"{chapter}: the first cell installs from elsewhere"
        )


def test_a_local_build_links_to_no_colab(built_book):
    for language in LANGUAGES:
        for chapter in CHAPTERS:
            assert not COLAB_LINK.findall(page(built_book, chapter, language)), chapter


def test_publishing_again_keeps_the_branch_s_history(published):
    before = subprocess.run(
        ["git", "-C", str(published.remote), "rev-parse", BRANCH],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    commit = publish(published.build / "html", str(published.remote), "test: again")
    parents = subprocess.run(
        ["git", "-C", str(published.remote), "rev-parse", f"{commit}^"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert parents == before
