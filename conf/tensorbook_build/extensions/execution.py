"""Sphinx adapter for :mod:`tensorbook_build.execute`: the kernels and each page's cache key."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import shutil
from pathlib import Path

from myst_nb.core.read import is_myst_markdown_notebook
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from tensorbook_build.execute import context_cell, page_hashes, read_page
from tensorbook_build.extensions import hooks
from tensorbook_build.forkserver import FORKSERVER_VARIABLE, running
from tensorbook_build.launch import say_ready
from tensorbook_build.settings import SOURCE_LANGUAGE
from tensorbook_build.spec import read_spec
from tensorbook_build.upstream import (
    notebook_cache_path,
    patch_cache_truncation,
    set_notebook_output_folder,
)

_TORCH = importlib.metadata.version("torch")
_FORK_SERVER = contextlib.ExitStack()  # the fork server this edition started, if any


def code_digest(package: Path) -> str:
    """A hash of the Python files of ``package``, the build's code the pages go through."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(f"\0{path.relative_to(package)}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _on_source_read(app: Sphinx, docname: str, source: list[str]) -> None:
    # editing a module re-reads, and so re-executes, only the pages that import it
    if not is_myst_markdown_notebook(source[0]):  # as MyST-NB decides whether to execute it
        return
    spec = read_spec(app.config.tensorbook_spec)
    hashes = page_hashes(read_page(source[0]).code.values(), Path(spec.src))
    for path in hashes:
        app.env.note_dependency(str(path))
    source[0] += context_cell(spec.context, dict(hashes.values()))


def _on_before_read(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    if not docnames:
        return
    # Matplotlib warns while it first builds its font cache: here, not in a page's output
    import matplotlib.font_manager  # noqa: F401
    from jupyter_cache import get_cache

    # Parallel readers (-j) would otherwise race to create the cache's tables.
    get_cache(notebook_cache_path(env)).list_cache_records()
    if (
        read_spec(app.config.tensorbook_spec).warm_kernels
        and app.config.language == SOURCE_LANGUAGE
    ):
        # The fork server's one owner. Started before the readers fork, so that they
        # inherit where it listens; it imports while Sphinx reads, and a reader that asks
        # for a kernel first waits. Only an edition that reads pages starts one.
        socket = _FORK_SERVER.enter_context(running(Path(app.srcdir), os.environ))
        os.environ[FORKSERVER_VARIABLE] = str(socket)
        _FORK_SERVER.callback(os.environ.pop, FORKSERVER_VARIABLE, None)


def _close_fork_server(_app: Sphinx, _exception: BaseException | None) -> None:
    _FORK_SERVER.close()


def _on_env_updated(app: Sphinx, env: BuildEnvironment) -> None:
    # every output is in the cache: the driver may start the translations beside this edition
    if app.config.language == SOURCE_LANGUAGE:
        say_ready()


def _on_builder_inited(app: Sphinx) -> None:
    # a failed page's traceback, which MyST-NB saves there, must not be published later
    shutil.rmtree(Path(app.outdir, "reports"), ignore_errors=True)
    # MyST-NB writes executed notebooks beside the output folder, which is inside the site
    work = read_spec(app.config.tensorbook_spec).work
    if work:
        folder = Path(work, "jupyter_execute", app.config.language)
        set_notebook_output_folder(app.env, str(folder))


def setup(app: Sphinx) -> dict[str, object]:
    """Register the handlers (the spec is read by extensions.configuration)."""
    patch_cache_truncation()
    hooks.connect(app, __name__)
    # a new torch, or an edit to the build's code, makes Sphinx read every page again
    build_code = code_digest(Path(__file__).resolve().parents[1])
    version = int(hashlib.sha256(f"{build_code} {_TORCH}".encode()).hexdigest()[:12], 16)
    return {
        "version": "1",
        "env_version": version,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
