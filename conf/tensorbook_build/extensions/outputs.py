"""Exact printed text, and failed cells that say where and what to do."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

from tensorbook_build.execute import read_page
from tensorbook_build.extensions import hooks
from tensorbook_build.upstream import execution_record, patch_stream_coalescing

logger = logging.getLogger(__name__)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_RULE = re.compile(r"^-{18,}$", re.MULTILINE)  # nbclient's rules around the cell
_TIMEOUT = re.compile(r"after (\d+) seconds")


def join_streams(outputs: list[Any], merge: Callable[[list[Any]], list[Any]]) -> list[Any]:
    """Join stream chunks by concatenation, then let ``merge`` (MyST-NB's) do the rest.

    MyST-NB strips each chunk and appends a newline, so a line that ``print`` flushed in
    two pieces (the text, then the newline) would gain a blank line, depending on timing.
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


def describe_failure(page: str, source: str, error: str, traceback: str) -> str:
    """Name the page, the failing cell and its exception, quote the cell, say what to do.

    ``error`` and ``traceback`` come from MyST-NB's execution record: nbclient's exception
    name (``CellExecutionError`` or ``CellTimeoutError``) and its text, which quotes the
    cell between two rules and ends with the kernel's own last line.
    """
    text = _ANSI.sub("", traceback)
    # the exception's message: what follows the last frame of Python's traceback
    frames = text.rpartition("Traceback (most recent call last):\n")[2].splitlines()
    first = next((i for i, line in enumerate(frames) if not line.startswith(" ")), 0)
    message = "\n".join(frames[first:]).partition(": ")[2]
    parts = _RULE.split(message)
    cell = parts[1].strip("\n") if len(parts) >= 3 else ""
    code = [c for c in read_page(source).cells if c.kind == "code"] if cell else []
    found = [(n, c.line) for n, c in enumerate(code, 1) if c.source.strip() == cell.strip()]
    where = "code cell {} (line {})".format(*found[0]) if found else "a code cell"
    quoted = "\n".join(f"    {line}" for line in cell.splitlines())
    timeout = _TIMEOUT.search(message)
    if error == "CellTimeoutError" and timeout:
        what = f"did not finish in {timeout[1]} seconds, and was stopped"
        advice = (
            "If it needs longer, give the page more time in its front matter\n"
            "(mystnb: execution_timeout: 600), or every page with nb_execution_timeout in conf.py."
        )
    else:
        # the kernel's traceback ends with its exception's own line ("NameError: ...")
        kernel = [line for line in parts[-1].splitlines() if line.strip()] if cell else []
        what = f"raised {kernel[-1] if kernel else error or 'no result'}"
        advice = "Fix the cell, or tag it raises-exception if the book means to show this error."
    return f"{page}: {where} {what}\n{quoted}\n{advice}"


def _report_failed_execution(app: Sphinx, doctree: nodes.document) -> None:
    docname = app.env.current_document.docname
    record = execution_record(app.env, docname)
    if not record or record.get("succeeded", True):
        return
    page = Path(app.env.doc2path(docname))
    source = page.read_text(encoding="utf-8")
    logger.error(
        describe_failure(str(page), source, record["error"] or "", record["traceback"] or ""),
        type="tensorbook",
        subtype="cell",
    )
    # The next build must execute the page again, not find it unchanged and pass: Sphinx
    # reads again a page that depends on a file that is missing, and this one never exists.
    app.env.note_dependency(Path(app.doctreedir, "failed-pages", docname))


def setup(app: Sphinx) -> dict[str, object]:
    """Replace MyST-NB's stream merging; report failed executions."""
    original = patch_stream_coalescing(lambda outputs: join_streams(outputs, original))
    hooks.connect(app, __name__)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
