"""The device ledger's data: recordings, their schema, freshness, the mark check, verdicts.

The recordings here are test data, made from small notebooks in temporary folders and
labelled as such; none is a recording of any device.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from tests.support.book import ROOT
from tests.support.kit import add_result, run_kit

from tensorbook.draw.curves import curves_picture
from tensorbook_build.downloads import is_build_check, notebook_for, verdict_code
from tensorbook_build.execute import Cell, read_page
from tensorbook_build.ledger import (
    FIGURES,
    TAG,
    RecordingError,
    align,
    cell_keys,
    freshness,
    load_recording,
    page_figures,
    page_recordings,
    recording_from_notebook,
    unmarked_differences,
    write_recording,
)

PNG = base64.b64encode(b"\x89PNG test figure").decode()
PROVENANCE = {
    "device": "cuda:0",
    "model": "Test GPU (test data)",
    "gpu": {"name": "Test GPU", "driver": "0", "cuda": "13.0", "capability": "9.0",
            "memory_gib": 80.0},
    "torch": "2.13.0+cu130",
    "python": "3.12.0",
    "numpy": "2.4.6",
    "threads": 1,
    "commit": "1a2b3c4d5e6f",
    "commit_date": "2026-12-01",
    "run_date": "2026-12-01",
    "command": "written by tests/conf/test_ledger.py",
}  # fmt: skip
PICTURE = curves_picture([1.0, 0.5], [1.1, 0.7], name="test data")
WORDS = {"measured": "Book:", "holds": "Holds here.", "fails": "Fails here:"}


def _notebook(printed: str = "on cuda:0", device_line: str = "") -> dict:
    line = device_line or (
        "Executed on GPU Test (cuda:0, CUDA 13.0) · torch 2.13.0 · 1 CPU thread · "
        "Python 3.12.0 · NumPy 2.4.6"
    )
    cells = [
        nbformat.v4.new_markdown_cell("# A page"),
        nbformat.v4.new_code_cell(
            "from tensorbook import page\ndevice = page.start()",
            outputs=[nbformat.v4.new_output("stream", name="stdout", text=line + "\n")],
        ),
        nbformat.v4.new_code_cell(
            "print(device)",
            metadata={"tags": [TAG]},
            outputs=[
                nbformat.v4.new_output("stream", name="stdout", text=printed[:3]),
                nbformat.v4.new_output("stream", name="stdout", text=printed[3:] + "\n"),
                nbformat.v4.new_output("display_data", data={"image/png": PNG}),
                nbformat.v4.new_output(
                    "display_data", data={"image/svg+xml": PICTURE.svg, "text/plain": repr(PICTURE)}
                ),
            ],
        ),
        nbformat.v4.new_code_cell(
            "from tensorbook import speed\nprint(2 + 2)",
            outputs=[nbformat.v4.new_output("stream", name="stdout", text="4\n")],
        ),
    ]
    return nbformat.v4.new_notebook(cells=cells)


def _record(root: Path, kind: str = "test-gpu", **notebook: str) -> Path:
    data, figures = recording_from_notebook(_notebook(**notebook), "page", kind, PROVENANCE)
    return write_recording(root, data, figures)


def test_a_recording_keeps_every_cell_s_outputs_with_their_provenance(tmp_path):
    recording = load_recording(_record(tmp_path))
    assert recording.kind == "test-gpu"
    assert recording.page == "page"
    assert recording.provenance["model"] == "Test GPU (test data)"
    marked = [c for c in recording.cells if c.marked]
    assert [c.index for c in marked] == [2]
    # the stream's chunks joined as the page shows them; the figure is a file beside it
    assert marked[0].outputs[0] == {"text": "on cuda:0"}
    figure = recording.path.parent / marked[0].outputs[1]["image"]
    assert figure.read_bytes() == b"\x89PNG test figure"
    # a picture is kept whole, as the page shows it, not as its title
    picture = recording.path.parent / marked[0].outputs[2]["image"]
    assert picture.name == "cell-2-2.svg"
    assert picture.read_text(encoding="utf-8") == PICTURE.svg
    # an unmarked cell's outputs too, so that a cell tagged after it was recorded shows them
    unmarked = {c.index: c.outputs for c in recording.cells if not c.marked}
    assert unmarked[3] == ({"text": "4"},)
    # the cell that imports a module depends on it, and on what earlier cells imported
    assert "tensorbook.speed" in recording.cells[2].modules
    assert "tensorbook.page" in recording.cells[2].modules
    assert "tensorbook.speed" not in recording.cells[0].modules


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["provenance"].pop("torch"), "provenance: 'torch' is a required property"),
        (lambda d: d["provenance"].update(threads="one"), "provenance.threads: 'one' is not of"),
        (lambda d: d["cells"][1].update(marked="yes"), "cells[1].marked: 'yes' is not of type"),
        (lambda d: d["cells"][1]["outputs"].append({}), "cells[1].outputs[3]: {} should be non"),
        (lambda d: d["cells"][0]["modules"].update(x=1), "cells[0].modules.x: 1 is not of type"),
        (lambda d: d.update(kind="other"), "kind: 'other', but the file is in test-gpu/"),
        (lambda d: d.update(extra=1), "(top level): Additional properties are not allowed"),
        (lambda d: d.update(schema=99), "schema: 1 was expected"),
    ],
)
def test_a_hand_edited_recording_is_refused_naming_file_and_field(tmp_path, edit, field):
    path = _record(tmp_path)
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    with pytest.raises(RecordingError) as caught:
        load_recording(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: field {field}"), message
    assert "record the page again (nox -s record -- --device DEVICE)" in message  # what to do


def test_a_broken_file_or_a_missing_figure_is_refused(tmp_path):
    path = _record(tmp_path)
    shutil.rmtree(path.parent / "page")
    with pytest.raises(RecordingError, match=r"cells\[1\]\.outputs: page/cell-2-1.png is missing"):
        load_recording(path)
    path.write_text("{ not json")
    with pytest.raises(RecordingError, match=rf"^{path}: field \(top level\): not JSON"):
        load_recording(path)


def test_a_recording_goes_stale_when_its_code_or_an_imported_module_changes(tmp_path):
    recording = load_recording(_record(tmp_path))
    cell = recording.cells[2]  # imports tensorbook.speed
    codes = {1: "from tensorbook import page\ndevice = page.start()", 2: "print(device)",
             3: "from tensorbook import speed\nprint(2 + 2)"}  # fmt: skip
    source, now = cell_keys(codes, ROOT / "src")[3]
    assert not freshness(cell, source, now).stale
    assert freshness(cell, "another hash", now).code_changed
    # the same package with a module of tensorbook.speed edited: another checkout, as a
    # later commit is; the cell imports the package, which imports the module
    src = tmp_path / "later" / "src"
    shutil.copytree(ROOT / "src" / "tensorbook", src / "tensorbook")
    with (src / "tensorbook" / "speed" / "timing.py").open("a") as file:
        file.write("\n# an edit\n")
    later = cell_keys(codes, src)[3][1]
    state = freshness(cell, cell.source, later)
    assert state.stale
    assert state.modules == ("tensorbook.speed.timing",)
    assert state.why == "tensorbook.speed.timing changed"


def test_an_unmarked_cell_whose_output_differs_between_devices_is_reported(tmp_path):
    _record(tmp_path, "test-gpu")
    _record(tmp_path, "cpu", printed="on cpu")  # only the marked cell differs
    assert unmarked_differences(page_recordings(tmp_path, "page")) == []
    path = tmp_path / "cpu" / "page.json"
    data = json.loads(path.read_text())
    data["cells"][2]["digest"] = "0" * 16  # as if `print(2 + 2)` printed otherwise there
    path.write_text(json.dumps(data))
    found = unmarked_differences(page_recordings(tmp_path, "page"))
    assert found == [
        (
            f"page.md, cell 3: its output differs between cpu and test-gpu, and it is not "
            f"tagged {TAG}; add {TAG} to its :tags:"
        )
    ]


def test_the_device_line_is_left_out_of_the_mark_check(tmp_path):
    cpu_line = (
        "Executed on CPU (x86_64) · torch 2.13.0 · 1 CPU thread · Python 3.12.0 · NumPy 2.4.6"
    )
    _record(tmp_path, "test-gpu")
    _record(tmp_path, "cpu", device_line=cpu_line)
    gpu, cpu = page_recordings(tmp_path, "page")
    assert gpu.cells[0].digest == cpu.cells[0].digest
    assert unmarked_differences([gpu, cpu]) == []


def test_a_build_check_becomes_a_verdict_that_never_raises(capsys):
    code = "ratios = [0.23, 1.69]\nassert all(1 / 3 < r < 3 for r in ratios), ratios"
    assert is_build_check(Cell(0, "code", code, {"tags": ["remove-cell"]}, 1))
    exec(verdict_code(code, "torch cpu: 0.7x NumPy", WORDS), {})  # noqa: S102
    assert capsys.readouterr().out == "Book:\ntorch cpu: 0.7x NumPy\nFails here:\n[0.23, 1.69]\n"
    exec(verdict_code("assert True", "", WORDS), {})  # noqa: S102
    assert capsys.readouterr().out.endswith("Holds here.\n")


def _page(name: str):
    return read_page((ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8"))


def test_the_speed_page_s_checks_are_verdicts_and_solutions_stay_checked():
    notebook = notebook_for(_page("speed"), "intro", verdict_words=WORDS)
    code = [c.source for c in notebook.cells if c.cell_type == "code"]
    check = next(c for c in code if "1 / 3 < r < 3" in c)
    assert "with verdict(" in check
    solutions = [c for c in code if "207_872_000" in c or ("aten::nonzero" in c and "def " in c)]
    assert solutions
    assert all("with verdict(" not in c for c in solutions)
    cuda = notebook_for(_page("cuda"), "intro", verdict_words=WORDS)
    layer = next(c.source for c in cuda.cells if "def layer(x: torch.Tensor)" in c.source)
    assert layer.lstrip().startswith("def layer"), "a solution's check must stay a check"


def test_a_page_only_paragraph_stays_out_of_the_downloads():
    """Prose that sends the reader to the page's download links is not copied into them."""
    said = "the .ipynb link at the top of the page"
    page = _page("speed")
    assert any(said in " ".join(c.source.split()) for c in page.cells)
    notebook = notebook_for(page, "intro", verdict_words=WORDS)
    assert all(said not in " ".join(c.source.split()) for c in notebook.cells)
    assert any(c.source.startswith("## Exercises") for c in notebook.cells)  # what follows stays


def test_the_kit_writes_its_summary(tmp_path):
    """The kit's own steps, on the CPU, into a temporary folder: what it writes."""
    summary = run_kit("cpu", tmp_path / "kit", only=("device", "speed"))
    assert (tmp_path / "kit" / "summary.json").is_file()
    written = json.loads((tmp_path / "kit" / "summary.json").read_text())
    assert written == json.loads(json.dumps(summary))
    steps = {s["name"]: s["status"] for s in written["steps"]}
    assert steps["device"] == steps["speed"] == "passed"
    assert steps["book"] == "skipped"
    assert written["figures"]["speedup_largest"] > 0
    assert written["recorded_into"] == str((tmp_path / "kit" / "recorded").resolve())
    text = (tmp_path / "kit" / "summary.txt").read_text()
    assert text.startswith("tensorbook GPU kit on cpu:")
    assert "speedup_largest" in text
    assert (tmp_path / "kit" / "logs" / "speed.log").is_file()


def test_the_kit_records_the_gpu_with_the_same_machine_s_cpu_build_beside_it(tmp_path):
    from tests.support.kit import steps

    record = {s.name: s.command for s in steps("cuda", tmp_path, tmp_path / "recorded")}["record"]
    assert record[record.index("--from-build") + 1] == str(tmp_path / "book")
    assert record[record.index("--cpu-build") + 1] == str(tmp_path / "cpu-book")
    rehearsal = {s.name: s.command for s in steps("cpu", tmp_path, tmp_path / "recorded")}
    assert "--cpu-build" not in rehearsal["record"]  # the CPU is the device: nothing beside


def test_the_catalog_template_lists_exactly_the_ledger_s_words():
    """conf/_templates/ledger-words.html is how the catalogs learn the ledger's words."""
    from tensorbook_build.extensions.ledger import WORDS
    from tensorbook_build.extensions.status import WORDS as STATUS_WORDS

    template = (ROOT / "conf" / "_templates" / "ledger-words.html").read_text(encoding="utf-8")
    listed = re.findall(r'\{\{ _\("(.*?)"\) \}\}', template)
    assert listed == [*WORDS, *STATUS_WORDS]


def test_a_broken_compatibility_file_is_refused_naming_file_and_field(tmp_path, caplog):
    from tensorbook_build.extensions.status import _compat_runs

    path = tmp_path / "compat.json"
    run = {"torch": "2.11.0", "python": "3.12.0", "device": "cpu", "doctests": "passed",
           "pages": "passed", "date": "2026-12-01"}  # fmt: skip
    add_result(path, run)
    assert _compat_runs(path) == [run]
    path.write_text(json.dumps([{**run, "pages": None}]))
    assert _compat_runs(path) == []  # shown as none, and the build fails on the error
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{path}: field [0].pages: None is not of type 'string'; ")
    assert "written by nox -s compat: run it again" in errors[0]


def _executed(build: Path, context: str, ran: dict[str, str], failed: tuple[str, ...] = ()) -> None:
    """A build's executed notebooks, as MyST-NB and jupyter-cache leave them: ``ran``, each
    printing its text in a marked cell, and ``failed``, not in the cache."""
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    from tensorbook_build.execute import context_cell

    executed = build / "jupyter_execute" / "en"
    executed.mkdir(parents=True)
    cache = get_cache(str(build / ".jupyter_cache"))
    # the hidden cell the build adds, naming what the page executed with
    hidden = read_page("---\nfile_format: mystnb\n---\n" + context_cell(context, {}))
    for name in (*ran, *failed):
        notebook = _notebook(ran.get(name, "not run"), "Executed on CPU · torch 2.13.0")
        notebook.cells.append(nbformat.v4.new_code_cell(f"print({name!r})"))  # its own code
        notebook.cells.append(nbformat.v4.new_code_cell(hidden.code.popitem()[1]))
        hidden = read_page("---\nfile_format: mystnb\n---\n" + context_cell(context, {}))
        nbformat.write(notebook, executed / f"{name}.ipynb")
        if name in ran:  # jupyter-cache keeps only what executed to its end
            bundle = CacheBundleIn(notebook, f"/{name}.md")
            cache.cache_notebook_bundle(bundle, check_validity=False)


def test_a_page_that_did_not_execute_is_named_and_the_others_recorded(tmp_path):
    """The first GPU run recorded nothing because two pages failed; now the pages that
    executed are recorded, and the ones that did not are named for a later run."""
    from tensorbook_build.record import record_build
    from tensorbook_build.spec import resolve_spec

    spec = resolve_spec("cpu", given_by="test")
    _executed(tmp_path / "build", spec.context, {"ran": "on cpu"}, ("failed",))
    written, failed = record_build(tmp_path / "build", spec, tmp_path / "recorded", "test")
    assert [path.name for path in written] == ["ran.json"]
    assert failed == ["failed"]
    # a build whose pages executed with another torch is not recorded as this one's
    other = dataclasses.replace(spec, torch="2.11.0")
    with pytest.raises(
        ValueError, match=r"did not execute failed\.md with device cpu, torch 2\.11"
    ):
        record_build(tmp_path / "build", other, tmp_path / "recorded", "test")


def test_a_gpu_is_recorded_with_the_same_machine_s_cpu_beside_it(tmp_path, monkeypatch, capsys):
    """``record --device cuda --from-build B --cpu-build C`` on a test GPU (no device runs)."""
    from tensorbook_build import record
    from tensorbook_build.spec import resolve_spec

    cpu = resolve_spec("cpu", given_by="test")
    gpu = dataclasses.replace(cpu, device="cuda:0", kind="test-gpu")
    monkeypatch.setattr(
        record, "resolve_spec", lambda device, **_: gpu if device == "cuda" else cpu
    )
    real = record.capture_provenance  # this machine's, but for the test GPU's names

    def provenance(spec, command):
        test_gpu = {k: PROVENANCE[k] for k in ("device", "model", "gpu")} if spec is gpu else {}
        return {**real(cpu, command), **test_gpu}

    monkeypatch.setattr(record, "capture_provenance", provenance)
    _executed(tmp_path / "gpu", gpu.context, {"one": "on cuda:0", "two": "on cuda:0"})
    _executed(tmp_path / "cpu", cpu.context, {"one": "on cpu"}, ("two",))
    out = tmp_path / "recorded"
    stale = out / "test-gpu" / "cpu" / "two.json"  # from an earlier run: it goes
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    argv = ["--device", "cuda", "--from-build", str(tmp_path / "gpu"), "--out", str(out)]
    assert record.main([*argv, "--cpu-build", str(tmp_path / "cpu")]) == 1
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.json")) == [
        "test-gpu/cpu/one.json", "test-gpu/one.json", "test-gpu/two.json"
    ]  # fmt: skip
    [one] = page_recordings(out, "one")
    assert one.beside is not None
    assert one.beside.provenance["device"] == "cpu"
    assert one.cpu_cell(one.cells[1]).outputs[0] == {"text": "on cpu"}
    assert "two.md on the CPU beside test-gpu not recorded" in capsys.readouterr().err


def test_the_kit_names_each_failure_by_test_or_page(tmp_path):
    from tests.support.kit import Step, failures

    (tmp_path / "tests.xml").write_text(
        '<testsuites><testsuite><testcase classname="tests.test_speed" name="test_a">'
        '<failure message="RuntimeError: called a synchronizing CUDA operation">'
        'long traceback</failure></testcase><testcase classname="tests.test_b" name="ok"/>'
        "</testsuite></testsuites>",
        encoding="utf-8",
    )
    assert failures(Step("tests", []), tmp_path, "") == [
        "tests.test_speed::test_a: RuntimeError: called a synchronizing CUDA operation"
    ]
    log = (
        "reading sources...\n"
        "ERROR: docs/speed.md: code cell 3 (line 61) raised AssertionError\n"
        "docs/cuda.md:177: WARNING: stderr was found in the cell outputs of cell 20\n"
        "tensorbook_build: the en edition failed\n"
    )
    assert failures(Step("book", []), tmp_path, log) == log.splitlines()[1:]
    record = "tensorbook_build.record: speed.md not recorded: it did not execute to its end\n"
    assert failures(Step("record", []), tmp_path, record) == [record.strip()]


def test_a_picture_s_drawing_is_in_the_digest_and_a_new_recording_replaces_its_files(tmp_path):
    first = load_recording(_record(tmp_path))
    other = curves_picture([1.0, 0.5], [1.1, 0.9], name="test data")  # the same title
    notebook = _notebook()
    notebook["cells"][2]["outputs"][3]["data"]["image/svg+xml"] = other.svg
    notebook["cells"][2]["outputs"].pop(2)  # no PNG this time: the picture is output 1
    data, figures = recording_from_notebook(notebook, "page", "test-gpu", PROVENANCE)
    second = load_recording(write_recording(tmp_path, data, figures))
    assert first.cells[1].digest != second.cells[1].digest
    folder = tmp_path / "test-gpu" / "page"
    assert sorted(p.name for p in folder.iterdir()) == ["cell-2-1.svg"]  # nothing left over
    assert (folder / "cell-2-1.svg").read_text(encoding="utf-8") == other.svg


def _recorded(*sources: str) -> list:
    from tensorbook_build.ledger import Cell as RecordedCell

    return [RecordedCell(2 * n + 1, source, {}, False, "") for n, source in enumerate(sources)]


def test_cells_line_up_with_their_recording_as_a_diff():
    old = _recorded("import", "plot", "check", "table")
    # a cell added first, "plot" changed, "check" removed, a cell added at the end
    now = {1: "new first", 2: "import", 3: "plot, changed", 6: "table", 7: "new last"}
    found = {index: cell.source for index, cell in align(old, now).items()}
    assert found == {2: "import", 6: "table"}  # two recorded, one now: which is which?
    # where as many cells changed as were recorded there, each takes its place's recording
    changed = {1: "import", 2: "plot, changed", 3: "check, changed", 4: "table"}
    assert [c.source for c in align(old, changed).values()] == ["import", "plot", "check", "table"]
    # the same code at another index is the same cell, not the cell now at its index
    assert align(_recorded("a", "b"), {1: "x", 3: "a", 5: "b"})[5].source == "b"


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"cell": "report("}, "needs 'cell', 'pattern' and 'label'"),
        ({"cell": "report(", "pattern": "(x)"}, "needs 'cell', 'pattern' and 'label'"),
        ({"cell": "report(", "pattern": "(x)", "label": "x", "to": "y"}, "may have 'at'"),
        ({"cell": "report(", "pattern": "(x)", "label": "gain_x"}, "needs one {}"),
        ({"cell": "nowhere", "pattern": "(x)", "label": "{}x"}, "is in no code cell"),
        ({"cell": "t", "pattern": "(x)", "label": "{}x"}, "is in 2 code cells"),
        ({"cell": "report(", "pattern": "x", "label": "{}x"}, "pattern has no group"),
        ({"cell": "report(", "pattern": "(x", "label": "{}x"}, "is not a regular expression"),
        ({"cell": "report(", "pattern": "(x)", "label": "{}x", "at": "y"}, "at has no group"),
    ],
)
def test_a_malformed_figure_is_refused_naming_it(entry, problem):
    with pytest.raises(ValueError, match="'gain'") as raised:
        page_figures({FIGURES: {"gain": entry}}, {1: "import t", 3: "report(t)"})
    assert problem in str(raised.value)
