"""The one sphinx-build command line that nox, the tests and the benchmark all use."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "build" / "html"
"""Where ``nox -s docs`` writes the HTML; the executed-notebook cache sits beside it."""

# Pages execute in two reader processes: the 2-core machines the book is built on run
# one kernel per core, and the kernels are most of a cold build's time.
JOBS = 2


def sphinx_command(
    out: Path = DEFAULT_OUT,
    *,
    docs: Path = ROOT / "docs",
    conf: Path = ROOT / "conf",
    extra: Sequence[str] = (),
    python: str = sys.executable,
) -> list[str]:
    """``python -m sphinx`` with warnings as errors (-W), nitpicky (-n), in parallel."""
    return [
        python,
        "-m",
        "sphinx",
        "-j",
        str(JOBS),
        "-W",
        "-n",
        "--keep-going",
        "-b",
        "html",
        "-c",
        str(conf),
        str(docs),
        str(out),
        *extra,
    ]


def executed_pages(cache_dir: Path) -> dict[int, str]:
    """The jupyter-cache records under ``cache_dir``: record id to page file name.

    A build that executed a page added a record for it, so the ids that are new
    after a build name the pages it executed.
    """
    if not cache_dir.exists():
        return {}
    from jupyter_cache import get_cache  # not needed by nox itself, which imports this module

    return {r.pk: Path(r.uri).name for r in get_cache(str(cache_dir)).list_cache_records()}
