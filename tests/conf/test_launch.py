"""The driver forks each edition's Sphinx from itself, warm, where that is safe."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tensorbook_build.launch import can_fork

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


HELD_CTRL_C = textwrap.dedent(
    """
    import os, signal, sys
    from tensorbook_build import launch

    # Python's own handler, as a driver started from a terminal has it (a suite started in
    # the background inherits Ctrl-C ignored, and would ignore it here)
    signal.signal(signal.SIGINT, signal.default_int_handler)

    def ctrl_c_in_the_child(parent):  # as a Ctrl-C to the driver's group, which the child
        os.kill(os.getpid(), signal.SIGINT)  # is in until it leads its own, would be
        return parent

    launch.die_with_parent = ctrl_c_in_the_child
    try:
        step = launch.Forked([sys.executable, "-m", "sphinx", "--version"], os.environ, capture=False)
        print("the driver: its step ended with", step.wait(), flush=True)
    except KeyboardInterrupt:
        print("KeyboardInterrupt in the driver's code, in", os.getpid(), flush=True)
    """
)


def test_a_ctrl_c_that_reaches_a_step_as_it_is_forked_ends_the_step_alone():
    """The step ends quietly, 130; it never goes on in the driver's code, which it copies
    (there it had printed the driver's "interrupted" line, and the driver ended by SIGINT)."""
    done = subprocess.run(
        [sys.executable, "-c", HELD_CTRL_C],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (done.stdout, done.stderr) == ("the driver: its step ended with 130\n", "")


def test_only_this_interpreter_s_modules_are_forked():
    assert not can_fork(["/usr/bin/python2", "-m", "sphinx", "docs", "out"])
    assert not can_fork([sys.executable, "-c", "pass"])
    assert not can_fork([sys.executable, "-m"])


DRIVER_WITH_A_THREAD = """
import json, sys, threading, time
threading.Thread(target=time.sleep, args=(60,), daemon=True).start()  # so it cannot fork
from tensorbook_build import launch
step = launch.start(json.loads(sys.argv[1]), {}, capture=False)
print(type(step).__name__, step.pid, flush=True)
time.sleep(60)
"""


@pytest.mark.parametrize(
    "step",
    [
        [sys.executable, "-m", "timeit", "-n", "1", "import time; time.sleep(60)"],  # a module
        ["sleep", "60"],  # another program, as latexmk for the PDF
    ],
)
def test_a_step_started_as_a_new_process_still_dies_with_the_driver(step):
    """Where the driver cannot fork (it runs a thread), the step is a new process, in a
    group of its own, that Linux still ends when the driver is killed with kill -9."""
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER_WITH_A_THREAD, json.dumps(step)],
        stdout=subprocess.PIPE,
        text=True,
    )
    kind, pid = driver.stdout.readline().split()
    assert kind == "Popen"
    assert os.getpgid(int(pid)) == int(pid)  # a group of its own
    driver.kill()
    driver.wait()
    driver.stdout.close()
    deadline = time.monotonic() + 10
    while _runs(int(pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _runs(int(pid)), "the step outlived its driver"


def _runs(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie has ended, whoever reaps it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_private_folder_a_dying_kernel_writes_in_is_removed_again(tmp_path, monkeypatch):
    """rmtree fails on a folder a kernel binds a socket in meanwhile (not empty); the
    driver removes it again until it is gone."""
    from tensorbook_build import launch

    monkeypatch.setattr(launch.tempfile, "tempdir", str(tmp_path))
    folder = tmp_path / "tb-4242-abc"
    folder.mkdir()
    removals = []
    real = launch.shutil.rmtree

    def racing(path, ignore_errors=False):  # the first removal loses the race
        removals.append(path)
        if len(removals) > 1:
            real(path, ignore_errors=ignore_errors)

    monkeypatch.setattr(launch.shutil, "rmtree", racing)
    launch.remove_private_folders({4242})
    assert not folder.exists()
    assert len(removals) == 2
