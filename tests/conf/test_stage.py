"""The execute stage's cache: made whole, whatever a stopped build left of it."""

from __future__ import annotations

import sqlite3

import nbformat
import pytest
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn

from tensorbook_build.stage import open_cache


def _notebook() -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell("1 + 1")
    cell.outputs = [
        nbformat.v4.new_output("execute_result", {"text/plain": "2"}, execution_count=1)
    ]
    return nbformat.v4.new_notebook(
        cells=[cell], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}}
    )


def test_a_cache_whose_tables_a_stopped_build_never_made_is_made_again(tmp_path):
    """jupyter-cache makes its tables only when its database file is new: a build stopped
    between the two left a file without tables, which every later build failed on."""
    path = tmp_path / "build" / ".jupyter_cache"
    path.mkdir(parents=True)
    sqlite3.connect(path / "global.db").close()  # the file, and no table yet
    with pytest.raises(RuntimeError, match="may need to be cleared"):
        get_cache(str(path)).list_cache_records()  # as jupyter-cache alone leaves it
    cache = open_cache(path)
    assert cache.list_cache_records() == []
    cache.cache_notebook_bundle(CacheBundleIn(_notebook(), "page.md"), check_validity=False)
    assert [r.uri for r in open_cache(path).list_cache_records()] == ["page.md"]  # kept
    assert sorted(p.name for p in path.parent.iterdir()) == [".jupyter_cache"]


def test_a_cache_made_aside_by_a_stopped_build_is_removed(tmp_path):
    stopped = tmp_path / ".jupyter_cache-made-abc123"
    stopped.mkdir()
    (stopped / "global.db").write_bytes(b"")
    open_cache(tmp_path / ".jupyter_cache").list_cache_records()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".jupyter_cache"]
