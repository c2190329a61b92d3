"""The execute stage: every page whose outputs are not cached runs before any Sphinx starts.

Execute, then render, as d2l-book does. The driver starts this module as a child of its
own (``python -m tensorbook_build.stage``), whose environment is the kernels'
(:meth:`~tensorbook_build.spec.BuildSpec.kernel_environment` over the driver's). It
starts the fork server, executes the pages ``JOBS`` at a time through jupyter-cache's
execution function, each on a kernel forked warm, and writes every record into the cache
from this one process. The editions then read every output from the cache and execute
nothing. A page that fails is reported by the index of its cell: the page, the cell, its
line and the exception, and the file that holds the traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn, JupyterCacheAbstract
from jupyter_cache.executors.utils import ExecutionResult, single_nb_execution
from myst_nb.core.read import is_myst_markdown_notebook
from nbclient.exceptions import CellTimeoutError
from nbformat import NotebookNode

from tensorbook_build import forkserver
from tensorbook_build.execute import keyed_source, read_notebook, read_page
from tensorbook_build.kernels import kernel_manager
from tensorbook_build.settings import EXECUTION_TIMEOUT, JOBS, NOT_PAGES
from tensorbook_build.spec import BuildSpec


@dataclass(frozen=True)
class PageRun:
    """A page to execute: its notebook, as MyST-NB makes it from the keyed text."""

    path: Path
    notebook: NotebookNode
    timeout: int
    allow_errors: bool


def book_pages(docs: Path) -> list[Path]:
    """Every page under ``docs`` that is a notebook, as Sphinx finds them, sorted."""
    found = []
    for path in sorted(docs.rglob("*.md")):
        relative = path.relative_to(docs)
        if any(relative.match(pattern) or pattern in relative.parts for pattern in NOT_PAGES):
            continue
        if is_myst_markdown_notebook(path.read_text(encoding="utf-8")):
            found.append(path)
    return found


def page_run(path: Path, spec: BuildSpec) -> PageRun:
    """The notebook MyST-NB makes of ``path`` (its cache key), and how long a cell may run."""
    text, _ = keyed_source(path.read_text(encoding="utf-8"), spec.context, Path(spec.src))
    notebook = read_notebook(text)
    options = notebook.metadata.get("mystnb", {})
    return PageRun(
        path,
        notebook,
        int(options.get("execution_timeout", EXECUTION_TIMEOUT)),
        bool(options.get("execution_allow_errors", False)),
    )


def is_cached(cache: JupyterCacheAbstract, run: PageRun) -> bool:
    """Whether the cache holds outputs for the page's notebook as it is now."""
    try:
        cache.match_cache_notebook(run.notebook)
    except KeyError:
        return False
    return True


def describe_failure(run: PageRun, error: BaseException, index: int | None, report: Path) -> str:
    """Name the page, the failing cell and its exception, quote the cell, say what to do.

    ``index`` is the notebook index of the cell that was running when ``error`` stopped
    the page (nbclient's ``on_cell_execute`` hook says which).
    """
    cells = read_page(run.path.read_text(encoding="utf-8")).cells
    code = [cell for cell in cells if cell.kind == "code"]
    found = [(n, cell) for n, cell in enumerate(code, 1) if cell.index == index]
    where = f"code cell {found[0][0]} (line {found[0][1].line})" if found else "a code cell"
    quoted = "\n".join(f"    {line}" for line in found[0][1].source.splitlines()) if found else ""
    if isinstance(error, CellTimeoutError):
        what = f"did not finish in {run.timeout} seconds, and was stopped"
        advice = "If it needs longer, give the page more time in its front matter (mystnb: execution_timeout: 600)."
    else:
        outputs = run.notebook.cells[index].outputs if index is not None else []
        raised = next((o for o in outputs if o.get("output_type") == "error"), None)
        what = (
            f"raised {raised.ename}: {raised.evalue}"
            if raised
            else f"failed ({type(error).__name__})"
        )
        advice = "Fix the cell, or tag it raises-exception if the book means to show this error."
    return f"{run.path}: {where} {what}\n{quoted}\n{advice} Its traceback: {report}"


def _execute(
    run: PageRun, server: Path | None, reports: Path
) -> tuple[ExecutionResult, int | None]:
    """Execute one page's notebook in place, in the page's folder, on a kernel of its own.

    Returns the result, and the index of the last cell started: where a failure stopped it.
    """
    log = reports / f"{run.path.stem}.kernel.log"
    log.unlink(missing_ok=True)
    started: list[int] = []
    result = single_nb_execution(
        run.notebook,
        cwd=str(run.path.parent),
        timeout=run.timeout,
        allow_errors=run.allow_errors,
        meta_override=False,  # the timeout was read from the page already
        kernel_manager_class=kernel_manager(server, log),
        on_cell_execute=lambda cell_index, **_: started.append(cell_index),
    )
    if log.is_file() and not log.stat().st_size:
        log.unlink()
    return result, started[-1] if started else None


_MADE = "__version__.txt"  # jupyter-cache writes it once the database has its tables


def open_cache(path: Path) -> JupyterCacheAbstract:
    """The cache at ``path``, made whole first where a build stopped while making it.

    jupyter-cache makes its tables only when its database file is new: a build stopped
    between the file and the tables left a cache that every later build failed on ("no
    such table: nbcache", "it may need to be cleared"). A cache is made aside and moved
    in at once; one without its version file never finished, holds no record, and is
    made again.
    """
    if not (path / _MADE).is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        for aside in path.parent.glob(f"{path.name}-made-*"):  # a stopped build's
            shutil.rmtree(aside, ignore_errors=True)
        aside = Path(tempfile.mkdtemp(prefix=f"{path.name}-made-", dir=path.parent))
        get_cache(str(aside)).db.dispose()  # the tables, then _MADE; its connection closed
        shutil.rmtree(path, ignore_errors=True)
        aside.rename(path)
    cache: JupyterCacheAbstract = get_cache(str(path))
    return cache


def execute_pages(
    runs: Sequence[PageRun], cache_path: Path, spec: BuildSpec, *, jobs: int = JOBS
) -> list[str]:
    """Execute the pages not in the cache at ``cache_path``, caching each that succeeds.

    Prints a line for each page executed. Returns a description of each page that failed.
    """
    cache = open_cache(cache_path)
    todo = [run for run in runs if not is_cached(cache, run)]
    if not todo:
        return []
    reports = Path(spec.work or cache_path.parent, "reports")
    reports.mkdir(parents=True, exist_ok=True)
    # Matplotlib warns while it first builds its font cache: here, not in a page's output
    import matplotlib.font_manager  # noqa: F401

    failures = []
    with contextlib.ExitStack() as stack:
        server = None
        if spec.warm_kernels:
            server = stack.enter_context(forkserver.running(todo[0].path.parent, os.environ))
        pool = stack.enter_context(ThreadPoolExecutor(jobs))
        started = {pool.submit(_execute, run, server, reports): run for run in todo}
        for done in as_completed(started):
            run, (result, last) = started[done], done.result()
            report = reports / f"{run.path.stem}.log"
            if result.err is None:
                report.unlink(missing_ok=True)
                bundle = CacheBundleIn(
                    run.notebook, str(run.path), data={"execution_seconds": result.time}
                )
                cache.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)
                print(f"{run.path.name}: executed in {result.time:.1f} s", flush=True)
            else:
                report.write_text(result.exc_string or str(result.err), encoding="utf-8")
                failures.append(describe_failure(run, result.err, last, report))
    return failures


def shard(pages: Sequence[Path], which: str) -> list[Path]:
    """The pages of shard ``k/n`` (``k`` from 1): every ``n``-th page, from the ``k``-th.

    >>> shard([Path(name) for name in "abcde"], "2/2")
    [PosixPath('b'), PosixPath('d')]
    """
    k, _, n = which.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        msg = f"--shard {which!r}: give k/n with 1 <= k <= n, for example 2/4"
        raise ValueError(msg)
    return list(pages[int(k) - 1 :: int(n)])


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tensorbook_build.stage --spec JSON --docs DIR --cache DIR [--shard k/n]``."""
    parser = argparse.ArgumentParser(
        prog="python -m tensorbook_build.stage", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--spec", required=True, help="the build's spec (BuildSpec JSON)")
    parser.add_argument("--docs", type=Path, required=True, help="the pages' folder")
    parser.add_argument("--cache", type=Path, required=True, help="jupyter-cache's folder")
    parser.add_argument("--shard", help="execute only shard k/n of the pages")
    args = parser.parse_args(argv)
    try:
        spec = BuildSpec.from_json(args.spec)
        pages = book_pages(args.docs)
        pages = shard(pages, args.shard) if args.shard else pages
    except ValueError as error:
        print(f"tensorbook_build: {error}", file=sys.stderr)
        return 2
    failures = execute_pages([page_run(path, spec) for path in pages], args.cache, spec)
    for failure in failures:
        print(failure, file=sys.stderr)
    if failures:
        print(f"tensorbook_build: {len(failures)} of the pages failed to execute", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
