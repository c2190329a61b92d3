"""How the build driver starts its steps, the execute stage and each edition's Sphinx.

Each is ``python -m <module> …``, forked warm where it can be, else a new process: the
driver imports Sphinx, the extensions and the theme once, and forks each step from
itself; forking is safe only in a process that runs no other thread.

Nothing an edition starts outlives the build. Each edition leads a process group of its
own, which the driver kills whole (Sphinx's ``-j`` workers with it: killed alone, the
edition left them blocked on pipes no one reads, holding the build folder). Each process
forked inside a forked edition dies with its parent, so a driver killed with ``kill -9``
takes them all with it. What they leave in the temporary folder (sockets, connection
files) is in folders named for the edition (:func:`private_folder`), which the driver
removes once the edition has ended, and the next build where the driver was killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import os
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, NoReturn

from tensorbook_build.settings import EXTENSIONS, THEME

_ALWAYS = ("sphinx.cmd.build", "sphinx.application", "sphinx.builders.html")
_PR_SET_PDEATHSIG = 1
_PRIVATE = "tb-"  # and the process group's number: tb-<group>-<random>
_forking = os.getpid()  # the process that forked this one, set just before each fork


@contextlib.contextmanager
def uninterrupted() -> Iterator[None]:
    """Hold Ctrl-C until the block ends, so that a step started is a step recorded.

    A ``KeyboardInterrupt`` between a fork and the line that records the child would
    leave a step no one kills; the signal waits, and comes once the block ends. A child
    forked inside lets it through again (:func:`_child_hears_ctrl_c`).
    """
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _child_hears_ctrl_c() -> None:
    """In a child forked inside :func:`uninterrupted`: SIGINT no longer held.

    nbclient interrupts a kernel that overruns with it.
    """
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def die_with_parent(parent: int) -> None:
    """In a new child of ``parent``: have Linux end it when ``parent`` ends."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it ended before the request took effect
        os._exit(1)


def private_folder() -> Path:
    """A new folder for sockets and connection files, named for this process's group.

    In the temporary folder: a socket's path is limited to about a hundred bytes. An
    edition leads a group of its own, its readers in it, and they make the folders of its
    fork server and its kernels: an edition's folders are its group's.
    """
    return Path(tempfile.mkdtemp(prefix=f"{_PRIVATE}{os.getpgid(0)}-"))


def remove_private_folders(groups: Collection[int] | None = None, *, settle: float = 2.0) -> None:
    """Remove the private folders of ``groups``, or of every group no process of runs.

    A kernel that its killed server's death has not reached yet may still bind a socket
    in its folder while the folder is removed (which then fails, not empty): a folder
    still there is removed again, for up to ``settle`` seconds.
    """
    deadline = time.monotonic() + settle
    while True:
        left = []
        for folder in Path(tempfile.gettempdir()).glob(f"{_PRIVATE}*-*"):
            group = folder.name.removeprefix(_PRIVATE).partition("-")[0]
            if group.isdigit() and (
                int(group) in groups if groups is not None else not _group_runs(int(group))
            ):
                shutil.rmtree(folder, ignore_errors=True)
                if folder.exists():
                    left.append(folder)
        if not left or time.monotonic() > deadline:
            return
        time.sleep(0.05)


def _group_runs(group: int) -> bool:
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError):
            state, _parent, member_of = stat.read_text().rsplit(")", 1)[1].split()[:3]
            if int(member_of) == group and state != "Z":  # a zombie has ended
                return True
    return False


def _remember_forking() -> None:
    global _forking  # noqa: PLW0603 - what an at-fork hook in the child can read
    _forking = os.getpid()


def _child_dies_with_parent() -> None:
    die_with_parent(_forking)


def _threads() -> int:
    """How many threads this process runs, native ones included (Linux lists them)."""
    with contextlib.suppress(OSError):
        return len(list(Path("/proc/self/task").iterdir()))
    return 0  # not known: not safe


def can_fork(command: Sequence[str]) -> bool:
    """Whether ``command`` (this interpreter's ``-m module …``) can be forked from here."""
    return tuple(command[:2]) == (sys.executable, "-m") and len(command) > 2 and _threads() == 1


def warm_up() -> None:
    """Import Sphinx, and the extensions and theme the book uses (``settings.EXTENSIONS``)."""
    for module in (*_ALWAYS, *EXTENSIONS, THEME):
        with contextlib.suppress(ImportError):  # the child reports it, as Sphinx would
            importlib.import_module(module)


def run_child(
    module: str,
    arguments: Sequence[str],
    environment: Mapping[str, str],
    before: Callable[[], None],
) -> NoReturn:
    """In a forked child: ``before()``, then ``python -m module arguments``; never returns.

    ``environment`` is the module's whole environment.
    """
    code = 0
    try:
        before()
        wanted = dict(environment)  # copied first: it may be os.environ itself
        os.environ.clear()
        os.environ.update(wanted)
        sys.argv = [module, *arguments]  # runpy names the module's file first, as -m does
        loaded = sys.modules.get(module)
        if loaded is not None and callable(entry := getattr(loaded, "main", None)):
            raise SystemExit(entry(list(arguments)))  # imported already: run anew, runpy warns
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as end:
        code = end.code if isinstance(end.code, int) else int(end.code is not None)
    except KeyboardInterrupt:  # the driver, which heard it too, says the one line
        code = 130
    except BaseException:  # noqa: BLE001 - a forked child must never return into its parent
        traceback.print_exc()
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class Forked:
    """``python -m module ARGS``, forked: as much a ``Popen`` as the driver uses."""

    def __init__(
        self, command: Sequence[str], environment: Mapping[str, str], *, capture: bool
    ) -> None:
        pipe = os.pipe() if capture else None

        def to_pipe() -> None:
            if pipe:
                os.dup2(pipe[1], 1)
                os.dup2(pipe[1], 2)
                os.close(pipe[0])
                os.close(pipe[1])

        def in_the_child() -> None:
            os.setpgid(0, 0)
            die_with_parent(parent)
            # Sphinx's workers too, and theirs: Python runs these hooks in each os.fork
            os.register_at_fork(before=_remember_forking, after_in_child=_child_dies_with_parent)
            to_pipe()
            _child_hears_ctrl_c()  # last: a Ctrl-C held since the fork now ends the child

        sys.stdout.flush()
        sys.stderr.flush()
        parent = os.getpid()
        with uninterrupted():  # until run_child's guard, the child must not hear Ctrl-C
            self.pid = os.fork()
            if self.pid == 0:
                run_child(command[2], command[3:], environment, in_the_child)
        with contextlib.suppress(OSError):  # set in both, so that it is set before kill
            os.setpgid(self.pid, self.pid)
        self.returncode: int | None = None
        self._output: IO[str] | None = None
        if pipe:
            os.close(pipe[1])
            self._output = os.fdopen(pipe[0], encoding="utf-8", errors="replace")

    def poll(self) -> int | None:
        """The exit status once the child has ended, else ``None``."""
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        """Wait for the child to end; its exit status."""
        if self.returncode is None:
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.returncode

    def communicate(self) -> tuple[str | None, None]:
        """Everything the child printed (when captured), once it has ended."""
        printed = None
        if self._output is not None:
            with self._output:
                printed = self._output.read()
        self.wait()
        return printed, None


def kill(process: Forked | subprocess.Popen[str]) -> None:
    """Kill an edition started by :func:`start`, and every process of its group, and reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def start(
    command: Sequence[str], environment: Mapping[str, str], *, capture: bool
) -> Forked | subprocess.Popen[str]:
    """Start a step's ``command``: forked warm where it can be, else a new process.

    Either way it leads a new process group, which :func:`kill` ends, and its
    environment is ``environment``, whole.
    """
    if can_fork(command):
        if command[2] == "sphinx":  # the stage forks before the driver imports it all
            warm_up()
        return Forked(command, environment, capture=capture)
    output = subprocess.PIPE if capture else None
    # through this module, which has it, and what it forks, die with the driver
    guarded = [sys.executable, "-m", __name__, str(os.getpid()), *command]
    return subprocess.Popen(
        guarded,
        env=dict(environment),
        stdout=output,
        stderr=subprocess.STDOUT if output else None,
        text=True,
        process_group=0,
    )


def _guarded(parent: int, command: Sequence[str]) -> NoReturn:
    """Run ``command`` in this process, dying with ``parent``, as a forked step does.

    A Python module runs here, and what it forks dies with it; another program replaces
    this process (the parent-death signal outlives ``exec``).
    """
    die_with_parent(parent)
    if tuple(command[:2]) == (sys.executable, "-m") and len(command) > 2:
        os.register_at_fork(before=_remember_forking, after_in_child=_child_dies_with_parent)
        run_child(command[2], command[3:], dict(os.environ), _child_hears_ctrl_c)
    # a Ctrl-C held since this process started ends it as it would end the program: quietly
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    _child_hears_ctrl_c()
    os.execvp(command[0], list(command))


if __name__ == "__main__":  # python -m tensorbook_build.launch PARENT COMMAND...: see start
    _guarded(int(sys.argv[1]), sys.argv[2:])
