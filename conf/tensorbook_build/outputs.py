"""What a page's executed cells become: deterministic text, and failures that say where.

* Each cell's printed text is joined exactly before MyST-NB merges it, so that how
  the kernel happened to cut it into chunks cannot change the page.
* A failed execution becomes a message that names the page, the cell (its number,
  its line in the page and its source) and the exception.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from tensorbook_build.execute import page_code

__all__ = ["describe_failure", "join_streams"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_RULE = "------------------"


def join_streams(outputs: list, merge: Callable[[list], list]) -> list:
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
    joined, streams = [], {}
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
    """Name the page, the failing cell and its exception, from nbclient's error."""
    text = _ANSI.sub("", str(cause or "the notebook did not finish"))
    parts = text.split(_RULE)
    cell = parts[1].strip("\n") if len(parts) >= 3 else ""
    where = "a code cell"
    if cell:
        numbers = [i for i, code in enumerate(page_code(source), 1) if code.strip() == cell.strip()]
        offset = source.find(cell)
        line = source.count("\n", 0, offset) + 1 if offset >= 0 else None
        if numbers:
            where = f"code cell {numbers[0]}" + (f" (line {line})" if line else "")
    if getattr(cause, "ename", None):
        error = f"{cause.ename}: {cause.evalue}"
    else:
        error = type(cause).__name__ if cause else "no result"
    tail = (parts[2] if len(parts) >= 3 else text).strip().splitlines()[-12:]
    quoted = "\n".join(f"    {line}" for line in cell.splitlines())
    lines = [f"{page}: {where} raised {error}", quoted]
    if tail:
        lines += ["", "Traceback (last lines):", *(f"    {line}" for line in tail)]
    lines.append("Tag the cell raises-exception if the book means to show this error.")
    return "\n".join(lines)
