"""Every place where the build reaches into MyST-NB's or Sphinx's private parts.

Each reach is a small function or a name here, and each is named in :data:`REACHES`
with the signature it was written against (jupyter_client's provisioner is public, but
the warm kernels rely on how its local one works inside). ``tests/test_upstream.py``
resolves every entry and compares signatures, so an upgrade that moves or changes one
fails there, loudly and by name, instead of changing the book quietly. Nothing else in
the build imports a private name.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from jupyter_client.client import KernelClient
from jupyter_client.provisioning import LocalProvisioner
from myst_nb.core.execute.base import ExecutionError
from myst_nb.core.render import MimeData, NbElementRenderer  # a MIME plugin's argument types
from myst_nb.ext.glue.utils import PendingGlueReference
from myst_nb.sphinx_ import NbMetadataCollector, SphinxEnvType
from myst_nb.sphinx_ import Parser as MystNbParser
from sphinx.directives.code import container_wrapper
from sphinx.environment import BuildEnvironment
from sphinx.util.i18n import docname_to_domain
from sphinx.util.math import get_node_equation_number
from sphinx.util.nodes import extract_messages

__all__ = [
    "REACHES",
    "ExecutionError",
    "LocalProvisioner",
    "MimeData",
    "MystNbParser",
    "NbElementRenderer",
    "PendingGlueReference",
    "Reach",
    "adopt_kernel_info",
    "chinese_search",
    "container_wrapper",
    "current_signature",
    "docname_to_domain",
    "execution_record",
    "extract_messages",
    "failure_reporting",
    "get_node_equation_number",
    "notebook_cache_path",
    "patch_cache_truncation",
    "patch_document_defaults",
    "patch_failure_reporting",
    "patch_stream_coalescing",
    "register_search_language",
    "set_notebook_output_folder",
    "stream_coalescing",
]


@dataclass(frozen=True)
class Reach:
    """One private name the build uses, and why."""

    target: str  # module:qualified.name
    signature: str | None  # as inspect.signature prints it; None for a non-callable
    why: str
    names_only: bool = False  # compare the parameters' names and kinds, not defaults

    def resolve(self) -> object:
        """The object the target names; ImportError or AttributeError when it moved."""
        module, _, qualified = self.target.partition(":")
        found: Any = importlib.import_module(module)
        for part in qualified.split("."):
            found = getattr(found, part)
        return found


REACHES = (
    Reach(
        "myst_nb.sphinx_:NbMetadataCollector.get_exec_data",
        "(env: 'SphinxEnvType', docname: 'str') -> 'ExecutionResult | None'",
        "the status page's execution time per page; MyST-NB's own table directive "
        "(nb-exec-table) gives it too, but in English only and with its own columns",
    ),
    Reach(
        "myst_nb.core.render:coalesce_streams",
        "(outputs: 'list[NotebookNode]') -> 'list[NotebookNode]'",
        "replaced by outputs.coalesce_streams_exactly: MyST-NB strips each stream chunk, so "
        "how the kernel cut a line changed the page",
    ),
    Reach(
        "myst_nb.core.config:NbParserConfig.copy",
        "(self, **changes) -> 'NbParserConfig'",
        "the executed notebooks go beside the site, not inside an edition's folder",
    ),
    Reach(
        "myst_nb.sphinx_:Parser.parse",
        "(self, inputstring: 'str', document: 'nodes.document') -> 'None'",
        "subclassed so that a failed cell is reported by page, cell and line",
    ),
    Reach(
        "myst_nb.core.execute.base:ExecutionError",
        None,
        "what the parser raises for a failed cell; its __cause__ holds nbclient's error",
    ),
    Reach(
        "myst_nb.ext.glue.utils:PendingGlueReference",
        None,
        "the gettext build keeps a glued figure's key, having no outputs to resolve it with",
    ),
    Reach(
        "jupyter_client.provisioning:LocalProvisioner.launch_kernel",
        "(self, cmd: list[str], **kwargs: Any) -> jupyter_client.connect.KernelConnectionInfo",
        "kernels.WarmProvisioner forks the kernel instead, and sets the attributes the "
        "other methods read: process (a Popen-like object), pid, pgid, cwd",
    ),
    Reach(
        "jupyter_client.provisioning:LocalProvisioner.pre_launch",
        "(self, **kwargs: Any) -> dict[str, typing.Any]",
        "kernels.WarmProvisioner switches the kernel manager to IPC before it runs",
    ),
    Reach(
        "jupyter_client.provisioning:LocalProvisioner.cleanup",
        "(self, restart: bool = False) -> None",
        "kernels.WarmProvisioner removes its sockets' folder after it",
    ),
    Reach(
        "sphinx.search:languages",
        None,
        "Chinese search registered with jieba's dictionary loaded on first use",
    ),
    Reach(
        "sphinx.search.zh:SearchChinese.__init__",
        "(self, options: 'dict[str, str]') -> 'None'",
        "subclassed: loads jieba's user dictionary only once text is split",
    ),
    Reach(
        "sphinx.search.zh:SearchChinese.split",
        "(self, input: 'str') -> 'list[str]'",
        "subclassed, as above",
    ),
    Reach(
        "sphinx.util.nodes:extract_messages",
        "(doctree: 'Element') -> 'Iterable[tuple[Element, str]]'",
        "the messages a page offers for translation, to warn about untranslated ones",
    ),
    Reach(
        "sphinx.util.i18n:docname_to_domain",
        "(docname: 'str', compaction: 'bool | str') -> 'str'",
        "the catalog a page's messages come from",
    ),
    Reach(
        "sphinx.directives.code:container_wrapper",
        "(directive: 'SphinxDirective', literal_node: 'Node', caption: 'str') -> 'nodes.container'",
        "pysource captions its code block as literalinclude does",
    ),
    Reach(
        "sphinx._cli.util.errors:handle_exception",
        "(exception, /, *, stderr, use_pdb, print_traceback, message_log, extensions)",
        "replaced by outputs.report_failure: a failed build prints a few lines and names "
        "a file with the full report, instead of Sphinx's crash report",
        names_only=True,
    ),
    Reach(
        "jupyter_client.client:KernelClient._handle_kernel_info_reply",
        "(self, msg: Dict[str, Any]) -> None",
        "kernels.ReadyClient's readiness check ends as jupyter_client's own does, adopting "
        "the kernel's protocol version from its kernel_info reply",
    ),
    Reach(
        "myst_parser.mdit_to_docutils.base:make_document",
        "(source_path='notset', parser_cls=<class 'docutils.parsers.rst.Parser'>) "
        "-> 'nodes.document'",
        "replaced by one that computes docutils' default settings once: MyST makes a "
        "throwaway document for every message a translation renders",
    ),
    Reach(
        "jupyter_cache.cache.main:JupyterCacheBase.truncate_caches",
        "(self)",
        "replaced by one that picks the records to drop in one query: pages read side by "
        "side cache at once, and the two queries of the original dropped a record another "
        "reader made between them",
    ),
    Reach(
        "jupyter_cache.cache.main:JupyterCacheBase.remove_cache",
        "(self, pk: int)",
        "how the replacement drops a record",
    ),
    Reach(
        "jupyter_cache.cache.main:CACHE_LIMIT_KEY",
        None,
        "the setting that holds how many records the cache keeps",
    ),
    Reach(
        "jupyter_cache.cache.main:DEFAULT_CACHE_LIMIT",
        None,
        "how many it keeps when that setting is not set",
    ),
    Reach(
        "jupyter_cache.cache.db:NbCacheRecord.accessed",
        None,
        "the records are dropped least recently used first, as jupyter-cache drops them",
    ),
    Reach(
        "sphinx.util.math:get_node_equation_number",
        "(writer: 'HTML5Translator', node: 'nodes.math_block') -> 'str'",
        "numbered equations rendered as MathML",
    ),
)


def current_signature(reach: Reach) -> str | None:
    """The signature the installed library has for ``reach``, as :data:`REACHES` spells it."""
    found = reach.resolve()
    if reach.signature is None or not callable(found):
        return None
    signature = inspect.signature(found)
    if not reach.names_only:
        return str(signature)
    bare = signature.replace(
        parameters=[
            p.replace(annotation=p.empty, default=p.empty) for p in signature.parameters.values()
        ],
        return_annotation=signature.empty,
    )
    return str(bare)


def patch_failure_reporting(report: Callable[..., None]) -> None:
    """Make ``sphinx-build`` report an exception with ``report``, not its crash report.

    ``report`` takes the arguments of Sphinx's ``handle_exception``.
    """
    import sphinx._cli.util.errors

    sphinx._cli.util.errors.handle_exception = report


def failure_reporting() -> Callable[..., None]:
    """The function ``sphinx-build`` reports an exception with now."""
    import sphinx._cli.util.errors

    return sphinx._cli.util.errors.handle_exception


def stream_coalescing() -> Callable[[list[Any]], list[Any]]:
    """The function MyST-NB's renderer merges stream outputs with now."""
    import myst_nb.core.render

    return myst_nb.core.render.coalesce_streams


def patch_stream_coalescing(
    replacement: Callable[[list[Any]], list[Any]],
) -> Callable[[list[Any]], list[Any]]:
    """Make MyST-NB's renderer merge stream outputs with ``replacement``.

    Make MyST-NB's renderer merge stream outputs with ``replacement``; return the
    original, which the replacement calls.
    """
    import myst_nb.core.render

    original = myst_nb.core.render.coalesce_streams
    # the type is a def with a parameter named outputs; MyST-NB passes it by position
    myst_nb.core.render.coalesce_streams = replacement  # type: ignore[assignment]
    return original


def adopt_kernel_info(client: KernelClient, reply: dict[str, Any]) -> None:
    """Let a kernel client adapt to the protocol version its kernel's ``reply`` names."""
    client._handle_kernel_info_reply(reply)


def patch_document_defaults() -> None:
    """Make MyST's renderer compute docutils' default settings once per parser class.

    MyST's renderer makes a fresh document, with docutils' default settings computed
    anew (an option parser built from scratch, about a millisecond), each time it
    renders a piece of Markdown, even when it is handed the document to render into:
    hundreds of times in a translated edition, whose every message is rendered alone.
    Each document still gets settings of its own, a copy of the computed defaults.
    """
    import copy
    import functools

    import myst_parser.mdit_to_docutils.base as myst_base
    from docutils.frontend import get_default_settings
    from docutils.utils import new_document

    if getattr(myst_base.make_document, "computes_defaults_once", False):
        return
    defaults = functools.cache(get_default_settings)
    original = myst_base.make_document
    default_parser = inspect.signature(original).parameters["parser_cls"].default

    @functools.wraps(original)
    def make_document(source_path: str = "notset", parser_cls: Any = None) -> Any:  # noqa: ANN401
        settings = copy.deepcopy(defaults(parser_cls or default_parser))
        return new_document(source_path, settings=settings)

    # a mark on the function, so that a second call sees the patch (mypy knows no such field)
    make_document.computes_defaults_once = True  # type: ignore[attr-defined]
    myst_base.make_document = make_document


def patch_cache_truncation() -> None:
    """Make jupyter-cache pick the records it drops in one query.

    Each time it caches an executed notebook, jupyter-cache drops the least recently
    used records beyond its limit, which it finds with two queries: those to keep, then
    every record not among them. The build reads pages side by side (``-j``), so
    readers cache notebooks at the same moment, and a record that another reader made
    between those two queries was dropped at once: that page ran again at the next
    build, or, when its notebook was not yet written, the build stopped with
    ``KeyError: 'Notebook file does not exist for cache record PK: ...'``. One query
    reads one state of the table, in which a record made after it does not exist.
    """
    from jupyter_cache.cache import main
    from jupyter_cache.cache.db import NbCacheRecord, Setting, session_context
    from sqlalchemy import desc

    if getattr(main.JupyterCacheBase.truncate_caches, "one_query", False):
        return

    def truncate_caches(self: main.JupyterCacheBase) -> None:
        limit = Setting.get_value(main.CACHE_LIMIT_KEY, self.db, main.DEFAULT_CACHE_LIMIT)
        with session_context(self.db) as session:
            dropped = [
                pk
                for (pk,) in session.query(NbCacheRecord.pk)
                .order_by(desc(NbCacheRecord.accessed), desc(NbCacheRecord.pk))
                .offset(limit)
                .all()
            ]
        for pk in dropped:
            with contextlib.suppress(KeyError):  # another reader dropped it first
                self.remove_cache(pk)

    # a mark on the function, as in patch_document_defaults; then the patch itself
    truncate_caches.one_query = True  # type: ignore[attr-defined]
    main.JupyterCacheBase.truncate_caches = truncate_caches  # type: ignore[method-assign]


def set_notebook_output_folder(env: BuildEnvironment, folder: str) -> None:
    """Where MyST-NB writes executed notebooks and their images.

    Where MyST-NB writes executed notebooks and their images (it keeps its
    configuration on the environment, made at ``builder-inited``).
    """
    mystnb_env = cast(SphinxEnvType, env)  # MyST-NB's type for the environment it fills
    mystnb_env.mystnb_config = mystnb_env.mystnb_config.copy(output_folder=folder)


def notebook_cache_path(env: BuildEnvironment) -> str:
    """The jupyter-cache folder MyST-NB executes into."""
    return str(cast(SphinxEnvType, env).mystnb_config.execution_cache_path)


def register_search_language(code: str, language: type) -> None:
    """Use ``language`` for the search index of editions whose language is ``code``."""
    import sphinx.search

    sphinx.search.languages[code] = language


def chinese_search() -> type:
    """Sphinx's Chinese search language (importing it imports jieba)."""
    from sphinx.search.zh import SearchChinese

    return SearchChinese


def execution_record(env: BuildEnvironment, docname: str) -> dict[str, Any] | None:
    """How MyST-NB last executed a page: ``mtime``, ``runtime`` (seconds) and the rest."""
    record = NbMetadataCollector.get_exec_data(cast(SphinxEnvType, env), docname)
    return dict(record) if record else None
