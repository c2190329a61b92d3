"""The order of the adapters' work: every handler they connect to Sphinx, in one table.

Sphinx calls an event's handlers by priority, lowest first (500 when none is given), and
handlers of one priority in the order their extensions were loaded
(``settings.EXTENSIONS``). ``HOOKS`` lists them in the order Sphinx calls them, each
with why it runs there; each adapter's ``setup`` connects its own with :func:`connect`,
and no adapter calls ``app.connect`` itself (tests/conf/test_hooks.py checks both).
"""

from __future__ import annotations

import sys
from typing import NamedTuple

from sphinx.application import Sphinx

DEFAULT = 500  # Sphinx's priority for a handler that names none


class Hook(NamedTuple):
    """One handler: its event, its priority, ``adapter.function``, and why it is there."""

    event: str
    priority: int
    handler: str
    why: str


HOOKS = (
    Hook("config-inited", 900, "configuration._on_config_inited",
         "after the extensions' own (500): every value derived from -D language and the spec"),
    Hook("builder-inited", DEFAULT, "finish._forget_copied_stylesheet",
         "MyST-NB's stylesheet is copied afresh, then purged with the others"),
    Hook("builder-inited", 600, "execution._on_builder_inited",
         "after MyST-NB's (500), whose output folder for notebooks it replaces"),
    Hook("builder-inited", 900, "configuration._on_builder_inited",
         "after the themes and copybutton (500) append to templates_path and html_static_path"),
    Hook("env-get-outdated", DEFAULT, "ledger._outdated",
         "pages whose recordings changed are read again"),
    Hook("env-get-outdated", DEFAULT, "status._outdated",
         "the status page is read again at every build: it shows this build's execution"),
    Hook("env-before-read-docs", DEFAULT, "execution._on_before_read",
         "every page to read has its outputs cached by the execute stage"),
    Hook("source-read", DEFAULT, "execution._on_source_read",
         "the hidden cell that keys a page's cache on its device and imports"),
    Hook("doctree-read", 400, "ledger._show_recordings",
         "before Sphinx's image collector (500), which then copies the recorded figures"),
    Hook("doctree-read", DEFAULT, "folds._check_pairs",
         "every solution-start and deeper-start has its end"),
    Hook("doctree-resolved", 400, "provenance._note_device_line",
         "notes the device line in English, before editions translates it"),
    Hook("doctree-resolved", DEFAULT, "editions._translate_outputs",
         "the printed sentences an edition shows in its own words"),
    Hook("doctree-resolved", DEFAULT, "pictures._render_pictures",
         "each picture translated, and redrawn for the PDF"),
    Hook("doctree-resolved", DEFAULT, "status._fill_status",
         "the status page's tables, once every page was read"),
    Hook("html-page-context", DEFAULT, "editions._on_html_page_context",
         "the language switcher's links"),
    Hook("html-page-context", DEFAULT, "downloads._add_links",
         "the header's notebook and script links"),
    Hook("html-page-context", DEFAULT, "provenance._on_html_page_context",
         "the footer: version, commit, PDF, report link"),
    Hook("build-finished", 900, "finish._finish",
         "after MyST-NB copies its stylesheet (500): downloads, purged CSS, link check"),
)  # fmt: skip


def connect(app: Sphinx, module: str) -> None:
    """Connect the handlers ``HOOKS`` lists for the adapter ``module`` (its ``__name__``)."""
    adapter = module.rsplit(".", 1)[-1]
    for hook in HOOKS:
        name, function = hook.handler.split(".")
        if name == adapter:
            app.connect(hook.event, getattr(sys.modules[module], function), hook.priority)
