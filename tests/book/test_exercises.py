"""Every chapter ends with exercises whose solutions the build runs and checks."""

from __future__ import annotations

import re

import pytest
from docutils import nodes
from docutils.utils import new_document
from tests.support.book import CHAPTERS, LANGUAGES, ROOT, SOURCE_LANGUAGE, page

from tensorbook_build.extensions import folds

EXERCISE = re.compile(r"^\*\*(\d+)\. [^*]+\*\*", re.MULTILINE)
SOLUTION = re.compile(
    r"^```\{solution-start\}\n(.+?)^```\{solution-end\}\n```", re.DOTALL | re.MULTILINE
)
CODE_CELL = re.compile(r"^```\{code-cell\} ipython3\n(.*?)^```", re.DOTALL | re.MULTILINE)


@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if c != "index"])
def test_each_chapter_ends_with_checked_exercises(chapter):
    text = (ROOT / "docs" / f"{chapter}.md").read_text(encoding="utf-8")
    assert "\n## Exercises\n" in text, chapter
    exercises = text[text.index("\n## Exercises\n") :]
    assert "\n## " not in exercises[1:].split("\n", 1)[1], "exercises must be the last section"
    numbers = [int(n) for n in EXERCISE.findall(exercises)]
    assert 2 <= len(numbers) <= 4, numbers
    assert numbers == list(range(1, len(numbers) + 1)), numbers
    solutions = SOLUTION.findall(exercises)
    assert len(solutions) == len(numbers), "one folded solution per exercise"
    assert exercises.count("{solution-start}") == exercises.count("{solution-end}")
    for solution in solutions:
        cells = CODE_CELL.findall(solution)
        assert cells, "a solution runs code"
        # a wrong solution must fail the build: the solution checks its own result
        assert re.search(r"^\s*assert ", cells[-1], re.MULTILINE), cells[-1]


def _section(*children: nodes.Node) -> nodes.document:
    document = new_document("page.md")
    section = nodes.section()
    section.extend(children)
    document += section
    return document


def _start() -> folds.solution_start:
    start = folds.solution_start()
    start.source, start.line = "page.md", 7
    return start


def test_paired_solution_markers_pass():
    doctree = _section(_start(), nodes.paragraph(text="cells"), folds.solution_end())
    folds._check_pairs(None, doctree)


@pytest.mark.parametrize(
    ("children", "message"),
    [
        (lambda: [_start(), nodes.paragraph(text="cells")], "without a solution-end"),
        (lambda: [folds.solution_end()], "solution-end without a solution-start"),
        (lambda: [_start(), _start(), folds.solution_end()], "before the next"),
    ],
)
def test_an_unpaired_solution_marker_fails_the_build_naming_the_place(children, message, caplog):
    folds._check_pairs(None, _section(*children()))
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1, caplog.text
    assert message in errors[0].getMessage()
    assert errors[0].location is not None  # Sphinx prints it as page.md:7


@pytest.mark.book
@pytest.mark.parametrize("language", LANGUAGES)
def test_every_edition_folds_each_solution_under_its_own_label(built_book, language):
    english = "<summary>Solution</summary>"
    for chapter in (c for c in CHAPTERS if c != "index"):
        markers = (ROOT / "docs" / f"{chapter}.md").read_text(encoding="utf-8")
        html = page(built_book, chapter, language)
        count = markers.count("```{solution-start}")
        assert html.count('<details class="solution"><summary>') == count, (chapter, language)
        translated = language != SOURCE_LANGUAGE  # the label comes from the catalog
        assert html.count(english) == (0 if translated else count), (chapter, language)
        assert html.count("</details>") >= count
