"""Optional deeper material is folded under a translated label, and its markers pair."""

from __future__ import annotations

import re

import pytest
from docutils import nodes
from docutils.utils import new_document
from tests.support.book import CHAPTERS, LANGUAGES, ROOT, SOURCE_LANGUAGE, page

from tensorbook_build.extensions import folds

LABEL = re.compile(r"^```\{deeper-start\}\n(.+?)\n```", re.MULTILINE)


def _section(*children: nodes.Node) -> nodes.document:
    document = new_document("page.md")
    section = nodes.section()
    section.extend(children)
    document += section
    return document


def _start() -> folds.deeper_start:
    start = folds.deeper_start()
    start.source, start.line = "page.md", 7
    return start


def test_paired_deeper_markers_pass(caplog):
    folds._check_pairs(None, _section(_start(), nodes.paragraph(text="cells"), folds.deeper_end()))
    assert not [r for r in caplog.records if r.levelname == "ERROR"], caplog.text


@pytest.mark.parametrize(
    ("children", "message"),
    [
        (lambda: [_start(), nodes.paragraph(text="cells")], "deeper-start without a deeper-end"),
        (lambda: [folds.deeper_end()], "deeper-end without a deeper-start"),
        (lambda: [_start(), _start(), folds.deeper_end()], "before the next"),
    ],
)
def test_an_unpaired_deeper_marker_fails_the_build_naming_the_place(children, message, caplog):
    folds._check_pairs(None, _section(*children()))
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1, caplog.text
    assert message in errors[0].getMessage()
    assert errors[0].location is not None  # Sphinx prints it as page.md:7


@pytest.mark.book
@pytest.mark.parametrize("language", LANGUAGES)
def test_every_edition_folds_each_deeper_section_under_its_label(built_book, language):
    for chapter in CHAPTERS:
        labels = LABEL.findall((ROOT / "docs" / f"{chapter}.md").read_text(encoding="utf-8"))
        html = page(built_book, chapter, language)
        folds = re.findall(r'<details class="deeper"><summary>(.*?)</summary>', html, re.DOTALL)
        assert len(folds) == len(labels), (chapter, language)
        for label, shown in zip(labels, folds, strict=True):
            # the label is translated like a paragraph, so the English never shows through
            assert shown.strip(), (chapter, language)
            if language != SOURCE_LANGUAGE:
                assert not re.fullmatch(r"[\x00-\x7f]*", shown), (chapter, language, label)
