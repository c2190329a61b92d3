"""Sphinx adapter for the status page: ``{build-status} pages`` and ``{build-status} torch``.

Filled in once every page is read: where and when each page executed, each device's
recordings of it (fresh, or how many cells stale: :mod:`tensorbook_build.ledger`), and the
torch versions ``nox -s compat`` ran the book with (``docs/recorded/compat.json``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.locale import get_translation
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from tensorbook_build import ledger
from tensorbook_build.execute import read_page
from tensorbook_build.extensions import folds, hooks
from tensorbook_build.extensions import ledger as ledger_adapter
from tensorbook_build.extensions.downloads import is_chapter
from tensorbook_build.settings import edition
from tensorbook_build.spec import read_spec
from tensorbook_build.upstream import execution_record

logger = logging.getLogger(__name__)

COMPAT_FIELDS = ("torch", "python", "device", "doctests", "pages", "date")
COMPAT_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": list(COMPAT_FIELDS),
        "properties": {key: {"type": "string"} for key in COMPAT_FIELDS},
    },
}
OUTCOMES = ("doctests", "pages")  # the fields shown in the page's words: passed, failed
STATUS_PAGE = "status"
# The words the status page shows; conf/_templates/ledger-words.html lists them after the
# ledger's for the catalogs (a test checks it lists exactly those).
WORDS = (
    "Page", "Execution", "Executed on", "Recordings",  # the pages' table's header
    "none", "fresh", "cells without a fresh recording: {count}", "{seconds} s, executed {date}", "not executed",
    "torch", "Python", "Device", "Doctests", "Pages", "Run on",  # the compatibility runs' header
    "No run against another torch has been recorded yet.", "passed", "failed",
)  # fmt: skip


class status_placeholder(nodes.General, nodes.Element):
    """Where a status table goes once every page is read."""


class BuildStatus(SphinxDirective):
    """``{build-status} pages`` or ``{build-status} torch``: filled in once every page is read."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        """A placeholder for the table named."""
        if self.arguments[0] not in ("pages", "torch"):
            msg = f"build-status takes 'pages' or 'torch', not {self.arguments[0]!r}"
            raise self.error(msg)
        return [status_placeholder(part=self.arguments[0])]


_DATE = re.compile(r"(\d{4}-\d\d-\d\d(?: \d\d:\d\d)?)")


def _table(
    header: Sequence[str],
    rows: Sequence[Sequence[nodes.Node | str]],
    caption: str = "",
    name: str = "",
) -> nodes.table:
    def cell(content: nodes.Node | str) -> nodes.entry:
        if isinstance(content, nodes.Node):
            return nodes.entry("", nodes.paragraph("", "", content))
        # a date is never broken across lines (tensorbook.css: .tb-date); a torch
        # version may break after its "+" (2.11.0+ cu130), so the table fits a phone
        parts: list[nodes.Node] = []
        for part in filter(None, _DATE.split(content)):
            if _DATE.fullmatch(part):
                parts.append(nodes.inline(part, part, classes=["tb-date"]))
                continue
            for i, piece in enumerate(part.split("+")):
                if i:
                    parts += [nodes.Text("+"), nodes.raw("", "<wbr>", format="html")]
                parts.append(nodes.Text(piece))
        return nodes.entry("", nodes.paragraph("", "", *parts))

    group = nodes.tgroup("", *(nodes.colspec(colwidth=1) for _ in header), cols=len(header))
    group += [
        nodes.thead("", nodes.row("", *map(cell, header))),
        nodes.tbody("", *(nodes.row("", *map(cell, row)) for row in rows)),
    ]
    table = nodes.table("", classes=["tb-status"])
    if caption:  # Sphinx numbers a titled table, which needs an id
        table["ids"] = [name]
        table += nodes.title(caption, caption)
    table += group
    return table


def _fill_status(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    placeholders = list(doctree.findall(status_placeholder))
    if not placeholders:
        return
    translate = get_translation("sphinx")
    env = app.env
    spec = read_spec(app.config.tensorbook_spec)
    ran_on = f"{spec.device} · torch {spec.torch}"
    rows: list[list[nodes.Node | str]] = []
    chapters = [page for page in env.found_docs if is_chapter(app, page)]
    order = [env.config.root_doc, *env.toctree_includes.get(env.config.root_doc, [])]
    for page in sorted(chapters, key=lambda d: (order.index(d) if d in order else len(order), d)):
        data = execution_record(env, page)
        if data and data.get("runtime") is not None:
            run = translate("{seconds} s, executed {date}").format(
                seconds=f"{data['runtime']:.1f}",
                date=time.strftime("%Y-%m-%d %H:%M", time.gmtime(data["mtime"])),
            )
        else:
            run = translate("not executed")
        link = nodes.reference("", "", nodes.Text(env.titles[page].astext()), internal=True)
        link["refuri"] = app.builder.get_relative_uri(docname, page)
        rows.append([link, run, _recordings_cell(app, page, translate)])
    # where every page ran is one fact, the table's caption, not a column repeating it
    header = [translate(w) for w in ("Page", "Execution", "Recordings")]
    caption = f"{translate('Executed on')} {ran_on}"
    tables: dict[str, nodes.Node] = {"pages": _table(header, rows, caption, "pages-executed")}
    if runs := _compat_runs(Path(app.srcdir, ledger.FOLDER, ledger.COMPAT)):
        header = [
            translate(w) for w in ("torch", "Python", "Device", "Doctests", "Pages", "Run on")
        ]
        rows = [[translate(r[f]) if f in OUTCOMES else r[f] for f in COMPAT_FIELDS] for r in runs]  # fmt: skip
        tables["torch"] = _table(header, rows)
    else:
        text = translate("No run against another torch has been recorded yet.")
        tables["torch"] = nodes.paragraph("", text)
    for placeholder in placeholders:
        placeholder.replace_self(tables[placeholder["part"]].deepcopy())


def _compat_runs(path: Path) -> list[dict[str, str]]:
    """The compatibility runs (``nox -s compat`` writes them); a broken file stops the build."""
    if not path.is_file():
        return []
    runs, problem = ledger.read_json(path, COMPAT_SCHEMA)
    if not problem:
        return cast(list[dict[str, str]], runs)
    fix = "it is written by nox -s compat: run it again, or restore the file"
    logger.error("%s: %s; %s", path, problem, fix, type="tensorbook", subtype="ledger")
    return []


def _recordings_cell(app: Sphinx, page: str, translate: Callable[[str], str]) -> str:
    """Each device's recording of ``page``: fresh, or how many cells it does not show fresh.

    The cells counted are those a reader sees tagged device-dependent: changed since they
    were recorded, or never recorded.
    """
    found = ledger_adapter.page_recordings(app.srcdir, page)
    if not found:
        return translate("none")
    current = ledger_adapter.current_cells(app, page)
    text = Path(app.env.doc2path(page)).read_text(encoding="utf-8")
    marked = [c.index for c in read_page(text).cells if ledger.TAG in c.tags and c.index in current]
    parts = []
    for recording in found:
        recorded = ledger_adapter.recorded_cells(recording, current)
        stale = sum(
            index not in recorded or ledger.freshness(recorded[index], *current[index]).stale
            for index in marked
        )
        words = "cells without a fresh recording: {count}" if stale else "fresh"
        p = recording.provenance
        by = f"{translate(ledger_adapter.CONTRIBUTED)} · " if recording.contributed else ""
        said = translate(words).format(count=stale)
        parts.append(f"{by}{p['model']} · {p['run_date']} · {said}")
    # a CJK edition sets its semicolon full width, as its other punctuation
    return ("；" if edition(app.config.language).cjk else "; ").join(parts)


def _outdated(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    # read again at every build: the page shows this build's own execution
    return [STATUS_PAGE] if STATUS_PAGE in env.found_docs else []


def setup(app: Sphinx) -> dict[str, object]:
    """Register the placeholder, the directive and the handlers."""
    skip = (folds.skip, None)
    app.add_node(status_placeholder, html=skip, latex=skip, text=skip)
    app.add_directive("build-status", BuildStatus)
    hooks.connect(app, __name__)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
