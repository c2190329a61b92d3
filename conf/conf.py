"""How the book is built: ``sphinx-build -c conf docs <out>`` (``nox -s docs`` does it)."""

import os
import sys
from pathlib import Path

CONF_DIR = Path(__file__).resolve().parent
ROOT = CONF_DIR.parent
sys.path.insert(0, str(CONF_DIR / "_ext"))
sys.path.insert(0, str(CONF_DIR))
from site_files import site_base_url

# -- The book -----------------------------------------------------------------------------
project = "tensorbook"
author = "the tensorbook authors"
copyright = "2026, the tensorbook authors"
release = "0.1"
root_doc = "index"

# -- Editions -----------------------------------------------------------------------------
# The one list of the book's languages: English is the source, every other edition is
# built from it through the catalogs in docs/locales. The noxfile, the tests and the
# language switcher all read this dict; conf/_ext/editions.py refuses any other language.
LANGUAGES = {"en": "English", "zh_CN": "简体中文"}
SOURCE_LANGUAGE = "en"
language = SOURCE_LANGUAGE  # sphinx-build -D language=zh_CN builds the Chinese edition
locale_dirs = ["locales/"]  # relative to docs/, where the catalogs live with the content
gettext_compact = False  # one catalog per page
gettext_uuid = False
gettext_location = True  # translators see where each message comes from
tensorbook_languages = LANGUAGES
tensorbook_source_language = SOURCE_LANGUAGE

extensions = [
    "myst_nb",
    "execution_context",  # conf/_ext: keys cached outputs on device, torch and src
    "notebook_output",  # conf/_ext: deterministic printed text; failures name the cell
    "mathml_math",  # conf/_ext: math rendered at build time, no script, no CDN
    "pysource",  # conf/_ext: a program's real source, without its docstring
    "editions",  # conf/_ext: languages, catalog checks, the language switcher
    "sphinx_copybutton",
    "light_assets",  # conf/_ext: only the CSS rules and icon glyphs the site uses
    "site_meta",  # conf/_ext: canonical address, description, social card
    "downloads",  # conf/_ext: each chapter as a notebook and a script
    "link_check",  # conf/_ext: a link to a missing page or anchor fails the build
    "glue_gettext",  # conf/_ext: glued figures in prose need no outputs for the catalogs
    "solutions",  # conf/_ext: exercise solutions folded in <details>, executed and checked
]

exclude_patterns = [
    "_build",
    "jupyter_execute",
    ".jupyter_cache",
    "**.ipynb_checkpoints",
    "locales",
]
templates_path = [str(CONF_DIR / "_templates")]
html_static_path = [str(CONF_DIR / "_static")]
html_css_files = ["tensorbook.css"]

# -- Strictness (with -W -n from the command line) ----------------------------------------
nitpicky = True
suppress_warnings = []

# -- Execution ----------------------------------------------------------------------------
# The build's device: "cpu" unless TENSORBOOK_DEVICE says otherwise (``nox -s docs --
# --device cuda`` sets it). conf/_ext/execution_context.py resolves it, fails at once if
# it cannot be had, and passes the resolved name to the kernels.
tensorbook_device = os.environ.get("TENSORBOOK_DEVICE", "cpu")
tensorbook_src_dir = str(ROOT / "src")

nb_execution_mode = "cache"
nb_execution_raise_on_error = True
nb_execution_show_tb = True
# Per cell, in seconds. The slowest cell trains a network for 500 steps, well under a
# second on two CPU cores; two minutes only catches a kernel that hangs, while leaving
# a loaded CI machine room to be slow.
nb_execution_timeout = 120
# A page prints to stderr only when something unplanned happened (a deprecation, a
# fallback); under -W that fails the build instead of publishing the noise.
nb_output_stderr = "warn"
nb_merge_streams = True
nb_kernel_rgx_aliases = {"python3.*": "python3"}

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# -- HTML ---------------------------------------------------------------------------------
html_theme = "sphinx_book_theme"
html_title = "tensorbook"
html_favicon = "_static/favicon.svg"
# Absolute addresses for the canonical link, the sitemap and the social card: the
# workflows set TENSORBOOK_BASE_URL (Read the Docs gives its own); a local build
# says where python -m http.server serves it.
tensorbook_base_url = site_base_url()
html_math_renderer = "mathml"
html_last_updated_fmt = None
html_copy_source = False
html_show_sourcelink = False
html_theme_options = {
    "article_header_end": [
        "downloads.html",
        "language-switcher.html",
        "article-header-buttons.html",
    ],
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
}
# Follow the reader's system until they pick a mode; without it the theme's first
# script reads an empty mode and logs an error on every page.
html_context = {"default_mode": "auto"}

# The copy button copies code, never what it printed: not on outputs, and in a
# doctest-style block only the lines after a prompt, without the prompt.
copybutton_selector = "div:not(.output) > div.highlight pre"
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True
copybutton_exclude = ".linenos, .gp, .go"

# Chinese has no spaces between words: the search index splits it with jieba, which
# also has to know the book's own terms (张量, 自动求导, ...) to keep them whole.
html_search_options = {"dict": str(CONF_DIR / "search_words_zh_CN.txt")}
