"""``python -m tensorbook_build``: build the book (see :mod:`tensorbook_build.build`)."""

import signal
import sys
from types import FrameType

_interrupted: list[int] = []


def _on_interrupt(signum: int, _frame: FrameType | None) -> None:
    # noted first: Python may wrap the KeyboardInterrupt raised in an import (a class
    # body's __set_name__) into another exception, which must still read as Ctrl-C
    _interrupted.append(signum)
    raise KeyboardInterrupt


signal.signal(signal.SIGINT, _on_interrupt)
try:
    from tensorbook_build.build import main

    code = main()
except BaseException:
    if not _interrupted:
        raise
    # build.INTERRUPTED, which may not be imported yet: every process it started is gone
    print("tensorbook_build: interrupted; no process of this build is left", file=sys.stderr)  # noqa: T201
    code = 130
sys.exit(code)
