"""Exact printed text: stream chunks joined as the cell printed them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sphinx.application import Sphinx

from tensorbook_build.upstream import patch_stream_coalescing


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


def setup(app: Sphinx) -> dict[str, object]:
    """Replace MyST-NB's stream merging."""
    original = patch_stream_coalescing(lambda outputs: join_streams(outputs, original))
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
