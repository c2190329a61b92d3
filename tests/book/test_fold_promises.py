"""The prose of the first chapters promises no recorded output that a page may not show.

A device-dependent cell shows another device's recorded output only where that recording
still lines up with the cell; otherwise it shows none. So a sentence may say what a fold
under a cell holds only on that condition ("Where a GPU has recorded this cell, a fold
under it shows ..."), and the Chinese says it with one word for the box (折叠块) and one
for the recording (录制).
"""

from __future__ import annotations

import re

import pytest
from babel.messages.pofile import read_po
from tests.support.book import ROOT

PAGES = ["numpy_bridge", "warmup_numpy", "tensors_by_hand", "training", "classification"]
CONDITION = "Where a GPU has recorded this cell"
CODE_CELL = re.compile(r"^```\{code-cell\}.*?^```", re.DOTALL | re.MULTILINE)


def _prose(page: str) -> list[str]:
    text = CODE_CELL.sub("", (ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8"))
    return [" ".join(p.split()) for p in text.split("\n\n")]


@pytest.mark.parametrize("page", PAGES)
def test_a_fold_is_promised_only_where_a_gpu_recorded_the_cell(page):
    for paragraph in _prose(page):
        for sentence in re.split(r"(?<=[.:;`)])\s+(?=[A-Z])", paragraph):
            if re.search(r"\bfolds?\b", sentence):
                assert sentence.startswith(CONDITION), sentence
    old = [
        "A page made on a CPU shows beside the cell",
        "Where a fold under the cell shows a run recorded on another device",
        "the first fold below measures it",
    ]
    text = " ".join(_prose(page))
    assert not [claim for claim in old if claim in text]


@pytest.mark.parametrize("page", PAGES)
def test_the_chinese_names_the_fold_and_the_recording_one_way(page):
    path = ROOT / "docs" / "locales" / "zh_CN" / "LC_MESSAGES" / f"{page}.po"
    with path.open("rb") as po:
        catalog = read_po(po)
    for message in catalog:
        text = message.string if isinstance(message.string, str) else ""
        assert "折叠部分" not in text, text
        assert "折叠栏" not in text, text
        if "折叠" in text:
            assert "折叠块" in text, text
            assert "录制过" in text, text
        assert not re.search(r"(GPU|设备)上记录", text), text
