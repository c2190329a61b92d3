"""Find every link to a missing page, file or anchor, naming both ends.

Sphinx checks the cross-references it resolves itself; this checks what it wrote
(:mod:`tensorbook_build.extensions.finish` fails the build on what it finds):
every ``href`` and ``src`` of every built page, theme chrome and raw HTML included.
An address that starts with ``/`` is reported too, since the book must work below a
domain's root. Links that leave the edition's folder (``../<language>/...``) and addresses
on other hosts are not followed here; the browser suite checks the whole site.
"""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

from tensorbook_build.settings import is_page

_LINKING_ATTRIBUTES = {"a": "href", "link": "href", "img": "src", "script": "src", "source": "src"}
_METADATA_RELS = {"canonical", "alternate"}  # absolute by design, or another edition


@dataclass(frozen=True)
class BrokenLink:
    """A link on ``page`` (a path relative to the checked folder) that leads nowhere."""

    page: str
    target: str
    reason: str

    def __str__(self) -> str:
        """``page -> target: reason``."""
        return f"{self.page} -> {self.target}: {self.reason}"


class _PageParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if value := values.get(key):
                self.ids.add(value)
        attribute = _LINKING_ATTRIBUTES.get(tag)
        target = values.get(attribute) if attribute is not None else None
        if not target:
            return
        if tag == "link" and _METADATA_RELS & set((values.get("rel") or "").split()):
            return
        self.links.append(target)


def _parse(path: Path) -> _PageParser:
    parser = _PageParser()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return parser


def broken_links(folder: Path) -> list[BrokenLink]:
    """Every link in the pages under ``folder`` to a missing file or anchor inside it.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     site = Path(tmp)
    ...     _ = (site / "a.html").write_text('<h1 id="top">A</h1><a href="b.html#top">b</a>'
    ...                                      '<a href="c.html">c</a><a href="#top">up</a>')
    ...     _ = (site / "b.html").write_text('<a href="a.html#nowhere">a</a><img src="/x.png">')
    ...     for link in broken_links(site):
    ...         print(link)
    a.html -> b.html#top: b.html has no element with id 'top'
    a.html -> c.html: no such file
    b.html -> a.html#nowhere: a.html has no element with id 'nowhere'
    b.html -> /x.png: starts at the domain's root, so it breaks when the book is served below it
    """
    pages = {
        p.relative_to(folder).as_posix(): _parse(p)
        for p in sorted(folder.rglob("*.html"))
        if is_page(p, folder)
    }
    broken = []
    for page, parsed in pages.items():
        for link in parsed.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:
                continue
            if parts.path.startswith("/"):
                broken.append(
                    BrokenLink(
                        page,
                        link,
                        "starts at the domain's root, so it "
                        "breaks when the book is served below it",
                    )
                )
                continue
            if parts.path:
                target = PurePosixPath(page).parent / unquote(parts.path)
                resolved = _normalise(target)
                if resolved is None:
                    continue  # leaves the folder: another edition, checked by the suite
                if resolved not in pages and not (folder / resolved).is_file():
                    broken.append(BrokenLink(page, link, "no such file"))
                    continue
            else:
                resolved = page
            fragment = unquote(parts.fragment)
            if fragment and resolved in pages and fragment not in pages[resolved].ids:
                broken.append(
                    BrokenLink(page, link, f"{resolved} has no element with id {fragment!r}")
                )
    return broken


def _normalise(path: PurePosixPath) -> str | None:
    """``a/../b.html`` -> ``b.html``; None for a path that climbs out of the folder."""
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in {".", ""}:
            parts.append(part)
    return "/".join(parts)
