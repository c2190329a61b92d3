"""SVG written directly: the canvas every picture draws on, and the picture it makes.

Why SVG by hand, not Matplotlib or Graphviz: the pictures are boxes, lines and words,
and written directly they stay a few kilobytes, with real ``<text>`` (selectable,
searchable, and translated by the book's build from the marks this writes), ink in
``currentColor`` so they follow the page's colour mode, and the same bytes for the same
objects. Matplotlib's SVG embeds its own glyph paths or ids and dates; Graphviz is a
system binary, which ``nox -s docs`` must not need.

What a picture guarantees, checked by :meth:`Canvas.picture`:

* ``role="img"`` with a ``<title>`` and a ``<desc>``: its accessible name and description;
* a ``viewBox``, ``width="100%"`` and a ``max-width`` of its natural width, so it
  shrinks to a phone's column and never overflows it;
* at most :data:`MAX_WIDTH` wide, and no word smaller than :data:`MIN_TEXT`: on a
  412 px phone a picture is shown at its natural size, so every word of it stays at
  least 11 CSS px;
* every word that is not a number or one of torch's names is marked ``data-w="<key>"``
  (a template of :mod:`tensorbook.draw.words`), so an edition can translate it;
* coordinates rounded to a tenth, so that drawing twice gives the same bytes;
* at most :data:`MAX_BYTES`.

Examples
--------
>>> canvas = Canvas(120)
>>> canvas.rect(10, 10, 40, 20, tone="blue")
>>> canvas.words(60, 24, "result")
>>> picture = canvas.picture(("result", {}), ("result", {}))
>>> picture.words
[('result', 'result'), ('result', 'result'), ('result', 'result')]
>>> print(picture.svg.splitlines()[0][:60])
<svg xmlns="http://www.w3.org/2000/svg" class="tb-picture" r
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from html import unescape

from tensorbook.draw.words import WORDS
from tensorbook.wording import fill

__all__ = ["MAX_BYTES", "MAX_WIDTH", "MIN_TEXT", "TONES", "Canvas", "Picture", "text_width"]

MAX_BYTES = 20_000
"""The most a picture may weigh, in bytes of SVG."""
MAX_WIDTH = 380
"""The widest a picture may be drawn, in units (CSS px at its natural size): the
article's column on a 412 px phone, so that there it is not shrunk."""
MIN_TEXT = 11
"""The smallest size of a word in a picture, in units (CSS px at its natural size)."""

TONES = {
    "blue": "#4d8fe8",
    "orange": "#f08c28",
    "green": "#40b060",
    "purple": "#b464d2",
    "red": "#e8504a",
    "grey": "#8c96a0",
}
"""Fill colours, each used at :data:`FILL_OPACITY` under ink in ``currentColor``: a light
tint on a light page and a dark one on a dark page, so the ink reads on both."""
FILL_OPACITY = "0.32"
FAINT = "0.25"
"""The opacity of a grid line's ink: a quarter as strong as a line's."""
_MONO = "var(--pst-font-family-monospace,monospace)"
_BASE = "var(--pst-font-family-base,sans-serif)"
_MARKED = re.compile(r'<(text|title|desc)\b[^>]*?\bdata-w="(\w+)"[^>]*>([^<]*)</\1>')
_TEXT = re.compile(r"<text\b[^>]*>([^<]*)</text>")


def _n(value: float) -> str:
    """A coordinate, to a tenth, without a trailing ``.0`` (and never ``-0``)."""
    return f"{round(value, 1) + 0.0:.1f}".removesuffix(".0")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def text_width(text: str, size: float = 12, *, mono: bool = False) -> float:
    """About how wide ``text`` is set at ``size``: for laying out, not for measuring.

    Chinese characters take a full em; Latin letters about 0.6 of one in a monospace
    font and 0.55 in a proportional one.

    Examples
    --------
    >>> text_width("stride", 10, mono=True), text_width("张量", 10)
    (36.0, 20.0)
    """
    narrow = 0.6 if mono else 0.55
    return sum(size * (1.0 if ord(char) > 0x2E80 else narrow) for char in text)


@dataclass(frozen=True)
class Picture:
    """An SVG picture; a notebook shows it as ``image/svg+xml``."""

    svg: str
    title: str

    def _repr_svg_(self) -> str:
        return self.svg

    def __repr__(self) -> str:
        """The picture's title: what a text-only view of the notebook shows."""
        return f"<picture: {self.title}>"

    @property
    def words(self) -> list[tuple[str, str]]:
        """Each marked element's key and text, in the order they are drawn."""
        return [(key, unescape(text)) for _, key, text in _MARKED.findall(self.svg)]

    @property
    def texts(self) -> list[str]:
        """The text of every ``<text>`` element, marked or not."""
        return [unescape(text) for text in _TEXT.findall(self.svg)]

    @property
    def size(self) -> int:
        """Bytes of SVG (UTF-8)."""
        return len(self.svg.encode())


class Canvas:
    """Shapes and words on a drawing ``width`` units wide; it grows down as it is drawn."""

    def __init__(self, width: float) -> None:
        self.width = width
        self.height = 0.0
        self._parts: list[tuple[str, str]] = []  # (attributes shared in a <g>, element)

    def _reach(self, y: float) -> None:
        self.height = max(self.height, y)

    def rect(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        *,
        tone: str | None = None,
        dashed: bool = False,
        solid: bool = False,
    ) -> None:
        """A box tinted with one of :data:`TONES` and outlined in ink.

        ``solid`` makes it a bar in the full colour (which reads on both backgrounds),
        without an outline.
        """
        fill_ = f'fill="{TONES[tone]}"' if tone else 'fill="none"'
        if tone and not solid:
            fill_ += f' fill-opacity="{FILL_OPACITY}"'
        stroke = "" if solid else ' stroke="currentColor"'
        dash = ' stroke-dasharray="3 2"' if dashed else ""
        self._parts.append(
            (
                fill_ + stroke + dash,
                f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}"/>',
            )
        )
        self._reach(y + h)

    def shade(self, x: float, y: float, w: float, h: float, *, tone: str, opacity: float) -> None:
        """A box in one of :data:`TONES` at ``opacity`` (0 to 1), without an outline: a pixel.

        Raises
        ------
        ValueError
            If ``opacity`` is not between 0 and 1.
        """
        if not 0 <= opacity <= 1:
            msg = f"opacity {opacity} is not between 0 and 1"
            raise ValueError(msg)
        self._parts.append(
            (
                f'fill="{TONES[tone]}" fill-opacity="{round(opacity, 2):g}"',
                f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}"/>',
            )
        )
        self._reach(y + h)

    def line(
        self,
        x1: float,
        y1: float,
        x2: float,
        y2: float,
        *,
        arrow: bool = False,
        dashed: bool = False,
        faint: bool = False,
    ) -> None:
        """A line in ink; with ``arrow``, a head at its end; ``faint``, a grid line."""
        shared = 'stroke="currentColor"'
        shared += ' stroke-dasharray="4 3"' if dashed else ""
        shared += f' stroke-opacity="{FAINT}"' if faint else ""
        self._parts.append(
            (
                shared,
                f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}"/>',
            )
        )
        if arrow:
            angle = math.atan2(y2 - y1, x2 - x1)
            points = [(x2, y2)]
            for side in (-0.45, 0.45):
                points.append((x2 - 7 * math.cos(angle + side), y2 - 7 * math.sin(angle + side)))
            shown = " ".join(f"{_n(px)},{_n(py)}" for px, py in points)
            self._parts.append(("", f'<polygon points="{shown}"/>'))
        self._reach(max(y1, y2))

    def curve(self, points: list[tuple[float, float]], *, tone: str, width: float = 1.5) -> None:
        """A line through ``points`` in the full colour of one of :data:`TONES`."""
        shown = " ".join(f"{_n(x)},{_n(y)}" for x, y in points)
        self._parts.append(
            (
                f'fill="none" stroke="{TONES[tone]}" stroke-width="{_n(width)}"',
                f'<polyline points="{shown}"/>',
            )
        )
        self._reach(max(y for _, y in points))

    def dot(self, x: float, y: float, *, tone: str, radius: float = 3) -> None:
        """A dot in the full colour of one of :data:`TONES`."""
        self._parts.append(
            (f'fill="{TONES[tone]}"', f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(radius)}"/>')
        )
        self._reach(y + radius)

    def polyline(self, points: list[tuple[float, float]], *, tone: str) -> None:
        """A line through ``points`` in the full colour of one of :data:`TONES`, a dot at each."""
        self.curve(points, tone=tone, width=2)
        for x, y in points:
            self.dot(x, y, tone=tone)

    def text(
        self,
        x: float,
        y: float,
        content: str,
        *,
        anchor: str = "start",
        mono: bool = False,
        size: float = 12,
        bold: bool = False,
        key: str | None = None,
    ) -> None:
        """Words whose baseline is at ``y``.

        Numbers or torch's names; with ``key``, a translatable template already filled
        in (use :meth:`words`).

        Raises
        ------
        ValueError
            If ``size`` is below :data:`MIN_TEXT`.
        """
        if size < MIN_TEXT:
            msg = f"{content!r} at size {size}: a picture's words are at least {MIN_TEXT}"
            raise ValueError(msg)
        shared = []
        if anchor != "start":
            shared.append(f'text-anchor="{anchor}"')
        if mono:
            shared.append(f'style="font-family:{_MONO}"')
        if size != 12:
            shared.append(f'font-size="{_n(size)}"')
        if bold:
            shared.append('font-weight="bold"')
        own = f' data-w="{key}"' if key is not None else ""
        self._parts.append(
            (" ".join(shared), f'<text x="{_n(x)}" y="{_n(y)}"{own}>{_escape(content)}</text>')
        )
        self._reach(y + size * 0.3)

    def words(
        self,
        x: float,
        y: float,
        key: str,
        *,
        anchor: str = "start",
        size: float = 12,
        bold: bool = False,
        **fields: object,
    ) -> None:
        """The template ``WORDS[key]`` filled in with ``fields``, marked for translation."""
        content = fill(WORDS[key], **fields)
        self.text(x, y, content, anchor=anchor, size=size, bold=bold, key=key)

    def picture(
        self, title: tuple[str, dict[str, object]], desc: tuple[str, dict[str, object]]
    ) -> Picture:
        """The finished picture, named by ``title`` and described by ``desc``.

        Each is a key of :data:`~tensorbook.draw.words.WORDS` and its fields.

        Raises
        ------
        ValueError
            If the picture is over :data:`MAX_BYTES` or wider than :data:`MAX_WIDTH`.
        """
        if self.width > MAX_WIDTH:
            msg = f"the picture is {self.width:g} wide, over {MAX_WIDTH}: a phone would shrink it"
            raise ValueError(msg)
        height = self.height + 6
        named = fill(WORDS[title[0]], **title[1])
        described = fill(WORDS[desc[0]], **desc[1])
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="tb-picture" role="img" '
            f'viewBox="0 0 {_n(self.width)} {_n(height)}" width="100%" '
            f'style="max-width:{_n(self.width)}px;font-family:{_BASE}" '
            f'fill="currentColor" font-size="12">\n'
            f'<title data-w="{title[0]}">{_escape(named)}</title>\n'
            f'<desc data-w="{desc[0]}">{_escape(described)}</desc>\n'
        )
        # boxes, then lines, then words on top; within each, the elements that share
        # attributes in one <g>, in the order first drawn: a third of the bytes
        groups: dict[tuple[int, str], list[str]] = {}
        for shared, element in self._parts:
            layer = 0 if element.startswith("<rect") else 2 if element.startswith("<text") else 1
            groups.setdefault((layer, shared), []).append(element)
        body = []
        for (_, shared), elements in sorted(groups.items(), key=lambda item: item[0][0]):
            body.extend([f"<g {shared}>", *elements, "</g>"] if shared else elements)
        svg = head + "\n".join(body) + "\n</svg>\n"
        picture = Picture(svg, named)
        if picture.size > MAX_BYTES:
            msg = f"the picture {named!r} is {picture.size} bytes, over {MAX_BYTES}"
            raise ValueError(msg)
        return picture
