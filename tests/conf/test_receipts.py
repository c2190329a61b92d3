"""Readers' receipts: made by the reader's package, imported by ``nox -s record -- --import``.

The hostile receipts are made from a well-formed one of ``speed.md`` at ``HEAD`` (its
cells hashed from the commit; its printed text test data, labelled so), each broken in
one way, and imported into a temporary folder: each must be refused in one line, writing
nothing. The well-formed one is imported, so that each refusal is the break's. A real
receipt, made here, is shown in a built book by ``test_published.py``.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from tests.support.book import (
    ROOT,
)

import tensorbook
from tensorbook import receipt, receipt_kernel
from tensorbook.recording import (
    BOOK,
    PAGE_CELLS,
    module_hashes,
    output_digest,
    private_paths,
    python_folders,
    shown_outputs,
)
from tensorbook_build.execute import read_page
from tensorbook_build.ledger import (
    cell_keys,
    load_recording,
    page_figures,
    recording_from_notebook,
)
from tensorbook_build.receipts import LIMITS, ReceiptRefused, book_cells, import_receipt

PAGE = "speed"
LABEL = "Test CPU (test data)"


def _head() -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


def _docs_status() -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--", "docs"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip


@pytest.fixture(scope="module")
def well_formed() -> dict:
    """A receipt of speed.md at HEAD as the reader's package writes one; its text test data."""
    commit = _head()
    keys, marked, _ = book_cells(PAGE, commit)
    cells = [
        {"index": index, "source": source, "modules": modules, "marked": index in marked,
         "digest": "0" * 16, "outputs": [{"text": f"cell {index} on {LABEL}: 1.5x NumPy"}],
         "raised": ""}
        for index, (source, modules) in keys.items()
    ]  # fmt: skip
    device_line = (
        "Executed on CPU (x86_64) · torch 2.13.0 · 1 CPU thread · Python 3.12.0 · NumPy 2.4.6"
    )
    cells[0]["outputs"].insert(0, {"text": device_line + "\n"})
    first = next(c for c in cells if c["marked"])
    first["outputs"].append({"image": f"{PAGE}/cell-{first['index']}-1.svg"})
    provenance = {
        "device": "cpu", "model": LABEL, "gpu": None, "torch": "2.13.0", "python": "3.12.0",
        "numpy": "2.4.6", "threads": 1, "commit": commit, "commit_date": "", "run_date": "2026-12-01",
        "command": "written by tests/conf/test_receipts.py",
    }  # fmt: skip
    figures = {first["outputs"][-1]["image"]: '<svg xmlns="http://www.w3.org/2000/svg"/>'}
    return {"schema": 1, "page": PAGE, "kind": "cpu", "provenance": provenance,
            "cells": cells, "figures": figures}  # fmt: skip


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "receipt.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_well_formed_receipt_becomes_a_contributed_recording_without_pictures(
    well_formed, tmp_path
):
    target, notes = import_receipt(_write(tmp_path, well_formed), recorded=tmp_path / "recorded")
    recording = load_recording(target)  # the ledger reads it as it reads the book's own
    assert target.parent.name == "contributed-test-cpu-test-data" == recording.kind
    assert recording.contributed is not None
    assert recording.contributed["receipt"]
    assert all("image" not in o for c in recording.cells for o in c.outputs)
    assert any("picture is not kept" in note for note in notes)
    assert [p.name for p in target.parent.iterdir()] == [f"{PAGE}.json"]  # nothing else


def _break(data: dict, how: str) -> dict:
    """``data`` broken one way (``how``): what each hostile receipt is."""
    broken = copy.deepcopy(data)
    cell = next(c for c in broken["cells"] if c["marked"])
    if how == "wrong schema":
        broken["schema"] = 2
        del broken["provenance"]["torch"]
    elif how == "another commit's cell":  # the page's code as another commit has it
        cell["source"] = "0123456789abcdef"
    elif how == "another package's module":
        name = next(iter(cell["modules"]))
        cell["modules"][name] = "0123456789abcdef"
    elif how == "fewer cells":
        broken["cells"].pop()
    elif how == "unknown commit":
        broken["provenance"]["commit"] = "0" * 40
    elif how == "modified commit":
        broken["provenance"]["commit"] += "+modified"
    elif how == "script in an output":
        cell["outputs"][0]["text"] = "1.5x <script>alert(1)</script>"
    elif how == "onload in an output":
        cell["outputs"][0]["text"] = '<img src=x onload="alert(1)">'
    elif how == "onload in an SVG":
        [name] = broken["figures"]
        broken["figures"][name] = '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'
    elif how == "script in an SVG":
        [name] = broken["figures"]
        broken["figures"][name] = "<svg><script>alert(1)</script></svg>"
    elif how == "markup in the provenance":
        broken["provenance"]["model"] = "<script>alert(1)</script>"
    elif how == "a path in the page name":
        broken["page"] = "../x"
    elif how == "a page without code":
        broken["page"] = "terminology"
    elif how == "a long output":
        cell["outputs"][0]["text"] = "x" * (LIMITS["text"] + 1)
    elif how == "a cell that failed":  # speed.md shows no error on purpose
        cell["raised"] = "NameError"
    elif how == "no word of errors":  # a receipt of a program that did not look
        del cell["raised"]
    elif how == "a GPU named, a CPU printed":  # a CPU's run relabelled as a GPU's
        gpu = {"name": "Tesla T4", "driver": "550", "cuda": "12.4", "capability": "7.5",
               "memory_gib": 15.0}  # fmt: skip
        broken["provenance"].update(device="cuda:0", model="Tesla T4", gpu=gpu)
    elif how == "a CPU named, a GPU printed":
        device_line = broken["cells"][0]["outputs"][0]
        device_line["text"] = device_line["text"].replace(
            "CPU (x86_64)", "GPU Tesla T4 (cuda:0, CUDA 12.4)"
        )
    return broken


REFUSALS = {  # each break, and what its one line must say
    "wrong schema": "; a receipt is what python -m tensorbook.receipt writes",
    "another commit's cell": "its code is not speed.md's at commit",
    "another package's module": "is not the book's at commit",
    "fewer cells": "its cells are not the code cells of speed.md",
    "unknown commit": "is not in this repository",
    "modified commit": "is not a commit's full hash",
    "script in an output": "markup ('<script'",
    "onload in an output": "markup (",
    "onload in an SVG": "its picture holds script ('onload=",
    "script in an SVG": "its picture holds script ('<script'",
    "markup in the provenance": "field provenance.model: markup",
    "a path in the page name": "field page: '../x' is not a chapter's name",
    "a page without code": "field page: terminology.md runs no code",
    "a long output": "is too long",
    "a cell that failed": "raised NameError, which speed.md does not: the reader's run failed",
    "no word of errors": "'raised' is a required property",
    "a GPU named, a CPU printed": "names 'Tesla T4', but its run printed that it ran on CPU",
    "a CPU named, a GPU printed": "names 'cpu', but its run printed that it ran on GPU Tesla T4",
}


@pytest.mark.parametrize("how", list(REFUSALS))
def test_a_hostile_receipt_is_refused_in_one_line_writing_nothing(well_formed, tmp_path, how):
    recorded = tmp_path / "recorded"
    with pytest.raises(ReceiptRefused) as refused:
        import_receipt(_write(tmp_path, _break(well_formed, how)), recorded=recorded)
    message = str(refused.value)
    assert REFUSALS[how] in message, message
    assert "\n" not in message
    if message.startswith("cell "):  # as the reader's run counted its cells too
        assert re.match(r"cell \d+ \(code cell \d+ of \d+\)", message), message
    assert not recorded.exists()


def test_a_50_mb_receipt_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "receipt.json"
    with path.open("w", encoding="utf-8") as file:  # one 50 MB output
        file.write('{"schema": 1, "cells": [{"outputs": [{"text": "')
        file.write("x" * 50 * 2**20)
        file.write('"}]}]}')
    with pytest.raises(ReceiptRefused, match=r"receipt.json is 50.0 MB; a receipt is at most"):
        import_receipt(path, recorded=tmp_path / "recorded")
    assert not (tmp_path / "recorded").exists()


def test_the_import_command_says_why_in_one_line_and_docs_stay_unchanged(well_formed, tmp_path):
    before = _docs_status()
    path = _write(tmp_path, _break(well_formed, "onload in an SVG"))
    done = subprocess.run(
        [sys.executable, "-m", "tensorbook_build.receipts", str(path)],
        capture_output=True, text=True, check=False, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("tensorbook_build.receipts: refused receipt.json: cell ")
    assert _docs_status() == before


def test_the_reader_s_recording_is_the_ledger_s():
    """tensorbook.recording (the reader's) and the ledger compute the same cells."""
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": "Executed on CPU (x) · torch 2\n"},
        {"output_type": "stream", "name": "stdout", "text": "1.5x\n"},
        {"output_type": "display_data", "data": {"image/svg+xml": "<svg/>", "text/plain": "p"}},
        {"output_type": "error", "ename": "AssertionError", "evalue": "slow", "traceback": []},
    ]
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import tensorbook.speed")]
    )
    notebook.cells[0].outputs = [nbformat.from_dict(o) for o in outputs]
    data, _ = recording_from_notebook(notebook, "p", "cpu", {})
    [cell] = data["cells"]
    assert cell["digest"] == output_digest(shown_outputs(outputs))
    for name in (p.stem for p in (ROOT / "docs").glob("*.md")):
        book = read_page((ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8"))
        keys = cell_keys(book.code, ROOT / "src")
        reader = module_hashes(list(book.code.values()), ROOT / "src" / "tensorbook")
        assert [m for _, m in keys.values()] == reader, name


def test_the_reader_s_program_imports_nothing_of_the_build():
    build_only = ("tensorbook_build", "sphinx", "myst_nb", "nbformat", "nbclient", "jupytext",
                  "jsonschema")  # fmt: skip
    code = f"import sys, tensorbook.receipt; print([m for m in sys.modules if m.startswith({build_only!r})])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def _speed_book() -> dict:
    """The notebook metadata a receipt of speed.md compares with, the labels its front matter's."""
    page = read_page((ROOT / "docs" / f"{PAGE}.md").read_text(encoding="utf-8"))
    book = {"sizes": "64, 1000, 100, 10", "largest": "4096, 4096, 4096, 4096"}
    figures = {
        name: {"cell": f.cell, "pattern": f.pattern, "label": f.label, "at": f.at, "book": "2.5",
               "book_at": book["largest" if "largest" in name else "sizes"] if f.at else "",
               "source": "NVIDIA H200 · torch 2.11.0+cu130 · 2026-11-26"}
        for name, f in page_figures(page.metadata, page.code).items()
    }  # fmt: skip
    return {"page": PAGE, "figures": figures, "repository": ""}


def _reader_cells(printed: dict[str, str]) -> dict:
    """A receipt whose cells printed ``printed``, by the code text that names the cell."""
    page = read_page((ROOT / "docs" / f"{PAGE}.md").read_text(encoding="utf-8"))
    cells = [
        {
            "index": index,
            "outputs": [{"text": text} for key, text in printed.items() if key in code],
        }
        for index, code in page.code.items()
    ]
    return {"cells": cells, "provenance": {"model": LABEL}}


def test_the_receipt_says_the_reader_s_figures_in_the_chapter_s_words_beside_the_gpu_s():
    book = _speed_book()
    data = _reader_cells({
        'verdict = "at least"': "torch cpu at 64, 1000, 100, 10: 0.7x NumPy, less than 50x\n"
                                "torch cpu at 512, 1024, 512, 512: 1.2x NumPy, less than 50x",
        "item_s = speed.item_seconds(device)":
            "one .item() of a number already computed: 0.16 µs; the step without it: 432.6 µs",
        "speed.cuda_graph_step(TUTORIAL_SIZES, device)":
            "This ran on cpu. CUDA graphs exist only on a CUDA device.",
    })  # fmt: skip
    lines = receipt.comparison(book, data)
    gpu = "which the book measured on a GPU: NVIDIA H200 · torch 2.11.0+cu130 · 2026-11-26"
    cpu = "; the other figures the chapter's text quotes are from a CPU:"
    assert lines[0].endswith(gpu + cpu), lines[0]
    assert receipt.comparison({**book, "built_on_gpu": True}, data)[0].endswith(gpu + ":")
    assert "build" not in lines[0]  # the reader's words: the book's build is not one
    stale = {name: {**f, "stale": True} for name, f in book["figures"].items()}
    head = receipt.comparison({**book, "figures": stale, "built_on_gpu": True}, data)[0]
    assert head.endswith(gpu + ", before the chapter's code last changed, so they may not be "
                         "what this code measures there:"), head  # fmt: skip
    assert lines[1:] == [
        ("  one step, torch beside NumPy at the smallest sizes: yours 0.7x as fast (at 64, 1000, "
         "100, 10); the book's 2.5x as fast (at 64, 1000, 100, 10)"),
        ("  one step, torch beside NumPy at the largest sizes: yours 1.2x as fast (at 512, 1024, "
         "512, 512); the book's 2.5x as fast (at 4096, 4096, 4096, 4096)"),
        "  one .item() of a number already computed: yours 0.16 µs; the book's 2.5 µs",
        "  one step without .item(): yours 432.6 µs; the book's 2.5 µs",
        ('  the step replayed as a CUDA graph: yours none (your run printed "This ran on cpu. '
         'CUDA graphs exist only on a CUDA device."); the book\'s 2.5x as fast'),
    ]  # fmt: skip
    assert not any(name in "\n".join(lines) for name in book["figures"])  # no internal keys


def test_the_receipt_says_what_the_file_holds_and_where_it_goes_or_that_it_goes_nowhere():
    local = "\n".join(receipt.closing({"repository": ""}, LABEL))
    published = "\n".join(receipt.closing({"repository": "https://github.com/o/b"}, LABEL))
    send = "https://github.com/o/b/issues/new?title=Receipt%3A%20speed"
    filled = "\n".join(
        receipt.closing({"repository": "https://github.com/o/b", "send": send}, LABEL)
    )
    for said in (local, published):
        assert "no name or address of yours" in said
        assert "Files pane" not in said  # a terminal's reader has none
        assert f"sees it: {LABEL};" in said  # no parentheses in parentheses
    assert "Files pane" in "\n".join(receipt.closing({"repository": ""}, LABEL, colab=True))
    assert "names no repository" in local
    assert "issues" not in local
    assert "https://github.com/o/b/issues/new ." in published
    assert f"{send} ." in filled
    assert "public, under your GitHub account" in published
    assert "book's site" in published
    assert "same model takes its place" in published


def test_the_receipt_asks_for_a_jupyter_kernel_before_it_starts(tmp_path, monkeypatch, capsys):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    notebook.metadata[PAGE_CELLS] = [{"id": notebook.cells[0].id, "index": 0}]
    notebook.metadata[BOOK] = {"page": PAGE, "commit": "0" * 40, "version": tensorbook.__version__}
    path = tmp_path / "tensorbook-speed.ipynb"
    nbformat.write(notebook, path)
    monkeypatch.chdir(tmp_path)  # where a receipt would be written
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "ipykernel" else real(name, *a),
    )
    assert receipt.main([PAGE, "--notebook", str(path), "--device", "cpu"]) == 2
    said = capsys.readouterr()
    assert "running" not in said.out
    assert said.err.strip() == f"tensorbook.receipt: {receipt_kernel.KERNEL_MISSING}"
    assert not list(tmp_path.glob("receipt-*"))


def test_no_folder_of_a_path_in_what_a_cell_printed_is_recorded(monkeypatch):
    """Not a home folder alone: ``/scratch/ada`` names ada too, and ``/root`` is no prefix."""
    monkeypatch.setattr(Path, "home", classmethod(lambda _: Path("/root")))
    home = str(Path("/home/ada/project/data.csv"))
    outputs = [
        {"output_type": "stream", "name": "stderr", "text": "/scratch/ada/venv/x.py:3: UserWarning\n"},
        {"output_type": "stream", "name": "stderr", "text": "/nfs/home/ada/env/lib/y.py and /rootfs/a\n"},
        {"output_type": "error", "ename": "FileNotFoundError", "evalue": f"No such file: '{home}'"},
    ]  # fmt: skip
    shown = "\n".join(item["text"] for item in shown_outputs(outputs))
    assert shown == (
        "…/x.py:3: UserWarning\n…/y.py and …/a\nFileNotFoundError: No such file: '…/data.csv'"
    )
    assert "ada" not in shown


def test_a_folder_whose_name_holds_a_space_is_not_kept():
    windows = r"C:\Users\Ada Lovelace\AppData\Roaming\Python\torch\nn\x.py:12: UserWarning: w"
    posix = "/home/ada lovelace/My Drive/x.py:3: UserWarning: w"
    assert private_paths(windows, {}) == "…\\x.py:12: UserWarning: w"
    assert private_paths(posix, {}) == "…/x.py:3: UserWarning: w"


def test_a_path_inside_the_python_installation_keeps_that_part_and_an_address_stays():
    [site] = [f for f, name in python_folders().items() if name.endswith("-packages")][:1]
    text = f"{site}/torch/nn/modules/module.py:12: UserWarning; see https://pytorch.org/docs/a/b"
    assert private_paths(text) == (
        f"…/{Path(site).name}/torch/nn/modules/module.py:12: UserWarning; "
        "see https://pytorch.org/docs/a/b"
    )
    assert private_paths("10 km/s, 1/2 of it, a / b") == "10 km/s, 1/2 of it, a / b"


def _chapter_notebook(tmp_path: Path, codes: list[str], tags: list[list[str]], **book) -> Path:
    """A chapter's notebook as the site offers one, of ``codes``, the cells tagged ``tags``."""
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(c, metadata={"tags": t})
            for c, t in zip(codes, tags, strict=True)
        ]
    )
    notebook.metadata[PAGE_CELLS] = [
        {"id": cell.id, "index": 2 * number + 1} for number, cell in enumerate(notebook.cells)
    ]
    notebook.metadata[BOOK] = {
        "page": PAGE, "commit": "0" * 40, "version": tensorbook.__version__, "figures": {},
        "repository": "https://github.com/o/b", **book,
    }  # fmt: skip
    path = tmp_path / "tensorbook-speed.ipynb"
    nbformat.write(notebook, path)
    return path


def _error(name: str, value: str) -> dict:
    return {"output_type": "error", "ename": name, "evalue": value}


def _run_receipt(tmp_path, monkeypatch, capsys, outputs, tags) -> tuple[int, str, str]:
    """``main`` on a notebook of ``len(outputs)`` cells whose run printed ``outputs``."""
    path = _chapter_notebook(tmp_path, [f"x{n} = {n}" for n in range(len(outputs))], tags)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(receipt, "check_kernel", lambda: None)
    monkeypatch.setattr(receipt, "run_cells", lambda *_: outputs)
    done = receipt.main([PAGE, "--notebook", str(path), "--device", "cpu"])
    said = capsys.readouterr()
    return done, said.out, said.err


def test_a_run_in_which_a_cell_failed_writes_no_receipt_and_says_which(
    tmp_path, monkeypatch, capsys
):
    outputs = [
        [],
        [_error("ValueError", "taught")],
        [_error("NameError", "name 'speed' is not defined")],
    ]
    done, out, err = _run_receipt(
        tmp_path, monkeypatch, capsys, outputs, [[], ["raises-exception"], []]
    )
    assert done == 1
    assert "wrote" not in out
    assert "share" not in out + err
    assert err.count("\n") == 1, err
    said = "code cell 3 of 3 ('x2 = 2') raised NameError: name 'speed' is not defined, an error"
    assert said in err
    assert "more cell" not in err  # the one that failed, not the chapter's own
    assert not list(tmp_path.glob("receipt-*"))


def test_a_device_this_machine_lacks_is_refused_in_one_line(tmp_path, capsys):
    """``--device cuda`` on a CPU-only torch, or a GPU it does not have: no traceback."""
    path = _chapter_notebook(tmp_path, ["x = 1"], [[]])
    assert receipt.main([PAGE, "--notebook", str(path), "--device", "cuda:99"]) == 2
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if line.startswith("tensorbook.receipt: ")]
    assert len(said) == 1, err
    assert "cuda:99" in said[0], err
    assert "Traceback" not in err
    assert not list(tmp_path.glob("receipt-*"))


def test_the_chapter_s_own_errors_are_counted_as_such_in_english(tmp_path, monkeypatch, capsys):
    outputs = [[], [_error("ValueError", "taught")], []]
    done, out, _ = _run_receipt(
        tmp_path, monkeypatch, capsys, outputs, [[], ["raises-exception"], []]
    )
    assert done == 0
    assert "; 1 cell raised the error the chapter shows on purpose\n" in out
    [written] = tmp_path.glob("receipt-*")
    data = json.loads(written.read_text(encoding="utf-8"))
    assert [c["raised"] for c in data["cells"]] == ["", "ValueError", ""]
    assert "Files pane" not in out  # not on Colab


def test_a_receipt_is_not_made_with_a_package_the_notebook_was_not_made_with(
    tmp_path, monkeypatch, capsys
):
    code = "import tensorbook.speed"
    real = module_hashes([code], Path(tensorbook.__file__).parent)[-1]
    for modules, refused in ((real, False), ({**real, "tensorbook.speed": "0" * 16}, True)):
        path = _chapter_notebook(tmp_path, [code], [[]], modules=modules, wheel="https://x/t.whl")
        book = nbformat.read(path, as_version=4).metadata[BOOK]
        assert (
            bool(receipt.changed_modules(book, receipt.page_cells(nbformat.read(path, 4))))
            is refused
        )
    monkeypatch.chdir(tmp_path)
    assert receipt.main([PAGE, "--notebook", str(path), "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "(tensorbook.speed differs)" in err
    assert "--force-reinstall --no-deps https://x/t.whl" in err


def test_a_script_or_a_server_that_is_not_running_is_named_as_such():
    with pytest.raises(
        receipt.ReceiptError, match=r"is the chapter's script; .*tensorbook-speed.ipynb"
    ):
        receipt.read_notebook("tensorbook-speed.py")
    with socket.socket() as free:  # a port no one listens on once it is closed
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    with pytest.raises(receipt.ReceiptError, match=r"python -m http.server -d build/html 8000"):
        receipt.read_notebook(f"http://localhost:{port}/en/downloads/tensorbook-speed.ipynb")


def test_the_chapter_runs_in_a_kernel_of_this_python_not_a_python3_found_elsewhere(
    tmp_path, monkeypatch
):
    """A ``python3`` kernel specification on JUPYTER_PATH is another environment's."""
    other = tmp_path / "jupyter" / "kernels" / "python3"
    other.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec = {"argv": argv, "display_name": "other", "language": "python", "env": {"WHOSE": "other"}}
    (other / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    code = "import os, sys; print(sys.executable, os.environ.get('WHOSE', 'this'))"
    [[printed]] = receipt.run_cells([code], "cpu")
    assert printed["text"].split() == [sys.executable, "this"]


def test_a_reader_s_difference_is_noted_without_advice_to_tag_the_page(well_formed, tmp_path):
    recorded = tmp_path / "recorded"
    shutil.copytree(ROOT / "docs" / "recorded" / "nvidia-h200", recorded / "nvidia-h200")
    _, notes = import_receipt(_write(tmp_path, well_formed), recorded=recorded)
    differ = [n for n in notes if "differs from nvidia-h200's" in n]
    assert differ, notes  # its digests are test data: every untagged cell differs
    assert not any("add device-dependent" in note for note in notes)
    _, again = import_receipt(_write(tmp_path, well_formed), recorded=recorded)
    assert any("one receipt a model is kept, the newest" in note for note in again)
