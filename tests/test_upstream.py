"""Every reach into MyST-NB's or Sphinx's private parts still finds what it was written for.

An upgrade that moves one of them, or changes its signature, fails here by name,
before a build silently changes the book.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sphinx

from tensorbook_build import upstream
from tensorbook_build.settings import LAYOUT


@pytest.mark.parametrize("reach", upstream.REACHES, ids=lambda r: r.target)
def test_each_private_name_is_where_it_was_and_takes_what_it_took(reach):
    try:
        found = reach.resolve()
    except (ImportError, AttributeError) as error:
        pytest.fail(f"{reach.target} moved ({error}); the build uses it: {reach.why}")
    assert found is not None
    assert upstream.current_signature(reach) == reach.signature, (
        f"{reach.target} changed its signature; the build was written for {reach.signature}: "
        f"{reach.why}"
    )


def test_a_moved_name_is_caught():
    moved = upstream.Reach("sphinx.util.nodes:no_such_function", "()", "a test")
    with pytest.raises(AttributeError):
        moved.resolve()


def test_nothing_else_in_the_build_imports_a_private_name():
    """The reaches are listed in one module: no other imports MyST-NB's or Sphinx's
    internals (their extension API, sphinx.application and the like, is public)."""
    private = {reach.target.partition(":")[0] for reach in upstream.REACHES}
    package = LAYOUT.conf / "tensorbook_build"
    offenders = [
        f"{path.relative_to(package)}: {module}"
        for path in sorted(package.rglob("*.py"))
        if path.name != "upstream.py"
        for module in sorted(private)
        if f"from {module} import" in path.read_text(encoding="utf-8")
        or f"import {module}\n" in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


def test_the_theme_still_ships_the_macros_our_template_wraps():
    """conf/_templates/static/webpack-macros.html wraps the theme's own file of that name."""
    import pydata_sphinx_theme

    theme = Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme"
    macros = (theme / "static" / "webpack-macros.html").read_text(encoding="utf-8")
    for macro in ("head_pre_assets", "head_js_preload", "body_post"):
        assert f"macro {macro}()" in macros, macro
    assert sphinx.version_info >= (8,)
