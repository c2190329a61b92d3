"""Sphinx adapter: the edition's effective configuration, derived in one place.

Sphinx applies the command line's edition and spec after ``conf.py`` has run, so the
values that depend on them are derived here, at ``config-inited``, by :func:`derived`:
it refuses a language the settings do not list, a broken catalog or a missing spec
with one error (:func:`stop`), not Sphinx's crash report.

A build should also end with the configuration it began with. Sphinx keeps the
configuration a build ended with (in its pickled environment) and compares the next
build's with it once the ``config-inited`` handlers have run; a value that an extension
changes later, as the builder starts, differs there on every build, and Sphinx says "The
configuration has changed" after any edit. ``conf.py`` therefore gives the values the
extensions would set (the theme's permalink icon, source-link suffix, icon links and
logo, the priority Sphinx gives its stylesheet), and two lists are settled here:

- the themes add their components' folders to ``templates_path`` as the HTML builder
  loads them, and the builder makes its template loader from the list then. Once it
  has, the list is given back the folders it began with: the loader keeps the themes'
  (and the catalogs' extraction, which reads every template the list names, never
  sees them, in a build that loads no theme);
- sphinx-copybutton adds its static folder to ``html_static_path`` once the builder has
  started, and the list is read when the pages are written. Its folder is added before
  Sphinx compares, and the second copy removed once copybutton has added it.

``tests/book/test_book.py`` rebuilds after a prose edit and checks that Sphinx reports no
change.
"""

from __future__ import annotations

import logging as std_logging
import os
from pathlib import Path
from typing import Any, NoReturn

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.locale import get_translation
from sphinx.util import logging

from tensorbook_build.catalogs import catalog_errors, catalog_folders
from tensorbook_build.extensions import hooks
from tensorbook_build.provenance import REPOSITORY_VARIABLE, SOURCES, source_commit
from tensorbook_build.settings import LANGUAGES, LAYOUT, SOURCE_LANGUAGE, edition, pdf_name
from tensorbook_build.spec import BuildSpec
from tensorbook_build.upstream import chinese_search

logger = logging.getLogger(__name__)

# outside the CJK editions, quotation marks, dashes and ellipses stay in the Latin font,
# where xeCJK, loaded by every edition, would set them full width
LATIN_PUNCTUATION = r"""
\xeCJKDeclareCharClass{Default}{"2013, "2014, "2018, "2019, "201C, "201D, "2026}
"""


def stop(message: str) -> NoReturn:
    """End the build now, with ``message`` as its one error.

    Sphinx lets ``SystemExit`` through, where any other exception gets its crash report
    (sphinx-doc/sphinx#14543, fixed by the open sphinx-doc/sphinx#14606).
    """
    logger.error(message)
    raise SystemExit(2)


def copybutton_static() -> str:
    """The folder sphinx-copybutton adds to ``html_static_path``, spelled as it does."""
    import sphinx_copybutton  # type: ignore[import-untyped]  # loaded already: an extension

    return str(Path(sphinx_copybutton.__file__).parent.joinpath("_static").absolute())


def _spec(config: Config) -> BuildSpec:
    """The driver's spec, as given (the driver alone resolves the device)."""
    if not config.tensorbook_spec:
        stop(
            "no -D tensorbook_spec: build the book with python -m tensorbook_build "
            "(nox -s docs), which executes the pages, then runs Sphinx with it"
        )
    try:
        return BuildSpec.from_json(config.tensorbook_spec)
    except ValueError as error:
        stop(str(error))


def _check_catalogs(app: Sphinx, language: str) -> None:
    """Stop a translated edition whose catalogs are missing or broken."""
    folders = catalog_folders(app.srcdir, app.config.locale_dirs, language)
    catalogs = sorted(p for d in folders if d.is_dir() for p in d.glob("*.po"))
    if not catalogs:
        where = ", ".join(str(d) for d in folders)
        stop(
            f"the {language} edition has no catalogs (looked in {where}); "
            "run `nox -s translate` to make them from the English pages"
        )
    problems = [problem for path in catalogs for problem in catalog_errors(path)]
    if problems:
        stop("broken catalog, fix it and build again:\n" + "\n".join(problems))


def _latex_preamble(language: str) -> str:
    """What the edition's PDF adds to the preamble: its words, and its punctuation."""
    added = ""
    if language != SOURCE_LANGUAGE:  # words babel may not know (Chinese)
        translate = get_translation("sphinx")
        added += (  # once the document begins, after babel has set its own
            f"\\AtBeginDocument{{\\renewcommand{{\\contentsname}}{{{translate('Contents')}}}"
            f"\\renewcommand{{\\chaptername}}{{{translate('Chapter')}}}}}\n"
        )
    return added if edition(language).cjk else added + LATIN_PUNCTUATION


def derived(app: Sphinx, config: Config) -> dict[str, Any]:
    """Every value this edition derives from ``conf.py``'s, its language and its spec."""
    language = config.language
    values: dict[str, Any] = {
        "tensorbook_spec": _spec(config).to_json(),
        # What the footer shows of the build, given to the templates: a change of it (a
        # new commit, a PDF made since) rewrites every page, re-reading none.
        "html_context": {
            **config.html_context,
            "tensorbook_commit": source_commit(Path(app.srcdir).parent, SOURCES),
            "tensorbook_has_pdf": Path(app.outdir, pdf_name(language)).is_file(),
        },
        "html_static_path": [*config.html_static_path, copybutton_static()],
        "latex_elements": {
            **config.latex_elements,
            "preamble": config.latex_elements.get("preamble", "") + _latex_preamble(language),
        },
    }
    if config.tensorbook_base_url:  # the edition's address
        address = f"{config.tensorbook_base_url}{language}/"
        values["html_baseurl"] = values["ogp_site_url"] = address
        locale = f'<meta property="og:locale" content="{edition(language).og_locale}" />'
        values["ogp_custom_meta_tags"] = (*config.ogp_custom_meta_tags, locale)
    words = LAYOUT.search_words(language)
    if words.is_file():
        values["html_search_options"] = {**config.html_search_options, "dict": str(words)}
    return values


_BEGAN: list[str] = []  # templates_path as conf.py gave it


def _on_config_inited(app: Sphinx, config: Config) -> None:
    if config.language not in LANGUAGES:
        stop(
            f"language {config.language!r} is not one of the book's languages "
            f"({', '.join(LANGUAGES)}); they are listed in tensorbook_build.settings.EDITIONS"
        )
    if config.language != SOURCE_LANGUAGE:
        _check_catalogs(app, config.language)
    for name, value in derived(app, config).items():
        setattr(config, name, value)
    _BEGAN[:] = config.templates_path
    if edition(config.language).word_splitter == "jieba":
        app.add_search_language(_chinese_search())


def _chinese_search() -> type:
    """Sphinx's Chinese search (jieba splits the words), its page script naming its stemmer."""
    try:
        import jieba
    except ImportError:
        stop(
            "the Chinese search index needs jieba to split words; install the docs "
            "dependency group (pip install jieba)"
        )
    jieba.setLogLevel(std_logging.WARNING)  # it logs its dictionary's loading at DEBUG

    # a base class found when called (its module imports jieba), which mypy cannot follow
    class ChineseSearch(chinese_search()):  # type: ignore[misc]
        # Sphinx 9.0 names the page's stemmer after the language ("ChineseStemmer"),
        # but ships the English one that Chinese search uses for Latin words, so the
        # search page died with a ReferenceError (sphinx-doc/sphinx#14229).
        language_name = "English"

    return ChineseSearch


def _on_builder_inited(app: Sphinx) -> None:
    config = app.config
    config.templates_path = list(_BEGAN)
    kept: dict[Path, str] = {}  # the first path to each folder (a relative one is from conf/)
    for path in config.html_static_path:
        kept.setdefault(Path(app.confdir, path).resolve(), path)
    config.html_static_path = list(kept.values())


def setup(app: Sphinx) -> dict[str, object]:
    """Register the values the command line and the environment give; derive the rest."""
    app.add_config_value("tensorbook_spec", "", "env", types=[str])  # spec.BuildSpec, JSON
    app.add_config_value("tensorbook_base_url", "", "html", types=(str,))
    # the repository readers report problems to; TENSORBOOK_REPOSITORY when not set here
    repository = os.environ.get(REPOSITORY_VARIABLE, "").strip().rstrip("/")
    app.add_config_value("tensorbook_repository", repository, "html", types=[str])
    hooks.connect(app, __name__)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
