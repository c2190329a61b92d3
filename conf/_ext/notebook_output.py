"""What a page's executed cells become: deterministic text, and clear failures.

* Each cell's printed text is joined exactly before MyST-NB merges it, so that
  how the kernel happened to cut it into chunks cannot change the page.
* A failed execution becomes an error that names the page, the cell (its
  number, its line in the page and its source) and the exception, in serial
  and parallel builds alike; MyST-NB's own message names only the page, and
  in a parallel build its warning with the traceback is lost.
"""

from __future__ import annotations

import re

import myst_nb.core.render
from execution_context import page_code
from myst_nb.core.execute import ExecutionError
from myst_nb.sphinx_ import Parser as MystNbParser
from sphinx.errors import SphinxError

_coalesce_streams = myst_nb.core.render.coalesce_streams


def coalesce_streams_exactly(outputs: list) -> list:
    """Join stream chunks by concatenation, then let MyST-NB merge what is left.

    MyST-NB strips each chunk and appends a newline, so a line that the kernel
    flushed in two pieces (``print`` writes the text and the newline apart)
    gains a blank line or not depending on timing; joining first makes the
    result depend only on the text.
    """
    joined, streams = [], {}
    for output in outputs:
        if output["output_type"] == "stream" and output["name"] in streams:
            streams[output["name"]]["text"] += output["text"]
            continue
        if output["output_type"] == "stream":
            output = output.copy()
            streams[output["name"]] = output
        joined.append(output)
    return _coalesce_streams(joined)


class NotebookCellError(SphinxError):
    """A code cell of a page raised an exception the page did not mark as expected."""

    category = "A cell of the book failed"


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_RULE = "------------------"


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


class CellReportingParser(MystNbParser):
    """MyST-NB's parser, with failures reported by page and cell."""

    def parse(self, inputstring: str, document) -> None:
        try:
            super().parse(inputstring, document)
        except ExecutionError as error:
            page = document.settings.env.doc2path(document.settings.env.docname)
            raise NotebookCellError(
                describe_failure(str(page), inputstring, error.__cause__)
            ) from None


def setup(app):
    myst_nb.core.render.coalesce_streams = coalesce_streams_exactly
    # replaces MyST-NB's parser, so this extension must come after myst_nb
    app.add_source_parser(CellReportingParser, override=True)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
