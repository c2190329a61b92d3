"""Find every link to a missing page, file or anchor, naming both ends.

Every ``href`` and ``src`` of every built page, theme chrome and raw HTML included, and
any address that starts at the domain's root, below which the book must also work.
Links to other editions (``../<language>/...``) and hosts are the browser suite's.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tensorbook_build.settings import page_files

_LINKING_ATTRIBUTES = {"a": "href", "link": "href", "img": "src", "script": "src", "source": "src"}
_METADATA_RELS = {"canonical", "alternate"}  # absolute by design, or another edition
_ROOTED = "starts at the domain's root, so it breaks when the book is served below it"


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
    def __init__(self, page: Path) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.feed(page.read_text(encoding="utf-8"))
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if value := values.get(key):
                self.ids.add(value)
        target = values.get(_LINKING_ATTRIBUTES.get(tag, ""))
        if target and not (
            tag == "link" and _METADATA_RELS & set((values.get("rel") or "").split())
        ):
            self.links.append(target)


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
    pages = {p.relative_to(folder).as_posix(): _PageParser(p) for p in page_files(folder)}
    broken = []
    for page, parsed in pages.items():
        for link in parsed.links:
            parts = urlsplit(link)
            target = posixpath.join(posixpath.dirname(page), unquote(parts.path))
            resolved = posixpath.normpath(target) if parts.path else page
            fragment = unquote(parts.fragment)
            if parts.scheme or parts.netloc or resolved.split("/")[0] == "..":
                continue  # another host, or another edition: the browser suite follows those
            if parts.path.startswith("/"):
                reason = _ROOTED
            elif resolved not in pages and not (folder / resolved).is_file():
                reason = "no such file"
            elif fragment and resolved in pages and fragment not in pages[resolved].ids:
                reason = f"{resolved} has no element with id {fragment!r}"
            else:
                continue
            broken.append(BrokenLink(page, link, reason))
    return broken
