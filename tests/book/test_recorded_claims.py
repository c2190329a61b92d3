"""What the prose says of a GPU holds in every recording from a GPU.

A CPU build cannot check a sentence about a GPU with a cell: where a page's hidden cell
checks such a sentence on a GPU build, this checks the same sentence against the
outputs each GPU recorded (``docs/recorded/<gpu>/``), so the hosted site (built on a
CPU) never shows prose that its own recordings contradict.
"""

from __future__ import annotations

import ast

import pytest
from tests.support.book import ROOT

from tensorbook_build.execute import read_page
from tensorbook_build.ledger import FOLDER, page_recordings, source_hash

RECORDED = ROOT / "docs" / FOLDER


def _cell(page: str, marker: str) -> tuple[int, str]:
    """The index and code of the page's one code cell whose code holds ``marker``."""
    code = read_page((ROOT / "docs" / f"{page}.md").read_text("utf-8")).code
    (found,) = [(index, source) for index, source in code.items() if marker in source]
    return found


def _gpu_recordings(page: str):
    recordings = [r for r in page_recordings(RECORDED, page) if r.provenance.get("gpu")]
    assert recordings, f"no GPU has recorded {page}.md: run the GPU kit (conf/README.md)"
    return recordings


def _printed(recording, index: int, source: str) -> str:
    (cell,) = [c for c in recording.cells if c.index == index]
    assert cell.source == source_hash(source), (
        f"{recording.path}: cell {index} changed since {recording.provenance['gpu']['name']} "
        "recorded it: record it again (nox -s record -- --device cuda, or the GPU kit)"
    )
    return "".join(output.get("text", "") for output in cell.outputs)


def test_the_calls_the_cuda_chapter_says_wait_are_those_a_gpu_saw_wait():
    _, check = _cell("cuda", "WAITS = [")
    said = ast.literal_eval(check.split("WAITS = ", 1)[1].split("\nif ", 1)[0])
    index, source = _cell("cuda", "waits_for_gpu(device, common_calls(device))")
    for recording in _gpu_recordings("cuda"):
        lines = _printed(recording, index, source).splitlines()
        waited = [line[:34].strip() for line in lines if line.endswith("waits for the GPU")]
        assert lines, recording.path
        assert waited == said, recording.path


@pytest.mark.parametrize("spelling", ["g[m]", "g[m] = v[m]"])
def test_a_gpu_s_mask_list_shows_the_wait_under_nonzero(spelling):
    index, source = _cell("speed", "speed.mask_operators(device)")
    for recording in _gpu_recordings("speed"):
        printed = _printed(recording, index, source)
        block = printed.split(spelling + "\n", 1)[1].split("\ng", 1)[0].split()
        at = block.index("aten::nonzero")
        assert block[at + 1 : at + 3] == ["cudaMemcpyAsync", "cudaStreamSynchronize"], block
