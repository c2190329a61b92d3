"""What a page's executed cells become: deterministic text, and failures that say where.

* Each cell's printed text is joined exactly before MyST-NB merges it, so that how
  the kernel happened to cut it into chunks cannot change the page.
* A failed execution becomes a message that names the page, the cell (its number,
  its line in the page and its source) and the exception, or how long the cell ran
  before it was stopped, and says what to do.
* Any failure of the build prints as that message, or the exception's own one line,
  and the name of a file that holds the full report (:func:`report_failure`).
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TextIO

from tensorbook_build.execute import page_code

__all__ = ["describe_failure", "join_streams", "report_failure"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_RULE = re.compile(r"^-{18,}$", re.MULTILINE)  # nbclient's rules around the cell
_WRAPPED = re.compile(r"\A([\w.]+): (.*)\Z", re.DOTALL)  # a reader's error, as -j reports it
_CATEGORIES = {"NotebookCellError": "A cell of the book failed"}
_TIMEOUT = re.compile(r"after (\d+) seconds")


def join_streams(outputs: list[Any], merge: Callable[[list[Any]], list[Any]]) -> list[Any]:
    r"""Join stream chunks by concatenation, then let ``merge`` (MyST-NB's) do the rest.

    MyST-NB strips each chunk and appends a newline, so a line that the kernel
    flushed in two pieces (``print`` writes the text and the newline apart) gains a
    blank line or not depending on timing; joining first makes the result depend
    only on the text.

    Examples
    --------
    >>> chunks = [{"output_type": "stream", "name": "stdout", "text": "a"},
    ...           {"output_type": "stream", "name": "stdout", "text": "b\n"}]
    >>> join_streams(chunks, list)
    [{'output_type': 'stream', 'name': 'stdout', 'text': 'ab\n'}]
    """
    joined: list[Any] = []
    streams: dict[str, Any] = {}  # each stream's one output, by name
    for output in outputs:
        if output["output_type"] != "stream":
            joined.append(output)
        elif output["name"] in streams:
            streams[output["name"]]["text"] += output["text"]
        else:
            streams[output["name"]] = output.copy()
            joined.append(streams[output["name"]])
    return merge(joined)


def describe_failure(page: str, source: str, cause: BaseException | None) -> str:
    r"""Name the page, the failing cell and its exception, from nbclient's error.

    The message quotes the cell and says what to do; the traceback is left to the
    full report.

    Examples
    --------
    >>> class CellTimeoutError(TimeoutError): ...
    >>> page = ("```{code-cell} ipython3\nimport time\n```\n\n"
    ...         "```{code-cell} ipython3\nwhile True: pass\n```\n")
    >>> error = CellTimeoutError("A cell timed out while it was being executed, after 120 "
    ...     "seconds.\n------------------\nwhile True: pass\n------------------\n")
    >>> print(describe_failure("docs/x.md", page, error))
    docs/x.md: code cell 2 (line 6) did not finish in 120 seconds, and was stopped
        while True: pass
    If it needs longer, give the page more time in its front matter
    (mystnb: execution_timeout: 600), or every page with nb_execution_timeout in conf.py.
    """
    text = _ANSI.sub("", str(cause or "the notebook did not finish"))
    parts = _RULE.split(text)
    cell = parts[1].strip("\n") if len(parts) >= 3 else ""
    where = "a code cell"
    if cell:
        numbers = [i for i, code in enumerate(page_code(source), 1) if code.strip() == cell.strip()]
        offset = source.find(cell)
        line = source.count("\n", 0, offset) + 1 if offset >= 0 else None
        if numbers:
            where = f"code cell {numbers[0]}" + (f" (line {line})" if line else "")
    quoted = "\n".join(f"    {line}" for line in cell.splitlines())
    timeout = _TIMEOUT.search(text)
    if type(cause).__name__ == "CellTimeoutError" and timeout:
        return "\n".join(
            [
                f"{page}: {where} did not finish in {timeout[1]} seconds, and was stopped",
                quoted,
                "If it needs longer, give the page more time in its front matter",
                "(mystnb: execution_timeout: 600), or every page with nb_execution_timeout in conf.py.",
            ]
        )
    if ename := getattr(cause, "ename", None):  # nbclient's CellExecutionError
        error = f"{ename}: {getattr(cause, 'evalue', '')}"
    else:
        error = type(cause).__name__ if cause else "no result"
    return "\n".join(
        [
            f"{page}: {where} raised {error}",
            quoted,
            "Fix the cell, or tag it raises-exception if the book means to show this error.",
        ]
    )


def report_failure(
    exception: BaseException,
    report: Path,
    stderr: TextIO,
    message_log: Iterable[str] = (),
) -> None:
    """Print a failed build's message in a few lines; write the full report to ``report``.

    A build error (Sphinx's, or the book's own) says what failed, where and what to
    do; anything else is a bug of the build, shown as its exception's last line. The
    traceback and the build's log go to ``report``, which the message names.
    """
    report.parent.mkdir(parents=True, exist_ok=True)
    # a parallel reader's error arrives wrapped, its own traceback as text
    inner = getattr(exception, "traceback", "")
    report.write_text(
        "".join(traceback.format_exception(exception))
        + (f"\nIn the process that read the page:\n{inner}" if inner else "")
        + "\nThe build's log:\n"
        + "".join(message_log),
        encoding="utf-8",
    )
    category = getattr(exception, "category", None)
    message = str(exception)
    wrapped = _WRAPPED.match(message) if inner else None
    if wrapped:
        name = wrapped[1].rsplit(".", 1)[-1]
        category = _CATEGORIES.get(name, name)
        message = wrapped[2]
    if isinstance(exception, KeyboardInterrupt):
        headline = "Interrupted"
    elif category:
        headline = f"{category}: {message}"
    else:
        headline = f"The build failed: {type(exception).__name__}: {message}"
    print(f"\n{headline}\n(the full report: {report})", file=stderr)
