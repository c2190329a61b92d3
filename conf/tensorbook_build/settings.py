"""What the book is made of: its editions, paths, device and site, said once.

Adding an edition is one line in ``EDITIONS`` and its catalogs in
``docs/locales/<code>/LC_MESSAGES``; nothing else names a language.

Examples
--------
>>> SOURCE_LANGUAGE in LANGUAGES
True
>>> Edition("pt_BR", "Português").tag, Edition("pt_BR", "Português").og_locale
('pt-BR', 'pt_BR')
>>> LAYOUT.catalogs("pt_BR").relative_to(LAYOUT.root).as_posix()
'docs/locales/pt_BR/LC_MESSAGES'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

PROJECT = "tensorbook"


@dataclass(frozen=True)
class Edition:
    """One edition of the book."""

    code: str  # gettext's (en, pt_BR): the edition's folder in the site and docs/locales
    name: str  # the language's name in that language, as the switcher shows it
    locale: str = ""  # Open Graph's language_TERRITORY, where the code is not one
    word_splitter: str = ""  # "jieba" where jieba splits the search index's words
    cjk: bool = False  # whether the PDF sets the punctuation full width

    @property
    def tag(self) -> str:
        """The BCP 47 tag (``pt-BR``), for HTML's ``lang`` and ``hreflang``."""
        return self.code.replace("_", "-")

    @property
    def og_locale(self) -> str:
        """What ``og:locale`` says for this edition."""
        return self.locale or self.code


EDITIONS = (
    Edition("en", "English", locale="en_US"),
    Edition("zh_CN", "简体中文", word_splitter="jieba", cjk=True),
)
"""The book's editions, the source first; every other one is built from the catalogs."""

SOURCE_LANGUAGE = EDITIONS[0].code
LANGUAGES = {edition.code: edition.name for edition in EDITIONS}


def edition(code: str) -> Edition:
    """The edition of the language ``code``; ``KeyError`` for one the book has not."""
    return {candidate.code: candidate for candidate in EDITIONS}[code]


class Layout:
    """Where things are in a checkout (or in a copy of one), below its ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.docs = root / "docs"  # the pages
        self.conf = root / "conf"  # Sphinx's configuration folder (sphinx-build -c conf)
        self.src = root / "src"  # the folder of the tensorbook package the pages run
        self.locales = self.docs / "locales"  # <language>/LC_MESSAGES/<page>.po
        self.site = root / "build" / "html"  # nox -s docs's site; its working folders beside

    def catalogs(self, language: str) -> Path:
        """The folder of one language's catalogs."""
        return self.locales / language / "LC_MESSAGES"

    def search_words(self, language: str) -> Path:
        """Words the search index must keep whole in one language, if it needs any."""
        return self.conf / "search_words" / f"{language}.txt"


LAYOUT = Layout(Path(__file__).resolve().parents[2])

JOBS = 2
"""Pages executed at once, and read at once by each edition: the 2-core machines the book
is built on run one kernel per core, and the kernels are most of a cold build's time."""

EXECUTION_TIMEOUT = 120
"""Seconds a cell may run (a page's front matter may say ``mystnb: execution_timeout:``).
The slowest cell takes under a second on two CPU cores: two minutes only catches a
kernel that hangs, leaving a loaded CI machine room to be slow."""

NOT_PAGES = ("_build", "jupyter_execute", ".jupyter_cache", "**.ipynb_checkpoints", "locales")
"""What Sphinx does not read under ``docs/`` (``exclude_patterns``), nor the stage execute."""

KERNEL_THREADS = 1
"""Intra-op threads per kernel: pages run side by side, and one thread each also keeps
float sums, and so printed digits, independent of how many cores the machine has."""

EXTENSIONS = (
    "myst_nb",
    "tensorbook_build.extensions.configuration",  # the values derived per edition
    "tensorbook_build.extensions.execution",  # device, kernels' environment, cache keys
    "tensorbook_build.extensions.outputs",  # exact printed text; failures name the cell
    "tensorbook_build.extensions.pysource",  # a program's real source, without docstrings
    "tensorbook_build.extensions.mathml",  # math rendered at build time, no script
    "tensorbook_build.extensions.editions",  # untranslated messages, switcher, outputs' words
    "tensorbook_build.extensions.pictures",  # tensorbook.draw's SVG inline, translated
    "tensorbook_build.extensions.downloads",  # each chapter as a notebook and a script
    "sphinx_copybutton",
    "sphinxext.opengraph",  # Open Graph metadata and the page's description
    "tensorbook_build.extensions.provenance",  # the footer: version, commit, report link
    "tensorbook_build.extensions.latex",  # each page a chapter of the PDF
    "tensorbook_build.extensions.folds",  # solutions and deeper sections, folded, executed
    "tensorbook_build.extensions.ledger",  # other devices' recorded outputs
    "tensorbook_build.extensions.status",  # the status page: executions, recordings, torch runs
    # once the pages are written: downloads, purged CSS and fonts, inline CSS, link check
    "tensorbook_build.extensions.finish",
)
"""Sphinx's extensions, the build's adapters (tensorbook_build.extensions) among them, in
the order of the pipeline: ``conf.py`` sets them, and the driver imports them before it
forks the editions."""

THEME = "sphinx_book_theme"

LOCAL_BASE_URL = "http://localhost:8000/"  # where python -m http.server serves build/html
NOT_SITE_PAGES = {"search.html", "genindex.html"}  # no content a search engine should list
STATIC = "_static"
WHEELS = "wheels"  # the folder at the site's root that holds the reader's wheel


def site_base_url(environ: Mapping[str, str] = os.environ) -> str:
    """The address the site is published at, ending in ``/``.

    ``TENSORBOOK_BASE_URL``, else ``READTHEDOCS_CANONICAL_URL``, else a local server's.

    Examples
    --------
    >>> site_base_url({"TENSORBOOK_BASE_URL": "https://example.org/tensorbook"})
    'https://example.org/tensorbook/'
    >>> site_base_url({})
    'http://localhost:8000/'
    >>> site_base_url({"TENSORBOOK_BASE_URL": "example.org/book"})
    Traceback (most recent call last):
    ...
    ValueError: TENSORBOOK_BASE_URL must be an absolute http(s) address, not 'example.org/book'
    """
    for name in ("TENSORBOOK_BASE_URL", "READTHEDOCS_CANONICAL_URL"):
        value = environ.get(name, "").strip()
        if value:
            parts = urlsplit(value)
            if parts.scheme not in {"http", "https"} or not parts.netloc:
                msg = f"{name} must be an absolute http(s) address, not {value!r}"
                raise ValueError(msg)
            return value.rstrip("/") + "/"
    return LOCAL_BASE_URL


def relative_root(pagename: str) -> str:
    """The relative path from a page up to its edition's folder (``""`` or ``"../"``...)."""
    return "../" * pagename.count("/")


def pdf_name(language: str) -> str:
    """The name of an edition's PDF in its folder."""
    return f"{PROJECT}-{language}.pdf"


def wheel_name(version: str) -> str:
    """The reader's wheel's file name, which the pages link before it is built."""
    return f"{PROJECT}-{version}-py3-none-any.whl"


def page_files(folder: Path) -> list[Path]:
    """Every page below ``folder``, sorted: each HTML file not among the assets (``_static``)."""
    return sorted(p for p in folder.rglob("*.html") if STATIC not in p.relative_to(folder).parts)


def site_pages(folder: Path) -> list[str]:
    """Every page below ``folder``, as sorted paths relative to it."""
    return sorted(p.relative_to(folder).as_posix() for p in page_files(folder))
