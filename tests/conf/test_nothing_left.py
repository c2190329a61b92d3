"""Nothing outlives a build: after each fault no process of it is left, nor anything of
its in the temporary folder, and the next build runs.

The build runs as ``nox -s docs`` runs it, ``python -m tensorbook_build`` in a process of
its own, on a small copy of the book with both editions. This test process is made a
*child subreaper* while it runs: a process of the build whose parent ended is handed to
it, not to init, so "the build's processes" are exactly this test's new descendants, by
parent chain, whatever their names.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.support.book import SOURCE_LANGUAGE, copy_of_the_book

pytestmark = pytest.mark.book

_PR_SET_CHILD_SUBREAPER = 36
_PAGES = 8  # more than Sphinx's threshold (5) for reading and writing in parallel workers
_PARAGRAPH = " ".join(["A sentence that the parser reads, and reads again, and once more."] * 40)
_PROSE = _PARAGRAPH + "\n\n"


def _catalog(title: str) -> str:
    """A page's zh_CN catalog: every message translated."""
    header = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n'
    return f'{header}\nmsgid "{title}"\nmsgstr "{title}。"\n\nmsgid "{_PARAGRAPH}"\nmsgstr "一句话。"\n'


def _page(title: str, code: str, *, prose: int, front: str = "") -> str:
    """A page of the book: ``prose`` paragraphs, then one code cell."""
    header = f"---\nfile_format: mystnb\nkernelspec:\n  name: python3\n  display_name: Python 3\n{front}---\n\n"
    return f"{header}# {title}\n\n{_PROSE * prose}```{{code-cell}} ipython3\n{code}\n```\n"


def _children() -> dict[int, list[int]]:
    """Every process's children, from /proc: parent pid to child pids."""
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            # the fields after the command's closing parenthesis: state, ppid, ...
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if fields[0] != "Z":  # a zombie has ended: only its parent's wait is left
                tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def _descendants(pid: int) -> set[int]:
    tree, found, todo = _children(), set(), [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


@pytest.fixture
def leftovers() -> Iterator[Callable[..., list[str]]]:
    """A function that lists the processes started since the test began that still run.

    This process adopts the orphans meanwhile; any left are killed after the test.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(_PR_SET_CHILD_SUBREAPER, 1) == 0
    before = _descendants(os.getpid())

    def started_and_running(*, grace: float = 10) -> list[str]:
        # a process killed is gone at once; one told to die with its parent is gone as soon
        # as it is scheduled: a few seconds on a loaded machine, and none without the fix
        deadline = time.monotonic() + grace
        while (left := _descendants(os.getpid()) - before) and time.monotonic() < deadline:
            time.sleep(0.2)
        return [Path(f"/proc/{pid}/cmdline").read_bytes().decode() for pid in sorted(left)]

    yield started_and_running
    for pid in _descendants(os.getpid()) - before:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 0)
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0]:  # the orphans it adopted, dead
            pass


OTHER_TOOLS_CACHES = ("torchinductor_", "jieba.cache")
"""What the build's libraries keep in the temporary folder between builds, on purpose."""


class Book:
    """A small copy of the book, built by ``python -m tensorbook_build`` as nox does, with
    a temporary folder of its own (short: sockets are made there)."""

    def __init__(self, tmp_path: Path, first_code: str, *, front: str = "", prose: int = 1) -> None:
        self.prose = prose
        self.temporary = Path(tempfile.mkdtemp(prefix="tb-test-"))
        self.tree = copy_of_the_book(tmp_path, parts=["conf", "src"])
        self.site = tmp_path / "out" / "html"
        docs = self.tree / "docs"
        names = [f"page{n}" for n in range(1, _PAGES)]
        self.toctree = "\n```{toctree}\n" + "\n".join(names) + "\n```\n"
        (docs / "index.md").write_text(
            _page("Index", first_code, prose=prose, front=front) + self.toctree
        )
        for name in names:
            (docs / f"{name}.md").write_text(_page(name, f"print({name!r})", prose=prose))
        self.catalogs = docs / "locales" / "zh_CN" / "LC_MESSAGES"
        self.catalogs.mkdir(parents=True)
        for title in ("Index", *names):
            (self.catalogs / f"{title.lower()}.po").write_text(_catalog(title), encoding="utf-8")

    def start(self, *languages: str) -> subprocess.Popen[str]:
        """Start a build in a session of its own, as a terminal would start it.

        A terminal's job starts with Ctrl-C's signal at its default. A program inherits an
        ignored signal as ignored, and then Python does not turn it into KeyboardInterrupt
        (the build rightly ignores Ctrl-C where its shell says so). A shell without job
        control starts a background job (``cmd &``) with SIGINT ignored, so a suite run
        that way (``bash -c 'nox -s tests &'``, as CI scripts may) runs with SIGINT
        ignored: twice the Ctrl-C case's build went on waiting on its pipe there, and
        never in the foreground. The build is started from a process whose handler is
        Python's own, which a new program gets back as the default.
        """
        chosen = [a for code in languages for a in ("--language", code)]
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            return subprocess.Popen(
                [sys.executable, "-m", "tensorbook_build", "--site", str(self.site), *chosen],
                cwd=self.tree,
                env={
                    **os.environ,
                    "PYTHONPATH": str(self.tree / "conf"),
                    "TMPDIR": str(self.temporary),
                },
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
        finally:
            signal.signal(signal.SIGINT, previous)

    def build(self, *languages: str) -> tuple[int, str]:
        process = self.start(*languages)
        printed, _ = process.communicate(timeout=600)
        return process.returncode, printed

    def left_behind(self) -> list[str]:
        """What is in the build's temporary folder, but for its libraries' caches."""
        return sorted(
            p.name for p in self.temporary.iterdir() if not p.name.startswith(OTHER_TOOLS_CACHES)
        )

    def builds_again(self) -> None:
        """The page fixed, the next build runs and succeeds (the source edition: the one
        that takes the lock and starts the kernels), and clears what a build killed left."""
        index = self.tree / "docs" / "index.md"
        index.write_text(_page("Index", "print('fixed')", prose=self.prose) + self.toctree)
        returncode, printed = self.build(SOURCE_LANGUAGE)
        assert returncode == 0, printed[-3000:]
        assert "fixed" in (self.site / SOURCE_LANGUAGE / "index.html").read_text()
        assert self.left_behind() == []
        shutil.rmtree(self.temporary)


def _inside_a_cell(tmp_path: Path) -> tuple[Book, subprocess.Popen[str]]:
    """A build started, once a page's cell runs in a kernel (a process in a session of
    its own) and sleeps there."""
    book = Book(tmp_path, "import time\ntime.sleep(600)")
    process = book.start()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        for pid in _descendants(process.pid):
            with contextlib.suppress(OSError):
                if os.getsid(pid) == pid:
                    time.sleep(1)  # inside the cell
                    return book, process
        time.sleep(0.2)
    pytest.fail(f"no kernel started:\n{process.communicate()[0][-3000:]}")


def test_a_failing_cell_leaves_nothing_and_the_next_build_runs(tmp_path, leftovers):
    book = Book(tmp_path, "raise ValueError('broken on purpose')")
    returncode, printed = book.build()
    assert returncode != 0
    assert "raised ValueError: broken on purpose" in printed
    assert leftovers() == []
    assert book.left_behind() == []
    book.builds_again()
    assert leftovers() == []


def test_a_cell_that_hangs_past_its_timeout_leaves_nothing_and_the_next_build_runs(
    tmp_path, leftovers
):
    book = Book(tmp_path, "import time\ntime.sleep(600)", front="mystnb:\n  execution_timeout: 3\n")
    returncode, printed = book.build()
    assert returncode != 0
    assert "did not finish in 3 seconds" in printed
    assert leftovers() == []
    assert book.left_behind() == []
    book.builds_again()


def test_a_broken_catalog_leaves_nothing_and_the_next_build_runs(tmp_path, leftovers):
    # pages slow enough to read that the English edition is still reading, in its
    # workers, when the translation stops on the catalog
    book = Book(tmp_path, "print('fine')", prose=150)
    catalog = book.catalogs / "page1.po"
    catalog.write_text('msgid "page1"\nmsgstr "第一页\n', encoding="utf-8")  # unterminated
    returncode, printed = book.build()
    assert returncode != 0, printed[-3000:]
    assert str(catalog) in printed
    assert leftovers() == []
    assert book.left_behind() == []
    book.builds_again()


def _processes(pids: set[int]) -> str:
    """Each process: pid, parent, group, state, what it waits in, its command."""
    lines = []
    for pid in sorted(pids):
        with contextlib.suppress(OSError, IndexError):
            proc = Path("/proc", str(pid))
            state, ppid, pgid = (proc / "stat").read_text().rsplit(")", 1)[1].split()[:3]
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:160]
            waits = (proc / "wchan").read_text()
            masks = dict(
                line.split(":\t")
                for line in (proc / "status").read_text().splitlines()
                if line.startswith(("SigIgn", "SigBlk"))
            )  # SIGINT is bit 2 of each
            sigint = [k for k, v in masks.items() if int(v, 16) & 1 << (signal.SIGINT - 1)]
            flags = f" (SIGINT: {', '.join(sigint)})" if sigint else ""
            lines.append(f"{pid} parent {ppid} group {pgid} {state} in {waits}{flags}: {command}")
    return "\n".join(lines)


def _output_once_ended(process: subprocess.Popen[str], timeout: float) -> str:
    """What the build printed once it ended; a failure naming every process of the test
    that still runs, and what the build had printed, where it has not ended in time."""
    try:
        return process.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired as error:
        running = _processes(_descendants(os.getpid()))
        printed = error.output or ""  # bytes, though the pipe is text (subprocess's way)
        printed = printed.decode(errors="replace") if isinstance(printed, bytes) else printed
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail(
            f"the build ran on {timeout} s after the fault; still running:\n"
            f"{running}\nit printed:\n{printed}"
        )


def test_ctrl_c_leaves_nothing_and_the_next_build_runs(tmp_path, leftovers):
    book, process = _inside_a_cell(tmp_path)
    os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
    printed = _output_once_ended(process, 120)
    assert process.returncode == 130
    assert "Traceback" not in printed, printed[-3000:]
    assert printed.endswith("tensorbook_build: interrupted; no process of this build is left\n")
    assert leftovers() == []
    assert book.left_behind() == []
    book.builds_again()


_CLOCK_TICK = 1 / os.sysconf("SC_CLK_TCK")


def _past_the_interpreter_s_start(process: subprocess.Popen[str]) -> None:
    """Wait until the driver has run 0.05 s of CPU: past Python's own start (about 0.015
    s, the same on a busy machine), into the program, whose first line takes Ctrl-C.

    Before that line, Python itself answers Ctrl-C with its traceback, as for any
    program. Wall time cannot tell: with both cores busy, 0.3 s after starting, the
    interpreter was still reading its site-packages.
    """
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            if (int(fields[11]) + int(fields[12])) * _CLOCK_TICK >= 0.05:  # utime + stime
                return
        time.sleep(0.005)
    pytest.fail(f"the driver did not start:\n{process.communicate()[0][-3000:]}")


@pytest.mark.parametrize("after", [0.3, 1.0, 2.5])
def test_ctrl_c_at_any_moment_prints_one_line_and_leaves_nothing(tmp_path, leftovers, after):
    """While the driver imports, the stage starts the fork server, or a kernel is forked:
    whatever the build was doing, the interruption adds one line and no process's noise."""
    book = Book(tmp_path, "import time\ntime.sleep(600)")
    started = time.monotonic()
    process = book.start()
    _past_the_interpreter_s_start(process)
    time.sleep(max(0.0, after - (time.monotonic() - started)))
    os.killpg(process.pid, signal.SIGINT)
    printed = _output_once_ended(process, 120)
    assert process.returncode == 130, printed[-3000:]
    noise = ("Traceback", "Error", "error", "Warning", "WARNING", "zmq", "TCP")
    assert [line for line in printed.splitlines() if any(n in line for n in noise)] == []
    assert printed.endswith("tensorbook_build: interrupted; no process of this build is left\n")
    assert leftovers() == []
    assert book.left_behind() == []
    book.builds_again()


def test_a_driver_killed_with_kill_9_leaves_nothing_and_the_next_build_runs(tmp_path, leftovers):
    book, process = _inside_a_cell(tmp_path)
    process.kill()  # the driver alone: its children get no signal from anyone
    # killed with it, they are gone at once; a build left to itself would go on for
    # seconds (its readers notice their kernels went with the fork server, then write)
    assert leftovers(grace=3) == []
    process.communicate(timeout=120)
    assert book.left_behind() != []  # its sockets: no process of it could remove them
    book.builds_again()
