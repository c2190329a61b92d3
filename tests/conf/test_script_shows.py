"""A chapter's script saves and prints what its notebook would display."""

from __future__ import annotations

import subprocess
import sys

import nbformat

from tensorbook_build.downloads import script_for

PICTURE = """\
from tensorbook.draw.svg import Canvas
canvas = Canvas(120)
canvas.words(8, 20, "result")
canvas.picture(("result", {}), ("result", {}))"""
FIGURE = """\
from matplotlib.figure import Figure
figure = Figure(figsize=(2, 1))
figure.subplots().plot([1, 2])
figure"""


def test_a_script_saves_each_picture_beside_it_and_prints_the_rest(tmp_path):
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("print('the install cell')"),
            nbformat.v4.new_code_cell("x = [1, 2]\nx"),
            nbformat.v4.new_code_cell(PICTURE),
            nbformat.v4.new_code_cell(FIGURE),
            nbformat.v4.new_code_cell("display('shown', None)\nx;"),
        ]
    )
    script = tmp_path / "tensorbook-demo.py"
    script.write_text(script_for(notebook), encoding="utf-8")
    for _ in range(2):  # a second run writes the same files again, not new ones
        finished = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, check=True,
            cwd=tmp_path, env={"MPLBACKEND": "Agg", "PATH": ""},
        )  # fmt: skip
    assert finished.stdout.splitlines() == [
        "the install cell",
        "[1, 2]",
        "[figure saved as tensorbook-demo-figure-1.svg: result]",
        "[figure saved as tensorbook-demo-figure-2.png]",
        "'shown'",
    ]
    saved = sorted(p.name for p in tmp_path.glob("tensorbook-demo-figure-*"))
    assert saved == ["tensorbook-demo-figure-1.svg", "tensorbook-demo-figure-2.png"]
    assert (tmp_path / saved[0]).read_text(encoding="utf-8").startswith("<svg ")
    assert (tmp_path / saved[1]).read_bytes().startswith(b"\x89PNG")
