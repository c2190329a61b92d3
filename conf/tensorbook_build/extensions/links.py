"""Sphinx adapter for :mod:`tensorbook_build.links`.

A link to a missing page, file or anchor is a warning on its page, which fails the
strict build.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from tensorbook_build.links import broken_links

logger = logging.getLogger(__name__)


def _check_after_build(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for link in broken_links(Path(app.outdir)):
        docname = link.page.removesuffix(".html")
        location = docname if docname in app.env.all_docs else None
        logger.warning(
            "broken link: %s", link, location=location, type="tensorbook", subtype="link"
        )


def setup(app: Sphinx) -> dict[str, object]:
    """Check the links once everything is written."""
    # after the pages and every static file are written
    app.connect("build-finished", _check_after_build, priority=950)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
