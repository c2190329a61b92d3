"""Sphinx adapter for the theme and sphinx-copybutton: the configuration a build ends with.

A build should end with the configuration it began with. Sphinx keeps the configuration
a build ended with (in its pickled environment) and compares the next build's with it
once ``conf.py`` and the ``config-inited`` handlers have run. A value that an extension
changes later, as the builder starts, differs there on every build: Sphinx then says
"The configuration has changed" after any edit, naming options nobody changed.
``conf.py`` therefore gives the values the extensions would set (the theme's permalink
icon, source-link suffix, icon links and logo, the priority Sphinx gives its stylesheet)
and turns off MyST's MathJax settings (the math is MathML). Two lists are appended to
rather than set, and that is this adapter's part: the themes add their components'
templates to ``templates_path`` when the HTML builder loads them, and sphinx-copybutton
adds its static folder to ``html_static_path`` once the builder has started. The adapter
adds both before Sphinx compares, in the order the extensions add them, and removes the
second copy once they have. ``tests/test_book.py`` rebuilds after a prose edit and
checks that Sphinx reports no change.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config

from tensorbook_build.settings import THEME


def _package(name: str) -> Path:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        msg = f"{name} is not installed"
        raise ModuleNotFoundError(msg)
    return Path(spec.origin).parent


def appended_later() -> dict[str, list[str]]:
    """What the extensions append to each list option after Sphinx has compared them.

    Each path is spelled as its extension spells it: the theme (sphinx-book-theme), then
    the theme it inherits (pydata-sphinx-theme), each adds its ``components`` folder;
    sphinx-copybutton adds its ``_static``.
    """
    themes = [THEME, "pydata_sphinx_theme"]
    return {
        "templates_path": [
            str(_package(theme).resolve() / "theme" / theme / "components") for theme in themes
        ],
        "html_static_path": [str(_package("sphinx_copybutton").joinpath("_static").absolute())],
    }


def _add_ahead(app: Sphinx, config: Config) -> None:
    for name, paths in appended_later().items():
        setattr(config, name, [*getattr(config, name), *paths])


def _drop_repeats(app: Sphinx) -> None:
    # the builder has loaded the theme and the extensions have added their paths again:
    # the first of each stays, in the order it had (a relative path is from conf/)
    for name in appended_later():
        seen: set[Path] = set()
        kept = []
        for path in getattr(app.config, name):
            where = Path(app.confdir, path).resolve()
            if where not in seen:
                seen.add(where)
                kept.append(path)
        setattr(app.config, name, kept)


def setup(app: Sphinx) -> dict[str, object]:
    """Add the paths before Sphinx compares the configuration; drop the repeats after."""
    app.connect("config-inited", _add_ahead, priority=900)
    app.connect("builder-inited", _drop_repeats, priority=900)  # after copybutton's (500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
