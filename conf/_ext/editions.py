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
import re
from pathlib import Path

from docutils import nodes
from site_files import language_tag  # conf/ is on the path (conf.py puts it there)
from sphinx.errors import ConfigError
from sphinx.transforms import SphinxTransform
from sphinx.util import logging
from sphinx.util.i18n import docname_to_domain
from sphinx.util.nodes import extract_messages

logger = logging.getLogger(__name__)


def catalog_dir(srcdir: Path, locale_dir: str, language: str) -> Path:
    """Where the catalogs (``.po`` files) of one language live."""
    return srcdir / locale_dir / language / "LC_MESSAGES"


# A line of a catalog is a comment, a keyword with a quoted string, or a quoted string
# continuing the one before; Babel accepts a string without its closing quote.
_PO_LINE = re.compile(
    r'^\s*(?:#.*|(?:msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?)\s+"(?:[^"\\]|\\.)*"'
    r'|"(?:[^"\\]|\\.)*")?\s*$'
)


def catalog_errors(po_path: Path) -> list[str]:
    """``file:line: problem`` for each problem that makes a catalog unreadable, or [].

    Lines are checked first, as msgfmt would (a string missing its closing quote, a
    msgstr with no msgid, a msgid with no msgstr), then Babel reads the whole file.
    """
    from babel.messages.pofile import PoFileError, read_po

    try:
        lines = po_path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as error:
        return [f"{po_path}: not UTF-8: {error}"]
    errors: list[str] = []
    previous = None  # the last keyword of the entry being read
    unanswered = 0  # the line of a msgid still waiting for its msgstr
    for number, line in enumerate([*lines, ""], 1):  # a blank line closes the last entry
        if not _PO_LINE.match(line):
            errors.append(
                f"{po_path}:{number}: not a comment, keyword or quoted string: {line.strip()!r}"
            )
            continue
        keyword = line.split(None, 1)[0].split("[")[0] if line.startswith("msg") else None
        if keyword is None and not line.lstrip().startswith('"'):  # blank or comment
            previous = None
        if keyword in {None, "msgctxt", "msgid"} and previous is None and unanswered:
            errors.append(f"{po_path}:{unanswered}: msgid without a msgstr after it")
            unanswered = 0
        if keyword == "msgstr" and previous not in {"msgid", "msgid_plural", "msgstr"}:
            errors.append(f"{po_path}:{number}: msgstr without a msgid before it")
        if keyword == "msgid":
            unanswered = number
        elif keyword == "msgstr":
            unanswered = 0
        previous = keyword or previous
    if errors:
        return errors
    try:
        with po_path.open("rb") as file:
            read_po(file, abort_invalid=True)
    except PoFileError as error:
        # Babel counts lines from 0
        return [f"{po_path}:{error.lineno + 1}: {error}: {error.line.strip()!r}"]
    return []


def translated_messages(po_path: Path) -> dict[str, str]:
    """A catalog's usable translations: message to translation, fuzzy and empty ones left out."""
    if not po_path.exists():
        return {}
    from babel.messages.pofile import read_po

    with po_path.open("rb") as file:
        catalog = read_po(file)
    return {m.id: m.string for m in catalog if m.id and m.string and not m.fuzzy}


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
            "tag": language_tag(code),  # BCP 47, as lang and hreflang want it
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
    import sphinx.search

    sphinx.search.languages["zh"] = _deferred_chinese_search()


def _deferred_chinese_search() -> type:
    """Sphinx's Chinese search, loading jieba's dictionary only once it splits text,
    with its page script naming the stemmer it ships.

    Sphinx makes its search language at every build, even one with nothing to
    write, and the Chinese one loads jieba's dictionary on the spot: a second or
    two added to every no-op rebuild.
    """
    from jieba import load_userdict
    from sphinx.search.zh import SearchChinese

    class DeferredChineseSearch(SearchChinese):
        # Sphinx 9.0 names the page's stemmer after the language ("ChineseStemmer"),
        # but ships the English one that Chinese search uses for Latin words, so the
        # search page died with a ReferenceError (sphinx-doc/sphinx#14229).
        language_name = "English"

        def __init__(self, options: dict[str, str]) -> None:
            self._words = options.get("dict", "")
            super().__init__({**options, "dict": ""})  # "" loads nothing

        def split(self, input: str) -> list[str]:
            if self._words:
                load_userdict(self._words)
                self._words = ""
            return super().split(input)

    return DeferredChineseSearch


def _on_before_read(app, env, docnames: list[str]) -> None:
    # Pages will be read, so the search index will be written: load jieba's dictionary
    # (a second or two) now, which beside the source edition overlaps with its execution,
    # rather than after the pages are read. A build with nothing to do never loads it.
    if docnames and app.config.language.startswith("zh"):
        import jieba

        jieba.initialize()


class UntranslatedMessages(SphinxTransform):
    """Warn, at its place in the page, about each message the catalogs leave untranslated.

    It runs just before Sphinx's Locale transform and makes the same decision:
    a message counts as translated when its catalog has a non-empty translation
    that is not fuzzy (Sphinx compiles catalogs without their fuzzy messages).
    """

    default_priority = 19  # Locale, which replaces the messages, is 20

    def apply(self, **kwargs) -> None:
        config = self.config
        if config.language == config.tensorbook_source_language:
            return
        domain = docname_to_domain(self.env.current_document.docname, config.gettext_compact)
        translations: dict[str, str] = {}
        for directory in reversed(config.locale_dirs):  # the first directory wins, as in Sphinx
            po_path = catalog_dir(Path(self.env.srcdir), directory, config.language)
            translations |= translated_messages(po_path / f"{domain}.po")
        front_matter = _front_matter(self.document)
        for node, message in extract_messages(self.document):
            if translations.get(message, "").strip():
                continue
            if front_matter is not None and _inside(node, front_matter):
                continue
            text = " ".join(message.split())
            logger.warning(
                "not translated into %s: %r (run `nox -s translate`, then translate it "
                "in docs/locales/%s/LC_MESSAGES/%s.po)",
                config.language,
                text if len(text) <= 80 else text[:77] + "...",
                config.language,
                domain,
                location=node,
                type="tensorbook",
                subtype="untranslated",
            )


def _front_matter(document: nodes.document) -> nodes.Element | None:
    """The page's metadata (``file_format: mystnb``...), if any: a field list opening the
    page, which docutils' DocInfo transform later takes out of the text, and which the
    gettext builder therefore never extracts. The test is DocInfo's own."""
    index = document.first_child_not_matching_class(nodes.PreBibliographic)
    if index is not None and isinstance(document[index], nodes.field_list):
        return document[index]
    return None


def _inside(node: nodes.Node, container: nodes.Node) -> bool:
    while node is not None:
        if node is container:
            return True
        node = node.parent
    return False


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
    app.add_transform(UntranslatedMessages)
    # before execution_context's handler, which may wait for the source edition
    app.connect("env-before-read-docs", _on_before_read, priority=400)
    app.connect("html-page-context", _on_html_page_context)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
