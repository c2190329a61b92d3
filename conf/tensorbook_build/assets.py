"""Light pages: the CSS purged of rules no page uses, the icon fonts cut to the glyphs shown.

With its defaults the theme makes each page load about 2.2 MB of CSS and JavaScript:
Font Awesome's SVG-and-JavaScript bundle (1.5 MB) draws icons that the theme's own
stylesheet can already draw from the icon fonts it ships, and that stylesheet carries
all of Bootstrap and all 2,000 icons. After each HTML build this extension

* leaves the Font Awesome bundle out of every page (``conf/_templates/static/
  webpack-macros.html`` filters it out of the theme's own macro) and deletes it;
* keeps, in every stylesheet, the rules whose class and id names appear somewhere in
  the site's HTML or JavaScript (the same rule as PurgeCSS's default extractor, so
  classes that scripts add at run time are kept too), with their licence comments;
* cuts the icon fonts down to the glyphs of the icons those rules still name.

The theme, its look and every icon the reader sees stay; the budget (500 KB of CSS, JS
and fonts per page) is checked by the browser suite and printed by ``nox -s weights``.
Static files are copied afresh by every build, so this runs on fresh copies each time
(:mod:`tensorbook_build.extensions.finish` runs it after each HTML build).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import tinycss2
from fontTools import subset
from fontTools.ttLib import TTFont

from tensorbook_build.settings import STATIC, is_page

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
INLINED_STYLE = re.compile(r'<style data-inlined="([^"]*)">.*?</style>', re.DOTALL)
"""A stylesheet that :mod:`tensorbook_build.inline_css` put inside a page: its names are the
stylesheet's, not the page's."""


def site_words(files: Iterable[Path]) -> set[str]:
    """Every word that could be a class or id name in the given pages and scripts.

    A script's every word; of a page, its ``class`` and ``id`` values and the scripts
    and styles it holds, but not its prose: an English word that happens to be a class
    name ("active", "table") keeps no rule, and so the editions keep the same rules.
    The stylesheets a page holds inline (:data:`INLINED_STYLE`) are not its words.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     page = Path(tmp, "page.html")
    ...     _ = page.write_text('<p class="lead" id="top">an active table</p>'
    ...                         '<script>el.classList.add("show")</script>')
    ...     sorted(site_words([page]))
    ['add', 'classList', 'el', 'lead', 'show', 'top']
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
    """The scripts of an edition's ``static`` folder whose words may name a class.

    A translated edition's ``translations.js`` is Sphinx's catalog of English messages,
    not code: its words would keep rules in that edition only.
    """
    return [p for p in static.rglob("*.js") if p.is_file() and p.name != "translations.js"]


def _split_selectors(prelude: str) -> list[str]:
    """``a, :is(b, c)`` -> ``["a", " :is(b, c)"]``: commas inside parentheses stay."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(prelude):
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(prelude[start:index])
            start = index + 1
    parts.append(prelude[start:])
    return parts


def _required_names(selector: str) -> list[str]:
    """The class and id names a selector needs, leaving out those in :not(), :is()..."""
    kept, index = [], 0
    while index < len(selector):
        group = _OPTIONAL_GROUP.match(selector, index)
        if group is None:
            kept.append(selector[index])
            index += 1
            continue
        depth, index = 1, group.end()
        while depth and index < len(selector):
            depth += (selector[index] == "(") - (selector[index] == ")")
            index += 1
    return _NAME_IN_SELECTOR.findall("".join(kept))


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
        return all(
            name in self.words or name.startswith(self.prefixes)
            for name in _required_names(selector)
        )


def _purge_rules(rules: list[Any], keep: SelectorFilter) -> str:  # tinycss2's nodes, by .type
    out = []
    for rule in rules:
        if rule.type == "comment":
            if rule.value.startswith("!"):  # licences
                out.append(f"/*{rule.value}*/")
        elif rule.type == "qualified-rule":
            selectors = [
                s.strip() for s in _split_selectors(tinycss2.serialize(rule.prelude)) if keep(s)
            ]
            if selectors:
                out.append(f"{','.join(selectors)}{{{tinycss2.serialize(rule.content).strip()}}}")
        elif rule.type == "at-rule":
            if rule.lower_at_keyword in _GROUPING_RULES and rule.content is not None:
                inner = _purge_rules(
                    tinycss2.parse_blocks_contents(rule.content, skip_whitespace=True), keep
                )
                if inner:
                    prelude = tinycss2.serialize(rule.prelude)
                    out.append(f"@{rule.at_keyword}{prelude}{{{inner}}}")
            else:
                out.append(tinycss2.serialize([rule]))
    return "".join(out)


def purge_css(css: str, keep: SelectorFilter) -> str:
    """The stylesheet with only the rules ``keep`` accepts, licence comments and at-rules.

    >>> keep = SelectorFilter({"used"})
    >>> purge_css("/*! MIT */ /* note */ .used{color:red} .unused{color:blue} "
    ...           "@media (min-width:1px){.unused{x:y}} :root{--a:1}", keep)
    '/*! MIT */.used{color:red}:root{--a:1}'
    """
    rules = tinycss2.parse_stylesheet(css, skip_comments=False, skip_whitespace=True)
    return _purge_rules(rules, keep)


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


def subset_font(path: Path, codepoints: set[int]) -> None:
    """Rewrite a WOFF2 font in place with only the glyphs for ``codepoints``."""
    # keeping the theme's own timestamp: saved with the clock's, no two builds were equal
    font = TTFont(path, recalcTimestamp=False)
    options = subset.Options()
    options.flavor = "woff2"
    options.layout_features = ["*"]
    options.notdef_outline = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=codepoints & set(font.getBestCmap()))
    subsetter.subset(font)
    font.flavor = "woff2"
    font.save(path)


def _copy_cached(kept: Path, outdir: Path) -> dict[str, tuple[int, int]] | None:
    """Copy the results cached in ``kept`` into ``outdir``; their sizes, or ``None``.

    The editions share the cache, so another one's build may replace it meanwhile:
    then there is nothing to copy, and the results are made anew.
    """
    try:
        recorded = json.loads((kept / "sizes.json").read_text(encoding="utf-8"))
        for name, (_, after) in recorded.items():
            if after:
                shutil.copyfile(kept / name, outdir / name)
    except FileNotFoundError:
        return None
    return {name: (before, after) for name, (before, after) in recorded.items()}


def purge(outdir: Path, cache: Path | None = None) -> dict[str, tuple[int, int]]:
    """Purge every stylesheet and cut the icon fonts of one built edition.

    With ``cache`` (one for every edition), the results are kept there under a hash of
    everything they are made from (the class names the pages and scripts use, the
    stylesheets and fonts as the theme ships them), and a build with the same inputs,
    another edition's included, copies them instead of redoing the work.

    Returns ``{file: (bytes before, bytes after)}`` for the files it changed.
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
    scripts = site_scripts(static)
    pages = [p for p in outdir.rglob("*.html") if is_page(p, outdir)]
    words = site_words([*pages, *scripts])
    sheets = sorted(static.rglob("*.css"))
    fonts = sorted((static / ICON_FONTS).glob("*.woff2"))
    keep = SelectorFilter(words)
    digest = hashlib.sha256()
    for path in [*sheets, *fonts]:
        digest.update(f"\0{path.relative_to(outdir)}\0".encode())
        digest.update(path.read_bytes())
    # What is kept depends on the words only through the names the stylesheets could
    # ask for, so a prose edit that adds words but no class name finds the same results.
    names = {n for sheet in sheets for n in _NAME_IN_SELECTOR.findall(sheet.read_text("utf-8"))}
    wanted = sorted(n for n in names if n in words or n.startswith(keep.prefixes))
    digest.update("\0".join(["", *wanted]).encode())
    kept = cache / digest.hexdigest() if cache is not None else None
    found = _copy_cached(kept, outdir) if kept is not None else None
    if found is not None:
        return sizes | found
    codepoints: set[int] = set()
    for sheet in sheets:
        before = sheet.read_text(encoding="utf-8")
        after = purge_css(before, keep)
        codepoints |= icon_codepoints(after)
        sheet.write_text(after, encoding="utf-8")
        sizes[str(sheet.relative_to(outdir))] = (len(before.encode()), len(after.encode()))
    for font in fonts:
        before_size = font.stat().st_size
        subset_font(font, codepoints)
        sizes[str(font.relative_to(outdir))] = (before_size, font.stat().st_size)
    if cache is not None and kept is not None:
        # only the newest results are worth keeping; they are written aside, then moved
        # in at once, so that no reader finds them half-written
        shutil.rmtree(cache, ignore_errors=True)
        writing = Path(tempfile.mkdtemp(prefix=f"{kept.name}.", dir=cache.parent))
        for name in (n for n, (_, after) in sizes.items() if after):
            (writing / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(outdir / name, writing / name)
        (writing / "sizes.json").write_text(json.dumps(sizes), encoding="utf-8")
        cache.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):  # another build moved the same results in
            writing.rename(kept)
        shutil.rmtree(writing, ignore_errors=True)
    return sizes
