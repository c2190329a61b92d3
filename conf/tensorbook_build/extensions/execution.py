"""Sphinx adapter for :mod:`tensorbook_build.stage`: each page's cache key, and its outputs.

The pages executed before Sphinx started; here MyST-NB reads their outputs from the cache.
A page whose outputs are not there stops the edition, rather than run inside Sphinx
without the build's kernels.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import shutil
from pathlib import Path

from jupyter_cache import get_cache
from myst_nb.core.read import is_myst_markdown_notebook
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from tensorbook_build.execute import keyed_source
from tensorbook_build.extensions import hooks
from tensorbook_build.extensions.configuration import stop
from tensorbook_build.spec import read_spec
from tensorbook_build.stage import is_cached, page_run
from tensorbook_build.upstream import (
    notebook_cache_path,
    set_notebook_output_folder,
)

_TORCH = importlib.metadata.version("torch")


def code_digest(package: Path) -> str:
    """A hash of the Python files of ``package``, the build's code the pages go through."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(f"\0{path.relative_to(package)}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _on_source_read(app: Sphinx, docname: str, source: list[str]) -> None:
    # editing a module re-reads only the pages that import it, whose outputs the stage renewed
    if not is_myst_markdown_notebook(source[0]):  # as MyST-NB decides whether to execute it
        return
    spec = read_spec(app.config.tensorbook_spec)
    source[0], modules = keyed_source(source[0], spec.context, Path(spec.src))
    for path in modules:
        app.env.note_dependency(str(path))


def _on_before_read(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    if not docnames or app.config.nb_execution_mode == "off":  # extracting the messages
        return
    spec = read_spec(app.config.tensorbook_spec)
    cache = get_cache(notebook_cache_path(env))
    cache.list_cache_records()  # parallel readers (-j) would otherwise race to make its tables
    for docname in docnames:
        path = Path(env.doc2path(docname))
        if is_myst_markdown_notebook(path.read_text(encoding="utf-8")) and not is_cached(
            cache, page_run(path, spec)
        ):
            stop(
                f"{path} has no executed outputs for {spec.context}: build the book with "
                "python -m tensorbook_build (nox -s docs), which executes the pages first"
            )


def _on_builder_inited(app: Sphinx) -> None:
    # a page's traceback, which MyST-NB would save there, must not be published later
    shutil.rmtree(Path(app.outdir, "reports"), ignore_errors=True)
    # MyST-NB writes executed notebooks beside the output folder, which is inside the site
    work = read_spec(app.config.tensorbook_spec).work
    if work:
        folder = Path(work, "jupyter_execute", app.config.language)
        set_notebook_output_folder(app.env, str(folder))


def setup(app: Sphinx) -> dict[str, object]:
    """Register the handlers (the spec is read by extensions.configuration)."""
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
