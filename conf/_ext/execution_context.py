"""Key each page's cached outputs on everything that produced them.

MyST-NB caches executed notebooks with jupyter-cache, which keys a notebook on
the text of its code cells and nothing else. The book's cells mostly call into
``src/tensorbook``, run on a device the build chooses, and print what torch
prints, so three more things decide a page's outputs: the package modules it
imports, the device, and the torch version. This extension

* resolves the build's device once (``tensorbook_device``, from
  ``TENSORBOOK_DEVICE``), failing at once if it cannot be had, and hands the
  resolved name to the kernels through the environment;
* puts ``src`` first on the kernels' ``PYTHONPATH``, so a page executes the
  very source that was fingerprinted;
* appends to every MyST-NB page a hidden code cell whose comments name the
  device, the torch version and a hash of each ``tensorbook`` module the page
  imports, directly or through other modules, so that jupyter-cache's key
  changes with any of them;
* tells Sphinx that the page depends on those module files, so that editing
  one re-reads, and so re-executes, only the pages that import it.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import os
import re
import sys
import time
from functools import cache
from pathlib import Path

from sphinx.errors import ConfigError
from sphinx.util import logging

logger = logging.getLogger(__name__)

PACKAGE = "tensorbook"

_FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.DOTALL)
_CODE_CELL = re.compile(
    r"^(?P<fence>`{3,}|~{3,})\{code-cell\}[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$",
    re.DOTALL | re.MULTILINE,
)


def resolve_build_device(spec: str) -> str:
    """The device the kernels will use, as torch spells it; a clear error if unavailable."""
    if spec.strip().lower() == "cpu":
        return "cpu"  # the common case needs no torch import, which keeps no-op rebuilds fast
    from tensorbook.device import DeviceUnavailableError, resolve_device

    try:
        return str(resolve_device(spec))
    except (ValueError, DeviceUnavailableError) as error:
        raise ConfigError(f"cannot build the book on device {spec!r}: {error}") from None


def _imported_modules(tree: ast.AST, known: set[str]) -> set[str]:
    """The package's modules that this syntax tree imports."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(name for name in names if name in known)
    return found


@cache
def package_modules(src_dir: Path) -> dict[str, Path]:
    """Map every module of the package under ``src_dir`` to its file."""
    root = src_dir / PACKAGE
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(src_dir).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


@cache
def _module_dependencies(src_dir: Path) -> dict[str, set[str]]:
    modules = package_modules(src_dir)
    known = set(modules)
    graph = {}
    for name, path in modules.items():
        deps = _imported_modules(ast.parse(path.read_text(encoding="utf-8")), known)
        # importing a.b.c runs a/__init__ and a/b/__init__ first
        parts = name.split(".")
        deps.update(".".join(parts[:i]) for i in range(1, len(parts)))
        deps.discard(name)
        graph[name] = deps
    return graph


def page_code(source: str) -> list[str]:
    """The code of each ``code-cell`` of a MyST-NB page, without its option lines."""
    cells = []
    for match in _CODE_CELL.finditer(source):
        lines = match.group("body").splitlines()
        if lines and lines[0].strip() == "---":  # a YAML block of options
            end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), 0)
            lines = lines[end + 1 :]
        while lines and lines[0].startswith(":"):  # short-form options such as :tags:
            lines = lines[1:]
        cells.append("\n".join(lines))
    return cells


def _parse_cell(code: str) -> ast.AST | None:
    try:
        return ast.parse(code)
    except SyntaxError:
        # IPython magics and shell escapes are not Python; they import nothing of ours
        kept = [line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))]
        try:
            return ast.parse("\n".join(kept))
        except SyntaxError:
            return None


def page_dependencies(source: str, src_dir: Path) -> list[str]:
    """Every package module that the page's code imports, directly or not, sorted."""
    modules = package_modules(src_dir)
    known = set(modules)
    graph = _module_dependencies(src_dir)
    pending = set()
    for code in page_code(source):
        tree = _parse_cell(code)
        if tree is not None:
            pending |= _imported_modules(tree, known)
    closure: set[str] = set()
    while pending:
        name = pending.pop()
        if name not in closure:
            closure.add(name)
            pending |= graph[name] - closure
            pending |= {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
    return sorted(closure)


@cache
def _file_hash(path: Path) -> str:
    """A short hash of a module's bytes; read once per build, however many pages use it."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _is_text_notebook(source: str) -> bool:
    front = _FRONT_MATTER.match(source)
    return bool(front and re.search(r"^file_format:\s*mystnb\s*$", front[1], re.MULTILINE))


def context_cell(context: str, hashes: dict[str, str]) -> str:
    """The hidden cell appended to a page: comments only, but part of the cache key."""
    lines = [
        "# Added by the build (conf/_ext/execution_context.py): jupyter-cache keys on code,",
        "# so these comments make the cached outputs depend on what produced them.",
        f"# {context}",
        *(f"# {name}: {digest}" for name, digest in hashes.items()),
    ]
    body = "\n".join(lines)
    return f"\n\n```{{code-cell}} ipython3\n:tags: [remove-cell]\n\n{body}\n```\n"


def _on_config_inited(app, config) -> None:
    if not config.tensorbook_src_dir:
        raise ConfigError("tensorbook_src_dir must name the folder that holds the package")
    # the kernels, and this process when it checks the device, use the src beside conf
    src = str(Path(config.tensorbook_src_dir).resolve())
    paths = [
        src,
        *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != src),
    ]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)
    if src not in sys.path:
        sys.path.insert(0, src)

    device = resolve_build_device(config.tensorbook_device)
    config.tensorbook_device = device
    os.environ["TENSORBOOK_DEVICE"] = device
    # Pages execute side by side (-j); one intra-op thread each keeps them from fighting
    # over the cores, and makes float sums, and so printed digits, independent of how
    # many cores the building machine has. The device line on every page reports it.
    threads = str(config.tensorbook_kernel_threads)
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[variable] = threads

    torch_version = importlib.metadata.version("torch")
    # a change of any of these makes Sphinx re-read every page, and so re-key every notebook
    config.tensorbook_context = f"device {device}, torch {torch_version}, {threads} threads"
    logger.info("tensorbook: executing pages on %s with torch %s", device, torch_version)


def _on_source_read(app, docname: str, source: list[str]) -> None:
    if not _is_text_notebook(source[0]):
        return
    src_dir = Path(app.config.tensorbook_src_dir).resolve()
    modules = package_modules(src_dir)
    hashes = {}
    for name in page_dependencies(source[0], src_dir):
        path = modules[name]
        app.env.note_dependency(str(path))
        hashes[name] = _file_hash(path)
    source[0] += context_cell(app.config.tensorbook_context, hashes)


def _on_before_read(app, env, docnames: list[str]) -> None:
    if not docnames:
        return
    # Matplotlib logs a warning while it builds its font cache, the first time it is
    # imported on a machine; let that happen here rather than in a page's output.
    # (Before any waiting, so that a translation does it while the source executes.)
    import matplotlib.font_manager  # noqa: F401
    from jupyter_cache import get_cache

    if app.config.tensorbook_wait_for_outputs:
        _wait_for(Path(app.config.tensorbook_wait_for_outputs))

    # Parallel readers (-j) would otherwise race to create the cache's tables.
    get_cache(env.mystnb_config.execution_cache_path).list_cache_records()


def _wait_for(ready: Path) -> None:
    """Block until another build says that every page's outputs are in the cache.

    A translated edition started beside the source edition (``book_build.build_site``)
    does its setup while the source executes, then reads its pages from the cache
    instead of executing them a second time.
    """
    logger.info("tensorbook: waiting for the executed outputs (%s)", ready)
    while not ready.exists():
        time.sleep(0.05)


def _on_env_updated(app, env) -> None:
    # every page has been read, so every output is in the cache
    if app.config.tensorbook_outputs_ready_file:
        Path(app.config.tensorbook_outputs_ready_file).touch()


def _on_builder_inited(app) -> None:
    # MyST-NB writes executed notebooks and their images beside the output folder,
    # which, with one output folder per language inside the site, would publish them.
    if app.config.tensorbook_output_folder:
        folder = str(Path(app.config.tensorbook_output_folder).resolve())
        app.env.mystnb_config = app.env.mystnb_config.copy(output_folder=folder)


def setup(app):
    app.add_config_value("tensorbook_device", os.environ.get("TENSORBOOK_DEVICE", "cpu"), "env")
    app.add_config_value("tensorbook_src_dir", "", "env")
    app.add_config_value("tensorbook_context", "", "env")
    app.add_config_value("tensorbook_kernel_threads", 1, "env", types=[int])
    app.add_config_value("tensorbook_output_folder", "", "env")
    # set by book_build.build_site, which runs the editions side by side; not part of
    # the environment, so that they never make Sphinx re-read a page
    app.add_config_value("tensorbook_outputs_ready_file", "", "")
    app.add_config_value("tensorbook_wait_for_outputs", "", "")
    app.connect("config-inited", _on_config_inited)
    app.connect("builder-inited", _on_builder_inited, priority=600)  # after MyST-NB's
    app.connect("source-read", _on_source_read)
    app.connect("env-before-read-docs", _on_before_read)
    app.connect("env-updated", _on_env_updated)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
