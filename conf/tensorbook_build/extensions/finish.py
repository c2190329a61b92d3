"""What an HTML build does once its pages are written, in this order.

The chapters' downloads, the light assets, the inline CSS, and the link check: a broken
link is a warning on its page, which fails the strict build.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from tensorbook_build.assets import purge
from tensorbook_build.extensions import hooks
from tensorbook_build.extensions.downloads import write_downloads
from tensorbook_build.inline_css import inline_stylesheets
from tensorbook_build.links import broken_links

logger = logging.getLogger(__name__)


def _forget_copied_stylesheet(app: Sphinx) -> None:
    # MyST-NB copies its stylesheet only where none is; the one there was purged
    # against the previous build's pages
    for sheet in Path(app.outdir, "_static").glob("mystnb.*.css"):
        sheet.unlink()


def _finish(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    site = Path(app.outdir)
    # the driver's build folder (<build>/doctrees/<language>) is the editions' to share;
    # a plain sphinx-build keeps its caches with its own pickled pages
    doctrees = Path(app.doctreedir)
    work = doctrees.parents[1] if doctrees.parent.name == "doctrees" else doctrees
    write_downloads(app)
    sizes = purge(site, cache=work / "light-assets")
    before, after = (sum(pair[i] for pair in sizes.values()) >> 10 for i in (0, 1))
    logger.info("light assets: %d files, %d KiB -> %d KiB", len(sizes), before, after)
    rewritten = inline_stylesheets(site, cache=work / "inline-css")
    logger.info("pages with their CSS inline: %d rewritten", rewritten)
    for link in broken_links(site):
        docname = link.page.removesuffix(".html")
        location = docname if docname in app.env.all_docs else None
        logger.warning(
            "broken link: %s", link, location=location, type="tensorbook", subtype="link"
        )


def setup(app: Sphinx) -> dict[str, object]:
    """Register the pipeline."""
    hooks.connect(app, __name__)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
