"""The device ledger in a built book: recorded outputs shown, labelled, stale; the status page.

The book is a temporary copy with a synthetic recording of ``cuda.md``, written here and
labelled as test data ("Test GPU (test data)"): no device ran it. The other pages keep
only the real recordings their prose takes figures from (``speed.md``'s).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html import unescape
from pathlib import Path

import pytest
from tests.support.book import (
    CHAPTERS,
    LANGUAGES,
    RECORDED_FOLD,
    SOURCE_LANGUAGE,
    build_book,
    copy_of_the_book,
    page,
)

from tensorbook.draw.curves import curves_picture
from tensorbook_build.build import sphinx_command
from tensorbook_build.execute import read_page
from tensorbook_build.ledger import TAG, cell_keys, page_figures, write_recording
from tensorbook_build.spec import resolve_spec

pytestmark = [pytest.mark.book, pytest.mark.slow]

LABEL = "Test GPU (test data)"
PICTURE = curves_picture([1.0, 0.5, 0.25], [1.1, 0.7, 0.8], name="test data")
PROVENANCE = {
    "device": "cuda:0",
    "model": LABEL,
    "gpu": {"name": LABEL, "driver": "0", "cuda": "13.0", "capability": "9.0", "memory_gib": 80.0},
    "torch": "2.13.0+cu130",
    "python": "3.12.0",
    "numpy": "2.4.6",
    "threads": 1,
    "commit": "1a2b3c4d5e6f",
    "commit_date": "2026-12-01",
    "run_date": "2026-12-01",
    "command": "written by tests/conf/test_ledger_book.py",
}
FIGURES = {  # what the test GPU printed where cuda.md's prose takes a figure
    "returned_ms": "on cuda:0: calls returned after 0.5 ms, work finished after 20.0 ms",
    "mixing_error": "RuntimeError: the test GPU refuses",
}


def _synthetic_recording(tree: Path) -> None:
    """A recording of cuda.md as if a GPU had run it: every marked cell says so."""
    page = read_page((tree / "docs" / "cuda.md").read_text(encoding="utf-8"))
    printed = {
        page_figures(page.metadata, page.code)[name].cell: text for name, text in FIGURES.items()
    }
    records, figures = [], {}
    for index, (source, mods) in cell_keys(page.code, tree / "src").items():
        code = page.code[index]
        marked = TAG in page.cells[index].tags
        # the one-liner prints the device: "cpu" here, as on this build, so "the same"
        same = code.strip().endswith("print(chosen)")
        text = "cpu" if same else printed.get(index, f"on {LABEL}, cell {index}")
        outputs = [{"text": text}] if marked else []
        if marked and not same and not figures:  # the first such cell drew a picture too
            figures[f"cuda/cell-{index}-1.svg"] = PICTURE.svg.encode()
            outputs.append({"image": f"cuda/cell-{index}-1.svg"})
        records.append(
            {"index": index, "source": source, "modules": mods, "marked": marked,
             "digest": "0" * 16, "outputs": outputs}
        )  # fmt: skip
    data = {
        "schema": 1,
        "page": "cuda",
        "kind": "test-gpu",
        "provenance": PROVENANCE,
        "cells": records,
    }
    write_recording(tree / "docs" / "recorded", data, figures)


@pytest.fixture(scope="module")
def ledger_book(tmp_path_factory, built_book) -> tuple[Path, Path, dict[str, str]]:
    """The copy, its build folder, and each edition's build log.

    The copy starts from the outputs the book already executed: its pages are the same,
    so none executes again (the ledger reads outputs; it does not make them).
    """
    root = tmp_path_factory.mktemp("ledger")
    tree = copy_of_the_book(root)
    shutil.copytree(built_book / ".jupyter_cache", root / "build" / ".jupyter_cache")
    # the only recordings are the test's, and those whose figures a page's prose shows
    for recorded in (tree / "docs" / "recorded").iterdir():
        if recorded.is_dir():
            for path in recorded.glob("*.json"):
                if path.stem != "speed":
                    path.unlink()
                    shutil.rmtree(path.with_suffix(""), ignore_errors=True)
    _synthetic_recording(tree)
    site = root / "build" / "html"
    logs = {}
    for language in LANGUAGES:
        result = build_book(site, tree=tree, languages=[language])
        assert result.returncode == 0, result.output
        logs[language] = result.output
    return tree, root / "build", logs


def _folds(html: str) -> list[str]:
    return RECORDED_FOLD.findall(html)


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_recorded_outputs_are_shown_labelled_after_the_build_s_own(ledger_book, language):
    tree, build, _ = ledger_book
    html = page(build, "cuda", language)
    folds = _folds(html)
    cells = read_page((tree / "docs" / "cuda.md").read_text(encoding="utf-8")).cells
    shown = [c for c in cells if TAG in c.tags and "remove-cell" not in c.tags]  # hidden: no fold
    assert len(folds) == len(shown)
    words = "录制于" if language != SOURCE_LANGUAGE else "recorded on"
    for fold in folds:
        summary = unescape(re.sub(r"<[^>]+>", "", fold.split("</summary>")[0]))
        assert summary.startswith(f"{words} {LABEL} · CUDA 13.0 · torch 2.13.0+cu130 · 2026-12-01")
        assert ("提交 1a2b3c4" if language != SOURCE_LANGUAGE else "commit 1a2b3c4") in summary
    same = "与本页的输出相同" if language != SOURCE_LANGUAGE else "same as this page's output"
    different = (
        "与本页的输出不同" if language != SOURCE_LANGUAGE else "differs from this page's output"
    )
    badges = re.findall(r'<span class="tb-recorded-badge">([^<]*)</span>', html)
    assert badges.count(same) == 1
    assert badges.count(different) == len(shown) - 1
    # this build's own output comes first, inside the same cell
    cell = html[: html.index('<details class="tb-recorded">')]
    assert cell.rindex('class="cell_output') > cell.rindex("cell_input")
    assert "tb-recorded-diff" in html  # a small diff for the text that differs
    # a recorded picture is drawn inline, in the edition's words, like the build's own
    pictures = [
        f for f in folds if '<svg xmlns="http://www.w3.org/2000/svg" class="tb-picture"' in f
    ]
    assert len(pictures) == 1
    lowest = (
        "验证损失最低：第 1 轮"
        if language != SOURCE_LANGUAGE
        else "lowest validation loss: epoch 1"
    )
    assert f">{lowest}</text>" in pictures[0]


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_the_prose_names_the_recorded_gpu_and_its_figures(ledger_book, language):
    _, build, _ = ledger_book
    text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", page(build, "cuda", language))))
    if language == SOURCE_LANGUAGE:
        said = (f"On the {LABEL}, ten products of two 4096 × 4096 matrices returned to Python "
                "after 0.5 ms, and finished after 20.0 ms (measured with torch 2.13.0+cu130 "
                "on 2026-12-01).")  # fmt: skip
        error = f"the {LABEL} said: RuntimeError: the test GPU refuses Where"
    else:
        said = (f"在 {LABEL} 上，两个 4096 × 4096 矩阵相乘十次，调用在 0.5 毫秒后就回到了 "
                "Python，而计算到 20.0 毫秒后才完成（用 torch 2.13.0+cu130 于 2026-12-01 测得）。")  # fmt: skip
        error = f"{LABEL} 给出的信息是：RuntimeError: the test GPU refuses 如果"
    assert said in text
    assert error in text


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_the_status_page_lists_every_page_with_its_recordings(ledger_book, language):
    _, build, _ = ledger_book
    html = page(build, "status", language)
    table = html[html.index('<table class="tb-status') : html.index("</table>")]
    for chapter in CHAPTERS:
        assert f'href="{chapter}.html"' in table, chapter
    rows = re.findall(r"<tr.*?</tr>", table, re.DOTALL)
    assert len(rows) == len(CHAPTERS) + 1
    cuda = next(r for r in rows if 'href="cuda.html"' in r)
    fresh = "未过时" if language != SOURCE_LANGUAGE else "fresh"
    assert f"{LABEL} · 2026-12-01 · {fresh}" in unescape(re.sub(r"<[^>]+>", "", cuda))
    # where every page ran is the table's caption, not a column repeating it
    caption = re.search(r"<caption.*?</caption>", table, re.DOTALL)
    assert caption is not None
    assert "cpu · torch 2.13.0" in caption[0]
    assert "cpu · torch" not in cuda
    assert re.search(r"\d+\.\d (s|秒)", cuda)


def test_the_pdf_shows_the_recorded_outputs_as_a_labelled_block(ledger_book):
    tree, build, _ = ledger_book
    spec = resolve_spec("cpu", given_by="test", src=tree / "src", work=build)
    command = sphinx_command(
        build / "html", builder="latex", spec=spec, docs=tree / "docs", conf=tree / "conf"
    )
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    tex = (build / "latex" / SOURCE_LANGUAGE / "tensorbook.tex").read_text(encoding="utf-8")
    assert f"\\textbf{{recorded on {LABEL}" in tex
    assert f"on {LABEL}, cell" in tex
    assert "lowest validation loss: epoch 1" in tex  # the recorded picture, drawn in TikZ


def _build_cuda_edited(tree: Path, build: Path, old: str, new: str):
    """The source edition built with ``old`` replaced by ``new`` once in cuda.md, then restored."""
    cuda = tree / "docs" / "cuda.md"
    text = cuda.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    cuda.write_text(text.replace(old, new), encoding="utf-8")
    try:
        return build_book(build / "html", tree=tree, languages=[SOURCE_LANGUAGE])
    finally:
        cuda.write_text(text, encoding="utf-8")


def test_a_changed_cell_makes_its_recording_stale_and_the_build_says_so(ledger_book):
    tree, build, _ = ledger_book
    result = _build_cuda_edited(tree, build, "print(chosen)", 'print("chosen:", chosen)')
    assert result.returncode == 0, result.output
    lines = [line for line in result.output.splitlines() if "stale recordings" in line]
    assert len(lines) == 1, result.output
    assert "cuda.md" in lines[0]
    assert "the cell's code changed" in lines[0]
    html = unescape(page(build, "cuda"))
    assert "stale: the cell's code changed since it was recorded" in html
    assert "recorded before this page's code last changed" not in html  # no figure's cell


def test_a_figure_s_changed_cell_is_said_in_the_prose(ledger_book):
    tree, build, _ = ledger_book
    result = _build_cuda_edited(tree, build, "for _ in range(10):", "for _ in range(5 + 5):")
    assert result.returncode == 0, result.output
    prose = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", page(build, "cuda"))))
    assert ("finished after 20.0 ms (measured with torch 2.13.0+cu130 on 2026-12-01; "
            "recorded before this page's code last changed).") in prose  # fmt: skip


def test_a_figure_the_recording_does_not_print_stops_the_build_naming_it(ledger_book):
    tree, build, _ = ledger_book
    old, new = "pattern: 'calls returned after", "pattern: 'calls came back after"
    result = _build_cuda_edited(tree, build, old, new)
    assert result.returncode != 0
    assert "{recorded}`returned_ms`: its pattern 'calls came back after" in result.output
    assert "change the pattern or the cell" in result.output


def test_a_hand_edited_recording_stops_the_build_naming_file_and_field(ledger_book):
    tree, build, _ = ledger_book
    path = tree / "docs" / "recorded" / "test-gpu" / "cuda.json"
    original = path.read_text(encoding="utf-8")
    data = json.loads(original)
    data["provenance"]["torch"] = 2.13
    path.write_text(json.dumps(data), encoding="utf-8")
    try:
        result = build_book(build / "html", tree=tree, languages=[SOURCE_LANGUAGE])
    finally:
        path.write_text(original, encoding="utf-8")
    assert result.returncode != 0
    assert f"{path}: field provenance.torch: 2.13 is not of type 'string'" in result.output
    assert "record the page again (nox -s record -- --device DEVICE)" in result.output
