"""The chapters' downloads run where only the package is installed.

A fresh virtual environment gets the package's runtime dependencies under the pinned
constraints and ipykernel to run notebooks, nothing from the docs or test groups; the
first chapter's notebook, fetched from the book served at the address it was built for,
installs the package from the site's wheel into it, as a reader's first cell does.
Every downloaded notebook then runs there in a fresh kernel, and every script with that
environment's Python.
"""

from __future__ import annotations

import ast
import contextlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import venv
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.request import urlopen

import nbformat
import pytest
import torch
from nbclient import NotebookClient
from tests.support.book import CHAPTERS, LANGUAGES, ROOT, SOURCE_LANGUAGE, own_outputs
from tests.support.server import ServedSite, serve

import tensorbook
from tensorbook.environment import DEVICE_VARIABLE
from tensorbook.wording import DEVICE_LINE, parse
from tensorbook_build.build import build_site
from tensorbook_build.catalogs import translations
from tensorbook_build.downloads import FOLDER
from tensorbook_build.settings import LAYOUT, WHEELS, site_base_url, wheel_name
from tensorbook_build.spec import THREAD_VARIABLES

pytestmark = pytest.mark.book

WHEEL_URL = f"{site_base_url({})}{WHEELS}/{wheel_name(tensorbook.__version__)}"
KERNEL = "tensorbook-runtime"
"""The runtime environment's kernel, found through JUPYTER_PATH."""
NOT_SET_BY_READERS = (DEVICE_VARIABLE, *THREAD_VARIABLES)
"""What the suite's environment may set (nox -s tests runs its workers on one thread
each) and a reader's machine does not: none of it reaches a download. A reader's first
notebook runs on the reader's defaults (reader_site); later runs set one thread
themselves (ONE_THREAD)."""


def _kernel(root: Path, python: Path) -> None:
    """A kernelspec for ``python``'s environment, under ``root`` (for JUPYTER_PATH)."""
    spec = root / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "tensorbook runtime", "language": "python"})
    )


def _execute(
    notebook: nbformat.NotebookNode, root: Path, environ: Mapping[str, str] = {}, **options: Any
) -> None:
    """Run ``notebook`` in the kernel under ``root``, as a reader's machine would: no
    device or threads set, Matplotlib drawing into files; ``environ`` set for its kernel."""
    previous = os.environ.copy()
    for name in NOT_SET_BY_READERS:
        os.environ.pop(name, None)
    os.environ.update({"JUPYTER_PATH": str(root), "MPLBACKEND": "Agg", **environ})
    try:
        NotebookClient(notebook, kernel_name=KERNEL, timeout=600, **options).execute(cwd=str(root))
    finally:
        os.environ.clear()
        os.environ.update(previous)


@dataclass
class ReaderSite:
    """The book built for the address it is served at, and a reader's first notebook."""

    served: ServedSite
    root: Path
    """A reader's folder: ``venv/`` and the kernel under ``kernels/``."""
    first_notebook: nbformat.NotebookNode
    """The tensors chapter, fetched from the site and run: its first cell installed the
    package from the site."""


@pytest.fixture(scope="session")
def reader_site(built_book, tmp_path_factory) -> Iterator[ReaderSite]:
    """As a reader of the published site meets it: this book built for the address it is
    served at (its outputs reused from the cache, so nothing executes again); an
    environment with what the package needs, pinned as the book pins it, and a kernel,
    but not the package; in it, the tensors chapter's notebook fetched from the site, whose
    first cell installs the package from the site's own address, run on the reader's
    default threads."""
    tmp = tmp_path_factory.mktemp("reader")
    work, root = tmp / "book", tmp / "reader"
    shutil.copytree(built_book / ".jupyter_cache", work / ".jupyter_cache")
    venv.EnvBuilder(with_pip=True).create(root / "venv")
    python = root / "venv" / "bin" / "python"
    requirements = ["torch", "numpy", "matplotlib", "ipykernel"]
    constraints = ["-c", str(ROOT / "conf" / "constraints.txt")]
    quiet = ["--quiet", "--disable-pip-version-check"]
    subprocess.run(
        [str(python), "-m", "pip", "install", *quiet, *constraints, *requirements], check=True
    )
    _kernel(root, python)
    # the server is started first, so that the book is built for its address; until
    # the build writes the front door, a placeholder stands in for it
    (work / "html").mkdir()
    (work / "html" / "index.html").write_text("building", encoding="utf-8")
    with serve(work / "html") as served:
        built = build_site(
            work / "html",
            [SOURCE_LANGUAGE],
            env={"TENSORBOOK_BASE_URL": served.base_url},
            capture=True,
        )[-1]
        assert built.returncode == 0, built.output
        notebook = _fetch(served, "tensors")
        _execute(notebook, root)
        yield ReaderSite(served, root, notebook)


def _fetch(served: ServedSite, chapter: str) -> nbformat.NotebookNode:
    """A chapter's notebook, fetched from the served site."""
    address = f"{served.base_url}{SOURCE_LANGUAGE}/{FOLDER}/tensorbook-{chapter}.ipynb"
    with urlopen(address, timeout=30) as response:
        return nbformat.reads(response.read().decode("utf-8"), as_version=4)


@pytest.fixture(scope="session")
def runtime_environment(reader_site) -> Path:
    """The reader's environment once the package is installed: the package from the site
    (the wheel ``pip install .`` builds), its runtime dependencies and ipykernel only;
    the folder that holds its kernelspec (for JUPYTER_PATH)."""
    python = reader_site.root / "venv" / "bin" / "python"
    installed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    names = {p["name"].lower() for p in json.loads(installed)}
    assert {"tensorbook", "torch", "numpy", "matplotlib", "ipykernel"} <= names
    build = {"sphinx", "myst-nb", "pytest", "jupytext", "tensorbook-build"}
    assert not names & build, "not a runtime-only env"
    return reader_site.root


def _downloads(built_book: Path, language: str) -> Path:
    return built_book / "html" / language / "downloads"


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_every_chapter_offers_a_notebook_and_a_script(built_book, language):
    folder = _downloads(built_book, language)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        f"tensorbook-{c}{suffix}" for c in CHAPTERS for suffix in (".ipynb", ".py")
    )
    for chapter in CHAPTERS:
        page = (built_book / "html" / language / f"{chapter}.html").read_text(encoding="utf-8")
        assert f'href="downloads/tensorbook-{chapter}.ipynb"' in page
        assert f'href="downloads/tensorbook-{chapter}.py"' in page
        notebook = nbformat.read(folder / f"tensorbook-{chapter}.ipynb", as_version=4)
        first, install = notebook.cells[:2]
        assert first.cell_type == "markdown"
        assert f"<{WHEEL_URL}>" in first.source  # the default base URL: a local build's
        assert install.cell_type == "code"
        assert f'"{WHEEL_URL}"' in install.source
        assert f'TENSORBOOK_VERSION = "{tensorbook.__version__}"' in install.source
        code = [c for c in notebook.cells if c.cell_type == "code"]
        assert "page.start()" in code[1].source, "the page's set-up cell is missing"
        assert all(not c.get("outputs") for c in code), "a download must not carry outputs"
    assert (built_book / "html" / WHEELS / wheel_name(tensorbook.__version__)).is_file()


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_the_speed_chapter_ends_with_the_book_s_figures_beside_the_reader_s(built_book, language):
    notebook = nbformat.read(
        _downloads(built_book, language) / "tensorbook-speed.ipynb", as_version=4
    )
    words, book, intro, again = notebook.cells[-5:-1]  # the last says how to send a receipt
    assert [c.cell_type for c in (words, book, intro, again)] == [
        "markdown",
        "code",
        "markdown",
        "code",
    ]
    assert again.source == "timings = speed.sweep(device)\nspeed.table(timings)"
    shown = (built_book / "html" / language / "speed.html").read_text(encoding="utf-8")
    printed = book.source.splitlines()[1:-2]  # between BOOK = """ and its closing quotes
    device_line, table = printed[0], printed[1:]
    assert parse(DEVICE_LINE, device_line) is not None  # the English line, in every edition
    assert len(table) > 2
    # the page shows the sweep as a table (tensorbook.speed.ResultsTable): each printed
    # row's figures are a row of this build's first table, under its sizes
    results = shown[shown.index('<table class="tb-results">') :]
    results = results[: results.index("</table>")]
    rows = [_cells(row) for row in re.findall(r"<tr>(.*?)</tr>", results, re.DOTALL)]
    for line in table[1:]:
        sizes, *figures = re.split(r"\s{2,}", line.strip())
        assert [f.replace(" ", "") for f in figures] in rows, line
        assert any(sizes.replace(" ", "") in cell for row in rows for cell in row), sizes
    if language == SOURCE_LANGUAGE:
        assert html.escape(device_line, quote=False) in shown
    else:
        assert "Your machine beside the book's" not in words.source  # in its own words


OTHER_MACHINE = {  # a build on a CPU: the prose's other figures are not the GPU's
    "en": "The other figures this chapter's text quotes were measured on a CPU.",
    "zh_CN": "本章正文引用的其他数值是在 CPU 上测得的。",
}
FIGURES_STALE = {
    "en": "recorded before this page's code last changed",
    "zh_CN": "录制于本页代码最近一次修改之前",
}
NO_REPOSITORY = {  # a copy built without the book's repository sends the receipt nowhere
    "en": "This copy of the book names no repository to send the file to",
    "zh_CN": "本书的这个副本没有指明可以提交文件的仓库",
}
COMPARED = {  # the command sets the reader's figures beside the prose's: only where it has some
    "en": "Then the command prints your figures beside",
    "zh_CN": "接着，命令会把你的测量结果与本章正文引用的测量结果并排打印出来",
}
STALE = {  # the prose's figures are older than the chapter's code
    "en": "before the chapter's code last changed: they may not be what this code measures there",
    "zh_CN": "本书在本章代码上次修改之前",
}


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_the_receipt_cell_gives_each_reader_a_command_that_runs_where_they_type_it(
    built_book, language
):
    folder = _downloads(built_book, language)
    notebook = nbformat.read(folder / "tensorbook-speed.ipynb", as_version=4)
    last, book = notebook.cells[-1].source, notebook.metadata["tensorbook_book"]
    script = (folder / "tensorbook-speed.py").read_text(encoding="utf-8")
    said = script[script.rindex("# %% [markdown]") :]
    # the notebook's own Python, not whichever `python` the shell finds first
    assert "import sys\n!{sys.executable} -m tensorbook.receipt speed --notebook " in last
    assert "\n# python3 -m tensorbook.receipt speed --notebook " in said  # a terminal's command
    assert "!" not in said
    assert "#\n#\n" not in said  # one blank line between paragraphs, as in the notebook
    assert "sys.executable" not in said
    assert "receipt-speed-<device>.json" in last
    assert "receipt-speed-<device>.json" in said
    device = next(iter(book["figures"].values()))["source"].split(" · ")[0]
    assert device.startswith("NVIDIA")
    assert device in last  # the GPU the prose quotes
    assert (OTHER_MACHINE[language] in last) != book["built_on_gpu"]
    stale = any(f["stale"] for f in book["figures"].values())  # as the page's ledger says
    assert (STALE[language] in last) == stale
    shown = (built_book / "html" / language / "speed.html").read_text(encoding="utf-8")
    assert stale == (FIGURES_STALE[language] in shown)
    if language != SOURCE_LANGUAGE:  # Chinese punctuation, not ASCII's
        assert "; " not in last.replace("`pip install ipykernel`; ", "")
        assert not re.search(r"[\u4e00-\u9fff] ?\(|\) ?[\u4e00-\u9fff]", last), last
    for chapter in ("tensors", "speed"):  # device-dependent cells; recorded figures in one
        other = nbformat.read(folder / f"tensorbook-{chapter}.ipynb", as_version=4)
        figures = other.metadata["tensorbook_book"]["figures"]
        assert (COMPARED[language] in other.cells[-1].source) == bool(figures), chapter
    if not book["repository"]:
        assert NO_REPOSITORY[language] in last
        assert "issues/new" not in last
    assert "tensorbook_script_text" not in script  # the script's text, not a note of it


def _cells(row: str) -> list[str]:
    """The text of each cell of an HTML table's row, without its spaces."""
    cells = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.DOTALL)
    return [html.unescape(re.sub(r"<[^>]+>|\s", "", cell)) for cell in cells]


TIMED = {"cuda", "speed"}
"""The chapters whose checks time something: the ones a busy machine could change."""
ONE_THREAD = dict.fromkeys(THREAD_VARIABLES, "1")
"""How the downloads run after a reader's first notebook: on one thread, as the book's
build runs its pages. With as many threads as cores, torch's and NumPy's threads wait on
each other while other processes hold the cores: the speed chapter took 17, 74 and 200 s
where on one thread it takes 8; beside the suite's other worker, two threads ran the
training chapter's script in 33 s and 20 CPU-seconds, one thread in 8 s and 5; the
notebooks of the four chapters that train took 73 to 79 CPU-seconds on two threads, their
scripts 18 on one."""
TIMERS = re.compile(r"perf_counter|timeit|tensorbook import speed|tensorbook\.speed")


def test_the_chapters_run_on_busy_cores_are_the_ones_that_time_something():
    """Busy cores change only what is timed; a chapter that times nothing runs without
    them, which would only slow it (beside them, on two threads, a page that trains ran
    16 to 128 s where it runs in 5)."""
    timing = {c for c in CHAPTERS if TIMERS.search((ROOT / "docs" / f"{c}.md").read_text("utf-8"))}
    assert timing == TIMED


@contextlib.contextmanager
def busy_cores(busy: bool) -> Iterator[None]:
    """Two processes that keep two cores busy, when ``busy``: a reader's machine is rarely
    idle, and the book's own build ran alone on its cores."""
    spinning = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * busy)
    ]
    try:
        yield
    finally:
        for process in spinning:  # only the processes started here
            process.kill()
            process.wait()


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_notebook_runs_clean_in_a_fresh_kernel(reader_site, runtime_environment, chapter):
    """Every download, fetched from the served site, raises nothing but the errors its
    page teaches: a build check is a verdict here, never an error. Each runs on one
    thread (ONE_THREAD), those that time something with both cores busy too. A
    translation's notebooks run the same code
    (test_a_translated_notebook_runs_the_english_code), so the English ones run here."""
    notebook = _fetch(reader_site.served, chapter)
    with busy_cores(chapter in TIMED):
        _execute(notebook, runtime_environment, ONE_THREAD, allow_errors=False)
    taught = [c for c in notebook.cells if "raises-exception" in c.metadata.get("tags", [])]
    for cell in taught:  # the errors the page teaches still happen
        if "device-dependent" in cell.metadata["tags"] and not torch.cuda.is_available():
            continue  # mixing devices raises only where the page's device is not the CPU
        assert any(o.output_type == "error" for o in cell.outputs), cell.source
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell not in taught:
            assert not any(o.output_type == "error" for o in cell.outputs), cell.source
    verdicts = [c for c in notebook.cells if VERDICT_MARK in c.source]
    if chapter == "speed":  # its build checks are there, as verdicts
        assert len(verdicts) >= 2
    for cell in verdicts:  # each says whether the claim holds here, in so many words
        printed = "".join(o.get("text", "") for o in cell.outputs)
        assert any(words in printed for words in _verdict_words(cell.source)), printed


def _without_strings(source: str) -> str:
    """A cell's code with every string constant blanked: what it does, not what it says."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
    return ast.dump(tree)


@pytest.mark.parametrize("language", [c for c in LANGUAGES if c != SOURCE_LANGUAGE])
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_translated_notebook_runs_the_english_code(built_book, language, chapter):
    """A translation's notebook has the English one's cells, tags and code; only the
    sentences its code prints (a verdict's, a fold's label) are its own, and those are
    translated. So the English notebook's run stands for it."""
    english, translated = (
        nbformat.read(_downloads(built_book, code) / f"tensorbook-{chapter}.ipynb", as_version=4)
        for code in (SOURCE_LANGUAGE, language)
    )
    assert [c.cell_type for c in translated.cells] == [c.cell_type for c in english.cells]
    for mine, theirs in zip(english.cells, translated.cells, strict=True):
        assert theirs.metadata.get("tags", []) == mine.metadata.get("tags", []), theirs.source
        if mine.cell_type == "code" and theirs.source != mine.source:
            assert _without_strings(theirs.source) == _without_strings(mine.source), theirs.source
        if VERDICT_MARK in mine.source:  # said in the translation's words
            words = set(_verdict_words(theirs.source))
            assert words.isdisjoint(_verdict_words(mine.source)), theirs.source


VERDICT_MARK = "# In the book, this cell is the build's own check"


def _verdict_words(source: str) -> list[str]:
    """The sentences a verdict cell prints for "holds" and for "does not hold"."""
    tree = ast.parse(source)
    found = []
    for node in tree.body:  # the verdict's own with, not one inside the check it wraps
        if isinstance(node, ast.With):
            (item,) = node.items
            assert isinstance(item.context_expr, ast.Call), source
            words = {k.arg: k.value for k in item.context_expr.keywords}
            found += [words["holds"].value, words["fails"].value]
    return found


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_script_runs_clean(built_book, runtime_environment, chapter, tmp_path):
    """A script runs where a reader saved it, on one thread (ONE_THREAD), and saves each
    picture its notebook would show beside it, naming the file."""
    python = runtime_environment / "venv" / "bin" / "python"
    script = tmp_path / f"tensorbook-{chapter}.py"
    shutil.copy(_downloads(built_book, "en") / script.name, script)
    environment = {k: v for k, v in os.environ.items() if k not in NOT_SET_BY_READERS}
    environment.update(ONE_THREAD)
    finished = subprocess.run(
        [str(python), str(script)], capture_output=True, text=True, check=False,
        cwd=runtime_environment, env={**environment, "MPLBACKEND": "Agg"}, timeout=600,
    )  # fmt: skip
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert "Executed on" in finished.stdout
    assert "installs no torch" in finished.stdout  # the environment has one
    assert "Traceback" not in finished.stderr
    named = re.findall(r"\[figure saved as ([^]:]+)", finished.stdout)
    assert len(named) == _figures(built_book, chapter)
    for name in named:
        assert (tmp_path / name).stat().st_size > 0, name


def test_the_wheel_weighs_what_the_first_cell_says(built_book):
    """A download's first cell tells the reader the package is under WHEEL_KB_AT_MOST kB."""
    notebook = nbformat.read(_downloads(built_book, "en") / "tensorbook-tensors.ipynb", 4)
    assigned = {
        node.targets[0].id: node.value
        for node in ast.parse(notebook.cells[1].source).body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    }
    at_most = ast.literal_eval(assigned["WHEEL_KB_AT_MOST"])
    wheel = built_book / "html" / WHEELS / wheel_name(tensorbook.__version__)
    assert 0 < wheel.stat().st_size <= at_most * 1000


def _figures(built_book: Path, chapter: str) -> int:
    """How many pictures and figures the page shows as this build's outputs."""
    page = (built_book / "html" / "en" / f"{chapter}.html").read_text(encoding="utf-8")
    page = own_outputs(page)
    return page.count('class="output tb-picture"') + page.count('src="_images/')


def test_translated_notebooks_carry_the_translated_prose(built_book):
    """No block of English prose that the catalog translates is left in a translation's
    notebooks (math, which the catalogs carry as it is, aside)."""
    for language in LANGUAGES:
        if language == SOURCE_LANGUAGE:
            continue
        for chapter in CHAPTERS:
            messages = translations(LAYOUT.catalogs(language) / f"{chapter}.po")
            assert messages, f"no catalog for {chapter}"
            notebook = nbformat.read(
                _downloads(built_book, language) / f"tensorbook-{chapter}.ipynb", as_version=4
            )
            prose = " ".join(
                " ".join(c.source.split()) for c in notebook.cells if c.cell_type == "markdown"
            )
            left = [m for m, t in messages.items() if m != t and len(m) > 12 and m in prose]
            assert left == [], f"{language}/{chapter}: English left in the notebook"
            assert any(t in prose for t in messages.values()), f"{chapter}: nothing translated"


@pytest.mark.slow
def test_a_download_installs_the_book_s_wheel_from_the_served_site(reader_site):
    """The chapter's notebook, fetched from the site, installed the package from the
    site's own address into an environment that lacked it, checked its version and ran
    (:func:`reader_site`)."""
    served, python = reader_site.served, reader_site.root / "venv" / "bin" / "python"
    notebook = reader_site.first_notebook
    wheel_url = f"{served.base_url}{WHEELS}/{wheel_name(tensorbook.__version__)}"
    assert f'"{wheel_url}"' in notebook.cells[1].source
    said = "".join(o.get("text", "") for o in notebook.cells[1].outputs)
    assert f"Installing tensorbook {tensorbook.__version__}" in said, said
    installed = subprocess.run(  # from the reader's folder: nothing of the checkout's
        [str(python), "-c", DIRECT_URL], capture_output=True, text=True, check=True,
        cwd=reader_site.root,
    ).stdout  # fmt: skip
    assert json.loads(installed)["url"] == wheel_url  # from the site, nowhere else
    # the wheel alone gives the reader the package's command, as module and as script
    for command in ([str(python), "-m", "tensorbook"], [str(python.parent / "tensorbook")]):
        listing = subprocess.run(
            command, capture_output=True, text=True, check=True, cwd=reader_site.root
        )
        assert "numpy_net" in listing.stdout, command
    for cell in notebook.cells:
        if cell.cell_type == "code" and "raises-exception" not in cell.metadata.get("tags", []):
            assert not any(o.output_type == "error" for o in cell.outputs), cell.source


DIRECT_URL = "import importlib.metadata as m; print(m.distribution('tensorbook').read_text('direct_url.json'))"
