"""The ledger adapter on a one-page fixture book, built in this process in seconds.

The page has two ``device-dependent`` cells; the recordings are made here and labelled
as test data ("Test GPU"): no device ran them. ``test-gpu`` has the same machine's CPU
beside it and another torch than this build; ``old-gpu`` is recorded as before the CPU
was kept, with this build's versions. The real book is tests/conf/test_ledger_book.py's.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp
from tests.support.sphinx_app import process_state_kept

from tensorbook_build.build import stage_command
from tensorbook_build.execute import read_page
from tensorbook_build.extensions import ledger as adapter
from tensorbook_build.ledger import (
    BESIDE,
    FOLDER,
    TAG,
    Cell,
    Freshness,
    Recording,
    cell_keys,
    page_recordings,
    write_recording,
)
from tensorbook_build.settings import LAYOUT
from tensorbook_build.spec import resolve_spec

pytestmark = pytest.mark.filterwarnings(  # as tests/conf/test_fixture_book.py says why
    "ignore:'sphinx_book_theme._transforms.HandleFootnoteTransform.app' is deprecated"
    ":sphinx.deprecation.RemovedInSphinx11Warning"
)

FIXTURE = Path(__file__).parent / "fixture_book"
EVIDENCE = LAYOUT.root / "tests" / "evidence" / "runs" / "2026-11-26-nvidia-h200-99c1c3a"
TIMELINE = EVIDENCE / "recorded" / "nvidia-h200" / "speed" / "cell-19-0.svg"  # says "measured"
PAGE = f"""---
file_format: mystnb
kernelspec:
  name: python3
  display_name: Python 3
---

# A page

```{{code-cell}} ipython3
:tags: [{TAG}]

print("on this build")
```

```{{code-cell}} ipython3
:tags: [{TAG}]

print("z = 3")
```
"""
# what each run printed, by cell: the GPU changed the first cell's first line, not the second
PRINTED = {
    "test-gpu": ("a = 1.0000001\nb = 2", "z = 3.5"),
    "cpu": ("a = 1.0\nb = 2", "z = 3.5"),
    "old-gpu": ("a = 1.0000001\nb = 2", "z = 3.5"),
}
BUILT = {  # this build's versions, as the fold compares them
    "torch": importlib.metadata.version("torch"),
    "python": platform.python_version(),
    "numpy": importlib.metadata.version("numpy"),
}


def _provenance(kind: str, **versions: str) -> dict[str, object]:
    gpu = {"name": "Test GPU", "driver": "0", "cuda": "13.0", "capability": "9.0",
           "memory_gib": 80.0}  # fmt: skip
    return {
        "device": "cpu" if kind == "cpu" else "cuda:0",
        "model": "CPU (test data)" if kind == "cpu" else f"Test GPU {kind} (test data)",
        "gpu": None if kind == "cpu" else gpu,
        **BUILT,
        "threads": 1,
        "commit": "1a2b3c4d5e6f",
        "commit_date": "2026-12-01",
        "run_date": "2026-12-01",
        "command": "written by tests/conf/test_ledger_fixture.py",
        **versions,
    }


def _record(root: Path, kind: str, provenance: dict[str, object], picture: bool = False) -> None:
    """A recording of page.md as if ``kind`` had printed :data:`PRINTED` (``root/<kind>``)."""
    page = read_page(PAGE)
    cells, figures = [], {}
    for (index, (source, modules)), text in zip(
        cell_keys(page.code, LAYOUT.src).items(), PRINTED[kind], strict=True
    ):
        outputs = [{"text": text}]
        if picture and not figures:  # the GPU's first cell drew a timeline too
            figures[f"page/cell-{index}-1.svg"] = TIMELINE.read_bytes()
            outputs.append({"image": f"page/cell-{index}-1.svg"})
        cells.append({"index": index, "source": source, "modules": modules, "marked": True,
                      "digest": "0" * 16, "outputs": outputs})  # fmt: skip
    data = {"schema": 1, "page": "page", "kind": kind, "provenance": provenance, "cells": cells}
    write_recording(root, data, figures)


@pytest.fixture(scope="module")
def ledger_fixture(tmp_path_factory) -> Iterator[str]:
    """The fixture book with one page and its recordings, built: the page's HTML."""
    root = tmp_path_factory.mktemp("ledger-fixture")
    src = root / "docs"
    src.mkdir()
    shutil.copy(FIXTURE / "conf.py", src / "conf.py")
    (src / "index.md").write_text("# The ledger\n\n```{toctree}\npage\n```\n", encoding="utf-8")
    (src / "page.md").write_text(PAGE, encoding="utf-8")
    recorded = src / FOLDER
    older = {"torch": "2.10.0+cu128", "python": "3.10.4", "numpy": "1.26.4"}  # no build's
    _record(recorded, "test-gpu", _provenance("test-gpu", **older), picture=True)
    _record(recorded / "test-gpu", BESIDE, _provenance(BESIDE, **older))
    _record(recorded, "old-gpu", _provenance("old-gpu"))
    spec = resolve_spec("cpu", given_by="test", warm_kernels=False, work=root / "build")
    cache = root / "build" / ".jupyter_cache"  # executed first, by the driver's stage
    stage = subprocess.run(
        stage_command(spec, src, cache),
        env={**os.environ, **spec.kernel_environment()},
        capture_output=True,
        text=True,
        check=False,
    )
    assert stage.returncode == 0, stage.stdout + stage.stderr
    with process_state_kept():
        app = SphinxTestApp(
            "html", srcdir=src, builddir=root / "build",
            confoverrides={"tensorbook_spec": spec.to_json(), "nb_execution_cache_path": str(cache)},
        )  # fmt: skip
        try:
            app.build()
            assert app.statuscode == 0, app.warning.getvalue()
            yield Path(app.outdir, "page.html").read_text(encoding="utf-8")
        finally:
            app.cleanup()


def _folds(html: str, model: str) -> list[str]:
    """The text of each fold of ``model``'s recording, in the order of the cells, tags gone."""
    found = re.findall(r'<details class="tb-recorded">(.*?)</details>', html, re.DOTALL)
    return [unescape(re.sub(r"<[^>]+>", "", fold)) for fold in found if model in fold]


def test_the_fold_shows_what_the_device_changed_against_the_same_machine_s_cpu(ledger_fixture):
    first, second = _folds(ledger_fixture, "Test GPU test-gpu")
    # the GPU against its own machine's CPU: one line changed, not this build's "on this build"
    assert adapter.CPU_DIFFERENT in first
    assert adapter.CPU_DIFF_KEY in first
    assert "-a = 1.0\n+a = 1.0000001" in first
    assert "on this build" not in first
    # the second cell printed the same on both: the same, though this build printed otherwise
    assert adapter.CPU_SAME in second
    assert adapter.DIFFERENT not in second
    assert adapter.NO_CPU not in first + second


def test_the_fold_says_when_torch_python_or_numpy_differ_from_this_build(ledger_fixture):
    first, _ = _folds(ledger_fixture, "Test GPU test-gpu")
    versions = adapter.VERSIONS.format(
        torch="2.10.0", python="3.10", numpy="1.26.4", own_torch=BUILT["torch"].split("+")[0],
        own_python=".".join(BUILT["python"].split(".")[:2]), own_numpy=BUILT["numpy"],
    )  # fmt: skip
    assert versions in first
    for fold in _folds(ledger_fixture, "Test GPU old-gpu"):  # recorded with this build's
        assert "Recorded with torch" not in fold


def test_without_the_cpu_beside_it_the_fold_compares_with_this_page_and_says_so(ledger_fixture):
    first, second = _folds(ledger_fixture, "Test GPU old-gpu")
    assert adapter.NO_CPU in first
    assert adapter.DIFFERENT in first
    assert "-on this build\n+a = 1.0000001\n+b = 2" in first
    assert adapter.DIFFERENT in second


def test_a_recorded_picture_is_labelled_recorded_not_measured_here(ledger_fixture):
    [first, _] = _folds(ledger_fixture, "Test GPU test-gpu")
    assert "<svg" in ledger_fixture
    assert adapter.RECORDED_PICTURE in first
    # nor in its description, which said it was measured while this page was built
    assert "measured" not in ledger_fixture


def test_a_cpu_recording_beside_a_gpu_s_from_another_run_is_refused(tmp_path):
    _record(tmp_path, "test-gpu", _provenance("test-gpu"))
    _record(tmp_path / "test-gpu", BESIDE, _provenance(BESIDE, torch="2.12.0"))
    with pytest.raises(ValueError, match=r"cpu/page\.json: field provenance\.torch: '2\.12\.0'"):
        page_recordings(tmp_path, "page")
    _record(tmp_path / "test-gpu", BESIDE, _provenance(BESIDE))
    [recording] = page_recordings(tmp_path, "page")
    assert recording.beside is not None
    assert recording.cpu_cell(recording.cells[0]) == recording.beside.cells[0]


def test_the_h200_s_recording_from_before_the_cpu_was_kept_still_loads_and_renders():
    """The speed chapter as the H200 recorded it at 99c1c3a (tests/evidence), in the first format."""
    [recording] = page_recordings(EVIDENCE / "recorded", "speed")
    assert recording.beside is None
    assert recording.provenance["torch"] == "2.11.0+cu130"
    marked = [cell for cell in recording.cells if cell.marked]
    fresh, built = Freshness(stale=False), {"torch": "2.13.0", "python": "3.11", "numpy": "2.4.6"}
    folds = [
        adapter._fold(recording, cell, fresh, ([], []), built, lambda text: text).astext()
        for cell in marked
    ]
    assert len(folds) == len(marked) > 1
    for fold in folds:
        assert fold.startswith("recorded on NVIDIA H200 · CUDA 13.0 · torch 2.11.0+cu130")
        assert adapter.NO_CPU in fold
        assert "Recorded with torch 2.11.0, Python 3.12, NumPy 2.5.2;" in fold
    pictures = [fold for fold in folds if "<svg" in fold]
    assert pictures, "the timeline is drawn in its fold"
    assert all(adapter.RECORDED_PICTURE in p and "measured" not in p for p in pictures)


def _reader_s(cells: tuple[Cell, ...], gpu: dict | None) -> Recording:
    """A contributed recording of ``cells``, on a CPU (``gpu`` None) or a GPU, the rest test data."""
    provenance = {"model": "Test reader's machine", "gpu": gpu, "torch": "2.13.0",
                  "python": "3.11.7", "numpy": "2.4.6", "run_date": "2026-12-01", "commit": "0" * 40}  # fmt: skip
    imported = {"imported": "2026-12-02", "receipt": "0" * 16}
    return Recording(
        Path("r.json"), "page", "contributed-test", provenance, cells, contributed=imported
    )


def _fold_text(recording: Recording, own: tuple[list[str], list[str]]) -> str:
    built = {"torch": "2.13.0", "python": "3.11", "numpy": "2.4.6"}
    fold = adapter._fold(recording, recording.cells[0], Freshness(stale=False), own, built, str)
    return fold.astext()


def test_a_reader_s_picture_cell_says_its_picture_is_not_kept_not_that_it_differs():
    cell = Cell(1, "s", {}, True, "d")  # the import dropped its picture: no output is left
    # the page's picture, and its plain-text alternative, which a page keeps for other builders
    own = (["<Figure size 640x480 with 1 Axes>"], ["<svg>the page's</svg>"])
    fold = _fold_text(_reader_s((cell,), None), own)
    assert adapter.PICTURE_NOT_KEPT in fold
    assert adapter.NO_PICTURES in fold
    assert adapter.DIFFERENT not in fold
    # with text beside the picture, the text alone is compared
    texted = Cell(1, "s", {}, True, "d", ({"text": "1.5x"},))
    fold = _fold_text(_reader_s((texted,), None), (["1.5x"], ["<svg>the page's</svg>"]))
    assert adapter.SAME in fold
    assert adapter.NO_PICTURES in fold


def test_a_cpu_s_recording_says_nothing_of_a_cpu_missing_beside_it():
    cell = Cell(1, "s", {}, True, "d", ({"text": "2.0x"},))
    gpu = {"name": "Test GPU", "driver": "1", "cuda": "13.0", "capability": "9.0", "memory_gib": 1}
    assert adapter.NO_CPU not in _fold_text(_reader_s((cell,), None), (["1.5x"], []))
    assert adapter.NO_CPU in _fold_text(_reader_s((cell,), gpu), (["1.5x"], []))
    # the whole recording is the reader's report, in the label: not its machine alone
    assert _fold_text(_reader_s((cell,), None), ([], [])).startswith(adapter.CONTRIBUTED + " · ")
