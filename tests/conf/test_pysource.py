"""The pysource directive's core: an object's source with its docstrings left out."""

from __future__ import annotations

import re

from tensorbook_build.extensions.pysource import source_without_docstrings
from tensorbook_build.settings import LAYOUT

MODULE = '''
import functools


@functools.cache
def area(r: float) -> float:
    """Area of a circle.

    >>> area(1.0)
    3.14159
    """
    return 3.14159 * r * r


class Shape:
    """A shape."""

    sides = 0

    def describe(self) -> str:
        """Say what it is."""
        return "a shape"

    def name(self) -> str:
        return "shape"
'''


def test_a_function_keeps_its_decorator_and_body_and_loses_its_docstring():
    assert source_without_docstrings(MODULE, "area") == (
        "@functools.cache\ndef area(r: float) -> float:\n    return 3.14159 * r * r"
    )


def test_a_class_loses_every_docstring_inside_it():
    shown = source_without_docstrings(MODULE, "Shape")
    assert '"""' not in shown
    assert "sides = 0" in shown
    assert 'return "a shape"' in shown
    assert "def name(self) -> str:" in shown


def test_a_method_is_found_by_dotted_name():
    assert source_without_docstrings(MODULE, "Shape.name") == (
        'def name(self) -> str:\n    return "shape"'
    )


def test_a_missing_object_is_none():
    assert source_without_docstrings(MODULE, "Circle") is None
    assert source_without_docstrings(MODULE, "Shape.area") is None


def test_no_page_quotes_or_imports_the_tests():
    """The book depends on the package only: tests check it, pages never lean on them."""
    pages = sorted(LAYOUT.docs.glob("*.md"))
    assert pages
    for path in pages:
        text = path.read_text(encoding="utf-8")
        assert not re.search(
            r"^```\{(pysource|literalinclude)\} \.\./tests/", text, re.MULTILINE
        ), path
        assert not re.search(
            r"^\s*(from|import) (tests|test_\w+|conftest)\b", text, re.MULTILINE
        ), path
