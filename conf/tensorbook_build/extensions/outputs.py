"""Sphinx adapter for :mod:`tensorbook_build.outputs`, and how the build stops.

Stream text is joined exactly before MyST-NB merges it. A page whose execution failed
gets, beside MyST-NB's warning (which names the file holding the traceback), one error
that names the page, the cell, its line and the exception, and says what to do.
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

from tensorbook_build.outputs import describe_failure, join_streams
from tensorbook_build.upstream import execution_record, patch_stream_coalescing

logger = logging.getLogger(__name__)


def stop(message: str) -> NoReturn:
    """End the build now, with ``message`` as its one error.

    Sphinx reports any exception an extension raises with its crash report (versions,
    extensions, traceback: sphinx-doc/sphinx#14543); it lets ``SystemExit`` through,
    so the build ends with the message alone, as Sphinx logs an error.
    """
    logger.error(message)
    raise SystemExit(2)


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


def setup(app: Sphinx) -> dict[str, object]:
    """Replace MyST-NB's stream merging; report failed executions."""
    original = patch_stream_coalescing(lambda outputs: join_streams(outputs, original))
    app.connect("doctree-read", _report_failed_execution)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
