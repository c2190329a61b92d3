"""The book's editions: English is the source; each other language is built from it.

* A language that ``conf.py`` does not list stops the build, naming those it does.
* Before Sphinx compiles the catalogs of a translated edition, each one is read
  strictly, and a broken one stops the build naming the file and the line.
  (Sphinx reads them leniently: Babel prints a problem to stdout and drops the
  message, so a typo would quietly turn a sentence back into English.)
* In a translated edition, each message the catalogs do not translate (missing,
  empty or fuzzy) is a warning at its place in the English page, so that a
  strict build fails instead of mixing English into the translation.
* Every page gets the links of the language switcher, to the same page in each
  other edition, and ``<link rel="alternate" hreflang>`` tags for the same.
"""

from __future__ import annotations

import logging as std_logging
from pathlib import Path

from docutils import nodes
from sphinx.errors import ConfigError
from sphinx.util import logging

logger = logging.getLogger(__name__)


def catalog_dir(srcdir: Path, locale_dir: str, language: str) -> Path:
    """Where the catalogs (``.po`` files) of one language live."""
    return srcdir / locale_dir / language / "LC_MESSAGES"


def catalog_errors(po_path: Path) -> list[str]:
    """``file:line: problem`` for each problem that makes a catalog unreadable, or []."""
    from babel.messages.pofile import PoFileError, read_po

    try:
        with po_path.open("rb") as file:
            read_po(file, abort_invalid=True)
    except PoFileError as error:
        return [f"{po_path}:{error.lineno}: {error}: {error.line.strip()!r}"]
    except (UnicodeDecodeError, ValueError) as error:
        return [f"{po_path}: {error}"]
    return []


def edition_links(pagename: str, languages: dict[str, str], current: str) -> list[dict]:
    """The switcher's entries for one page: every edition, each linking to this page.

    Links are relative (``../zh_CN/tensors.html``), so the site works wherever it
    is served, the domain root or a sub-path.

    >>> [e["href"] for e in edition_links("tensors", {"en": "English", "zh_CN": "中文"}, "en")]
    ['../en/tensors.html', '../zh_CN/tensors.html']
    >>> edition_links("a/b", {"en": "English"}, "en")[0]["href"]
    '../../en/a/b.html'
    """
    up = "../" * (pagename.count("/") + 1)
    return [
        {
            "code": code,
            "name": name,
            "tag": code.replace("_", "-"),  # BCP 47, as lang and hreflang want it
            "href": f"{up}{code}/{pagename}.html",
            "current": code == current,
        }
        for code, name in languages.items()
    ]


def _on_config_inited(app, config) -> None:
    languages = config.tensorbook_languages
    if config.language not in languages:
        known = ", ".join(languages)
        raise ConfigError(
            f"language {config.language!r} is not one of the book's languages ({known}); "
            "they are listed in LANGUAGES in conf/conf.py"
        )
    if config.language == config.tensorbook_source_language:
        return
    srcdir = Path(app.srcdir)
    directories = [catalog_dir(srcdir, d, config.language) for d in config.locale_dirs]
    catalogs = sorted(p for d in directories if d.is_dir() for p in d.glob("*.po"))
    if not catalogs:
        where = ", ".join(str(d) for d in directories)
        raise ConfigError(
            f"the {config.language} edition has no catalogs (looked in {where}); "
            "run `nox -s translate` to make them from the English pages"
        )
    problems = [problem for path in catalogs for problem in catalog_errors(path)]
    if problems:
        raise ConfigError("broken catalog, fix it and build again:\n" + "\n".join(problems))
    if config.language.startswith("zh"):
        _prepare_chinese_search()


def _prepare_chinese_search() -> None:
    try:
        import jieba
    except ImportError:
        raise ConfigError(
            "the Chinese search index needs jieba to split words; install the docs "
            "dependency group (pip install jieba)"
        ) from None
    # jieba logs its dictionary loading to stderr at DEBUG level
    jieba.setLogLevel(std_logging.WARNING)


def _on_doctree_read(app, doctree: nodes.document) -> None:
    config = app.config
    if config.language == config.tensorbook_source_language:
        return
    # Sphinx's Locale transform marks each translatable node; fuzzy messages are left
    # out of the compiled catalog, so they count as untranslated here too.
    for node in doctree.findall(nodes.Element):
        if node.get("translated") is False:
            text = " ".join(node.astext().split())
            logger.warning(
                "not translated into %s: %r (run `nox -s translate`, then translate it "
                "in docs/locales/%s/LC_MESSAGES/%s.po)",
                config.language,
                text if len(text) <= 80 else text[:77] + "...",
                config.language,
                app.env.docname,
                location=node,
                type="tensorbook",
                subtype="untranslated",
            )


def _on_html_page_context(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    editions = edition_links(pagename, app.config.tensorbook_languages, app.config.language)
    context["tensorbook_editions"] = editions
    alternates = "".join(
        f'<link rel="alternate" hreflang="{e["tag"]}" href="{e["href"]}" />\n'
        for e in editions
        if not e["current"]
    )
    context["metatags"] = context.get("metatags", "") + alternates


def setup(app):
    app.add_config_value("tensorbook_languages", {"en": "English"}, "env", types=[dict])
    app.add_config_value("tensorbook_source_language", "en", "env", types=[str])
    app.connect("config-inited", _on_config_inited)
    app.connect("doctree-read", _on_doctree_read)
    app.connect("html-page-context", _on_html_page_context)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
