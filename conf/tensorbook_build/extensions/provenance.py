"""Sphinx adapter for :mod:`tensorbook_build.provenance`: every page's footer.

``conf/_templates/provenance.html`` gets the version, the commit, where a repository is
configured the page's report link (and a chapter's with device-dependent cells, a link
that sends a reader's receipt of it), and where the edition's PDF was made, a link to it
(the commit and the PDF come from ``html_context``: extensions.configuration).
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

from tensorbook.receipt import TAG
from tensorbook.wording import DEVICE_LINE, parse
from tensorbook_build.extensions import hooks
from tensorbook_build.provenance import receipt_url, report_url
from tensorbook_build.settings import pdf_name, relative_root

_DEVICE_LINE = "tensorbook_device_line"


def _note_device_line(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    # marks the device line's block; notes the line in English, before an edition translates it: a report is read by the maintainers
    for block in doctree.findall(nodes.literal_block):
        if "output" in block["classes"]:
            line = block.astext().split("\n", 1)[0]
            if parse(DEVICE_LINE, line) is not None:
                doctree[_DEVICE_LINE] = line
                # the page's stylesheet wraps this line: the reader reads it in full
                block["classes"].append("tb-device-line")
                return


def _on_html_page_context(
    app: Sphinx,
    pagename: str,
    templatename: str,
    context: dict[str, Any],
    doctree: nodes.document | None,
) -> None:
    config = app.config
    context["tensorbook_version"] = config.release
    pdf = relative_root(pagename) + pdf_name(config.language)
    context["tensorbook_pdf"] = pdf if context["tensorbook_has_pdf"] else ""
    context["tensorbook_report"] = ""
    if config.tensorbook_repository and doctree is not None:
        context["tensorbook_report"] = report_url(
            config.tensorbook_repository,
            page=f"{config.tensorbook_base_url}{config.language}/{pagename}.html",
            language=config.language,
            commit=context["tensorbook_commit"],
            device_line=doctree.get(_DEVICE_LINE, ""),
        )
    # a chapter whose outputs depend on the device takes readers' receipts (tensorbook.receipt)
    context["tensorbook_receipt"] = ""
    if config.tensorbook_repository and doctree is not None and _has_device_dependent(doctree):
        context["tensorbook_receipt"] = receipt_url(
            config.tensorbook_repository,
            chapter=pagename,
            language=config.language,
            commit=context["tensorbook_commit"],
        )


def _has_device_dependent(doctree: nodes.document) -> bool:
    """Whether a page has a cell tagged ``device-dependent``: its download's last cell makes a receipt."""
    return any(
        f"tag_{TAG}" in node["classes"]
        for node in doctree.findall(nodes.container)
        if node.get("nb_element") == "cell_code"
    )


def setup(app: Sphinx) -> dict[str, object]:
    """Register the handlers."""
    hooks.connect(app, __name__)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
