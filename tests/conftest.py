"""Fixtures shared by the test modules: the devices that exist, and small problems."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tensorbook.problem import Sizes, make_problem
from tensorbook_build.build import EXECUTE, Step, build_site
from tests.support import schedule
from tests.support.book import CUDA_MISSING, LANGUAGES


def _devices() -> list:
    return [
        pytest.param(torch.device("cpu"), id="cpu"),
        pytest.param(
            torch.device("cuda", 0),
            id="cuda",
            marks=[
                pytest.mark.cuda,
                pytest.mark.skipif(not torch.cuda.is_available(), reason=CUDA_MISSING),
            ],
        ),
    ]


@pytest.fixture(params=_devices())
def device(request) -> torch.device:
    """Each device this machine has; a missing GPU skips its cases with the reason."""
    return request.param


@pytest.fixture
def small_problem():
    """A problem small enough for float64 comparisons to run in milliseconds."""
    return make_problem(Sizes(n=16, d_in=30, h=20, d_out=5), seed=1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse a test that reads how the session's book was built (``book_builds``) and is
    not marked ``alone``: nox -s tests' workers check the book of its first step and would
    each build it again, the speed chapter beside the other worker. Refuse xdist's
    ``xdist_group`` mark, which pytest 9.2 ignores (tests/support/schedule.py)."""
    unmarked = [
        item.nodeid
        for item in items
        if "book_builds" in getattr(item, "fixturenames", ())
        and item.get_closest_marker("alone") is None
    ]
    if unmarked:
        msg = f"mark these @pytest.mark.alone (they use book_builds): {', '.join(unmarked)}"
        raise pytest.UsageError(msg)
    grouped = [item.nodeid for item in items if item.get_closest_marker("xdist_group")]
    if grouped:
        msg = (
            "xdist_group is ignored on this pytest; name the file in ONE_WORKER "
            f"(tests/support/schedule.py) instead: {', '.join(grouped)}"
        )
        raise pytest.UsageError(msg)


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # before xdist's own; only with xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``--dist loadgroup`` (nox -s tests) shares the tests out by
    :func:`tests.support.schedule.unit_of_work`; other modes are xdist's."""
    if config.getoption("dist") == "loadgroup":
        return schedule.scheduler(config, log)
    return None


@pytest.fixture(scope="session")
def book_builds(request, tmp_path_factory) -> tuple[Path, dict[str, Step]]:
    """The whole book, every edition, built once per session from a cold cache exactly
    as ``nox -s docs`` builds it; the build folder, and each edition's build."""
    root = tmp_path_factory.mktemp("book")
    results = build_site(root / "html", device=request.config.getoption("--device"), capture=True)
    for result in results:
        assert result.returncode == 0, f"{result.failure}:\n{result.output}"
    assert [r.name for r in results] == [EXECUTE, *LANGUAGES]
    return root, {r.name: r for r in results}


@pytest.fixture(scope="session")
def built_book(request) -> Path:
    """The build folder of the whole book: html/<language>/, jupyter_execute/<language>/."""
    given = request.config.getoption("--built-book")
    if given is not None:
        if not (given / "html" / "index.html").is_file():
            pytest.fail(f"--built-book {given}: no html/index.html there; build it first")
        return given.resolve()
    return request.getfixturevalue("book_builds")[0]
