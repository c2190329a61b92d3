"""Sphinx adapter for :mod:`tensorbook_build.outputs`.

Exact stream text; a failed cell reported by page and cell, in serial and parallel
builds alike (MyST-NB's own message names only the page, and in a parallel build its
traceback is lost); and any failure of the build as a few lines that name a file with
the full report, in place of Sphinx's crash report.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TextIO

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import SphinxError

from tensorbook_build.outputs import describe_failure, join_streams, report_failure
from tensorbook_build.upstream import (
    ExecutionError,
    MystNbParser,
    failure_reporting,
    patch_failure_reporting,
    patch_stream_coalescing,
)

REPORT = "failure-report.txt"
"""Where, in an edition's doctree folder, a failed build leaves its full report."""


class NotebookCellError(SphinxError):
    """A code cell of a page raised an exception the page did not mark as expected."""

    category = "A cell of the book failed"


class CellReportingParser(MystNbParser):
    """MyST-NB's parser, with failures reported by page and cell."""

    def parse(self, inputstring: str, document: nodes.document) -> None:
        """Parse and execute the page; a failed cell raises :class:`NotebookCellError`."""
        try:
            super().parse(inputstring, document)
        except ExecutionError as error:
            page = document.settings.env.doc2path(document.settings.env.docname)
            raise NotebookCellError(
                describe_failure(str(page), inputstring, error.__cause__)
            ) from None


def _reporter(report: Path) -> Callable[..., None]:  # as Sphinx's handle_exception
    sphinx_report = failure_reporting()

    def handle_exception(
        exception: BaseException,
        /,
        *,
        stderr: TextIO = sys.stderr,
        use_pdb: bool = False,
        print_traceback: bool = False,
        message_log: Collection[str] = (),
        extensions: Collection[object] = (),
    ) -> None:
        if use_pdb or print_traceback:  # -P or -T: the maintainer asked for Sphinx's own
            sphinx_report(
                exception,
                stderr=stderr,
                use_pdb=use_pdb,
                print_traceback=print_traceback,
                message_log=message_log,
                extensions=extensions,
            )
            return
        report_failure(exception, report, stderr, message_log)

    return handle_exception


def setup(app: Sphinx) -> dict[str, object]:
    """Patch MyST-NB's stream merging and Sphinx's crash report; replace MyST-NB's parser.

    It replaces the parser, so it comes after ``myst_nb`` in ``extensions``.
    """
    original = patch_stream_coalescing(lambda outputs: join_streams(outputs, original))
    patch_failure_reporting(_reporter(Path(app.doctreedir) / REPORT))
    app.add_source_parser(CellReportingParser, override=True)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
