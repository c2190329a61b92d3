"""The built book: every chapter, its device line, its outputs, and its errors."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from html import unescape
from pathlib import Path

import nbformat
import pytest
import torch
from tests.support.book import (
    CHAPTERS,
    LANGUAGES,
    ROOT,
    SOURCE_LANGUAGE,
    build_book,
    copy_of_the_book,
    own_outputs,
    page,
    pages_logged,
)

from tensorbook import numpy_net
from tensorbook.device import resolve_device
from tensorbook_build.build import EXECUTE
from tensorbook_build.extensions.pysource import source_without_docstrings

pytestmark = pytest.mark.book


def executed(root: Path, chapter: str, language: str = SOURCE_LANGUAGE) -> nbformat.NotebookNode:
    return nbformat.read(root / "jupyter_execute" / language / f"{chapter}.ipynb", as_version=4)


def code_cells(notebook: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def output_text(output: nbformat.NotebookNode) -> str:
    if output.output_type == "stream":
        return output.text
    if output.output_type == "error":
        return f"{output.ename}: {output.evalue}"
    return output.get("data", {}).get("text/plain", "")


def test_every_chapter_is_built_and_listed(built_book):
    index = page(built_book, "index")
    for chapter in CHAPTERS:
        assert (built_book / "html" / SOURCE_LANGUAGE / f"{chapter}.html").exists(), chapter
        if chapter != "index":
            assert f'href="{chapter}.html"' in index, f"{chapter} missing from the contents"


def test_every_page_opens_with_its_device_line(built_book):
    device = resolve_device()
    expected = "Executed on GPU " if device.type == "cuda" else "Executed on CPU ("
    for chapter in CHAPTERS:
        first = code_cells(executed(built_book, chapter))[0]
        line = output_text(first.outputs[0])
        assert line.startswith(expected), (chapter, line)
        assert f"torch {torch.__version__}" in line, (chapter, line)
        html = page(built_book, chapter)
        # near the top: after the page's title, before its first section
        title = html.find("<h1", html.find("<article"))
        section = html.find("<h2", title)
        assert 0 < title < html.find(expected, title) < (section if section > 0 else len(html))


def test_no_cell_has_an_unexpected_error_and_every_taught_error_happens(built_book):
    for chapter in CHAPTERS:
        cells = code_cells(executed(built_book, chapter))
        on_cpu = "".join(o.get("text", "") for o in cells[0].outputs).startswith("Executed on CPU")
        for number, cell in enumerate(cells, 1):
            errors = [o for o in cell.outputs if o.output_type == "error"]
            tags = cell.metadata.get("tags", [])
            # mixing devices raises only where the page's device is not the CPU
            taught = "raises-exception" in tags and not ("device-dependent" in tags and on_cpu)
            where = f"{chapter}, code cell {number}: {cell.source.splitlines()[0]!r}"
            if "raises-exception" in tags and not taught:
                continue
            if taught:
                assert errors, f"{where} is tagged raises-exception but raised nothing"
            else:
                assert not errors, f"{where} raised {errors[0].ename}: {errors[0].evalue}"
            streams = [o for o in cell.outputs if o.output_type == "stream"]
            assert all(o.name == "stdout" for o in streams), f"{where} wrote to stderr"


def test_no_output_shows_a_memory_address_or_a_path_of_the_build_machine(built_book):
    """Addresses change from run to run, paths from machine to machine."""
    unstable = re.compile(r"at 0x[0-9a-f]{6,}|site-packages|" + re.escape(str(ROOT)))
    for chapter in CHAPTERS:
        for cell in code_cells(executed(built_book, chapter)):
            for output in cell.outputs:
                text = output_text(output) + "\n".join(output.get("traceback", []))
                assert not unstable.search(text), (chapter, cell.source)


def test_figures_are_pictures_in_the_page(built_book):
    """Every figure a page draws is a picture in the page itself (tensorbook.draw), its
    words text: no chapter's output is a bitmap. The loss curves were Matplotlib PNGs,
    640 px wide with 10 pt words, 8 px on a 412 px phone."""
    for chapter in CHAPTERS:
        bitmaps = [
            o
            for cell in code_cells(executed(built_book, chapter))
            for o in cell.outputs
            if "image/png" in o.get("data", {})
        ]
        assert not bitmaps, chapter
    loss_figures = {"warmup_numpy": 1, "tensors_by_hand": 2, "autograd_network": 0, "nn_optim": 1}
    for chapter, count in loss_figures.items():
        for language in LANGUAGES:
            # the build's own: another device's recorded curves are in their folds
            html = own_outputs(page(built_book, chapter, language))
            assert html.count('<title data-w="loss_title">') == count, (chapter, language)


def test_math_is_mathml_and_nothing_is_loaded_from_elsewhere(built_book):
    warmup = page(built_book, "warmup_numpy")
    assert "<math" in warmup
    assert "\\frac" not in warmup.split("</head>")[1].split("<math")[0]
    for chapter in CHAPTERS:
        html = page(built_book, chapter)
        tags = re.findall(r"<(?:script|link|img)\b[^>]*>", html)
        # the canonical address names the published page; browsers load nothing from it
        loaded = [t for t in tags if 'rel="canonical"' not in t]
        loads = [re.search(r'(?:src|href)="(https?://[^"]+)"', t) for t in loaded]
        assert not [m.group(1) for m in loads if m], chapter


def test_pages_show_the_programs_real_source(built_book):
    """The page quotes numpy_net.gradients exactly as the package defines it."""
    html = page(built_book, "warmup_numpy")
    text = unescape(re.sub(r"<[^>]+>", "", html))
    source = inspect.getsource(numpy_net.gradients)
    shown = source_without_docstrings(source, "gradients")
    assert "check_shapes(x, y, w1, w2)" in shown
    for line in shown.splitlines():
        assert line in text, line
    assert "tensorbook.numpy_net.gradients (docstring left out)" in text


MEASURED = {"speed"}
"""Pages whose outputs are timings: real measurements, which no seed makes repeatable."""

TIMED_FIGURES = {"cuda": re.compile(r"\d+\.\d(</span>)? ms")}
"""Pages with a few timings among seeded outputs: those figures are masked, the rest compared."""


def _masked(chapter: str, text: str) -> str:
    pattern = TIMED_FIGURES.get(chapter)
    return pattern.sub("(time) ms", text) if pattern else text


def article(root: Path, chapter: str) -> str:
    """The part of a page that the book wrote: its text, code, outputs and images."""
    html = page(root, chapter)
    return html[html.index("<article") : html.index("</article>")]


@pytest.mark.slow
@pytest.mark.alone
def test_two_clean_builds_give_identical_outputs(built_book, tmp_path):
    """Pages are compared as readers get them; images are named by a hash of their bytes.

    The session's build forks its kernels from a warm server; this one starts each
    kernel afresh, so the same pages also show that a forked kernel computes what a
    fresh one does. It is also run as ``nox -s docs`` runs it, by the driver in a
    process of its own, which forks its Sphinx warm (the session's build, inside the
    test runner, starts Sphinx as a new process). (The executed notebooks on disk are
    not compared: how printed text is cut into chunks there depends on when the kernel
    flushed, which no seed fixes.)
    """
    command = [sys.executable, "-m", "tensorbook_build", "--site", str(tmp_path / "html")]
    command += ["--language", SOURCE_LANGUAGE, "--fresh-kernels"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    for chapter in CHAPTERS:
        if chapter in MEASURED:
            continue
        mine, theirs = article(built_book, chapter), article(tmp_path, chapter)
        assert _masked(chapter, mine) == _masked(chapter, theirs), chapter
    images = Path("html", SOURCE_LANGUAGE, "_images")

    def figures(root: Path) -> set[str]:
        return {
            name
            for chapter in CHAPTERS
            if chapter not in MEASURED
            for name in re.findall(r'src="_images/([^"]+)"', page(root, chapter))
        }

    assert figures(built_book) == figures(tmp_path)
    assert all((built_book / images / name).exists() for name in figures(built_book))


def test_a_broken_cell_fails_the_build_naming_page_and_cell(tmp_path):
    tree = copy_of_the_book(tmp_path, parts=["conf", "src"])
    docs = tree / "docs"
    (docs / "index.md").write_text(
        "---\nfile_format: mystnb\nkernelspec:\n  name: python3\n  display_name: Python 3\n"
        "---\n\n# Broken\n\n```{code-cell} ipython3\nx = 1\n```\n\n"
        "```{code-cell} ipython3\ny = name_that_does_not_exist + 1\n```\n",
        encoding="utf-8",
    )
    result = build_book(tmp_path / "out" / "html", tree=tree, languages=[SOURCE_LANGUAGE])
    log = result.output
    assert result.returncode != 0
    page = docs / "index.md"
    assert f"{page}: code cell 2 (line 15) raised NameError: name 'name_that_does_not_exist'" in log
    assert "    y = name_that_does_not_exist + 1" in log  # the cell's source, quoted
    # a few lines, not Sphinx's crash report; the traceback is in the file the line names
    assert "Loaded extensions" not in log
    assert "please open an issue" not in log.lower()
    report = tmp_path / "out" / "reports" / "index.log"
    assert f"Its traceback: {report}" in log
    assert "NameError" in report.read_text(encoding="utf-8")
    assert "Traceback" not in log
    failure = log[log.index(f"{page}: code cell 2") :].split("tensorbook_build:")[0]
    assert len(failure.strip().splitlines()) == 3, failure
    assert not (tmp_path / "out" / "html" / SOURCE_LANGUAGE).exists()  # nothing rendered
    # and so does the next build of the same page: it is executed, and fails, again
    again = build_book(tmp_path / "out" / "html", tree=tree, languages=[SOURCE_LANGUAGE])
    assert again.returncode != 0, again.output
    assert f"{page}: code cell 2 (line 15) raised NameError" in again.output


def test_an_edition_whose_inputs_did_not_change_is_not_built_again(tmp_path):
    tree = copy_of_the_book(tmp_path, parts=["conf", "src"])
    page_path = tree / "docs" / "index.md"
    page_path.write_text(
        "---\nfile_format: mystnb\nkernelspec:\n  name: python3\n  display_name: Python 3\n"
        "---\n\n# Quiet\n\n```{code-cell} ipython3\nprint(6 * 7)\n```\n",
        encoding="utf-8",
    )
    site = tmp_path / "out" / "html"
    first = build_book(site, tree=tree, languages=[SOURCE_LANGUAGE])
    assert first.returncode == 0, first.output
    again = build_book(site, tree=tree, languages=[SOURCE_LANGUAGE])
    assert again.returncode == 0
    assert (
        again.output
        == f"tensorbook_build: {SOURCE_LANGUAGE}: nothing changed since its last build\n"
    )
    with page_path.open("a", encoding="utf-8") as page_file:
        page_file.write("\nA new sentence.\n")
    edited = build_book(site, tree=tree, languages=[SOURCE_LANGUAGE])
    assert edited.returncode == 0, edited.output
    assert "Running Sphinx" in edited.output
    assert "A new sentence." in page(tmp_path / "out", "index")


def test_a_prose_edit_rewrites_only_its_page_and_changes_no_configuration(tmp_path):
    """Sphinx compares a build's configuration with the one the last build ended with:
    a value that an extension changes once the builder starts (a theme's, copybutton's)
    reads as changed on every build, and one the HTML builder hashes rewrites every page.
    (The editions run the same configuration code; a copy outside git names no commit.)"""
    tree = copy_of_the_book(tmp_path, parts=["conf", "src"])
    docs = tree / "docs"
    (docs / "index.md").write_text(
        "---\nfile_format: mystnb\nkernelspec:\n  name: python3\n  display_name: Python 3\n"
        "---\n\n# Two pages\n\n```{code-cell} ipython3\nprint(6 * 7)\n```\n\n"
        "```{toctree}\nfirst\nsecond\n```\n",
        encoding="utf-8",
    )
    for name in ("first", "second"):
        (docs / f"{name}.md").write_text(f"# The {name} page\n\nSome prose.\n", encoding="utf-8")
    site = tmp_path / "out" / "html"
    first = build_book(site, tree=tree, languages=[SOURCE_LANGUAGE])
    assert first.returncode == 0, first.output
    pages = {p.stem: p.stat().st_mtime_ns for p in (site / SOURCE_LANGUAGE).glob("*.html")}
    with (docs / "second.md").open("a", encoding="utf-8") as page_file:
        page_file.write("\nA new sentence.\n")
    edited = build_book(site, tree=tree, languages=[SOURCE_LANGUAGE])
    assert edited.returncode == 0, edited.output
    assert "The configuration has changed" not in edited.output, edited.output
    assert "build_info mismatch" not in edited.output, edited.output
    assert "targets for 1 source files that are out of date" in edited.output, edited.output
    rewritten = sorted(
        name
        for name, mtime in pages.items()
        if (site / SOURCE_LANGUAGE / f"{name}.html").stat().st_mtime_ns != mtime
    )
    # the page and the one whose contents list it; the index and search pages are
    # Sphinx's own, written on every build
    assert [name for name in rewritten if name not in {"genindex", "search"}] == [
        "index",
        "second",
    ]
    assert "A new sentence." in page(tmp_path / "out", "second")


@pytest.mark.alone
def test_kernels_talk_over_ipc_not_tcp(book_builds):
    """The pages' kernels use the build's kernel spec, whose provisioner puts their
    channels on Unix sockets: no kernel warns that its TCP traffic is unencrypted."""
    root, builds = book_builds
    log = builds[EXECUTE].output
    assert pages_logged(log, "executed") == sorted(f"{chapter}.md" for chapter in CHAPTERS)
    kernels = [path.read_text(encoding="utf-8") for path in (root / "reports").glob("*.log")]
    for printed in [log, *kernels]:  # what the stage printed, and each kernel's own log
        assert "without encryption" not in printed
        assert "TCP" not in printed


def test_a_cell_that_hangs_is_stopped_and_the_message_says_how_to_give_it_time(tmp_path):
    tree = copy_of_the_book(tmp_path, parts=["conf", "src"])
    (tree / "docs" / "index.md").write_text(
        "---\nfile_format: mystnb\nkernelspec:\n  name: python3\n  display_name: Python 3\n"
        "mystnb:\n  execution_timeout: 3\n---\n\n# Hangs\n\n"
        "```{code-cell} ipython3\nimport time\ntime.sleep(600)\n```\n",
        encoding="utf-8",
    )
    result = build_book(tmp_path / "out" / "html", tree=tree, languages=[SOURCE_LANGUAGE])
    assert result.returncode != 0
    page_path = tree / "docs" / "index.md"
    assert f"{page_path}: code cell 1 (line 13) did not finish in 3 seconds" in result.output
    assert "(mystnb: execution_timeout: 600)" in result.output
    assert "raises-exception" not in result.output
    # the kernel stopped mid-cell: its own complaints are in its log, not the build's output
    assert "Traceback" not in result.output
    assert "IPKernelApp" not in result.output
