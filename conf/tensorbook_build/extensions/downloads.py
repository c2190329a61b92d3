"""Sphinx adapter for :mod:`tensorbook_build.downloads`: the article header's links.

:func:`write_downloads` writes each chapter's notebook and script, in the edition's
language; their words come from ``conf/_templates/downloads-*.html``, like the theme's.
"""

from __future__ import annotations

import functools
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import nbformat
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

from tensorbook.recording import BOOK, module_hashes
from tensorbook_build.catalogs import catalog_folders, page_translations
from tensorbook_build.downloads import (
    COMPARE,
    DEVICE_DEPENDENT,
    FOLDER,
    SCRIPT_TEXT,
    comparison_cells,
    download_name,
    install_code,
    is_build_check,
    notebook_for,
    plain_markdown,
    script_for,
)
from tensorbook_build.execute import Page, read_page
from tensorbook_build.extensions import hooks, ledger
from tensorbook_build.extensions.pysource import source_without_docstrings
from tensorbook_build.ledger import page_figures as figure_places
from tensorbook_build.notebooks import colab_url
from tensorbook_build.provenance import receipt_url
from tensorbook_build.settings import SOURCE_LANGUAGE, WHEELS, relative_root, wheel_name
from tensorbook_build.spec import read_spec
from tensorbook_build.upstream import notebook_output_folder

logger = logging.getLogger(__name__)


def is_chapter(app: Sphinx, docname: str) -> bool:
    """Whether a page runs code: it has a kernelspec in its front matter."""
    return "kernelspec" in app.env.metadata.get(docname, {})


def write_downloads(app: Sphinx) -> None:
    """Write each chapter's notebook and script into the edition's downloads folder."""
    folder = Path(app.outdir, FOLDER)
    if folder.exists():
        shutil.rmtree(folder)  # a page that is gone leaves no download behind
    folder.mkdir()
    language = app.config.language
    version = app.config.release
    wheel_url = f"{app.config.tensorbook_base_url}{WHEELS}/{wheel_name(version)}"
    site = {
        "version": version,
        "wheel_url": wheel_url,
        "local": urlsplit(wheel_url).hostname in {"localhost", "127.0.0.1"},
    }
    install = install_code({"TENSORBOOK_VERSION": version, "TENSORBOOK_WHEEL": wheel_url})
    words = {
        part: app.builder.templates.render("downloads-compare.html", {"part": part}).strip()
        for part in ("measured", "holds", "fails", "before", "after")
    }
    folders = catalog_folders(app.srcdir, app.config.locale_dirs, language)
    titles = {docname: title.astext() for docname, title in app.env.titles.items()}

    def _source(path: str, name: str) -> str | None:  # what a {pysource} block shows
        return source_without_docstrings(Path(app.srcdir, path).read_text(encoding="utf-8"), name)

    for docname in sorted(d for d in app.env.found_docs if is_chapter(app, d)):
        title = app.env.titles[docname].astext()
        messages = None
        if language != SOURCE_LANGUAGE:
            messages = page_translations(folders, docname)
        page = read_page(Path(app.env.doc2path(docname)).read_text(encoding="utf-8"))
        # its code cells as the source edition's build executed them (outputs are not translated)
        doctree = app.env.get_doctree(docname)
        cells = [n for n in doctree.findall(nodes.container) if n.get("nb_element") == "cell_code"]
        values = _figures(app, docname, doctree)
        notebook = notebook_for(
            page,
            app.builder.templates.render("downloads-intro.html", {"title": title, **site}).strip(),
            messages,
            install=install,
            closing=[
                *_closing(cells, docname, page, (words["before"], words["after"])),
                *_receipt_cell(app, docname, page, values),
            ],
            checks=_book_figures_before_checks(cells, page),
            verdict_words=words,
            plain=functools.partial(plain_markdown, values=values, titles=titles, source=_source),
        )
        notebook.metadata[BOOK] = _book(app, docname, page, values, wheel_url)
        name = download_name(docname)
        nbformat.write(notebook, folder / f"{name}.ipynb")
        (folder / f"{name}.py").write_text(script_for(notebook), encoding="utf-8")


def _book(
    app: Sphinx, docname: str, page: Page, values: dict[str, str], wheel: str
) -> dict[str, Any]:
    """What a receipt of the page needs to know of the book (:data:`tensorbook.recording.BOOK`).

    The commit is the one the footer names: the receipt's cells are checked against it.
    The modules are the hashes of those the page's cells import, as this build ran them:
    the receipt runs nothing on a package whose modules the importer would refuse.
    """
    commit = app.config.html_context["tensorbook_commit"]
    sha = "unknown" if commit is None else commit.sha + ("+modified" if commit.modified else "")
    declared = _declared(page)
    device, torch, date = (values.get(f"recorded:{key}", "") for key in ("device", "torch", "date"))
    source = f"{device} · torch {torch} · {date}"
    figures = {
        name: {"cell": f.cell, "pattern": f.pattern, "label": f.label, "at": f.at,
               "book": values.get(f"recorded:{name}", "?"),
               "book_at": values.get(f"recorded:{name}.at", ""), "source": source,
               "stale": bool(values.get("recorded:state"))}
        for name, f in declared.items()
    }  # fmt: skip
    repository = app.config.tensorbook_repository  # where to send a receipt, if configured
    date = "" if commit is None else commit.date
    package = Path(read_spec(app.config.tensorbook_spec).src) / "tensorbook"
    imported = module_hashes(list(page.code.values()), package)
    return {"page": docname, "commit": sha, "commit_date": date, "version": app.config.release,
            "wheel": wheel, "modules": imported[-1] if imported else {}, "figures": figures,
            "repository": repository, "send": _send(app, docname),
            "built_on_gpu": _built_on_gpu(app)}  # fmt: skip


def _send(app: Sphinx, docname: str) -> str:
    """A new issue that sends a receipt of the chapter, filled in; ``""`` without a repository."""
    repository = app.config.tensorbook_repository
    if not repository:
        return ""
    commit = app.config.html_context["tensorbook_commit"]
    return receipt_url(repository, chapter=docname, language=app.config.language, commit=commit)


def _declared(page: Page) -> dict[str, Any]:
    """The recorded figures the page's front matter declares (its prose quotes), by name."""
    try:
        return dict(figure_places(page.metadata, page.code))
    except ValueError:  # the build has said so (extensions.ledger)
        return {}


def _built_on_gpu(app: Sphinx) -> bool:
    """Whether this build ran the pages on a GPU: then the prose's figures are its own."""
    return read_spec(app.config.tensorbook_spec).device.startswith("cuda")


def _figures(app: Sphinx, docname: str, doctree: nodes.document) -> dict[str, str]:
    """The figures a page's prose shows, by name.

    Each glued value comes from MyST-NB's ``<page>.glue.json``, which it writes beside the
    executed notebook; each recorded one is keyed ``recorded:<name>``.
    """
    glued = Path(notebook_output_folder(app.env), f"{docname}.glue.json")
    data = json.loads(glued.read_text(encoding="utf-8")) if glued.is_file() else {}
    values = {name: output["data"].get("text/plain", "") for name, output in data.items()}
    recordings = ledger.page_recordings(app.srcdir, docname)
    recorded, _ = ledger.figure_values(app, docname, doctree, recordings)
    return values | {f"recorded:{name}": value for name, value in recorded.items()}


def _printed(cell: nodes.Element) -> str:
    """What a cell of a page printed, as the page shows it."""
    return "\n".join(
        block.astext().rstrip("\n")
        for block in cell.findall(nodes.literal_block)
        if "output" in block["classes"]
    )


def _book_figures_before_checks(cells: Sequence[nodes.Element], page: Page) -> dict[str, str]:
    """For each build check of a page, what the book printed: in it, else in the cell before."""
    printed = {node["cell_index"]: _printed(node) for node in cells}
    figures = {}
    for cell in page.cells:
        if is_build_check(cell):
            before = [text for i, text in sorted(printed.items()) if i <= cell.index and text]
            figures[cell.source.strip()] = before[-1] if before else ""
    return figures


def _closing(
    cells: Sequence[nodes.Element], docname: str, page: Page, words: tuple[str, str]
) -> list[nbformat.NotebookNode]:
    """The cells that end a page's download: its figures beside the reader's, if any."""
    tagged = sum(COMPARE in c.tags for c in page.cells)
    if not tagged:
        return []
    compared = [_printed(c) for c in cells if f"tag_{COMPARE}" in c["classes"]]
    device_line = next((p.split("\n")[0] for p in map(_printed, cells) if p), "")
    if len(compared) != tagged or not all(compared) or not device_line:
        message = "a cell tagged %s printed nothing for the download to compare"
        logger.error(message, COMPARE, location=docname, type="tensorbook", subtype="downloads")
        return []
    return comparison_cells(page.cells, [device_line, *compared], words)


def _receipt_cell(
    app: Sphinx, docname: str, page: Page, values: dict[str, str]
) -> list[nbformat.NotebookNode]:
    """The last cell of a page with device-dependent cells: how to make a receipt, where to send it.

    ``values`` are the page's figures (:func:`_figures`): where its prose's recorded
    figures come from, and whether they are older than its code. The script's text, whose
    reader types the command in a terminal, is in the cell's metadata (:data:`SCRIPT_TEXT`).
    """
    if not any(DEVICE_DEPENDENT in cell.tags for cell in page.cells):
        return []
    address = f"{app.config.tensorbook_base_url}{app.config.language}/{FOLDER}"
    context = {
        "send": _send(app, docname),
        "chapter": docname,
        "notebook_url": f"{address}/{download_name(docname)}.ipynb",
        "repository": app.config.tensorbook_repository,
        "file_name": f"receipt-{docname}-<device>.json",
        "file_example": f"receipt-{docname}-cpu.json",
        "device": values.get("recorded:device", ""),
        "compared": bool(_declared(page)) and bool(values.get("recorded:device")),
        "stale": bool(values.get("recorded:state")),
        "built_on_gpu": _built_on_gpu(app),
        "language": app.config.language,
    }
    text, script = (
        app.builder.templates.render("downloads-receipt.html", {**context, "script": script})
        for script in (False, True)
    )
    cell = nbformat.v4.new_markdown_cell(text.strip())
    cell.metadata[SCRIPT_TEXT] = script.strip()
    return [cell]


def _add_links(
    app: Sphinx,
    pagename: str,
    templatename: str,
    context: dict[str, Any],
    doctree: nodes.document | None,
) -> None:
    name = f"{relative_root(pagename)}{FOLDER}/{download_name(pagename)}"
    links = {"notebook": f"{name}.ipynb", "script": f"{name}.py"}
    config = app.config  # Colab opens the notebook the publishing workflow put on a branch
    colab = colab_url(
        config.tensorbook_repository, config.tensorbook_base_url, config.language, pagename
    )
    links["colab"] = colab or ""
    context["tensorbook_downloads"] = links if is_chapter(app, pagename) else None


def setup(app: Sphinx) -> dict[str, object]:
    """Register the header's links (extensions.finish writes the files they name)."""
    hooks.connect(app, __name__)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
