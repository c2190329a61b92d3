"""The driver forks each edition's Sphinx from itself, warm, where that is safe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tensorbook_build.launch import Readiness, can_fork, kill, start

# Run in a new interpreter: a test runner has threads of its own, which forking must not
# copy (and Python 3.12 warns about); the build driver has none.
PROBE = textwrap.dedent(
    """
    import json, os, sys
    from tensorbook_build import launch
    results = []
    for arguments in {arguments}:
        command = [sys.executable, "-m", "sphinx", *arguments]
        process = launch.start(command, os.environ, capture=True)
        printed, _ = process.communicate()
        results.append([type(process).__name__, process.returncode, printed])
    print(json.dumps(results))
    """
)


def _coloured(temporary: Path) -> dict[str, str]:
    """Sphinx colours what it prints by its environment (FORCE_COLOR, CI, NO_COLOR): with
    colour forced, the forked edition colours only if it sees the environment it was given.
    Sphinx saves a failure's traceback in the temporary folder: the test's own."""
    return {**os.environ, "FORCE_COLOR": "1", "TMPDIR": str(temporary)}


def _probe(temporary: Path, *arguments: list[str]) -> list[list]:
    code = PROBE.format(arguments=repr(arguments))
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env=_coloured(temporary),
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_an_edition_forked_from_the_driver_prints_and_ends_as_a_new_process_would(tmp_path):
    (version, failed) = _probe(tmp_path, ["--version"], ["-b", "no-such-builder", "docs", "out"])
    assert version[:2] == ["Forked", 0]
    assert version[2].startswith("sphinx-build ")
    assert failed[0] == "Forked"
    new = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "no-such-builder", "docs", "out"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
        env=_coloured(tmp_path),
    )
    assert failed[1] == new.returncode != 0
    assert "\x1b[" in new.stdout
    assert failed[2].splitlines()[:4] == new.stdout.splitlines()[:4]  # the same error, coloured


def test_only_this_interpreter_s_sphinx_is_forked():
    assert not can_fork(["/usr/bin/python2", "-m", "sphinx", "docs", "out"])
    assert not can_fork([sys.executable, "-m", "pytest"])


def test_the_driver_hears_that_outputs_are_ready_or_that_the_edition_ended_without():
    """Readiness is a message on a pipe, not a file the driver polls for."""
    code = "from tensorbook_build import launch; launch.say_ready()"
    for edition, told in [(code, True), ("pass", False)]:
        with Readiness() as ready:
            process = start([sys.executable, "-c", edition], os.environ, capture=False, ready=ready)
            assert ready.wait() is told
            assert process.wait() == 0
            kill(process)  # its group: nothing it started is left
