"""The build keys cached outputs on the modules a page imports, the device and torch."""

from __future__ import annotations

import shutil

import pytest
import torch
from book_build import executed_pages
from bookhelpers import ROOT, build_book
from execution_context import context_cell, page_code, page_dependencies

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


def test_page_code_strips_cell_options():
    source = PAGE.format(code="import os\nfrom tensorbook import page")
    assert page_code(source) == ["\nimport os\nfrom tensorbook import page"]


def test_dependencies_follow_imports_through_the_package():
    source = PAGE.format(code="from tensorbook import page\n%matplotlib inline")
    assert page_dependencies(source, SRC) == [
        "tensorbook",
        "tensorbook.device",
        "tensorbook.page",
        "tensorbook.seeding",
    ]


def test_dependencies_of_the_network_chapter_include_its_programs():
    source = (ROOT / "docs" / "autograd_network.md").read_text(encoding="utf-8")
    deps = page_dependencies(source, SRC)
    programs = ("custom_relu", "nn_net", "autograd_net", "module_net", "compare", "graph")
    for module in (*programs, "losslog", "problem", "plots"):
        assert f"tensorbook.{module}" in deps
    assert "tensorbook.speed" not in deps  # a module the chapter does not import


def test_a_page_that_draws_plots_does_not_depend_on_every_network():
    source = (ROOT / "docs" / "warmup_numpy.md").read_text(encoding="utf-8")
    deps = page_dependencies(source, SRC)
    assert "tensorbook.numpy_net" in deps
    assert "tensorbook.custom_relu" not in deps


def test_the_context_cell_is_hidden_and_names_everything():
    cell = context_cell("device cpu, torch 2.13.0, 1 threads", {"tensorbook.page": "abc"})
    assert ":tags: [remove-cell]" in cell
    assert "# device cpu, torch 2.13.0, 1 threads" in cell
    assert "# tensorbook.page: abc" in cell


@pytest.mark.book
def test_edits_re_execute_exactly_the_pages_they_affect(tmp_path):
    """Prose: nothing. A module: the pages importing it. The device: every page."""
    tree = tmp_path / "tree"
    for part in ("conf", "src"):
        shutil.copytree(ROOT / part, tree / part, ignore=shutil.ignore_patterns("__pycache__"))
    docs = tree / "docs"
    docs.mkdir()
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
        result = build_book(build / "html", docs=docs, conf=tree / "conf", languages=["en"])
        assert result.returncode == 0, result.output
        return sorted(
            name
            for pk, name in executed_pages(build / ".jupyter_cache").items()
            if pk not in before
        )

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
def test_an_unavailable_device_stops_the_build_at_once(tmp_path, monkeypatch):
    if torch.cuda.is_available():
        pytest.skip("checks a machine without CUDA; this one has it")
    monkeypatch.setenv("TENSORBOOK_DEVICE", "cuda")
    result = build_book(tmp_path / "html")
    assert result.returncode != 0
    log = result.output
    assert "cannot build the book on device 'cuda'" in log
    assert "CUDA was asked for" in log
    assert "Executing notebook" not in log


def test_printed_text_does_not_depend_on_how_it_was_chunked():
    from nbformat.v4 import new_output
    from notebook_output import coalesce_streams_exactly

    def merged(chunks):
        outputs = [new_output("stream", name="stdout", text=chunk) for chunk in chunks]
        return coalesce_streams_exactly(outputs)[0]["text"]

    assert merged(["tensor([2.3])", "\n2.3\n"]) == merged(["tensor([2.3])\n2.3\n"])
    assert merged(["a\n", "b\n"]) == "a\nb\n"
