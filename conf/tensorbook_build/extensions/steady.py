"""Sphinx adapter for the theme and sphinx-copybutton: the configuration a build ends with.

A build should end with the configuration it began with. Sphinx keeps the configuration
a build ended with (in its pickled environment) and compares the next build's with it
once ``conf.py`` and the ``config-inited`` handlers have run. A value that an extension
changes later, as the builder starts, differs there on every build: Sphinx then says
"The configuration has changed" after any edit, naming options nobody changed.
``conf.py`` therefore gives the values the extensions would set (the theme's permalink
icon, source-link suffix, icon links and logo, the priority Sphinx gives its stylesheet)
and turns off MyST's MathJax settings (the math is MathML). Two lists are appended to,
and they are this adapter's part:

- the themes add their components' folders to ``templates_path`` as the HTML builder
  loads them, and the builder makes its template loader from the list then. Once it
  has, the list is given back the folders it began with: the loader keeps the themes'
  (and the catalogs' extraction, which reads every template the list names, never
  sees them, in a build that loads no theme);
- sphinx-copybutton adds its static folder to ``html_static_path`` once the builder has
  started, and the list is read when the pages are written. The adapter adds the folder
  before Sphinx compares, and removes the second copy once copybutton has added it.

``tests/book/test_book.py`` rebuilds after a prose edit and checks that Sphinx reports no
change.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config

from tensorbook_build.extensions import hooks


def copybutton_static() -> str:
    """The folder sphinx-copybutton adds to ``html_static_path``, spelled as it does."""
    spec = importlib.util.find_spec("sphinx_copybutton")
    if spec is None or spec.origin is None:
        msg = "sphinx_copybutton is not installed"
        raise ModuleNotFoundError(msg)
    return str(Path(spec.origin).parent.joinpath("_static").absolute())


def _without_repeats(paths: list[str], confdir: str) -> list[str]:
    """The first of each folder, in the order given (a relative path is from conf/)."""
    kept: dict[Path, str] = {}  # by folder: the first path to it
    for path in paths:
        kept.setdefault(Path(confdir, path).resolve(), path)
    return list(kept.values())


_BEGAN: list[str] = []  # templates_path as conf.py gave it


def _on_config_inited(_app: Sphinx, config: Config) -> None:
    _BEGAN[:] = config.templates_path
    config.html_static_path = [*config.html_static_path, copybutton_static()]


def _on_builder_inited(app: Sphinx) -> None:
    config = app.config
    config.templates_path = list(_BEGAN)
    config.html_static_path = _without_repeats(config.html_static_path, str(app.confdir))


def setup(app: Sphinx) -> dict[str, object]:
    """Settle the two lists: before Sphinx compares, and once the builder has started."""
    hooks.connect(app, __name__)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
