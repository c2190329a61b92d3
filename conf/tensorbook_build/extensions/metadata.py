"""Sphinx adapter: each edition's absolute address and locale, for the page metadata.

The canonical link (Sphinx's ``html_baseurl``) and sphinxext-opengraph's ``og:url``,
``og:image`` and description need the address each edition is published at: the
site's base URL (``tensorbook_base_url``, see
:func:`tensorbook_build.settings.site_base_url`) and the edition's folder. They are
metadata only, so the site still works wherever it is served. sphinxext-opengraph
writes no ``og:locale``; this adds the edition's own.
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.config import Config

from tensorbook_build.settings import edition


def _per_edition(app: Sphinx, config: Config) -> None:
    if not config.tensorbook_base_url:
        return
    address = f"{config.tensorbook_base_url}{config.language}/"
    config.html_baseurl = address
    config.ogp_site_url = address
    locale = f'<meta property="og:locale" content="{edition(config.language).og_locale}" />'
    config.ogp_custom_meta_tags = (*config.ogp_custom_meta_tags, locale)


def setup(app: Sphinx) -> dict[str, object]:
    """Register ``tensorbook_base_url`` and the per-edition addresses."""
    app.add_config_value("tensorbook_base_url", "", "html", types=(str,))
    app.connect("config-inited", _per_edition)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
