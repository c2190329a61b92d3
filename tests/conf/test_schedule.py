"""nox -s tests' parallel step gives each file that makes a shared fixture to one worker
(tests/support/schedule.py), and every other test to whichever worker is free."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys

from tests.support.book import ROOT
from tests.support.schedule import ONE_WORKER, SPLIT_SCOPE_SIGNATURE
from xdist.scheduler import LoadScopeScheduling

SHARED_SCOPES = {"module", "package", "session"}


def _makes_a_shared_fixture(path) -> bool:
    """Whether a test file defines a fixture of a wider scope than a test's."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef):
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and any(
                    k.arg == "scope" and getattr(k.value, "value", None) in SHARED_SCOPES
                    for k in decorator.keywords
                ):
                    return True
    return False


def test_one_worker_lists_exactly_the_files_that_make_a_shared_fixture():
    """A file left out would make its fixture in both workers (the reader's environment
    takes a minute); a file listed for nothing would hold its tests in one."""
    making = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests").rglob("test_*.py")
        if "node_modules" not in path.parts and _makes_a_shared_fixture(path)
    }
    assert making == set(ONE_WORKER)


def test_the_scheduler_overrides_what_it_was_written_for():
    assert str(inspect.signature(LoadScopeScheduling._split_scope)) == SPLIT_SCOPE_SIGNATURE


def test_a_listed_file_runs_in_one_worker(tmp_path):
    """Run as nox -s tests runs its second step: test_hooks.py's three tests share one
    worker (xdist's own schedules split them), and test_spec.py's (not listed) keep the
    other busy meanwhile."""
    files = ["tests/conf/test_hooks.py", "tests/conf/test_spec.py"]
    assert files[0] in ONE_WORKER
    assert files[1] not in ONE_WORKER
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-p",
         "no:cacheprovider", f"--basetemp={tmp_path}", *files],
        capture_output=True, text=True, check=False, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout[-3000:]
    workers: dict[str, set[str]] = {}
    passed = re.compile(r"^\[(gw\d+)\] \[ *\d+%\] PASSED (\S+)", re.MULTILINE)
    for worker, nodeid in passed.findall(ran.stdout):
        workers.setdefault(nodeid.split("::")[0], set()).add(worker)
    assert len(workers[files[0]]) == 1, ran.stdout
    assert workers[files[0]] | workers[files[1]] == {"gw0", "gw1"}, ran.stdout
