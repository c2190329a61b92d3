"""How ``nox -s tests`` shares its parallel step between pytest-xdist's workers.

A file whose tests share a fixture that the file makes once (Chromium and the views it
loaded, the reader's environment) is one unit of work, run in one worker, so that the
fixture is made once; every other test is a unit of its own, given to whichever worker
is free. The largest units go first: the two long files start at once, one in each
worker, and the single tests fill both workers to the end (with a file per unit, as
``--dist loadfile`` has it, one worker ran a five-test file for 54 s after the other had
finished).

xdist's own ``--dist loadgroup`` groups the tests that an ``xdist_group`` mark names, by
appending the group to each test's id; on pytest 9.2 a test's id can no longer be
changed so, and the marks are silently ignored (pytest-dev/pytest-xdist#1386). So the
groups are named here, by file, and ``tests/conftest.py`` makes this the scheduler of
``--dist loadgroup``, refusing the mark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

ONE_WORKER = {
    "tests/book/test_browser.py": "Chromium, and each view of a page it loaded",
    "tests/book/test_downloads.py": "the reader's environment and the site it reads",
    "tests/conf/test_editions_fixture.py": "a fixture book, both editions built",
    "tests/conf/test_fixture_book.py": "the fixture book, built",
    "tests/conf/test_hooks.py": "Sphinx with the book's configuration",
    "tests/conf/test_hosting_fixture.py": "a fixture book, built at each address",
    "tests/conf/test_ledger_book.py": "a copy of the book with recorded outputs, built",
    "tests/conf/test_ledger_fixture.py": "the one-page fixture book with its recordings, built",
    "tests/conf/test_pdf.py": "each edition's PDF",
    "tests/conf/test_provenance_fixture.py": "a fixture book in git, built",
    "tests/conf/test_published.py": "a configured copy with a receipt imported, built",
    "tests/conf/test_receipts.py": "a well-formed receipt of the speed chapter",
}
"""The test files whose tests share a fixture made once per file or session, and what."""
SPLIT_SCOPE_SIGNATURE = "(self, nodeid: 'str') -> 'str'"
"""xdist's ``LoadScopeScheduling._split_scope``, which this overrides, as written for."""


def unit_of_work(nodeid: str) -> str:
    """The unit of work a test belongs to: its file's, if listed in :data:`ONE_WORKER`.

    >>> unit_of_work("tests/book/test_browser.py::test_math_renders[en-autograd]")
    'tests/book/test_browser.py'
    >>> unit_of_work("tests/reader/test_programs.py::test_numpy_refuses_a_gpu_flag")
    'tests/reader/test_programs.py::test_numpy_refuses_a_gpu_flag'
    """
    path = nodeid.split("::", 1)[0]
    return path if path in ONE_WORKER else nodeid


def scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's scope scheduling, with :func:`unit_of_work` as the scope of a test."""
    from xdist.scheduler import LoadScopeScheduling

    class ByUnitOfWork(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of_work(nodeid)

    return ByUnitOfWork(config, log)
