"""How each edition renders: ``sphinx-build -c conf docs <out>``, run by ``python -m
tensorbook_build`` (what ``nox -s docs`` runs) once the pages have executed.

This file sets what every edition shares. The command line chooses the edition
(``-D language``) and what its pages executed with (``-D tensorbook_spec``, which the
driver resolves), which Sphinx applies after this file has run: every value that
depends on them is derived in one place, ``tensorbook_build.extensions.configuration.derived``.
``tensorbook_repository``, unset here, is ``$TENSORBOOK_REPOSITORY``.
"""

import importlib.metadata
from pathlib import Path

from tensorbook_build.settings import (
    EXTENSIONS,
    NOT_PAGES,
    PROJECT,
    SOURCE_LANGUAGE,
    THEME,
    site_base_url,
)

# -- The book -----------------------------------------------------------------------------
project = PROJECT
author = "the tensorbook authors"
copyright = "2026, the tensorbook authors"
release = importlib.metadata.version("tensorbook")  # the one version, in src/tensorbook

# -- Editions -----------------------------------------------------------------------------
# `-D language=xx` builds a translation (the languages: tensorbook_build.settings)
language = SOURCE_LANGUAGE
locale_dirs = ["locales/"]  # relative to docs/, where the catalogs live with the content
gettext_compact = False  # one catalog per page
gettext_location = True  # translators see where each message comes from

extensions = list(EXTENSIONS)  # in the pipeline's order: tensorbook_build.settings says why

exclude_patterns = list(NOT_PAGES)
# absolute: the gettext builder would read a relative path from docs/, not from here
templates_path = [str(Path(__file__).resolve().parent / "_templates")]
html_static_path = ["_static"]
# The values below that Sphinx or an extension would set once the build has begun are
# given here, so that each build begins with the configuration the last one ended with
# (tensorbook_build.extensions.configuration says why, and settles two lists they append to).
# Sphinx's HTML builder gives a stylesheet of conf.py priority 800, after the extensions'
html_css_files = [("tensorbook.css", {"priority": 800})]

# -- Strictness (with -W -n from the command line) ----------------------------------------
nitpicky = True

# -- Execution: done before Sphinx starts (tensorbook_build.stage); read from the cache ----
nb_execution_mode = "cache"
# A page prints to stderr only when something unplanned happened (a deprecation, a
# fallback); under -W that fails the build instead of publishing the noise.
nb_output_stderr = "warn"
nb_merge_streams = True

myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
# The math is MathML (html_math_renderer, below): no MathJax to configure
myst_update_mathjax = False

# -- HTML ---------------------------------------------------------------------------------
html_theme = THEME
html_title = "tensorbook"
html_favicon = "_static/favicon.svg"
# for the canonical links, the sitemap and the social card
tensorbook_base_url = site_base_url()
# each edition's address and og:locale: tensorbook_build.extensions.configuration
ogp_image = "_static/social-card.png"
ogp_image_alt = "tensorbook: PyTorch from the ground up"
ogp_type = "article"
ogp_social_cards = {"enable": False}  # one card, drawn by tensorbook_build.tools.social_card
ogp_enable_meta_description = True
ogp_custom_meta_tags = (
    '<meta name="twitter:card" content="summary_large_image" />',
    '<meta property="og:image:width" content="1200" />',
    '<meta property="og:image:height" content="630" />',
)
html_math_renderer = "mathml"
html_copy_source = False
html_show_sourcelink = False
# the theme's own choices, which it makes where conf.py makes none (see html_css_files)
html_permalinks_icon = "#"
html_sourcelink_suffix = ""
html_theme_options = {
    "article_header_end": [
        "downloads.html",
        "language-switcher.html",
        "article-header-buttons.html",
    ],
    # the theme's author and copyright, then what the page was built from
    "footer_content_items": ["author.html", "copyright.html", "provenance.html"],
    # what the theme fills in where none are given (see html_css_files)
    "icon_links": [],
    "logo": {},
    # pydata-sphinx-theme 0.20 (with sphinx-book-theme 1.4) adds a search field in a bar
    # of its own across the top; the sidebar's field and Ctrl+K already open the search
    "navbar_persistent": [],
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

# -- The PDF of each edition (nox -s pdf; tensorbook_build.pdf) ------------------------------
# XeLaTeX, for Unicode text and the Chinese edition's fonts; every font from Debian's
# packages (FreeFont for Latin text, Noto CJK for Chinese), so no glyph goes missing.
latex_engine = "xelatex"
latex_documents = [("index", "tensorbook.tex", "tensorbook", author, "manual")]
latex_show_urls = "footnote"
latex_elements = {
    "papersize": "a4paper",
    "pointsize": "10pt",
    # Chinese text (the Chinese edition, and the glossary's terms in both) in Noto CJK
    "fontpkg": r"""
\setmainfont{FreeSerif}
\setsansfont{FreeSans}
\setmonofont[Scale=0.9]{FreeMono}
\usepackage{xeCJK}
\setCJKmainfont{Noto Serif CJK SC}
\setCJKsansfont{Noto Sans CJK SC}
\setCJKmonofont[Scale=0.9]{Noto Sans Mono CJK SC}
""",
    # long code lines wrap, even inside a word, rather than run off the page
    "sphinxsetup": "verbatimwrapslines=true, verbatimforcewraps=true, verbatimmaxunderfull=0",
    "printindex": "",  # the book has no index; the web edition's search serves instead
}
latex_domain_indices = False
