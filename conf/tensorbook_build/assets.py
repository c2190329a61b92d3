"""Light pages: the CSS purged of rules no page uses, the icon fonts cut to the glyphs shown.

After each HTML build, :func:`purge` deletes Font Awesome's SVG-and-JavaScript bundle
(``conf/_templates/static/webpack-macros.html`` keeps it out of the pages), keeps in
every stylesheet the rules whose class and id names appear in the site's pages or
scripts (PurgeCSS's default rule, so classes a script adds are kept), and cuts the
icon fonts to the glyphs those rules still name.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import groupby
from pathlib import Path
from typing import Any

import tinycss2
from fontTools import subset
from fontTools.ttLib import TTFont

from tensorbook_build.settings import STATIC, page_files

# fontTools reports every table it subsets at INFO, through the root logger
logging.getLogger("fontTools.subset").setLevel(logging.WARNING)

ICON_BUNDLE = "scripts/fontawesome.js"
ICON_FONTS = "vendor/fontawesome/webfonts"
# A class name as a script or page may spell it; a trailing "-" marks a prefix that a
# script completes at run time (Bootstrap's `bs-tooltip-${placement}`).
_WORD = re.compile(r"[A-Za-z0-9_-]+")
# what in a page can name a class: its class and id values, its scripts and styles
_MARKUP_WORDS = re.compile(
    r"""\s(?:class|id)=["']([^"']*)["']|<(?:script|style)\b[^>]*>(.*?)</(?:script|style)>""",
    re.DOTALL | re.IGNORECASE,
)
_NAME_IN_SELECTOR = re.compile(r"[.#](-?[A-Za-z_][\w-]*)")
# Inside these pseudo-classes a name need not be present for the rule to apply.
_OPTIONAL_GROUP = re.compile(r":(?:not|is|where|has)\(")
_ICON_GLYPH = re.compile(r"--fa:\s*\"((?:\\[0-9a-fA-F]{1,6}\s?|[^\"\\])+)\"")
_CSS_ESCAPE = re.compile(r"\\([0-9a-fA-F]{1,6})\s?")
_GROUPING_RULES = {"media", "supports", "layer", "container"}
# a stylesheet that tensorbook_build.inline_css put inside a page
INLINED_STYLE = re.compile(r'<style data-inlined="([^"]*)">.*?</style>', re.DOTALL)


def site_words(files: Iterable[Path]) -> set[str]:
    """Every word that could be a class or id name in the given pages and scripts.

    A script's every word; of a page, its ``class`` and ``id`` values and the scripts
    and styles it holds (but its inline stylesheets), not its prose, so that the
    editions keep the same rules.
    """
    words: set[str] = set()
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".html":
            text = " ".join(
                value
                for match in _MARKUP_WORDS.finditer(INLINED_STYLE.sub("", text))
                for value in match.groups()
                if value
            )
        words.update(_WORD.findall(text))
    return words


def site_scripts(static: Path) -> list[Path]:
    """The scripts of an edition's ``static`` folder, but ``translations.js`` (a catalog)."""
    return [p for p in static.rglob("*.js") if p.is_file() and p.name != "translations.js"]


def _required_names(selector: str) -> list[str]:
    """The class and id names a selector needs, leaving out those in :not(), :is()..."""
    while group := _OPTIONAL_GROUP.search(selector):
        depth, end = 1, group.end()
        while depth and end < len(selector):
            depth += (selector[end] == "(") - (selector[end] == ")")
            end += 1
        selector = selector[: group.start()] + selector[end:]
    return _NAME_IN_SELECTOR.findall(selector)


class SelectorFilter:
    """Decides which selectors can match something in the site.

    >>> keep = SelectorFilter({"btn", "bs-tooltip-", "show"})
    >>> keep(".btn.show"), keep(".btn.active"), keep("a:not(.active)"), keep(".bs-tooltip-top")
    (True, False, True, True)
    """

    def __init__(self, words: set[str]) -> None:
        self.words = words
        self.prefixes = tuple(w for w in words if w.endswith("-") and len(w) >= 4)

    def __call__(self, selector: str) -> bool:
        """Whether every class and id name ``selector`` needs is in the site."""
        return all(map(self.has, _required_names(selector)))

    def has(self, name: str) -> bool:
        """Whether the site has the class or id ``name`` (or a prefix a script completes)."""
        return name in self.words or name.startswith(self.prefixes)

    def wanted(self, css: str) -> list[str]:
        """The names in ``css`` that the site has: all that a purge of ``css`` depends on."""
        return sorted({n for n in _NAME_IN_SELECTOR.findall(css) if self.has(n)})


@dataclass(frozen=True)
class _Rule:
    """A style rule: each selector with the names it needs, and its block, serialized."""

    selectors: tuple[tuple[str, tuple[str, ...]], ...]
    block: str


@dataclass(frozen=True)
class _Group:
    """A grouping at-rule (``@media``...): its head, serialized, and the rules inside."""

    head: str
    rules: tuple[str | _Rule | _Group, ...]


def _parse_rules(rules: list[Any]) -> tuple[str | _Rule | _Group, ...]:  # tinycss2's nodes
    """What a purge chooses from: a plain string is kept as it is, whatever the site."""
    out: list[str | _Rule | _Group] = []
    for rule in rules:
        if rule.type == "comment":
            if rule.value.startswith("!"):  # licences
                out.append(f"/*{rule.value}*/")
        elif rule.type == "qualified-rule":
            # split at the commas outside any parentheses (those inside are in a block)
            parts = groupby(rule.prelude, lambda token: token == ",")
            selectors = (tinycss2.serialize(s).strip() for comma, s in parts if not comma)
            named = tuple((s, tuple(_required_names(s))) for s in selectors)
            out.append(_Rule(named, tinycss2.serialize(rule.content).strip()))
        elif rule.type == "at-rule":
            if rule.lower_at_keyword in _GROUPING_RULES and rule.content is not None:
                inner = tinycss2.parse_blocks_contents(rule.content, skip_whitespace=True)
                head = f"@{rule.at_keyword}{tinycss2.serialize(rule.prelude)}"
                out.append(_Group(head, _parse_rules(inner)))
            else:
                out.append(tinycss2.serialize([rule]))
    return tuple(out)


@lru_cache(maxsize=32)  # every page purges the same few stylesheets for its own words
def _parsed(css: str) -> tuple[str | _Rule | _Group, ...]:
    rules = tinycss2.parse_stylesheet(css, skip_comments=False, skip_whitespace=True)
    return _parse_rules(rules)


def _purged(rules: tuple[str | _Rule | _Group, ...], keep: SelectorFilter) -> str:
    out = []
    for rule in rules:
        if isinstance(rule, str):
            out.append(rule)
        elif isinstance(rule, _Rule):
            kept = [s for s, names in rule.selectors if all(map(keep.has, names))]
            if kept:
                out.append(f"{','.join(kept)}{{{rule.block}}}")
        elif inner := _purged(rule.rules, keep):
            out.append(f"{rule.head}{{{inner}}}")
    return "".join(out)


def purge_css(css: str, keep: SelectorFilter) -> str:
    """The stylesheet with only the rules ``keep`` accepts, licence comments and at-rules.

    >>> keep = SelectorFilter({"used"})
    >>> purge_css("/*! MIT */ /* note */ .used{color:red} .unused{color:blue} "
    ...           "@media (min-width:1px){.unused{x:y}} :root{--a:1}", keep)
    '/*! MIT */.used{color:red}:root{--a:1}'
    """
    return _purged(_parsed(css), keep)


def icon_codepoints(css: str) -> set[int]:
    r"""The code points of the icons a (purged) stylesheet still draws.

    >>> sorted(hex(c) for c in icon_codepoints(r'.fa-bars{--fa:"\f0c9"}.fa-a{--fa:"A"}'))
    ['0x41', '0xf0c9']
    """
    points: set[int] = set()
    for value in _ICON_GLYPH.findall(css):
        text = _CSS_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), value)
        points.update(ord(char) for char in text)
    return points


def subset_font(path: Path, codepoints: set[int]) -> bytes:
    """The WOFF2 font at ``path`` with only the glyphs for ``codepoints``, as bytes."""
    # keeping the theme's own timestamp: saved with the clock's, no two builds were equal
    font = TTFont(path, recalcTimestamp=False)  # loaded as WOFF2, saved as WOFF2
    subsetter = subset.Subsetter(subset.Options(layout_features=["*"], notdef_outline=True))
    subsetter.populate(unicodes=codepoints & set(font.getBestCmap()))
    subsetter.subset(font)
    cut = io.BytesIO()
    font.save(cut)
    return cut.getvalue()


class Made:
    """What was made from some inputs, made once for each, kept under a hash of them.

    With a ``folder`` (one that every edition shares) it is kept there too, and a later
    build, or another edition's, reads it back; what no build used for a day is removed.
    """

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.made: dict[str, bytes] = {}
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            stale = time.time() - 86400
            for old in folder.iterdir():
                with contextlib.suppress(OSError):  # another build removed it, or a folder
                    if old.stat().st_mtime < stale:
                        old.unlink()

    def get(self, inputs: Iterable[str | bytes], make: Callable[[], str | bytes]) -> bytes:
        """What ``make`` returns (as bytes), made only if these ``inputs`` were not yet."""
        digest = hashlib.sha256()
        for part in inputs:
            digest.update(b"\0" + (part.encode() if isinstance(part, str) else part))
        key = digest.hexdigest()
        if key not in self.made and self.folder is not None:
            with contextlib.suppress(FileNotFoundError):
                self.made[key] = (self.folder / key).read_bytes()
                os.utime(self.folder / key)  # used: not stale
        if key not in self.made:
            made = make()
            self.made[key] = made.encode() if isinstance(made, str) else made
            if self.folder is not None:  # written aside, then moved in at once
                aside = self.folder / f"{key}.{os.getpid()}"
                aside.write_bytes(self.made[key])
                aside.replace(self.folder / key)
        return self.made[key]


def purge(outdir: Path, cache: Path | None = None) -> dict[str, tuple[int, int]]:
    """Purge every stylesheet and cut the icon fonts of one built edition, as the module says.

    ``cache`` keeps the results for later builds and the other editions. Returns
    ``{file: (bytes before, bytes after)}`` for the files it changed.
    """
    static = outdir / STATIC
    sizes: dict[str, tuple[int, int]] = {}
    # the bundle, and the themes' Jinja macro files, which their static folders hold
    # and Sphinx copies as they are: templates, not pages
    leftovers = [static / ICON_BUNDLE, static / f"{ICON_BUNDLE}.map", *static.glob("*macros.html")]
    for leftover in leftovers:
        if leftover.exists():
            sizes[str(leftover.relative_to(outdir))] = (leftover.stat().st_size, 0)
            leftover.unlink()
    keep = SelectorFilter(site_words([*page_files(outdir), *site_scripts(static)]))
    made = Made(cache)
    codepoints: set[int] = set()
    for sheet in sorted(static.rglob("*.css")):
        css = sheet.read_text(encoding="utf-8")
        purged = made.get([css, *keep.wanted(css)], partial(purge_css, css, keep))
        codepoints |= icon_codepoints(purged.decode())
        sheet.write_bytes(purged)
        sizes[str(sheet.relative_to(outdir))] = (len(css.encode()), len(purged))
    wanted = ",".join(map(str, sorted(codepoints)))
    for font in sorted((static / ICON_FONTS).glob("*.woff2")):
        shipped = font.read_bytes()
        cut = made.get([shipped, wanted], partial(subset_font, font, codepoints))
        font.write_bytes(cut)
        sizes[str(font.relative_to(outdir))] = (len(shipped), len(cut))
    return sizes
