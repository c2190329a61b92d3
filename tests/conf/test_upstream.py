"""Every reach into MyST-NB's or Sphinx's private parts still finds what it was written for.

An upgrade that moves one of them, or changes its signature, fails here by name,
before a build silently changes the book.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import sphinx

from tensorbook_build import upstream
from tensorbook_build.extensions import configuration
from tensorbook_build.settings import LAYOUT


@pytest.mark.parametrize("reach", upstream.REACHES, ids=lambda r: r.target)
def test_each_private_name_is_where_it_was_and_takes_what_it_took(reach):
    try:
        found = reach.resolve()
    except (ImportError, AttributeError) as error:
        pytest.fail(f"{reach.target} moved ({error}); the build uses it: {reach.why}")
    assert found is not None
    assert reach.retired_by.strip(), f"{reach.target}: say what upstream change would retire it"
    assert reach.current_signature() == reach.signature, (
        f"{reach.target} changed its signature; the build was written for {reach.signature}: "
        f"{reach.why}"
    )


def test_a_moved_name_is_caught():
    moved = upstream.PrivateAPI("sphinx.util.nodes:no_such_function", "()", "a test", "-")
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


def test_the_folder_copybutton_appends_is_where_the_configuration_adapter_adds_it():
    """extensions.configuration adds copybutton's static folder before copybutton does; a folder
    that moved would be added for nothing (the book test then sees a change)."""
    assert (Path(configuration.copybutton_static()) / "copybutton.js_t").is_file()


def test_the_theme_still_ships_the_macros_our_template_wraps():
    """conf/_templates/static/webpack-macros.html wraps the theme's own file of that name."""
    import pydata_sphinx_theme

    theme = Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme"
    macros = (theme / "static" / "webpack-macros.html").read_text(encoding="utf-8")
    for macro in ("head_pre_assets", "head_js_preload", "body_post"):
        assert f"macro {macro}()" in macros, macro
    assert sphinx.version_info >= (8,)


def test_jieba_compiles_under_the_suites_warning_filters():
    """Installed without byte-compiling (``pip --no-compile``, as the GPU kit installs),
    jieba's modules are compiled when Sphinx's Chinese search imports them, and its
    invalid escapes warn; the suite's filters (pyproject.toml) let that warning pass."""
    import importlib.util

    spec = importlib.util.find_spec("jieba")
    assert spec is not None
    assert spec.origin is not None
    origin = Path(spec.origin)
    compile(origin.read_text(encoding="utf-8"), str(origin), "exec")  # writes no .pyc


PKG_RESOURCES_WARNING = (  # setuptools 80's, as the GPU machine's raised it (tests/evidence)
    "pkg_resources is deprecated as an API. See https://setuptools.pypa.io/en/latest/"
    "pkg_resources.html. The pkg_resources package is slated for removal as early as "
    "2025-11-30. Refrain from using this package or pin to Setuptools<81."
)


def test_jieba_imports_where_setuptools_warns_of_pkg_resources(tmp_path, monkeypatch):
    """jieba imports pkg_resources where setuptools has it; setuptools 80 (on the first
    GPU machines) warns that it is deprecated, naming jieba as the caller, which the
    suite's filters let pass. Here a pkg_resources that warns as that one did stands in."""
    import importlib

    stand_in = tmp_path / "pkg_resources"
    stand_in.mkdir()
    (stand_in / "__init__.py").write_text(
        "import warnings\n"
        f"warnings.warn({PKG_RESOURCES_WARNING!r}, UserWarning, stacklevel=2)\n"
        "def resource_stream(package, name):\n"
        "    raise OSError('not used here')\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [n for n in sys.modules if n == "pkg_resources" or n.split(".")[0] == "jieba"]:
        monkeypatch.delitem(sys.modules, name)
    jieba = importlib.import_module("jieba")  # under the suite's warning filters
    assert sys.modules["pkg_resources"].__file__.startswith(str(tmp_path))
    assert callable(jieba.cut)
