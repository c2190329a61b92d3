"""Every chapter ends with exercises whose solutions the build runs and checks."""

from __future__ import annotations

import re

import pytest
from bookhelpers import CHAPTERS, ROOT

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
