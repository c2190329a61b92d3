"""How the build driver starts each edition's Sphinx: forked warm, or as a new process.

A ``sphinx-build`` process spends over a second importing Sphinx, MyST-NB, the theme
and the book's extensions before it reads a page, and the build runs one per edition.
The driver (``python -m tensorbook_build``) imports them once, only when an edition is
to be built, and forks each edition's ``sphinx-build`` from itself (:class:`Forked`),
with the same arguments and environment the new process would have had. It imports
the modules only; each child runs Sphinx's ``main`` from the start, so the editions
share nothing but code.

Forking is safe only in a process that runs no other thread, which the driver is but
a test runner or an interpreter other than the one asked for may not be; there,
:func:`start` starts a new process as before (:class:`subprocess.Popen`).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import importlib.util
import os
import signal
import subprocess
import sys
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

__all__ = ["Forked", "can_fork", "prepare", "start", "warm_up"]

_SPHINX = ("-m", "sphinx")
_ALWAYS = ("sphinx.cmd.build", "sphinx.application", "sphinx.builders.html")


def _threads() -> int:
    """How many threads this process runs, native ones included (Linux counts them)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text(encoding="utf-8").splitlines():
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return 0  # not known: not safe


def can_fork(command: Sequence[str]) -> bool:
    """Whether ``command`` (``python -m sphinx …``) can be forked from this process.

    Examples
    --------
    >>> can_fork(["/usr/bin/python2", "-m", "sphinx", "docs", "out"])
    False
    """
    return (
        len(command) > len(_SPHINX)
        and command[0] == sys.executable
        and tuple(command[1:3]) == _SPHINX
        and hasattr(os, "fork")
        and _threads() == 1
    )


def _modules(conf: Path) -> list[str]:
    """The modules a build with ``conf/conf.py`` imports: Sphinx's, its extensions, its theme.

    Read from the file, not run: running ``conf.py`` is the child's job.
    """
    found = list(_ALWAYS)
    tree = ast.parse((conf / "conf.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            name = getattr(node.targets[0], "id", "")
            with contextlib.suppress(ValueError):
                value = ast.literal_eval(node.value)
                if name == "extensions":
                    found += list(value)
                elif name == "html_theme":
                    found.append(value)
    return found


def warm_up(conf: Path) -> None:
    """Import what the editions' Sphinx will import, once, in this process."""
    for module in _modules(conf):
        with contextlib.suppress(ImportError):  # the child reports it, as Sphinx would
            importlib.import_module(module)


def prepare(conf: Path, languages: Sequence[str]) -> None:
    """Load, while the source edition builds, what the editions in ``languages`` need.

    Their Sphinx, forked from this process next, then finds it in memory; where this
    process cannot fork, there is nothing to share, and nothing is loaded.
    """
    if languages and _threads() == 1:
        warm_up(conf)


class Forked:
    """``python -m sphinx ARGS`` run in a child forked from this process.

    It answers as much of :class:`subprocess.Popen` as the driver uses.
    """

    def __init__(
        self, command: Sequence[str], environment: Mapping[str, str], *, capture: bool
    ) -> None:
        reading, writing = os.pipe() if capture else (None, None)
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:  # the child
            _run_sphinx(list(command[3:]), environment, writing, reading)
        self.returncode: int | None = None
        self._output: IO[str] | None = None
        if writing is not None and reading is not None:
            os.close(writing)
            self._output = os.fdopen(reading, encoding="utf-8", errors="replace")

    def poll(self) -> int | None:
        """The exit status once the child has ended, else ``None``."""
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        """Wait for the child to end; its exit status."""
        while (code := self.poll()) is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return code

    def communicate(self) -> tuple[str | None, None]:
        """Everything the child printed (when captured), once it has ended."""
        printed = None
        if self._output is not None:
            with self._output:
                printed = self._output.read()
        self.wait()
        return printed, None

    def kill(self) -> None:
        """Kill the child, if it still runs."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)


def _run_sphinx(
    arguments: list[str], environment: Mapping[str, str], writing: int | None, reading: int | None
) -> None:
    """In the child: ``sphinx-build arguments``, as a new process would run it; never returns."""
    code = 1
    try:
        if writing is not None and reading is not None:
            os.close(reading)
            os.dup2(writing, 1)
            os.dup2(writing, 2)
            os.close(writing)
        wanted = dict(environment)  # copied first: it may be os.environ itself
        os.environ.clear()
        os.environ.update(wanted)
        # as `python -m sphinx` sets it: Sphinx names itself after it in what it prints
        spec = importlib.util.find_spec("sphinx.__main__")
        sys.argv = [(spec and spec.origin) or "sphinx", *arguments]
        from sphinx.cmd.build import main

        code = main(arguments)
    except SystemExit as end:
        code = end.code if isinstance(end.code, int) else int(end.code is not None)
    except BaseException:  # noqa: BLE001 - a child must never return into the driver
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def start(
    command: Sequence[str],
    environment: Mapping[str, str],
    *,
    capture: bool,
    conf: Path,
) -> Forked | subprocess.Popen[str]:
    """Start an edition's ``command``: forked warm where it can be, else a new process."""
    if can_fork(command):
        warm_up(conf)
        return Forked(command, environment, capture=capture)
    output = subprocess.PIPE if capture else None
    return subprocess.Popen(
        command,
        env=dict(environment),
        stdout=output,
        stderr=subprocess.STDOUT if output else None,
        text=True,
    )
