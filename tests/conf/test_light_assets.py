"""The icon fonts cut down to the site's glyphs are the same bytes in every build."""

from __future__ import annotations

import shutil
from importlib.resources import files

import pytest
from fontTools.ttLib import TTFont

from tensorbook_build.assets import ICON_FONTS, subset_font

THEME_FONT = files("pydata_sphinx_theme") / "theme/pydata_sphinx_theme/static" / ICON_FONTS


def test_a_cut_font_keeps_the_theme_s_timestamp_so_builds_are_identical(tmp_path):
    """Saved with the clock's time, two builds a second apart differed in every font."""
    shipped = THEME_FONT / "fa-solid-900.woff2"
    wanted = set(sorted(TTFont(shipped).getBestCmap())[:3])
    cut = []
    for name in ("first", "second"):
        path = tmp_path / f"{name}.woff2"
        shutil.copyfile(shipped, path)
        path.write_bytes(subset_font(path, wanted))
        cut.append(path)
    font = TTFont(cut[0])
    assert set(font.getBestCmap()) == wanted
    assert font["head"].modified == TTFont(shipped)["head"].modified
    assert cut[0].read_bytes() == cut[1].read_bytes()


def test_another_edition_copies_the_purged_assets_the_first_one_kept(tmp_path, monkeypatch):
    from tensorbook_build import assets

    editions = [tmp_path / "en", tmp_path / "zh_CN"]
    for edition in editions:
        (edition / "_static").mkdir(parents=True)
        (edition / "_static" / "theme.css").write_text(".used{color:red}.unused{color:blue}")
        (edition / "page.html").write_text('<p class="used">unused, as a word</p>')
    cache = tmp_path / "light-assets"
    first = assets.purge(editions[0], cache=cache)
    monkeypatch.setattr(assets, "purge_css", lambda *_: pytest.fail("purged again"))
    assert assets.purge(editions[1], cache=cache) == first
    assert (editions[1] / "_static" / "theme.css").read_text() == ".used{color:red}"
