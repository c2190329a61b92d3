"""The adapters on a two-page fixture book, built in this process with sphinx.testing.

The real book is the acceptance tier (tests/book); here each adapter is seen on the
least that exercises it, in seconds: tests/conf/fixture_book holds the pages, and its
conf.py is the book's own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp
from tests.support.sphinx_app import process_state_kept

from tensorbook_build.spec import resolve_spec

FIXTURE = Path(__file__).parent / "fixture_book"

# sphinx-book-theme 1.4's footnote transform reads an attribute Sphinx 9 deprecates; a
# build in a process of its own lets that pass, and so does one in this process
pytestmark = pytest.mark.filterwarnings(
    "ignore:'sphinx_book_theme._transforms.HandleFootnoteTransform.app' is deprecated"
    ":sphinx.deprecation.RemovedInSphinx11Warning"
)


@pytest.fixture(scope="module")
def fixture_book(tmp_path_factory) -> Iterator[SphinxTestApp]:
    """The fixture book, built once (its pages run no code: no kernel is started)."""
    build = tmp_path_factory.mktemp("fixture")
    spec = resolve_spec("cpu", given_by="test", warm_kernels=False, work=build)
    given = {"tensorbook_spec": spec.to_json()}
    with process_state_kept():
        app = SphinxTestApp("html", srcdir=FIXTURE, builddir=build, confoverrides=given)
        try:
            app.build()
            yield app
        finally:
            app.cleanup()


def _html(app: SphinxTestApp, name: str) -> str:
    return Path(app.outdir, f"{name}.html").read_text(encoding="utf-8")


def test_the_fixture_book_builds_without_a_warning(fixture_book):
    assert fixture_book.statuscode == 0
    assert fixture_book.warning.getvalue() == ""


def test_a_solution_and_a_deeper_section_are_folded_under_their_labels(fixture_book):
    html = _html(fixture_book, "page")
    solution = re.search(r'<details class="solution"><summary>(.*?)</summary>(.*?)</details>',
                         html, re.DOTALL)  # fmt: skip
    assert solution is not None
    assert "Solution" in solution[1]
    assert "It raises." in solution[2]
    deeper = re.search(r'<details class="deeper"><summary>(.*?)</summary>(.*?)</details>',
                       html, re.DOTALL)  # fmt: skip
    assert deeper is not None
    assert "Going deeper" in deeper[1]
    assert "More detail." in deeper[2]


def test_pysource_shows_the_function_without_its_docstring(fixture_book):
    html = _html(fixture_book, "page")
    block = html[html.index('<div class="highlight-python') :]
    block = re.sub(r"<[^>]+>", "", block[: block.index("</pre>")])
    assert "def forward(" in block
    assert '"""' not in block


def test_math_is_mathml_written_at_build_time(fixture_book):
    html = _html(fixture_book, "page")
    assert "<math" in html
    assert "<script" not in html.split("<math", 1)[1].split("</math>", 1)[0]
    assert "mathjax" not in html.lower()
