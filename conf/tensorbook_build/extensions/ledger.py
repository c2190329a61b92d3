"""Sphinx adapter for :mod:`tensorbook_build.ledger`: recorded outputs beside the build's own.

After each cell tagged ``device-dependent``, each other device's recording of it, in a
fold labelled with its provenance and a badge: the same, different (with a diff), or
stale. The same as, or different from, the same machine's CPU recorded beside it (what
the device changed); without one, this page's output, and the fold says so. It says too
when the recording's torch, Python or NumPy are not this build's. ``{recorded}`name```:
a figure the prose takes from a GPU's output (:data:`tensorbook_build.ledger.FIGURES`).
The status page is :mod:`.status`'s.
"""

from __future__ import annotations

import importlib.metadata
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.locale import get_translation
from sphinx.util import logging

from tensorbook_build import ledger
from tensorbook_build.execute import HIDDEN, read_page
from tensorbook_build.extensions import folds, hooks, pictures
from tensorbook_build.settings import SOURCE_LANGUAGE
from tensorbook_build.spec import read_spec

logger = logging.getLogger(__name__)


# The words the ledger shows, named once here; conf/_templates/ledger-words.html lists
# them for the catalogs (a test checks that it lists exactly WORDS and status.WORDS).
WORDS = (
    RECORDED_ON := "recorded on {model}",
    COMMIT := "commit {commit}",
    SAME := "same as this page's output",
    SAME_BUT_DEVICE := "same as this page's output, but for the device its tensors are on",
    DIFFERENT := "differs from this page's output",
    DIFF_KEY := "Lines that differ (− this page's, + recorded):",
    NO_CPU := "Compared with this page's output: no run on the same machine's CPU was recorded.",
    CPU_SAME := "same as on the same machine's CPU",
    CPU_SAME_VALUES := "same as on the same machine's CPU, but for the device its tensors are on",
    CPU_DIFFERENT := "differs from the same machine's CPU",
    CPU_DIFF_KEY := "What the device changed (− the same machine's CPU, + this device):",
    VERSIONS := (
        "Recorded with torch {torch}, Python {python}, NumPy {numpy}; this page was built "
        "with torch {own_torch}, Python {own_python}, NumPy {own_numpy}."
    ),
    MORE_LINES := "... {count} more lines",
    STALE_CODE := "stale: the cell's code changed since it was recorded",
    NOT_SHOWN := "What it printed then is not shown: it may not be what this cell prints.",
    STALE_MODULES := "stale: {modules} changed since it was recorded",
    NOT_THIS_BUILD := "Not this page's output: recorded on another machine.",
    FIGURES_STALE := "; recorded before this page's code last changed",
    RECORDED_PICTURE := "recorded on another machine",
    CONTRIBUTED := (
        "contributed by a reader: the machine, the versions and the outputs are the reader's "
        "report, unchecked by the book"
    ),
    PICTURE_NOT_KEPT := "a reader's recording keeps no pictures",
    NO_PICTURES := "Its pictures are not shown: the book keeps none from a reader's recording.",
)
# the badges and the diff's key, by what a recording is compared with
PAGE_WORDS = (SAME, SAME_BUT_DEVICE, DIFFERENT, DIFF_KEY)
CPU_WORDS = (CPU_SAME, CPU_SAME_VALUES, CPU_DIFFERENT, CPU_DIFF_KEY)


class recorded_fold(nodes.General, nodes.Element):
    """One device's recorded output of a cell: a fold in HTML, a labelled block in the PDF."""


class recorded_summary(nodes.Part, nodes.TextElement):
    """The fold's label: the recording's provenance and its badge."""


class recorded_figure(nodes.Inline, nodes.TextElement):
    """Where the prose shows a recorded figure, until the page's outputs are read."""


def recorded_role(
    name: str, rawtext: str, text: str, lineno: int, inliner: object, *_: object
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """``{recorded}`figure```: a figure the page's front matter declares.

    Or ``device``, ``torch``, ``date`` or ``state``: of the output the figures come from.
    """
    return [recorded_figure(rawtext, "", figure=text.strip(), line=lineno)], []


def page_recordings(srcdir: str | Path, page: str) -> list[ledger.Recording]:
    """Every device's recording of ``page``; a broken one is an error, named, and none."""
    try:
        return ledger.page_recordings(Path(srcdir, ledger.FOLDER), page)
    except ledger.RecordingError as error:
        logger.error("%s", error, type="tensorbook", subtype="ledger")
        return []


def _label(recording: ledger.Recording, translate: Callable[[str], str]) -> str:
    """The provenance a reader is shown: model, CUDA, torch, date, commit."""
    p = recording.provenance
    cuda = [f"CUDA {p['gpu']['cuda']}"] if p["gpu"] and p["gpu"]["cuda"] else []
    model = translate(RECORDED_ON).format(model=p["model"])
    commit = translate(COMMIT).format(commit=p["commit"][:7])
    by = [translate(CONTRIBUTED)] if recording.contributed else []  # a receipt, imported
    return " · ".join([*by, model, *cuda, f"torch {p['torch']}", p["run_date"], commit])


def current_cells(app: Sphinx, docname: str) -> dict[int, tuple[str, dict[str, str]]]:
    """:func:`~tensorbook_build.ledger.cell_keys` of the page's cells a reader sees.

    A hidden cell (``remove-cell``) shows no recording, so it takes no recorded cell's
    place when the page is lined up with a recording (:func:`recorded_cells`).
    """
    page = read_page(Path(app.env.doc2path(docname)).read_text(encoding="utf-8"))
    keys = ledger.cell_keys(page.code, Path(read_spec(app.config.tensorbook_spec).src))
    hidden = {cell.index for cell in page.cells if HIDDEN in cell.tags}
    return {index: key for index, key in keys.items() if index not in hidden}


def _show_recordings(app: Sphinx, doctree: nodes.document) -> None:
    if app.builder.name == "gettext":  # outputs, not prose: nothing in them to translate
        return  # (a recorded figure's alt text would become a message of the catalogs)
    docname = app.env.docname
    for path in _files(app, docname):
        app.env.note_dependency(path)
    everyone = page_recordings(app.srcdir, docname)
    spec = read_spec(app.config.tensorbook_spec)
    _fill_figures(app, doctree, docname, everyone)
    recordings = [r for r in everyone if r.kind != spec.kind]
    if not recordings:
        return
    translate = get_translation("sphinx")
    current = current_cells(app, docname)
    aligned = {r.kind: recorded_cells(r, current) for r in recordings}
    numpy = importlib.metadata.version("numpy")
    built = _versions(spec.torch, platform.python_version(), numpy)
    stale: list[str] = []
    for cell in list(doctree.findall(nodes.container)):
        if cell.get("nb_element") != "cell_code" or f"tag_{ledger.TAG}" not in cell["classes"]:
            continue
        index = cell["cell_index"]
        source, modules = current.get(index, ("", {}))
        own = (
            [b.astext().rstrip("\n") for b in cell.findall(nodes.literal_block)
             if "output" in b["classes"]],
            [n.astext() for n in cell.findall(nodes.raw) if pictures.CLASS in n["classes"]],
        )  # fmt: skip
        for recording in recordings:
            recorded = aligned[recording.kind].get(index)
            if recorded is None:
                continue
            state = ledger.freshness(recorded, source, modules)
            if state.stale:
                stale.append(f"cell {index} on {recording.kind} ({state.why})")
            cell.append(_fold(recording, recorded, state, own, built, translate))
    if app.config.language != SOURCE_LANGUAGE:
        return  # logged once, not once per edition
    if stale:  # logged, not a warning (-W): only nox -s record on that device refreshes them
        refresh = "refresh with nox -s record -- --device DEVICE"
        stale_cells = "; ".join(stale)
        logger.info(
            "tensorbook: %s.md has stale recordings (%s): %s", docname, refresh, stale_cells
        )
    # a reader's receipt is not the book's to tag by: nox -s record -- --import lists them
    for problem in ledger.unmarked_differences([r for r in everyone if not r.contributed]):
        logger.warning("tensorbook: %s", problem, location=docname)


def _versions(torch: str, python: str, numpy: str) -> dict[str, str]:
    """What a recording's outputs may differ by besides the device: the releases, not builds."""
    release = torch.split("+", maxsplit=1)[0]
    return {"torch": release, "python": ".".join(python.split(".")[:2]), "numpy": numpy}


def _outputs(
    recording: ledger.Recording, cell: ledger.Cell, label: str
) -> tuple[list[str], list[str | None]]:
    """A recorded cell's texts, and its pictures' SVG as drawn there (``None``: a PNG)."""
    svgs = [_svg(recording, o["image"]) for o in cell.outputs if "image" in o]
    drawn = [pictures.as_recorded(s, label) if pictures.is_picture(s) else None for s in svgs]
    return [o["text"] for o in cell.outputs if "text" in o], drawn


def _fold(
    recording: ledger.Recording,
    recorded: ledger.Cell,
    state: ledger.Freshness,
    own: tuple[Sequence[str], Sequence[str | None]],
    built: dict[str, str],
    translate: Callable[[str], str],
) -> recorded_fold:
    """One recording of a cell: its provenance, its badge and outputs, and what differs.

    What differs is what the device changed, against the same machine's CPU recorded
    beside it; without one, against this page's outputs (``own``: texts, pictures).
    """
    label = translate(RECORDED_PICTURE)
    texts, drawn = _outputs(recording, recorded, label)
    cpu = recording.cpu_cell(recorded)
    base: tuple[Sequence[str], Sequence[str | None]] = own
    words = PAGE_WORDS
    if cpu is not None and recording.beside is not None:
        base, words = _outputs(recording.beside, cpu, label), CPU_WORDS
    base_texts, base_drawn = base
    # a reader's pictures are dropped on import: its texts alone are compared
    dropped = recording.contributed is not None and bool(base_drawn) and not drawn
    # a PNG (None) is never the same as another picture
    pictures_same = dropped or (drawn == list(base_drawn) and None not in drawn)
    same = pictures_same and texts == list(base_texts)
    # a tensor on a GPU prints its device beside its values: the rest may be the same
    same_values = pictures_same and [ledger.but_for_the_device(t) for t in texts] == [
        ledger.but_for_the_device(t) for t in base_texts
    ]
    if state.code_changed:
        badge = translate(STALE_CODE)
    elif state.stale:
        badge = translate(STALE_MODULES).format(modules=", ".join(state.modules))
    elif dropped and not texts:  # it only drew: nothing of it is shown to compare
        # (the page's own texts may hold its picture's plain-text alternative)
        badge = translate(PICTURE_NOT_KEPT)
    else:
        badge = translate(words[0] if same else words[1] if same_values else words[2])
    summary = recorded_summary("", "", nodes.Text(_label(recording, translate) + " · "))
    summary += nodes.inline("", badge, classes=["tb-recorded-badge"])
    fold = recorded_fold("", summary, _note(translate(NOT_THIS_BUILD)), classes=["tb-recorded"])
    theirs = _versions(*(recording.provenance[n] for n in ("torch", "python", "numpy")))
    if theirs != built:
        own_versions = {f"own_{name}": version for name, version in built.items()}
        fold += _note(translate(VERSIONS).format(**theirs, **own_versions))
    if state.code_changed:  # which cell printed them is a guess: they are not shown
        fold += _note(translate(NOT_SHOWN))
        return fold
    if dropped:
        fold += _note(translate(NO_PICTURES))
    # a CPU's recording has no CPU beside it to compare with: its own outputs are the CPU's
    if words is PAGE_WORDS and not state.stale and recording.provenance["gpu"]:
        fold += _note(translate(NO_CPU))
    left = iter(drawn)
    for item in recorded.outputs:
        if "text" in item:
            fold += _literal(item["text"], "tb-recorded-output")
        elif (svg := next(left)) is not None:
            # inline, translated and redrawn for the PDF as the build's own pictures are
            fold += nodes.raw("", svg, format="html", classes=[pictures.CLASS])
        else:
            uri = Path("/", ledger.FOLDER, recording.kind, item["image"]).as_posix()
            fold += nodes.image(uri=uri, alt=f"{recording.kind}: {Path(item['image']).name}")
    # against this page's outputs, a stale recording differs by its code, not by the device
    compared = words is CPU_WORDS or not state.stale
    differs = compared and texts and base_texts and not (same or same_values)
    lines = ledger.diff_lines("\n".join(texts), "\n".join(base_texts)) if differs else []
    if lines:
        fold += _note(translate(words[3]))
        fold += _literal("\n".join(lines[: ledger.DIFF_LINES]), "tb-recorded-diff")
        if len(lines) > ledger.DIFF_LINES:  # how many more: in the edition's words
            fold += _note(translate(MORE_LINES).format(count=len(lines) - ledger.DIFF_LINES))
    return fold


def _note(text: str) -> nodes.paragraph:
    return nodes.paragraph("", text, classes=["tb-recorded-note"])


def _own_text(doctree: nodes.document, index: int) -> str:
    """What this build's cell ``index`` printed, as the page shows it."""
    for cell in doctree.findall(nodes.container):
        if cell.get("nb_element") == "cell_code" and cell.get("cell_index") == index:
            blocks = cell.findall(nodes.literal_block)
            return "\n".join(b.astext().rstrip("\n") for b in blocks if "output" in b["classes"])
    return ""


def figure_values(
    app: Sphinx, docname: str, doctree: nodes.document, everyone: Sequence[ledger.Recording]
) -> tuple[dict[str, str], list[str]]:
    """The page's recorded figures (:data:`tensorbook_build.ledger.FIGURES`) by name.

    With them, the ``device``, ``torch``, ``date`` and ``state`` of the output they come
    from (a GPU build's own outputs, else the first GPU recording's; ``state`` says, in
    the edition's words, when the page's code changed since), ``<name>.at`` where a
    figure with an ``at`` pattern was measured, and the problems found.
    """
    spec = read_spec(app.config.tensorbook_spec)
    page = read_page(Path(app.env.doc2path(docname)).read_text(encoding="utf-8"))
    problems = []
    try:
        figures = ledger.page_figures(page.metadata, page.code)
    except ValueError as error:
        problems.append(f"{error} (the page's front matter)")
        figures = {}
    gpus = [  # the book's own: a reader's receipt is shown, never the prose's source
        r for r in everyone if r.provenance.get("gpu") and r.kind != spec.kind and not r.contributed
    ]
    values: dict[str, str] = {}
    texts: dict[str, str] = {}
    if spec.device.startswith("cuda"):  # this build's own GPU says it
        same = [r for r in everyone if r.kind == spec.kind]
        model = same[0].provenance["model"] if same else spec.kind
        values = {"device": model, "torch": spec.torch, "state": ""}
        values["date"] = time.strftime("%Y-%m-%d", time.gmtime())
        texts = {name: _own_text(doctree, f.cell) for name, f in figures.items()}
    elif gpus:
        gpu, current = gpus[0], current_cells(app, docname)
        p, stale, aligned = gpu.provenance, False, recorded_cells(gpus[0], current)
        hashes = {index: key[0] for index, key in current.items()}
        replaced = ledger.replaced(gpu.cells, hashes)
        for name, figure in figures.items():
            source, modules = current.get(figure.cell, ("", {}))
            recorded = aligned.get(figure.cell)
            if recorded is None:  # a changed cell among others: the one that printed it
                printed = [
                    cell
                    for cell in replaced.get(figure.cell, [])
                    if ledger.figure_in("\n".join(o.get("text", "") for o in cell.outputs), figure)
                ]
                recorded = printed[0] if len(printed) == 1 else None
            stale = stale or recorded is None or ledger.freshness(recorded, source, modules).stale
            outputs = recorded.outputs if recorded else ()
            texts[name] = "\n".join(o["text"] for o in outputs if "text" in o)
        values = {"device": p["model"], "torch": p["torch"], "date": p["run_date"]}
        values["state"] = get_translation("sphinx")(FIGURES_STALE) if stale else ""
    elif figures:
        fix = "record one on a GPU (nox -s record -- --device cuda), or build on a GPU"
        problems.append(
            f"its prose shows figures recorded on a GPU, and no GPU has recorded {docname}.md: {fix}"
        )
    for name, figure in figures.items():
        found = ledger.figure_in(texts.get(name, ""), figure) if texts else None
        if found is None and texts:
            problems.append(
                f"{{recorded}}`{name}`: its pattern {figure.pattern!r} is not in cell "
                f"{figure.cell}'s printed text: change the pattern or the cell"
            )
        values.setdefault(name, found or "?")
        if figure.at and texts:  # where it was measured, for a receipt's comparison
            where = ledger.figure_in(texts.get(name, ""), replace(figure, pattern=figure.at))
            values[f"{name}.at"] = where or "?"
    return values, problems


def _fill_figures(
    app: Sphinx, doctree: nodes.document, docname: str, everyone: Sequence[ledger.Recording]
) -> None:
    """Put each ``{recorded}`` figure in the prose (:func:`figure_values`)."""
    placeholders = list(doctree.findall(recorded_figure))
    if not placeholders:
        return

    def fail(problem: str, line: int | None = None) -> None:
        logger.error("%s", problem, location=(docname, line), type="tensorbook", subtype="ledger")

    values, problems = figure_values(app, docname, doctree, everyone)
    for problem in problems:
        fail(problem)
    if not values:
        fail("its prose shows {recorded} figures, and its front matter declares none")
    for node in placeholders:
        value = values.get(node["figure"])
        if value is None:
            known = ", ".join(sorted(values))
            fail(
                f"{{recorded}}`{node['figure']}` is not a figure of this page ({known})",
                node["line"],
            )
        node.replace_self(nodes.Text(value if value is not None else "?"))


def _svg(recording: ledger.Recording, figure: str) -> str:
    """A recorded figure's SVG text; ``""`` for a PNG."""
    path = recording.path.parent / figure
    return path.read_text(encoding="utf-8") if path.suffix == ".svg" else ""


def _literal(text: str, kind: str) -> nodes.literal_block:
    return nodes.literal_block(text, text, language="none", classes=[kind])


def recorded_cells(
    recording: ledger.Recording, current: dict[int, tuple[str, dict[str, str]]]
) -> dict[int, ledger.Cell]:
    """Each of the page's code cells' recorded counterpart (:func:`ledger.align`).

    A recording holds every cell's outputs, so a cell tagged after it was recorded shows
    them too: the page's tag, not the recording's, says what is shown.
    """
    return ledger.align(recording.cells, {index: key[0] for index, key in current.items()})


def _files(app: Sphinx, page: str) -> set[Path]:
    """The page's recordings and their figures: it is read again when one changes."""
    root = Path(app.srcdir, ledger.FOLDER)
    found = [*root.glob(f"*/{page}.json"), *root.glob(f"*/{ledger.BESIDE}/{page}.json")]
    return {file for path in found for file in (path, *ledger.figure_files(path.parent / page))}


def _outdated(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    # Sphinx reads a page again when a file it noted changed or went; a new one is seen here
    return [d for d in env.found_docs if not _files(app, d) <= env.dependencies.get(d, set())]


def setup(app: Sphinx) -> dict[str, object]:
    """Register the nodes, the directive and the handlers."""
    details = ('<details class="tb-recorded">', "</details>")
    folds.add_node(app, recorded_fold, details, folds.LATEX_END)
    summary = ('<summary class="tb-recorded-summary">', "</summary>")
    folds.add_node(app, recorded_summary, summary, folds.LATEX_SUMMARY)
    skip = (folds.skip, None)
    app.add_node(recorded_figure, html=skip, latex=skip, text=skip)  # replaced once read
    app.add_role("recorded", recorded_role)
    hooks.connect(app, __name__)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
