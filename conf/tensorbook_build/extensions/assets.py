"""Sphinx adapter for :mod:`tensorbook_build.assets`.

Every HTML build ends with its stylesheets purged and its icon fonts cut down to
what the site uses.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from tensorbook_build.assets import lighten

logger = logging.getLogger(__name__)


def _forget_copied_assets(app: Sphinx) -> None:
    """Let MyST-NB copy its stylesheet afresh.

    MyST-NB copies its stylesheet only where none is: let it copy a fresh one, since
    the one already there was purged against the previous build's pages.
    """
    for sheet in Path(app.outdir, "_static").glob("mystnb.*.css"):
        sheet.unlink()


def _lighten_after_build(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    sizes = lighten(Path(app.outdir), cache=Path(app.doctreedir) / "light-assets")
    before = sum(b for b, _ in sizes.values())
    after = sum(a for _, a in sizes.values())
    logger.info("light assets: %d files, %d KiB -> %d KiB", len(sizes), before >> 10, after >> 10)


def setup(app: Sphinx) -> dict[str, object]:
    """Register the clean-up before the build and the purge after it."""
    app.connect("builder-inited", _forget_copied_assets)
    # after MyST-NB copies its stylesheet (priority 500)
    app.connect("build-finished", _lighten_after_build, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
