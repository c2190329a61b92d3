"""Sphinx adapter for :mod:`tensorbook_build.outputs`.

Sphinx adapter for :mod:`tensorbook_build.outputs`: exact stream text, and a failed
cell reported by page and cell, in serial and parallel builds alike (MyST-NB's own
message names only the page, and in a parallel build its traceback is lost).
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import SphinxError
from tensorbook_build.outputs import describe_failure, join_streams
from tensorbook_build.upstream import ExecutionError, MystNbParser, patch_stream_coalescing


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


def setup(app: Sphinx) -> dict[str, object]:
    """Patch MyST-NB's stream merging and replace its parser (after ``myst_nb``)."""
    original = patch_stream_coalescing(lambda outputs: join_streams(outputs, original))
    app.add_source_parser(CellReportingParser, override=True)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
