"""Every private API of MyST-NB, Sphinx, jupyter_client and jupyter-cache the build uses.

Each is used here only, and listed in :data:`REACHES` with the signature it was written
against, which ``tests/conf/test_upstream.py`` checks.
"""

from __future__ import annotations

import inspect
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from jupyter_client.client import KernelClient
from jupyter_client.provisioning import LocalProvisioner
from myst_nb.core.render import MimeData, NbElementRenderer  # a MIME plugin's argument types
from myst_nb.sphinx_ import NbMetadataCollector, SphinxEnvType
from sphinx.directives.code import container_wrapper
from sphinx.environment import BuildEnvironment
from sphinx.util.i18n import docname_to_domain
from sphinx.util.math import get_node_equation_number
from sphinx.util.nodes import extract_messages

# imported here for the rest of the build, which imports no private name itself
__all__ = [
    "LocalProvisioner",
    "MimeData",
    "NbElementRenderer",
    "container_wrapper",
    "docname_to_domain",
    "extract_messages",
    "get_node_equation_number",
]


@dataclass(frozen=True)
class PrivateAPI:
    """One private name the build uses, why, and what upstream would retire it."""

    target: str  # module:qualified.name
    signature: str | None  # as inspect.signature prints it; None for a non-callable
    why: str
    retired_by: str

    def resolve(self) -> object:
        """The object the target names; ImportError or AttributeError when it moved."""
        return pkgutil.resolve_name(self.target)

    def current_signature(self) -> str | None:
        """The installed library's signature for the target, as :data:`REACHES` spells it.

        A target the build has patched names what it replaced (``__wrapped__``), whose
        signature is the library's.
        """
        found = self.resolve()
        if self.signature is None or not callable(found):
            return None
        return str(inspect.signature(found))  # follows __wrapped__


Merge = Callable[[list[Any]], list[Any]]
_UNDOCUMENTED = "Sphinx documenting it as API (it is undocumented, and widely used)"
_PROVISIONER = "a public way to start a local kernel's process in jupyter_client"

REACHES = (
    PrivateAPI(
        "myst_nb.sphinx_:NbMetadataCollector.get_exec_data",
        "(env: 'SphinxEnvType', docname: 'str') -> 'ExecutionResult | None'",
        "how each page ran: the status page's times, and a failed page's error and traceback",
        "MyST-NB giving execution results a public accessor (nb-exec-table reads them so)",
    ),
    PrivateAPI(
        "myst_nb.core.render:coalesce_streams",
        "(outputs: 'list[NotebookNode]') -> 'list[NotebookNode]'",
        "replaced by extensions.outputs.join_streams, which joins stream chunks first",
        "MyST-NB joining stream chunks exactly (executablebooks/MyST-NB#690)",
    ),
    PrivateAPI(
        "myst_nb.core.config:NbParserConfig.copy",
        "(self, **changes) -> 'NbParserConfig'",
        "the executed notebooks go beside the site, not inside an edition's folder",
        "a MyST-NB option for the output folder (it is outdir.parent / jupyter_execute)",
    ),
    PrivateAPI(
        "jupyter_client.provisioning:LocalProvisioner.launch_kernel",
        "(self, cmd: list[str], **kwargs: Any) -> jupyter_client.connect.KernelConnectionInfo",
        "kernels.WarmProvisioner forks the kernel, and sets process, pid, pgid and cwd itself",
        _PROVISIONER,
    ),
    PrivateAPI(
        "jupyter_client.provisioning:LocalProvisioner.pre_launch",
        "(self, **kwargs: Any) -> dict[str, typing.Any]",
        "kernels.WarmProvisioner switches the kernel manager to IPC first",
        _PROVISIONER,
    ),
    PrivateAPI(
        "jupyter_client.provisioning:LocalProvisioner.cleanup",
        "(self, restart: bool = False) -> None",
        "kernels.WarmProvisioner removes its sockets' folder after it",
        _PROVISIONER,
    ),
    PrivateAPI(
        "jupyter_client.client:KernelClient._handle_kernel_info_reply",
        "(self, msg: Dict[str, Any]) -> None",
        "kernels.ReadyClient adopts the kernel's protocol version as jupyter_client's own does",
        "jupyter_client letting a client skip wait_for_ready's 0.2 s of IOPub silence",
    ),
    PrivateAPI(
        "sphinx.search.zh:SearchChinese",
        None,
        "subclassed to name the English stemmer its page script ships",
        "sphinx-doc/sphinx#14416 (merged, not yet released), which fixes #14229",
    ),
    PrivateAPI(
        "sphinx.util.nodes:extract_messages",
        "(doctree: 'Element') -> 'Iterable[tuple[Element, str]]'",
        "the messages a page offers for translation, to warn about untranslated ones",
        _UNDOCUMENTED,
    ),
    PrivateAPI(
        "sphinx.util.i18n:docname_to_domain",
        "(docname: 'str', compaction: 'bool | str') -> 'str'",
        "the catalog a page's messages come from",
        _UNDOCUMENTED,
    ),
    PrivateAPI(
        "sphinx.directives.code:container_wrapper",
        "(directive: 'SphinxDirective', literal_node: 'Node', caption: 'str') -> 'nodes.container'",
        "pysource captions its code block as literalinclude does",
        _UNDOCUMENTED,
    ),
    PrivateAPI(
        "sphinx.util.math:get_node_equation_number",
        "(writer: 'HTML5Translator', node: 'nodes.math_block') -> 'str'",
        "numbered equations rendered as MathML",
        _UNDOCUMENTED,
    ),
)


def patch_stream_coalescing(replacement: Merge) -> Merge:
    """Make MyST-NB's renderer merge stream outputs with ``replacement``; return its own."""
    import myst_nb.core.render

    original = myst_nb.core.render.coalesce_streams
    replacement.__wrapped__ = original  # type: ignore[attr-defined]  # what it replaced
    # the type is a def with a parameter named outputs; MyST-NB passes it by position
    myst_nb.core.render.coalesce_streams = replacement  # type: ignore[assignment]
    return original


def adopt_kernel_info(client: KernelClient, reply: dict[str, Any]) -> None:
    """Let a kernel client adapt to the protocol version its kernel's ``reply`` names."""
    client._handle_kernel_info_reply(reply)


def set_notebook_output_folder(env: BuildEnvironment, folder: str) -> None:
    """Where MyST-NB writes executed notebooks and their images (from ``builder-inited`` on)."""
    mystnb_env = cast(SphinxEnvType, env)  # MyST-NB's type for the environment it fills
    mystnb_env.mystnb_config = mystnb_env.mystnb_config.copy(output_folder=folder)


def notebook_output_folder(env: BuildEnvironment) -> str:
    """Where MyST-NB wrote the executed notebooks, and each page's ``<page>.glue.json``."""
    return str(cast(SphinxEnvType, env).mystnb_config.output_folder)


def notebook_cache_path(env: BuildEnvironment) -> str:
    """The jupyter-cache folder MyST-NB executes into."""
    return str(cast(SphinxEnvType, env).mystnb_config.execution_cache_path)


def chinese_search() -> type:
    """Sphinx's Chinese search language (importing it imports jieba)."""
    from sphinx.search.zh import SearchChinese

    return SearchChinese


def execution_record(env: BuildEnvironment, docname: str) -> dict[str, Any] | None:
    """How MyST-NB last executed a page: ``mtime``, ``runtime`` (seconds) and the rest."""
    record = NbMetadataCollector.get_exec_data(cast(SphinxEnvType, env), docname)
    return dict(record) if record else None
