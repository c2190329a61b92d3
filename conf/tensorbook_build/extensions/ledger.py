"""Sphinx adapter for :mod:`tensorbook_build.ledger`: recorded outputs beside the build's own.

* ``doctree-read`` (before Sphinx collects the page's images, so that recorded
  figures are copied like any other): after each cell tagged ``device-dependent``, the
  recordings of the *other* devices, each in a fold (a native ``<details>``, opened
  with the keyboard like the solutions' folds) whose summary is its provenance, in the
  page's language, and a badge: the same as this build's output, different (with a
  short diff of the text), or stale (the cell's code, or a module it imports, changed
  since it was recorded: shown, marked stale, never hidden). In the PDF, where nothing
  folds, the summary is a bold line before the recorded output. The page's stale
  recordings are listed in one line of the build's log; not a Sphinx warning, which
  ``-W`` would make an error, since only ``nox -s record`` on that device can refresh
  them. Recordings of another device whose outputs differ in a cell the page does
  not mark are a warning: the page's marks are wrong.
* the ``{recorded}`` role: ``{recorded}`cuda:speedup_largest``` is the figure a page
  glued as ``speedup_largest`` in the newest recording made on a device of that type
  (``cuda``) or kind (``nvidia-h100-80gb-hbm3``), followed by where it was recorded.
  Where no recording has it, the role says so ("no recording on cuda yet") and states
  no figure: the build does not invent one.
* the ``{build-status}`` directive: the status page's tables (filled in once every
  page is read, so in ``doctree-resolved``): each page's execution, its device and
  torch, and its recordings with their dates and freshness; and the torch versions the
  compatibility runs passed with (``docs/recorded/compat.json``).
* ``env-get-outdated``: a page whose recordings changed is read again (the status
  page, every build).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.locale import get_translation
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxRole

from tensorbook_build.extensions import folds
from tensorbook_build.ledger import (
    FOLDER,
    TAG,
    Cell,
    Recording,
    RecordingError,
    cell_module_hashes,
    device_kind,
    freshness,
    page_recordings,
    source_hash,
    text_diff,
    unmarked_differences,
)
from tensorbook_build.settings import SOURCE_LANGUAGE
from tensorbook_build.upstream import execution_record

logger = logging.getLogger(__name__)

COMPAT = "compat.json"
"""Under ``docs/recorded``: the torch versions the compatibility runs tried, and how they did."""
STATUS_PAGE = "status"

# The words the ledger shows; conf/_templates/ledger-words.html lists them for the catalogs.
RECORDED_ON = "recorded on {model}"
COMMIT = "commit {commit}"
SAME = "same as this build"
DIFFERENT = "differs from this build"
STALE_CODE = "stale: the cell's code changed since it was recorded"
STALE_MODULES = "stale: {modules} changed since it was recorded"
NOT_THIS_BUILD = "Not this build's output: recorded by nox -s record on another machine."
NO_RECORDING = "no recording on {device} yet"
WORDS = (
    RECORDED_ON,
    COMMIT,
    SAME,
    DIFFERENT,
    STALE_CODE,
    STALE_MODULES,
    NOT_THIS_BUILD,
    NO_RECORDING,
)
STATUS_WORDS = (
    "Page",
    "Execution",
    "Executed on",
    "Recordings",
    "none",
    "fresh",
    "{count} stale cells",
    "{seconds} s, executed {date}",
    "not executed",
    "torch",
    "Python",
    "Doctests",
    "Pages",
    "Run on",
    "No run against another torch has been recorded yet.",
    "passed",
    "failed",
)


class recorded_fold(nodes.General, nodes.Element):
    """One device's recorded output of a cell: a fold in HTML, a labelled block in the PDF."""


class recorded_summary(nodes.Part, nodes.TextElement):
    """The fold's label: the recording's provenance and its badge."""


class status_placeholder(nodes.General, nodes.Element):
    """Where the status tables go once every page is read."""


def _this_kind(device: str) -> str:
    if device == "cpu":
        return "cpu"
    import torch

    return device_kind("cuda", torch.cuda.get_device_name(torch.device(device)))


def _recorded_root(app: Sphinx) -> Path:
    return Path(app.srcdir, FOLDER)


def _label(recording: Recording, translate: Callable[[str], str]) -> str:
    fields = recording.label_fields()
    parts = [translate(RECORDED_ON).format(model=fields["model"])]
    if fields["cuda"]:
        parts.append(f"CUDA {fields['cuda']}")
    parts += [
        f"torch {fields['torch']}",
        fields["date"],
        translate(COMMIT).format(commit=fields["commit"]),
    ]
    return " · ".join(parts)


def _recordings(app: Sphinx, docname: str) -> list[Recording]:
    """The page's recordings on other devices; a broken file stops the build, named."""
    try:
        found = page_recordings(_recorded_root(app), docname)
    except RecordingError as error:
        raise _fail(error) from None
    own = _this_kind(app.config.tensorbook_device)
    return [r for r in found if r.kind != own]


def _fail(error: RecordingError) -> Exception:
    from sphinx.errors import ExtensionError

    return ExtensionError(str(error))


def _current_cells(app: Sphinx, docname: str) -> dict[int, tuple[str, dict[str, str]]]:
    """Each code cell of the page as it is now: notebook index to source hash and modules."""
    from myst_nb.core.read import read_myst_markdown_notebook

    text = Path(app.env.doc2path(docname)).read_text(encoding="utf-8")
    cells = read_myst_markdown_notebook(text).cells
    indices = [i for i, cell in enumerate(cells) if cell.cell_type == "code"]
    codes = [cells[i].source for i in indices]
    modules = cell_module_hashes(codes, Path(app.config.tensorbook_src_dir).resolve())
    return {
        index: (source_hash(code), mods)
        for index, code, mods in zip(indices, codes, modules, strict=True)
    }


def _own_outputs(cell: nodes.Element) -> list[str]:
    return [
        block.astext().rstrip("\n")
        for block in cell.findall(nodes.literal_block)
        if "output" in block["classes"]
    ]


def _show_recordings(app: Sphinx, doctree: nodes.document) -> None:
    docname = app.env.docname
    marked = [
        node
        for node in doctree.findall(nodes.container)
        if node.get("nb_element") == "cell_code" and f"tag_{TAG}" in node["classes"]
    ]
    recordings = _recordings(app, docname)
    if not recordings:
        return
    translate = get_translation("sphinx")
    current = _current_cells(app, docname)
    stale: list[str] = []
    for cell in marked:
        index = cell["cell_index"]
        source, modules = current.get(index, ("", {}))
        for recording in recordings:
            recorded = _match(recording, index, source)
            if recorded is None:
                continue
            state = freshness(recorded, source, modules)
            texts = [o["text"] for o in recorded.outputs if "text" in o]
            own = _own_outputs(cell)
            if state.stale:
                badge = (
                    translate(STALE_CODE)
                    if state.code_changed
                    else translate(STALE_MODULES).format(modules=", ".join(state.modules))
                )
                stale.append(f"cell {index} on {recording.kind} ({state.why})")
            elif texts == own and not any("image" in o for o in recorded.outputs):
                badge = translate(SAME)
            else:
                badge = translate(DIFFERENT)
            fold = recorded_fold(classes=["tb-recorded"])
            summary = recorded_summary("", "")
            summary += nodes.Text(_label(recording, translate) + " · ")
            summary += nodes.inline("", badge, classes=["tb-recorded-badge"])
            fold += summary
            fold += nodes.paragraph("", translate(NOT_THIS_BUILD), classes=["tb-recorded-note"])
            for item in recorded.outputs:
                if "text" in item:
                    text = item["text"]
                    fold += nodes.literal_block(
                        text, text, language="none", classes=["tb-recorded-output"]
                    )
                else:
                    image = recording.folder / item["image"]
                    uri = Path("/", FOLDER, recording.kind, item["image"]).as_posix()
                    fold += nodes.image(uri=uri, alt=f"{recording.kind}: {image.name}")
            if not state.stale and badge == translate(DIFFERENT) and texts and own:
                diff = text_diff("\n".join(texts), "\n".join(own))
                if diff:
                    fold += nodes.literal_block(
                        diff, diff, language="none", classes=["tb-recorded-diff"]
                    )
            cell.append(fold)
    if stale and app.config.language == SOURCE_LANGUAGE:
        logger.info(
            "tensorbook: %s.md has stale recordings (refresh with nox -s record -- --device "
            "DEVICE): %s",
            docname,
            "; ".join(stale),
        )
    if app.config.language == SOURCE_LANGUAGE:  # once, not once per edition
        for problem in unmarked_differences(page_recordings(_recorded_root(app), docname)):
            logger.warning("tensorbook: %s", problem, location=docname)


def _match(recording: Recording, index: int, source: str) -> Cell | None:
    """The recorded cell at ``index``, else the recorded marked cell with the same code."""
    by_index = {c.index: c for c in recording.cells}
    found = by_index.get(index)
    if found is not None and found.marked:
        return found
    return next((c for c in recording.cells if c.marked and c.source == source), None)


class RecordedRole(SphinxRole):
    """``{recorded}`DEVICE:name```: a figure from another device's recording, and whence."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        """The figure and where it was recorded, or the words saying there is none."""
        device, _, name = self.text.partition(":")
        translate = get_translation("sphinx")
        if not name:
            msg = f"{{recorded}} takes DEVICE:name, such as cuda:speedup_largest; got {self.text!r}"
            return [], [self.inliner.reporter.error(msg, line=self.lineno)]
        try:
            found = page_recordings(Path(self.env.srcdir, FOLDER), self.env.docname)
        except RecordingError as error:
            return [], [self.inliner.reporter.error(str(error), line=self.lineno)]
        candidates = [
            r
            for r in found
            if (r.kind == device or r.provenance["device"].split(":")[0] == device)
            and name in r.glue
        ]
        if not candidates:
            text = translate(NO_RECORDING).format(device=device)
            return [nodes.inline("", text, classes=["tb-recorded-missing"])], []
        newest = max(candidates, key=lambda r: (r.provenance["run_date"], r.kind))
        value = newest.glue[name]["text"]
        shown = f"{value} ({_label(newest, translate)})"
        return [nodes.inline("", shown, classes=["tb-recorded-figure"])], []


class BuildStatus(SphinxDirective):
    """``{build-status} pages`` or ``{build-status} torch``: a status table.

    It is filled in after every page is read.
    """

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        """A placeholder for the table named."""
        part = self.arguments[0]
        if part not in ("pages", "torch"):
            msg = f"build-status takes 'pages' or 'torch', not {part!r}"
            raise self.error(msg)
        return [status_placeholder(part=part)]


def _table(header: Sequence[str], rows: Sequence[Sequence[nodes.Node | str]]) -> nodes.table:
    table = nodes.table(classes=["tb-status"])
    group = nodes.tgroup(cols=len(header))
    table += group
    group.extend(nodes.colspec(colwidth=1) for _ in header)

    def row(cells: Sequence[nodes.Node | str]) -> nodes.row:
        line = nodes.row()
        for cell in cells:
            entry = nodes.entry()
            entry += nodes.paragraph(
                "", "", cell if isinstance(cell, nodes.Node) else nodes.Text(cell)
            )
            line += entry
        return line

    head = nodes.thead()
    head += row(header)
    body = nodes.tbody()
    body.extend(row(r) for r in rows)
    group += head
    group += body
    return table


def _fill_status(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    placeholders = list(doctree.findall(status_placeholder))
    if not placeholders:
        return
    import importlib.metadata
    import time

    translate = get_translation("sphinx")
    env = app.env
    torch_version = importlib.metadata.version("torch")
    rows: list[list[nodes.Node | str]] = []
    for page in sorted(env.found_docs, key=lambda d: (d != env.config.root_doc, d)):
        if "kernelspec" not in env.metadata.get(page, {}):
            continue
        data = execution_record(env, page)
        if data and data.get("runtime") is not None:
            when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(data["mtime"]))
            run = translate("{seconds} s, executed {date}").format(
                seconds=f"{data['runtime']:.1f}", date=when
            )
        else:
            run = translate("not executed")
        link = nodes.reference("", "", nodes.Text(str(env.titles[page].astext())), internal=True)
        link["refuri"] = app.builder.get_relative_uri(docname, page)
        rows.append(
            [link, run, f"{app.config.tensorbook_device} · torch {torch_version}",
             _recordings_cell(app, page, translate)]
        )  # fmt: skip
    header = [translate(w) for w in ("Page", "Execution", "Executed on", "Recordings")]
    tables: dict[str, nodes.Node] = {"pages": _table(header, rows)}
    runs = _compat_runs(Path(app.srcdir, FOLDER, COMPAT))
    if runs:
        header = [translate(w) for w in ("torch", "Python", "Doctests", "Pages", "Run on")]
        # an outcome (passed, failed) in the page's words; versions and dates as they are
        rows = [[translate(r[f]) if f in OUTCOMES else r[f] for f in COMPAT_FIELDS] for r in runs]
        tables["torch"] = _table(header, rows)
    else:
        text = translate("No run against another torch has been recorded yet.")
        tables["torch"] = nodes.paragraph("", text)
    for placeholder in placeholders:
        placeholder.replace_self(tables[placeholder["part"]].deepcopy())


COMPAT_FIELDS = ("torch", "python", "doctests", "pages", "date")
OUTCOMES = ("doctests", "pages")


def _compat_runs(path: Path) -> list[dict[str, str]]:
    """The compatibility runs (``nox -s compat`` writes them); a broken file stops the build."""
    if not path.is_file():
        return []
    fix = "it is written by nox -s compat: run it again, or restore the file"
    try:
        runs: list[dict[str, str]] = json.loads(path.read_text(encoding="utf-8"))  # checked below
    except json.JSONDecodeError as error:
        msg = f"{path}: not JSON ({error}); {fix}"
        raise _fail(RecordingError(msg)) from None
    for number, run in enumerate(runs if isinstance(runs, list) else [None]):
        for name in COMPAT_FIELDS:
            if not isinstance(run, dict) or not isinstance(run.get(name), str):
                msg = f"{path}: field [{number}].{name}: missing or not a string; {fix}"
                raise _fail(RecordingError(msg))
    return runs


def _recordings_cell(app: Sphinx, page: str, translate: Callable[[str], str]) -> str:
    try:
        found = page_recordings(_recorded_root(app), page)
    except RecordingError as error:
        raise _fail(error) from None
    if not found:
        return translate("none")
    current = _current_cells(app, page)
    parts = []
    for recording in found:
        stale = 0
        for cell in recording.cells:
            if not cell.marked:
                continue
            source, modules = current.get(cell.index, ("", {}))
            stale += freshness(cell, source, modules).stale
        state = translate("fresh") if not stale else translate("{count} stale cells")
        parts.append(
            f"{recording.provenance['model']} · {recording.provenance['run_date']} · "
            + state.format(count=stale)
        )
    return "; ".join(parts)


def _digest(app: Sphinx, docname: str) -> str:
    digest = hashlib.sha256()
    root = _recorded_root(app)
    for path in sorted(root.glob(f"*/{docname}.json")):
        digest.update(path.read_bytes())
        for figure in sorted((path.parent / docname).glob("*.png")):
            digest.update(figure.read_bytes())
    return digest.hexdigest()


def _recorded_digests(env: BuildEnvironment) -> dict[str, str]:
    # kept in the environment (not the configuration): what each page was read with; an
    # attribute Sphinx does not declare, so reached through the object's own dictionary
    digests: dict[str, str] = vars(env).setdefault("tensorbook_recorded", {})
    return digests


def _note_digest(app: Sphinx, docname: str, source: list[str]) -> None:
    _recorded_digests(app.env)[docname] = _digest(app, docname)


def _outdated(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    known = getattr(env, "tensorbook_recorded", {})
    again = [d for d, digest in known.items() if d in env.found_docs and digest != _digest(app, d)]
    if STATUS_PAGE in env.found_docs:
        again.append(STATUS_PAGE)  # its figures are this build's
    return again


def _merge(app: Sphinx, env: BuildEnvironment, docnames: set[str], other: BuildEnvironment) -> None:
    _recorded_digests(env).update(
        {d: v for d, v in getattr(other, "tensorbook_recorded", {}).items() if d in docnames}
    )


def _purge(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    getattr(env, "tensorbook_recorded", {}).pop(docname, None)


def setup(app: Sphinx) -> dict[str, object]:
    """Register the nodes, the role, the directive and the handlers."""
    app.add_node(
        recorded_fold,
        html=(folds.writes('<details class="tb-recorded">'), folds.writes("</details>")),
        latex=(folds.latex_fold_end, folds.nothing),
        text=(folds.skip, None),
    )
    app.add_node(
        recorded_summary,
        html=(
            folds.writes('<summary class="tb-recorded-summary">'),
            folds.writes("</summary>"),
        ),
        latex=folds.latex_summary,
        text=(folds.skip, None),
    )
    app.add_node(
        status_placeholder,
        html=(folds.skip, None),
        latex=(folds.skip, None),
        text=(folds.skip, None),
    )
    app.add_role("recorded", RecordedRole())
    app.add_directive("build-status", BuildStatus)
    # before Sphinx's image collector (500), which then copies the recorded figures
    app.connect("doctree-read", _show_recordings, priority=400)
    app.connect("doctree-resolved", _fill_status)
    app.connect("source-read", _note_digest)
    app.connect("env-get-outdated", _outdated)
    app.connect("env-merge-info", _merge)
    app.connect("env-purge-doc", _purge)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
