"""Sphinx adapter for :mod:`tensorbook_build.paint`.

Every HTML build ends with each page holding its stylesheets, its scripts deferred
and the search's scripts on the search page only, once the stylesheets are purged.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from tensorbook_build.paint import paint_at_once

logger = logging.getLogger(__name__)


def _paint_after_build(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    changed = paint_at_once(Path(app.outdir))
    logger.info("pages that paint at once: %d rewritten", changed)


def setup(app: Sphinx) -> dict[str, object]:
    """Rewrite the pages after the stylesheets are purged (900), before the link check (950)."""
    app.connect("build-finished", _paint_after_build, priority=920)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
