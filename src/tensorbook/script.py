"""What a chapter run as a script shows where its notebook would display a value.

A notebook displays the value of a cell's last expression. A chapter downloaded as a
script hands that value to a :class:`ScriptDisplay` instead, made at the script's top as
``show = display = ScriptDisplay(__file__)``: a picture or a figure is saved as a file
beside the script, whose name is printed, and any other value is printed.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Protocol, runtime_checkable

__all__ = ["ScriptDisplay"]


@runtime_checkable
class _Picture(Protocol):
    """A picture of :mod:`tensorbook.draw`: its SVG."""

    def _repr_svg_(self) -> str: ...


@runtime_checkable
class _Figure(Protocol):
    """A Matplotlib figure, which saves itself."""

    def savefig(self, fname: Path, *, bbox_inches: str) -> None: ...


@runtime_checkable
class _Pretty(Protocol):
    """A value IPython prints with its own printer: its ``str`` is what it shows."""

    def _repr_pretty_(self, printer: object, cycle: bool) -> None: ...


class ScriptDisplay:
    """Show values as a script can: pictures and figures as files, the rest printed.

    Parameters
    ----------
    script : str or pathlib.Path
        The script's own file (its ``__file__``). The n-th picture or figure it shows is
        saved beside it as ``<script's name>-figure-<n>.svg`` (a picture) or ``.png``
        (a figure); running the script again writes the same files.

    Examples
    --------
    >>> import tempfile
    >>> from tensorbook.draw.svg import Canvas
    >>> folder = tempfile.TemporaryDirectory()
    >>> show = ScriptDisplay(Path(folder.name, "tensorbook-demo.py"))
    >>> show([1, 2], None, "a word")
    [1, 2]
    'a word'
    >>> canvas = Canvas(120)
    >>> canvas.words(8, 20, "result")
    >>> show(canvas.picture(("result", {}), ("result", {})))
    [figure saved as tensorbook-demo-figure-1.svg: result]
    >>> sorted(path.name for path in Path(folder.name).iterdir())
    ['tensorbook-demo-figure-1.svg']
    >>> folder.cleanup()
    """

    def __init__(self, script: str | Path) -> None:
        self.script = Path(script).resolve()
        self._numbers = itertools.count(1)

    def __call__(self, *values: object) -> None:
        """Show each of ``values`` in turn; ``None``, which a notebook never shows, is skipped."""
        for value in values:
            if value is None:
                continue
            if isinstance(value, _Picture | _Figure):
                self._save(value)
            else:
                print(value if isinstance(value, _Pretty) else repr(value))

    def _save(self, value: _Picture | _Figure) -> None:
        name = self.script.with_name(f"{self.script.stem}-figure-{next(self._numbers)}")
        if isinstance(value, _Picture):
            name = name.with_suffix(".svg")
            name.write_text(value._repr_svg_(), encoding="utf-8")
        else:
            name = name.with_suffix(".png")
            value.savefig(name, bbox_inches="tight")
        title = getattr(value, "title", "")  # a picture's, which says what it shows
        said = f": {title}" if isinstance(title, str) and title else ""
        print(f"[figure saved as {name.name}{said}]")
