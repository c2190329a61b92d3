"""The icon fonts cut down to the site's glyphs are the same bytes in every build."""

from __future__ import annotations

import shutil
from importlib.resources import files

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
        subset_font(path, wanted)
        cut.append(path)
    font = TTFont(cut[0])
    assert set(font.getBestCmap()) == wanted
    assert font["head"].modified == TTFont(shipped)["head"].modified
    assert cut[0].read_bytes() == cut[1].read_bytes()
