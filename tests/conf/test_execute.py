"""The build keys cached outputs on the modules a page imports, the device and torch."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest
import torch
from tests.support.book import (
    ROOT,
    SOURCE_LANGUAGE,
    build_book,
    copy_of_the_book,
    executed,
    pages_logged,
)

from tensorbook.environment import DEVICE_VARIABLE
from tensorbook_build.build import build_lock, executed_pages, sphinx_command, stage_command
from tensorbook_build.execute import context_cell, page_dependencies, read_page
from tensorbook_build.extensions.execution import code_digest
from tensorbook_build.extensions.outputs import join_streams
from tensorbook_build.settings import LAYOUT
from tensorbook_build.spec import resolve_spec

SRC = ROOT / "src"

PAGE = """---
file_format: mystnb
kernelspec:
  name: python3
  display_name: Python 3
---

# A page

```{{code-cell}} ipython3
:tags: [remove-input]

{code}
```

Prose.
"""


def test_a_page_is_read_as_myst_nb_reads_it_options_apart():
    page = read_page(PAGE.format(code="import os\nfrom tensorbook import page"))
    assert page.metadata["kernelspec"]["name"] == "python3"
    assert [(c.index, c.kind, c.tags, c.line) for c in page.cells] == [
        (0, "markdown", [], 8),
        (1, "code", ["remove-input"], 13),
        (2, "markdown", [], 17),
    ]
    assert page.code == {1: "import os\nfrom tensorbook import page"}


TRICKY = '''---
file_format: mystnb
kernelspec:
  name: python3
---

# Fences that are not cells

````markdown
```{code-cell} ipython3
import tensorbook.speed
```
````

```python
import tensorbook.graph
```

+++ {"note": "a break with metadata"}

After the break.

~~~{code-cell} ipython3
---
tags: [remove-cell]
mystnb:
  code_prompt_show: ""
---
from tensorbook import seeding
~~~

````{code-cell} ipython3
:tags: [raises-exception, device-dependent]

text = """
```{code-cell}
"""
````
'''


def test_fences_breaks_and_option_blocks_are_read_as_the_build_executes_them():
    """A code-cell inside another fence is prose; ``+++`` breaks a markdown cell, with
    its metadata; a YAML block of options and short options are not code."""
    page = read_page(TRICKY)
    assert [c.kind for c in page.cells] == ["markdown", "markdown", "code", "code"]
    assert "import tensorbook.speed" in page.cells[0].source
    assert page.cells[1].metadata == {"note": "a break with metadata"}
    assert page.cells[1].source == "After the break."
    hidden, raising = page.cells[2], page.cells[3]
    assert hidden.tags == ["remove-cell"]
    assert hidden.source == "from tensorbook import seeding"
    assert hidden.line == TRICKY.splitlines().index(hidden.source) + 1
    assert raising.tags == ["raises-exception", "device-dependent"]
    assert raising.source == 'text = """\n```{code-cell}\n"""'
    assert page_dependencies(page.code.values(), SRC) == ["tensorbook", "tensorbook.seeding"]


def test_no_other_module_of_the_build_reads_a_page():
    """execute.read_page is the one reader of a page's cells: no other module parses a
    page with MyST-NB, jupytext or a pattern of its own (jupytext only writes scripts)."""
    package = LAYOUT.conf / "tensorbook_build"
    readers = ("read_myst_markdown_notebook", "jupytext.read", "myst_to_notebook", "code-cell")
    found = {
        (path.relative_to(package).as_posix(), reader)
        for path in package.rglob("*.py")
        for reader in readers
        if reader in path.read_text(encoding="utf-8")
    }
    # execute.py reads; its context_cell writes a code-cell
    assert found == {("execute.py", "read_myst_markdown_notebook"), ("execute.py", "code-cell")}


def test_dependencies_follow_imports_through_the_package():
    code = read_page(PAGE.format(code="from tensorbook import page\n%matplotlib inline")).code
    assert page_dependencies(code.values(), SRC) == [
        "tensorbook",
        "tensorbook.device",
        "tensorbook.environment",
        "tensorbook.page",
        "tensorbook.seeding",
        "tensorbook.wording",
    ]


@pytest.mark.parametrize(
    ("chapter", "programs", "absent"),
    [
        ("autograd_network", ("autograd_net", "custom_relu", "manual_net", "losslog"), "nn_net"),
        (
            "nn_optim",
            ("nn_net", "autograd_net", "module_net", "compare", "graph", "plots"),
            "speed",
        ),
    ],
)
def test_dependencies_of_the_network_chapters_include_their_programs(chapter, programs, absent):
    page = read_page((ROOT / "docs" / f"{chapter}.md").read_text(encoding="utf-8"))
    deps = page_dependencies(page.code.values(), SRC)
    for module in (*programs, "problem"):
        assert f"tensorbook.{module}" in deps
    assert f"tensorbook.{absent}" not in deps  # a module the chapter does not import


def test_a_page_that_draws_plots_does_not_depend_on_every_network():
    page = read_page((ROOT / "docs" / "warmup_numpy.md").read_text(encoding="utf-8"))
    deps = page_dependencies(page.code.values(), SRC)
    assert "tensorbook.numpy_net" in deps
    assert "tensorbook.custom_relu" not in deps


def test_the_context_cell_is_hidden_and_names_everything():
    cell = context_cell("device cpu, torch 2.13.0, 1 threads", {"tensorbook.page": "abc"})
    assert ":tags: [remove-cell]" in cell
    assert "# device cpu, torch 2.13.0, 1 threads" in cell
    assert "# tensorbook.page: abc" in cell


def test_an_edit_to_the_build_s_code_changes_its_digest(tmp_path):
    """The digest is part of env_version: an edit to the build makes Sphinx read every page."""
    (tmp_path / "sub").mkdir()
    module = tmp_path / "sub" / "a.py"
    module.write_text("x = 1", encoding="utf-8")
    before = code_digest(tmp_path)
    module.write_text("x = 2", encoding="utf-8")
    after = code_digest(tmp_path)
    assert after != before
    (tmp_path / "notes.txt").write_text("not code", encoding="utf-8")
    assert code_digest(tmp_path) == after


@pytest.mark.book
def test_edits_re_execute_exactly_the_pages_they_affect(tmp_path):
    """Prose: nothing. A module: the pages importing it. The device: every page."""
    tree = copy_of_the_book(tmp_path, parts=["conf", "src"])
    docs = tree / "docs"
    (docs / "index.md").write_text(
        PAGE.format(code="from tensorbook import seeding\nseeding.seed_everything(0)")
        + "\n```{toctree}\ngraph_page\n```\n",
        encoding="utf-8",
    )
    (docs / "graph_page.md").write_text(
        PAGE.format(code="from tensorbook.graph import example_leaves"), encoding="utf-8"
    )
    build = tree / "build"

    def rebuild() -> list[str]:
        before = executed_pages(build / ".jupyter_cache")
        result = build_book(build / "html", tree=tree, languages=[SOURCE_LANGUAGE])
        assert result.returncode == 0, result.output
        executed = sorted(
            name
            for pk, name in executed_pages(build / ".jupyter_cache").items()
            if pk not in before
        )
        # the cache's records and the build's log must tell the same story
        assert executed == pages_logged(result.output, "executed"), result.output
        return executed

    assert rebuild() == ["graph_page.md", "index.md"]
    assert rebuild() == []
    with (docs / "index.md").open("a", encoding="utf-8") as page:
        page.write("\nMore prose.\n")
    assert rebuild() == []
    with (tree / "src" / "tensorbook" / "graph.py").open("a", encoding="utf-8") as module:
        module.write("\n# an edit\n")
    assert rebuild() == ["graph_page.md"]
    with (tree / "src" / "tensorbook" / "seeding.py").open("a", encoding="utf-8") as module:
        module.write("\n# an edit\n")
    assert rebuild() == ["graph_page.md", "index.md"]  # graph imports cli, cli imports seeding


@pytest.mark.book
def test_an_unavailable_device_stops_the_build_at_once_naming_its_source(tmp_path, monkeypatch):
    if torch.cuda.device_count() > 7:
        pytest.skip("checks a machine without cuda:7; this one has it")
    monkeypatch.setenv(DEVICE_VARIABLE, "cuda:7")
    result = subprocess.run(
        [sys.executable, "-m", "tensorbook_build", "--site", str(tmp_path / "html")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    log = result.stdout + result.stderr
    lines = log.strip().splitlines()
    assert len(lines) == 1, log  # one line, no traceback
    assert lines[0].startswith("tensorbook_build: "), log
    source = f"environment variable {DEVICE_VARIABLE}"
    assert f"CUDA was asked for ('cuda:7', from {source}) but " in lines[0], log
    assert lines[0].count("from") == 1, lines[0]  # the true source, and no other
    assert not (tmp_path / "html").exists()


@pytest.mark.book
def test_a_plain_sphinx_build_is_refused_in_one_line_naming_the_driver(tmp_path):
    result = subprocess.run(
        sphinx_command(tmp_path / "html"), capture_output=True, text=True, check=False
    )
    log = result.stdout + result.stderr
    assert result.returncode != 0
    assert "no -D tensorbook_spec: build the book with python -m tensorbook_build" in log, log
    assert "Traceback" not in log


def test_printed_text_does_not_depend_on_how_it_was_chunked():
    from myst_nb.core.render import coalesce_streams  # what MyST-NB merges them with
    from nbformat.v4 import new_output

    def merged(chunks):
        outputs = [new_output("stream", name="stdout", text=chunk) for chunk in chunks]
        return join_streams(outputs, coalesce_streams)[0]["text"]

    assert merged(["tensor([2.3])", "\n2.3\n"]) == merged(["tensor([2.3])\n2.3\n"])
    assert merged(["a\n", "b\n"]) == "a\nb\n"


def test_a_second_build_into_the_same_folder_stops_at_once_naming_the_holder(tmp_path):
    """The lock goes with the process that holds it: here this test holds it."""
    work = tmp_path / "build"
    with build_lock(work):
        result = subprocess.run(
            [sys.executable, "-m", "tensorbook_build", "--site", str(work / "html")],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
    assert result.returncode == 3
    lines = (result.stdout + result.stderr).strip().splitlines()
    assert len(lines) == 1, lines
    holder = f"the build with pid {os.getpid()}, started at "
    assert lines[0].startswith(f"tensorbook_build: {work} is being built by {holder}")
    assert re.search(r"started at \d\d:\d\d:\d\d \(\d+ s ago\); wait for it", lines[0]), lines
    assert lines[0].endswith("; wait for it to finish, or build into another folder with --site")
    assert not (work / "html").exists()
    with build_lock(work):  # released: the next build may go on
        pass


def test_a_lock_file_naming_a_build_that_is_gone_is_taken_over_saying_so(tmp_path, capsys):
    """A build killed with kill -9 leaves its lock file naming it: the next takes it over."""
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(ended.stdout)
    work = tmp_path / "build"
    work.mkdir()
    (work / ".build.lock").write_text(f"{pid} {time.time() - 90:.0f}\n")
    with build_lock(work):
        assert (work / ".build.lock").read_text().split()[0] == str(os.getpid())
    said = capsys.readouterr().err
    lock = work / ".build.lock"
    assert said.startswith(f"tensorbook_build: taking over {lock} from the build with pid {pid}, ")
    assert re.search(r"started at \d\d:\d\d:\d\d \(1 min 3\d s ago\), which is gone\n$", said)


@pytest.mark.book
def test_pages_executed_in_two_shards_render_as_one_run(tmp_path):
    """The execute stage runs any subset of the pages into a cache (--shard k/n); the
    editions then render from the cache alone, as they do after one run of every page."""
    tree = copy_of_the_book(tmp_path, parts=["conf", "src"])
    docs = tree / "docs"
    names = ["index", "one", "two"]
    for name in names:
        code = f"import torch\ntorch.manual_seed(0)\nprint({name!r}, torch.randn(2).tolist())"
        (docs / f"{name}.md").write_text(PAGE.format(code=code), encoding="utf-8")
    with (docs / "index.md").open("a", encoding="utf-8") as index:
        index.write("\n```{toctree}\none\ntwo\n```\n")
    spec = resolve_spec("cpu", given_by="test", src=tree / "src", work=tmp_path / "sharded")
    command = stage_command(spec, docs, tmp_path / "sharded" / ".jupyter_cache")
    environment = {**os.environ, **spec.kernel_environment()}
    ran = []
    for which in ("1/2", "2/2"):
        run = subprocess.run(
            [*command, "--shard", which],
            env=environment,
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 0, run.stdout + run.stderr
        ran.append(pages_logged(run.stdout, "executed"))
    assert ran == [["index.md", "two.md"], ["one.md"]]
    sharded = build_book(tmp_path / "sharded" / "html", tree=tree, languages=[SOURCE_LANGUAGE])
    assert sharded.returncode == 0, sharded.output
    assert pages_logged(sharded.output, "executed") == []  # rendered from the shards' cache
    whole = build_book(tmp_path / "whole" / "html", tree=tree, languages=[SOURCE_LANGUAGE])
    assert pages_logged(whole.output, "executed") == ["index.md", "one.md", "two.md"]

    def outputs(work: str) -> dict[str, list[object]]:
        notebooks = {name: executed(tmp_path / work, name) for name in names}
        return {name: [c.get("outputs") for c in nb.cells] for name, nb in notebooks.items()}

    assert outputs("sharded") == outputs("whole")
    assert "one [" in str(outputs("whole")["one"])  # each page's own print, compared
