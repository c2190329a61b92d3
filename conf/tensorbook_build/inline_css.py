"""Inline CSS, deferred scripts: nothing in a page's ``<head>`` waits on another download.

After :func:`tensorbook_build.assets.purge`, each page's stylesheets go inside its
``<head>``, purged for its own words (and the scripts'); its scripts are deferred, and
the inline ones after them become module scripts, keeping their order. The search's
scripts and index stay on the search page alone. Each ``<style>`` names the stylesheet
it came from (``data-inlined``), so a page Sphinx did not write again is redone too.
"""

from __future__ import annotations

import html
import os
import re
from functools import partial
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from tensorbook_build.assets import (
    INLINED_STYLE,
    Made,
    SelectorFilter,
    purge_css,
    site_scripts,
    site_words,
)
from tensorbook_build.settings import STATIC, page_files

SEARCH_PAGE = "search.html"
SEARCH_SCRIPTS = {"searchtools.js", "language_data.js", "searchindex.js"}

_HEAD = re.compile(r"<head>.*?</head>", re.DOTALL)
_TAG = re.compile(r"<(link)\b([^>]*)>|<(script)\b([^>]*)>(.*?)</script>", re.DOTALL)
_ATTRIBUTE = re.compile(r'([\w-]+)(?:="([^"]*)")?')
_IMPORT = re.compile(r"""@import\s+(?:url\(\s*)?["']?([^"')\s;]+)["']?\s*\)?\s*;""")
_URL = re.compile(r"""url\(\s*(["']?)([^"')]+)\1\s*\)""")


def _attributes(text: str) -> dict[str, str]:
    return {name: html.unescape(value or "") for name, value in _ATTRIBUTE.findall(text)}


def _local(address: str) -> bool:
    """Whether ``address`` is a file of the site, relative to where it is written."""
    parts = urlsplit(address)
    return not (parts.scheme or parts.netloc or address.startswith(("/", "#")))


def stylesheet_text(sheet: Path, page_folder: Path, seen: tuple[Path, ...] = ()) -> str:
    """A stylesheet's text, ``@import``s taken in, relative to a page in ``page_folder``."""
    if sheet in seen:
        msg = f"{sheet} imports itself (through {', '.join(p.name for p in seen)})"
        raise ValueError(msg)
    imports: list[str] = []

    def set_aside(match: re.Match[str]) -> str:
        imports.append(match[1])
        return f"\0{len(imports) - 1}\0"

    def moved(match: re.Match[str]) -> str:
        address = match[2].strip()
        if not _local(address):
            return match[0]
        target = Path(os.path.relpath((sheet.parent / address).resolve(), page_folder))
        return f'url("{PurePosixPath(*target.parts)}")'

    def imported(match: re.Match[str]) -> str:
        target = (sheet.parent / imports[int(match[1])]).resolve()
        return stylesheet_text(target, page_folder, (*seen, sheet))

    # an imported sheet's addresses are its own, moved when it is read: set the
    # imports aside while this sheet's addresses move, then put the sheets in
    css = _URL.sub(moved, _IMPORT.sub(set_aside, sheet.read_text(encoding="utf-8")))
    css = re.sub(r"\0(\d+)\0", imported, css)
    if "</style" in css.lower():
        msg = f"{sheet} has '</style' in it, which would end the page's <style> early"
        raise ValueError(msg)
    return css


def _rewrite_head(head: str, page: Path, outdir: Path, keep: SelectorFilter, made: Made) -> str:
    search_page = page.relative_to(outdir).as_posix() == SEARCH_PAGE
    deferring = False

    def style(address: str) -> str:
        sheet = (page.parent / urlsplit(address).path).resolve()
        if outdir.resolve() / STATIC not in sheet.parents or not sheet.is_file():
            msg = f"{page}: its stylesheet {address} is not a file of {outdir / STATIC}"
            raise FileNotFoundError(msg)
        css = stylesheet_text(sheet, page.parent)
        purged = made.get([css, *keep.wanted(css)], partial(purge_css, css, keep)).decode()
        return f'<style data-inlined="{html.escape(address, quote=True)}">{purged}</style>'

    def rewrite(match: re.Match[str]) -> str:
        nonlocal deferring
        if match[1] == "link":
            attributes = _attributes(match[2])
            if "stylesheet" not in attributes.get("rel", "").split():
                return match[0]
            address = attributes.get("href", "")
            if not _local(address):
                msg = f"{page}: a stylesheet from elsewhere ({address}); the site loads none"
                raise ValueError(msg)
            return style(address)
        attributes = _attributes(match[4])
        source = attributes.get("src")
        if source is None:
            inline = match[5]
            if deferring and "type" not in attributes:
                return f'<script type="module">{inline}</script>'
            return match[0]
        if PurePosixPath(urlsplit(source).path).name in SEARCH_SCRIPTS and not search_page:
            return ""
        deferring = True
        if {"defer", "async"} & attributes.keys() or attributes.get("type") == "module":
            return match[0]
        return match[0].replace("<script", "<script defer", 1)

    return _TAG.sub(rewrite, INLINED_STYLE.sub(lambda m: style(html.unescape(m[1])), head))


def inline_stylesheets(outdir: Path, cache: Path | None = None) -> int:
    """Rewrite every page of one built edition as the module says; how many changed.

    ``cache`` keeps the cut stylesheets for later builds and the other editions.
    """
    script_words = site_words(site_scripts(outdir / STATIC))
    made = Made(cache)
    changed = 0
    for page in page_files(outdir):
        text = page.read_text(encoding="utf-8")
        head = _HEAD.search(text)
        if head is None:
            continue
        keep = SelectorFilter(site_words([page]) | script_words)
        painted = text.replace(head[0], _rewrite_head(head[0], page, outdir, keep, made), 1)
        if painted != text:
            page.write_text(painted, encoding="utf-8")
            changed += 1
    return changed
