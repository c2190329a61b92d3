"""The chapters' downloads run where only the package is installed.

A fresh virtual environment gets the package (not editable: what ``pip install .``
gives a reader), its runtime dependencies under the pinned constraints, and ipykernel
to run notebooks; nothing from the docs or test groups. Every downloaded notebook
runs there in a fresh kernel, and every script with that environment's Python.
"""

from __future__ import annotations

import json
import os
import subprocess
import venv
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tensorbook.environment import DEVICE_VARIABLE
from tensorbook_build.catalogs import translations
from tensorbook_build.settings import LAYOUT
from tensorbook_build.tools.testing import CHAPTERS, LANGUAGES, ROOT, SOURCE_LANGUAGE

pytestmark = pytest.mark.book

KERNEL = "tensorbook-runtime"
"""The runtime environment's kernel, found through JUPYTER_PATH."""


@pytest.fixture(scope="session")
def runtime_environment(tmp_path_factory) -> Path:
    """A venv with the package, its runtime dependencies and ipykernel only; the
    folder that holds its kernelspec (for JUPYTER_PATH)."""
    root = tmp_path_factory.mktemp("runtime")
    venv.EnvBuilder(with_pip=True).create(root / "venv")
    python = root / "venv" / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-c", str(ROOT / "conf" / "constraints.txt"), str(ROOT), "ipykernel"],
        check=True,
    )  # fmt: skip
    installed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=json"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    names = {p["name"].lower() for p in json.loads(installed)}
    assert {"tensorbook", "torch", "numpy", "matplotlib", "ipykernel"} <= names
    assert not names & {"sphinx", "myst-nb", "pytest", "jupytext"}, "not a runtime-only env"
    spec = root / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "tensorbook runtime",
                "language": "python",
            }
        )
    )
    return root


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
        first = notebook.cells[0]
        assert first.cell_type == "markdown"
        assert "pip install ." in first.source
        code = [c for c in notebook.cells if c.cell_type == "code"]
        assert code, "no code in a chapter"
        assert "page.start()" in code[0].source, "the page's set-up cell is missing"
        assert all(not c.get("outputs") for c in code), "a download must not carry outputs"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_notebook_runs_clean_in_a_fresh_kernel(built_book, runtime_environment, chapter):
    notebook = nbformat.read(
        _downloads(built_book, "en") / f"tensorbook-{chapter}.ipynb", as_version=4
    )
    environment = {**os.environ, "JUPYTER_PATH": str(runtime_environment), "MPLBACKEND": "Agg"}
    environment.pop(DEVICE_VARIABLE, None)  # a reader's machine sets nothing
    previous = os.environ.copy()
    os.environ.update(environment)
    try:
        client = NotebookClient(notebook, kernel_name=KERNEL, timeout=600, allow_errors=False)
        client.execute(cwd=str(runtime_environment))
    finally:
        os.environ.clear()
        os.environ.update(previous)
    taught = [c for c in notebook.cells if "raises-exception" in c.metadata.get("tags", [])]
    for cell in taught:  # the errors the page teaches still happen
        assert any(o.output_type == "error" for o in cell.outputs), cell.source
    for cell in notebook.cells:
        if cell.cell_type == "code" and cell not in taught:
            assert not any(o.output_type == "error" for o in cell.outputs), cell.source


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_script_runs_clean(built_book, runtime_environment, chapter):
    python = runtime_environment / "venv" / "bin" / "python"
    script = _downloads(built_book, "en") / f"tensorbook-{chapter}.py"
    environment = {k: v for k, v in os.environ.items() if k != DEVICE_VARIABLE}
    finished = subprocess.run(
        [str(python), str(script)], capture_output=True, text=True, check=False,
        cwd=runtime_environment, env={**environment, "MPLBACKEND": "Agg"}, timeout=600,
    )  # fmt: skip
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert "Executed on" in finished.stdout
    assert "Traceback" not in finished.stderr


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
