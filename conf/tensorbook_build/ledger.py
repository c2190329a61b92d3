"""The device ledger: outputs recorded on other devices, with where and when they ran.

``nox -s record`` writes one recording per device kind and page,
``docs/recorded/<kind>/<page>.json`` (``recording.schema.json``), its figures beside it.
A GPU's run also records the same machine's CPU, with the same torch, into
``<kind>/cpu/<page>.json`` (:data:`BESIDE`): the two differ by what the device changed.
A recorded cell is stale (:func:`freshness`) once its code, or a module it imports, changed.
"""

from __future__ import annotations

import base64
import dataclasses
import difflib
import itertools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]

from tensorbook import receipt
from tensorbook.recording import module_hashes, output_digest, shown_outputs, source_hash
from tensorbook_build.settings import LAYOUT

TAG = receipt.TAG  # the tag of a cell whose output depends on the device
FOLDER = "recorded"  # under docs/
COMPAT = "compat.json"  # in FOLDER: the torch versions nox -s compat ran, and how
BESIDE = "cpu"  # in a GPU's folder: the same machine's CPU, recorded in the same run
SAME_RUN = ("torch", "python", "numpy", "commit")  # what a recording and its CPU share
SCHEMA = json.loads(Path(__file__).with_name("recording.schema.json").read_text("utf-8"))


class RecordingError(ValueError):
    """A recording that is not what ``nox -s record`` writes: names the file and field."""


@dataclass(frozen=True)
class Cell:
    """One code cell as a device ran it."""

    index: int  # in the page's notebook, markdown cells counted (MyST-NB's cell_index)
    source: str  # source_hash of its code
    modules: dict[str, str]  # module -> hash, for what it and the cells before it import
    marked: bool
    digest: str  # output_digest of what it printed
    outputs: tuple[dict[str, str], ...] = ()  # {"text": ...} or {"image": file}


@dataclass(frozen=True)
class Recording:
    """One page as one device ran it."""

    path: Path
    page: str
    kind: str
    provenance: dict[str, Any]
    cells: tuple[Cell, ...]
    beside: Recording | None = None  # the same machine's CPU in the same run (BESIDE)
    contributed: dict[str, str] | None = None  # a reader's receipt: when it was imported

    def cpu_cell(self, cell: Cell) -> Cell | None:
        """The CPU's run of ``cell`` of this recording, where one was recorded beside it."""
        found = [c for c in self.beside.cells if c.index == cell.index] if self.beside else []
        same = found and (found[0].source, found[0].modules) == (cell.source, cell.modules)
        return found[0] if same else None


def cell_keys(codes: Mapping[int, str], src_dir: Path) -> dict[int, tuple[str, dict[str, str]]]:
    """For each code cell, by notebook index: :func:`source_hash` and its modules' hashes.

    The modules are those the cell or a cell before it imports, hashed as the cache key
    and a reader's receipt hash them (:func:`tensorbook.recording.module_hashes`).
    """
    hashes = module_hashes(list(codes.values()), src_dir / "tensorbook")
    return {
        index: (source_hash(code), modules)
        for (index, code), modules in zip(codes.items(), hashes, strict=True)
    }


def recording_from_notebook(
    notebook: Mapping[str, Any], page: str, kind: str, provenance: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The recording of an executed notebook: its JSON data and its figures' bytes by name."""
    cells = notebook["cells"]
    codes = {i: "".join(c["source"]) for i, c in enumerate(cells) if c["cell_type"] == "code"}
    records, figures = [], {}
    for index, (source, modules) in cell_keys(codes, LAYOUT.src).items():
        shown = shown_outputs(cells[index].get("outputs", []))
        marked = TAG in cells[index].get("metadata", {}).get("tags", [])
        outputs = []  # every cell's: which the page shows is its tag's to say, now or later
        for number, item in enumerate(shown):
            if "text" in item:
                outputs.append(item)
                continue
            [(suffix, content)] = item.items()  # a figure: "svg" or "png", kept as a file
            figure = f"{page}/cell-{index}-{number}.{suffix}"
            figures[figure] = content.encode() if suffix == "svg" else base64.b64decode(content)
            outputs.append({"image": figure})
        digest = output_digest(shown)
        records.append(asdict(Cell(index, source, modules, marked, digest, tuple(outputs))))
    version = SCHEMA["properties"]["schema"]["const"]
    data = {"schema": version, "page": page, "kind": kind, "provenance": dict(provenance)}
    return {**data, "cells": records}, figures


def write_recording(root: Path, data: Mapping[str, Any], figures: Mapping[str, bytes]) -> Path:
    """Write one page's recording under ``root/<kind>/``, replacing its earlier figures."""
    folder: Path = root / data["kind"]
    path = folder / f"{data['page']}.json"
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if problem := schema_problem(json.loads(text), SCHEMA):  # checked before anything is lost
        raise _fail(path, problem)
    for old in figure_files(folder / data["page"]):
        old.unlink()
    for name, content in figures.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content)
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def figure_files(folder: Path) -> list[Path]:
    """The figures of one page's recording, in ``folder`` (``<kind>/<page>``): PNG and SVG."""
    return sorted([*folder.glob("cell-*.png"), *folder.glob("cell-*.svg")])


def schema_problem(data: object, schema: Mapping[str, Any]) -> str:
    """Where and how ``data`` breaks ``schema`` (``field cells[1].marked: ...``); else ``""``."""
    errors = jsonschema.Draft202012Validator(schema).iter_errors(data)
    if (error := jsonschema.exceptions.best_match(errors)) is None:
        return ""
    steps = "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in error.path).lstrip(".")
    return f"field {steps or '(top level)'}: {error.message}"


def _fail(path: Path, problem: str) -> RecordingError:
    return RecordingError(
        f"{path}: {problem}; recordings are not written by hand: record the page again "
        "(nox -s record -- --device DEVICE), or delete the file"
    )


def read_json(path: Path, schema: Mapping[str, Any]) -> tuple[Any, str]:
    """The data in ``path`` and :func:`schema_problem`'s answer for it (``""``: none)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        return None, f"field (top level): not JSON ({error})"
    return data, schema_problem(data, schema)


def load_recording(path: Path) -> Recording:
    """Read and check one recording: a :class:`RecordingError` names the field and the fix."""
    data, problem = read_json(path, SCHEMA)
    if problem:
        raise _fail(path, problem)
    if data["kind"] != path.parent.name:
        raise _fail(path, f"field kind: {data['kind']!r}, but the file is in {path.parent.name}/")
    if data["page"] != path.stem:
        raise _fail(path, f"field page: {data['page']!r}, but the file is {path.name}")
    for number, cell in enumerate(data["cells"]):
        for item in cell["outputs"]:
            if "image" in item and not (path.parent / item["image"]).is_file():
                raise _fail(path, f"field cells[{number}].outputs: {item['image']} is missing")
    cells = tuple(Cell(**{**c, "outputs": tuple(c["outputs"])}) for c in data["cells"])
    contributed = data.get("contributed")
    return Recording(
        path, data["page"], data["kind"], data["provenance"], cells, contributed=contributed
    )


def page_recordings(root: Path, page: str) -> list[Recording]:
    """Every device's recording of ``page`` under ``root`` (``docs/recorded``), by kind.

    Each with the same machine's CPU recording beside it, where there is one; one that
    names another torch, Python, NumPy or commit than its GPU's is refused.
    """
    found = []
    for path in sorted(root.glob(f"*/{page}.json")):
        recording = load_recording(path)
        if (cpu := path.parent / BESIDE / path.name).is_file():
            beside = load_recording(cpu)
            for name in SAME_RUN:
                ours, theirs = beside.provenance[name], recording.provenance[name]
                if ours != theirs:
                    problem = f"field provenance.{name}: {ours!r}, but {path.name} beside it has"
                    raise _fail(cpu, f"{problem} {theirs!r}: both come from one run")
            recording = dataclasses.replace(recording, beside=beside)
        found.append(recording)
    return found


@dataclass(frozen=True)
class Freshness:
    """How a recorded cell stands against the page as it is now."""

    stale: bool
    code_changed: bool = False
    modules: tuple[str, ...] = ()  # the imported modules that changed

    @property
    def why(self) -> str:
        """What changed, in English (the build's log)."""
        if self.code_changed:
            return "the cell's code changed"
        return f"{', '.join(self.modules)} changed" if self.modules else ""


def freshness(recorded: Cell, source: str, modules: Mapping[str, str]) -> Freshness:
    """Whether ``recorded`` still describes the cell whose code hashes to ``source``."""
    if recorded.source != source:
        return Freshness(True, code_changed=True)
    names = {*recorded.modules, *modules}
    changed = tuple(sorted(n for n in names if recorded.modules.get(n) != modules.get(n)))
    return Freshness(bool(changed), modules=changed)


DIFF_LINES = 12
"""The most lines of a diff shown; the rest are counted."""


def diff_lines(recorded: str, own: str) -> list[str]:
    r"""The line diff from this build's text to the recorded one (``-`` here, ``+`` there).

    Examples
    --------
    >>> diff_lines("a\nb", "a\nc")
    ['-c', '+b']
    """
    return [
        line
        for line in difflib.unified_diff(own.split("\n"), recorded.split("\n"), n=0, lineterm="")
        if not line.startswith(("---", "+++", "@@"))
    ]


def unmarked_differences(recordings: Sequence[Recording]) -> list[str]:
    """Cells not tagged :data:`TAG` whose output differs between two devices' recordings."""
    everyone = [r for recording in recordings for r in (recording, recording.beside) if r]
    found = []
    for first, second in itertools.combinations(everyone, 2):
        theirs = {c.index: c for c in second.cells}
        for cell in first.cells:
            other = theirs.get(cell.index)
            if other is None or other.source != cell.source or cell.marked or other.marked:
                continue  # a tagged cell may differ; a changed one says nothing
            if other.digest != cell.digest:
                texts = ["\n".join(o.get("text", "") for o in c.outputs) for c in (cell, other)]
                lines = diff_lines(*texts) if all(texts) else []
                if len(lines) > DIFF_LINES:
                    lines = [*lines[:DIFF_LINES], f"... {len(lines) - DIFF_LINES} more lines"]
                diff = "\n".join(lines)
                found.append(
                    f"{first.page}.md, cell {cell.index}: its output differs between "
                    f"{first.kind} and {second.kind}, and it is not tagged {TAG}; "
                    f"add {TAG} to its :tags:" + (f"\n{diff}" if diff else "")
                )
    return found


FIGURES = "recorded_figures"
"""A page's front matter key: the figures its prose takes from a GPU's output.

Each entry names a figure and says where it is printed: ``cell``, text found in the
code of exactly one code cell, and ``pattern``, a regular expression whose first group
is the figure in that cell's printed text (``(?s).*`` in front takes the last match).
``label`` says what it is in a reader's words, ``{}`` standing for the figure with its
unit (``"one .item(): {} µs"``): a reader's receipt prints it beside the book's. An
optional ``at``, a pattern of the same text, says where it was measured (the sizes).
The prose shows one with ``{recorded}`name```; see :mod:`tensorbook_build.extensions.ledger`.
"""


@dataclass(frozen=True)
class Figure:
    """Where one of a page's recorded figures is printed."""

    cell: int  # the index of the code cell that prints it
    pattern: str
    label: str = "{}"  # what it is, in a reader's words, "{}" standing for the figure
    at: str = ""  # a pattern whose first group says where it was measured, if any


def page_figures(metadata: Mapping[str, Any], code: Mapping[int, str]) -> dict[str, Figure]:
    r"""The figures a page's front matter declares, each found in its one cell.

    Raises :class:`ValueError` naming the figure when its entry is malformed, or when its
    ``cell`` text is in no code cell or in several.

    Examples
    --------
    >>> entry = {"cell": "report(", "pattern": r"([\d.]+)x", "label": "the gain: {}x"}
    >>> page_figures({FIGURES: {"gain": entry}}, {1: "import x", 3: "report(t)"})
    {'gain': Figure(cell=3, pattern='([\\d.]+)x', label='the gain: {}x', at='')}
    """
    declared = metadata.get(FIGURES) or {}
    found = {}
    for name, entry in declared.items():
        keys = set(entry) if isinstance(entry, Mapping) else set()
        if not {"cell", "pattern", "label"} <= keys <= {"cell", "pattern", "label", "at"}:
            msg = (f"{FIGURES}: {name!r} needs 'cell', 'pattern' and 'label' (and may have "
                   f"'at'), got {entry!r}")  # fmt: skip
            raise ValueError(msg)
        if not isinstance(entry["label"], str) or entry["label"].count("{}") != 1:
            msg = f"{FIGURES}: {name!r}'s label needs one {{}} where the figure goes"
            raise ValueError(msg)
        cells = [index for index, source in code.items() if entry["cell"] in source]
        if len(cells) != 1:
            where = f"in {len(cells)} code cells" if cells else "in no code cell"
            msg = f"{FIGURES}: {name!r}'s cell text {entry['cell']!r} is {where}; it must be in one"
            raise ValueError(msg)
        for key in ("pattern", "at") if "at" in entry else ("pattern",):
            try:
                groups = re.compile(entry[key]).groups
            except re.error as error:
                msg = f"{FIGURES}: {name!r}'s {key} is not a regular expression: {error}"
                raise ValueError(msg) from error
            if groups < 1:
                msg = f"{FIGURES}: {name!r}'s {key} has no group to take the figure from"
                raise ValueError(msg)
        found[name] = Figure(cells[0], entry["pattern"], entry["label"], entry.get("at", ""))
    return found


_DEVICE_NOTE = re.compile(r",? ?device='cuda(?::\d+)?'")


def but_for_the_device(text: str) -> str:
    """``text`` without the device that a tensor on a GPU prints with its values.

    >>> but_for_the_device("tensor([7., 11.], device='cuda:0') on cuda:0")
    'tensor([7., 11.]) on cuda:0'
    """
    return _DEVICE_NOTE.sub("", text)


def figure_in(text: str, figure: Figure) -> str | None:
    """The figure as ``text`` prints it, found as a reader's receipt finds it; else ``None``."""
    return receipt.figure_in(text, figure.pattern)


def align(recorded: Sequence[Cell], current: Mapping[int, str]) -> dict[int, Cell]:
    """Each current code cell's recorded counterpart, by index: the cells lined up as a diff.

    ``current`` maps each code cell's index to its :func:`source_hash`. A cell whose code
    is unchanged finds its recording wherever cells were added or removed before it. A
    changed cell finds the recorded cell whose place it took (stale, by :func:`freshness`)
    only where as many cells changed as were recorded there, between two unchanged ones:
    otherwise which took whose place is a guess, and a cell shown with another cell's
    outputs misleads more than one shown with none. A new cell finds none.

    Examples
    --------
    >>> old = [Cell(1, "a", {}, False, ""), Cell(2, "b", {}, False, ""), Cell(3, "c", {}, False, "")]
    >>> {i: c.index for i, c in align(old, {1: "a", 2: "B", 5: "c"}).items()}
    {1: 1, 2: 2, 5: 3}
    >>> {i: c.index for i, c in align(old, {1: "a", 2: "B", 3: "new", 5: "c"}).items()}
    {1: 1, 5: 3}
    """
    found: dict[int, Cell] = {}
    for operation, old, new, indices in _runs(recorded, current):
        if operation == "equal" or (operation == "replace" and len(old) == len(new)):
            found.update(zip(indices, old, strict=True))
    return found


def replaced(recorded: Sequence[Cell], current: Mapping[int, str]) -> dict[int, list[Cell]]:
    """For each changed cell :func:`align` leaves alone, the recorded cells its run replaced.

    >>> old = [Cell(1, "a", {}, False, ""), Cell(2, "b", {}, False, ""), Cell(3, "c", {}, False, "")]
    >>> {i: [c.index for c in cs] for i, cs in replaced(old, {1: "a", 2: "B", 3: "x", 5: "c"}).items()}
    {2: [2], 3: [2]}
    """
    return {
        index: list(old)
        for operation, old, new, indices in _runs(recorded, current)
        if operation == "replace" and len(old) != len(new)
        for index in indices
    }


def _runs(
    recorded: Sequence[Cell], current: Mapping[int, str]
) -> list[tuple[str, Sequence[Cell], list[str], list[int]]]:
    """The diff's runs: operation, the recorded cells, the current hashes and their indices."""
    indices = list(current)
    hashes = [current[i] for i in indices]
    matcher = difflib.SequenceMatcher(a=[c.source for c in recorded], b=hashes, autojunk=False)
    return [
        (operation, recorded[old:old_end], hashes[new:new_end], indices[new:new_end])
        for operation, old, old_end, new, new_end in matcher.get_opcodes()
    ]
