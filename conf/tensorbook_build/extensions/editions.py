"""Sphinx adapter for the book's editions: the source, and each language built from it.

It warns, in a translated edition, of each message the catalogs leave in English; gives
each page the switcher's links and ``hreflang`` alternates; and shows the sentences the
programs print (:mod:`tensorbook.wording`) in the edition's words. The edition's
language, address and search words are checked and set by
:mod:`tensorbook_build.extensions.configuration`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import get_translation
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

from tensorbook.wording import DEVICE_LINE, ON_CPU, ON_GPU, THREAD, THREADS, fill, parse
from tensorbook_build.catalogs import catalog_folders, page_translations
from tensorbook_build.extensions import hooks
from tensorbook_build.settings import EDITIONS, SOURCE_LANGUAGE, relative_root
from tensorbook_build.upstream import docname_to_domain, extract_messages

logger = logging.getLogger(__name__)


def edition_links(pagename: str, current: str) -> list[dict[str, str | bool]]:
    """The switcher's entries for one page: every edition, each with a relative link to it."""
    up = relative_root(pagename) + "../"
    return [
        {
            "code": other.code,
            "name": other.name,
            "tag": other.tag,
            "href": f"{up}{other.code}/{pagename}.html",
            "current": other.code == current,
        }
        for other in EDITIONS
    ]


class UntranslatedMessages(SphinxTransform):
    """Warn, at its place, of each message without a translation (empty or fuzzy: none)."""

    default_priority = 19  # Locale, which replaces the messages, is 20

    def apply(self, **_kwargs: object) -> None:
        """Warn about each untranslated message of the page."""
        config = self.config
        if config.language == SOURCE_LANGUAGE:
            return
        domain = docname_to_domain(self.env.current_document.docname, config.gettext_compact)
        folders = catalog_folders(self.app.srcdir, config.locale_dirs, config.language)
        found = page_translations(folders, domain)
        # the page's opening field list (file_format: mystnb...) is never extracted;
        # PreBibliographic is a category (a mixin), as docutils' own DocInfo passes it
        first = self.document.first_child_not_matching_class(nodes.PreBibliographic)  # type: ignore[arg-type]
        front = self.document[first] if first is not None else None
        skipped = {id(n) for n in front.findall()} if isinstance(front, nodes.field_list) else set()
        for node, message in extract_messages(self.document):
            if found.get(message, "").strip() or id(node) in skipped:
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


def translate_program_line(line: str, translate: Callable[[str], str]) -> str:
    """A line a program printed, in the edition's words.

    A line that is one of :mod:`tensorbook.wording`'s sentences is filled in again from
    ``translate``'s templates; any other line is left as it is.

    Examples
    --------
    >>> words = {DEVICE_LINE: "运行于 {where} · torch {torch} · {threads} · Python {python}"
    ...                       " · NumPy {numpy}",
    ...          "{count} CPU thread": "{count} 个 CPU 线程"}
    >>> translate_program_line("Executed on CPU (x86_64) · torch 2.13.0 · 1 CPU thread"
    ...                        " · Python 3.11.7 · NumPy 2.3.5", lambda m: words.get(m, m))
    '运行于 CPU (x86_64) · torch 2.13.0 · 1 个 CPU 线程 · Python 3.11.7 · NumPy 2.3.5'
    >>> translate_program_line("tensor([1., 2.])", lambda m: m)
    'tensor([1., 2.])'
    """
    fields = parse(DEVICE_LINE, line)
    if fields is None:
        return line
    for field, templates in (("where", (ON_CPU, ON_GPU)), ("threads", (THREAD, THREADS))):
        for template in templates:
            parsed = parse(template, fields[field])
            if parsed is not None:
                fields[field] = fill(translate(template), **parsed)
    return fill(translate(DEVICE_LINE), **fields)


def _translate_outputs(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if app.config.language == SOURCE_LANGUAGE:
        return
    translate = get_translation("sphinx")
    for block in doctree.findall(nodes.literal_block):
        if "output" not in block["classes"]:
            continue
        lines = block.astext().split("\n")
        translated = [translate_program_line(line, translate) for line in lines]
        if translated != lines:
            text = "\n".join(translated)
            block.rawsource = text
            block.clear()
            block.append(nodes.Text(text))


def _on_html_page_context(
    app: Sphinx,
    pagename: str,
    templatename: str,
    context: dict[str, Any],
    doctree: nodes.document | None,
) -> None:
    editions = edition_links(pagename, app.config.language)
    context["tensorbook_editions"] = editions
    alternates = "".join(
        f'<link rel="alternate" hreflang="{e["tag"]}" href="{e["href"]}" />\n'
        for e in editions
        if not e["current"]
    )
    context["metatags"] = context.get("metatags", "") + alternates


def setup(app: Sphinx) -> dict[str, object]:
    """Register the transform, the translated outputs and the switcher's context."""
    hooks.connect(app, __name__)
    app.add_transform(UntranslatedMessages)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
