r"""The device ledger: outputs recorded on other devices, with where and when they ran.

The site is built on a CPU, yet some cells print what only a GPU shows; their page tags
them :data:`TAG`. :mod:`tensorbook_build.record` writes one recording per device kind
(:func:`device_kind`) and page, ``docs/recorded/<kind>/<page>.json``, its figures beside
it. A recording (:data:`SCHEMA` names every field; it is checked on load) holds the
run's provenance: the device, torch, Python, NumPy, the commit, the date, the command;
for each code cell a hash of its code and of each ``tensorbook`` module imported by it
or a cell before it (the cache key's), a digest of what it printed and, for a tagged
cell, its outputs; and the figures the page glued. A recorded cell is stale
(:func:`freshness`) once its code, or one of those modules, changed since it ran;
:func:`unmarked_differences` finds untagged cells whose output differs between devices.

Examples
--------
>>> device_kind("cpu"), device_kind("cuda", "NVIDIA H100 80GB HBM3")
('cpu', 'nvidia-h100-80gb-hbm3')
>>> source_hash("x = 1\n") == source_hash("x = 1")
True
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import itertools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TAG = "device-dependent"
"""The cell tag of a cell whose output depends on the device that ran it."""
FOLDER = "recorded"
"""Under ``docs/``: one folder per device kind, one JSON file per page."""
COMPAT = "compat.json"
"""In :data:`FOLDER`: the torch versions :mod:`tensorbook_build.compat` ran, and how."""
SCHEMA_VERSION = 1
GLUE = "application/papermill.record/text/plain"  # the MIME type of a glued value

# Each field's type; a nested object's own fields. (None, shape): may be null (a CPU
# recording has no GPU); a name ending in "?": may be absent (an output is text or image).
SCHEMA: dict[str, Any] = {
    "schema": int,
    "page": str,
    "kind": str,
    "provenance": {
        "device": str,
        "model": str,
        "gpu": (None, {"name": str, "driver": str, "cuda": str, "capability": str,
                       "memory_gib": float}),
        "torch": str, "python": str, "numpy": str, "threads": int,
        "commit": str, "commit_date": str, "run_date": str, "command": str,
    },
    "cells": [
        {"index": int, "source": str, "modules": {str: str}, "marked": bool, "digest": str,
         "outputs": [{"text?": str, "image?": str}]}
    ],
    "glue": {str: {"text": str, "cell": int}},
}  # fmt: skip
"""The shape of a recording; :func:`load_recording` refuses anything else."""


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
    outputs: tuple[dict[str, str], ...] = ()  # {"text": ...} or {"image": file}; marked only


@dataclass(frozen=True)
class Recording:
    """One page as one device ran it."""

    path: Path
    page: str
    kind: str
    provenance: dict[str, Any]
    cells: tuple[Cell, ...]
    glue: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def folder(self) -> Path:
        """Where the recording's figures are (its image paths are relative to it)."""
        return self.path.parent


def device_kind(device_type: str, gpu_name: str = "") -> str:
    """The folder name of a device's recordings: ``cpu``, or the GPU's model as a slug."""
    if device_type == "cpu" or not gpu_name:
        return device_type
    return re.sub(r"[^a-z0-9]+", "-", gpu_name.lower()).strip("-")


def source_hash(code: str) -> str:
    """A short hash of a cell's code, blind to surrounding blank lines."""
    return hashlib.sha256(code.strip().encode()).hexdigest()[:16]


def _outputs_text(outputs: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """A cell's outputs as the page shows them: text, or a figure's PNG (base64).

    Consecutive streams are joined, since how printed text is chunked depends on when
    the kernel flushed; a glued value is not shown and is left out.
    """
    shown: list[dict[str, str]] = []
    streaming = False  # whether shown[-1] is a stream's text, which a next stream goes on
    for output in outputs:
        kind, data = output.get("output_type"), output.get("data", {})
        if kind == "stream" and streaming:
            shown[-1]["text"] += output["text"]
        elif kind == "stream":
            shown.append({"text": output["text"]})
        elif kind == "error":
            shown.append({"text": f"{output['ename']}: {output['evalue']}"})
        elif any(mime.startswith("application/papermill.record/") for mime in data):
            continue  # glued: not shown
        elif "image/png" in data:
            shown.append({"png": data["image/png"]})
        elif "text/plain" in data:
            shown.append({"text": data["text/plain"]})
        else:
            continue
        streaming = kind == "stream"
    return [{"text": item["text"].rstrip("\n")} if "text" in item else item for item in shown]


def output_digest(shown: Sequence[Mapping[str, str]], ignore_line: str = "") -> str:
    """A digest of a cell's shown outputs; lines matching ``ignore_line`` (a regex) left out.

    The mark check compares digests between devices; the device line every page prints
    first is about the device by design, so it is left out of the comparison.
    """
    digest = hashlib.sha256()
    for item in shown:
        if "text" in item:
            lines = item["text"].split("\n")
            kept = [x for x in lines if not (ignore_line and re.fullmatch(ignore_line, x))]
            digest.update(("text\0" + "\n".join(kept) + "\0").encode())
        else:
            digest.update(b"image\0" + base64.b64decode(item.get("png", "")) + b"\0")
    return digest.hexdigest()[:16]


def cell_module_hashes(codes: Sequence[str], src_dir: Path) -> list[dict[str, str]]:
    """For each cell, the ``tensorbook`` modules imported by it or the cells before it.

    With their hashes, as :func:`tensorbook_build.execute.page_hashes` computes them
    for the cache key: a later cell may use what an earlier one imported.
    """
    from tensorbook_build.execute import page_hashes

    result = []
    for end in range(1, len(codes) + 1):
        page = "".join(f"```{{code-cell}} ipython3\n{code}\n```\n" for code in codes[:end])
        result.append(dict(page_hashes(page, src_dir).values()))
    return result


def cell_keys(codes: Mapping[int, str], src_dir: Path) -> dict[int, tuple[str, dict[str, str]]]:
    """For each code cell, by notebook index: :func:`source_hash` and its modules' hashes."""
    modules = cell_module_hashes(list(codes.values()), src_dir)
    return {i: (source_hash(c), m) for (i, c), m in zip(codes.items(), modules, strict=True)}


def recording_from_notebook(
    notebook: Mapping[str, Any],
    *,
    page: str,
    kind: str,
    provenance: Mapping[str, Any],
    src_dir: Path,
    ignore_line: str = "",
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The recording of an executed notebook: its JSON data and its figures' bytes.

    Figures are named ``<page>/cell-<index>-<n>.png``, relative to the device kind's
    folder, where :func:`write_recording` puts them.
    """
    cells = notebook["cells"]
    codes = {i: "".join(c["source"]) for i, c in enumerate(cells) if c["cell_type"] == "code"}
    records, figures, glue = [], {}, {}
    for index, (source, modules) in cell_keys(codes, src_dir).items():
        for output in cells[index].get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name", "")
            if name and GLUE in output.get("data", {}):
                glue[name] = {"text": str(output["data"][GLUE]), "cell": index}
        shown = _outputs_text(cells[index].get("outputs", []))
        marked = TAG in cells[index].get("metadata", {}).get("tags", [])
        outputs = []
        for number, item in enumerate(shown if marked else []):
            if "png" in item:
                figure = f"{page}/cell-{index}-{number}.png"
                figures[figure] = base64.b64decode(item["png"])
                item = {"image": figure}  # noqa: PLW2901 - the recorded form of the output
            outputs.append(item)
        records.append({"index": index, "source": source, "modules": modules, "marked": marked,
                        "digest": output_digest(shown, ignore_line), "outputs": outputs})  # fmt: skip
    data = {"schema": SCHEMA_VERSION, "page": page, "kind": kind, "provenance": dict(provenance),
            "cells": records, "glue": dict(sorted(glue.items()))}  # fmt: skip
    return data, figures


def write_recording(root: Path, data: Mapping[str, Any], figures: Mapping[str, bytes]) -> Path:
    """Write one page's recording under ``root/<kind>/``, replacing its earlier figures."""
    folder: Path = root / data["kind"]
    for old in (folder / data["page"]).glob("*.png"):
        old.unlink()
    for name, content in figures.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content)
    path = folder / f"{data['page']}.json"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    _check(data, SCHEMA, path)  # what is written must load
    return path


def _fail(path: Path, where: str, problem: str) -> RecordingError:
    return RecordingError(
        f"{path}: field {where or '(top level)'}: {problem}. Recordings are written by "
        "nox -s record -- --device DEVICE, not by hand: record the page again, or delete "
        "the file"
    )


_TYPES = {str: "a string", int: "an integer", float: "a number", bool: "true or false",
          list: "a list", dict: "an object"}  # fmt: skip


def _has_type(value: object, wanted: type) -> bool:
    """Whether ``value`` is a JSON value of type ``wanted`` (an integer counts as a number)."""
    if isinstance(value, bool) and wanted is not bool:
        return False
    return isinstance(value, (int, float) if wanted is float else wanted)


def _check(value: Any, shape: Any, path: Path, where: str = "") -> None:  # noqa: ANN401
    """Raise :class:`RecordingError` naming ``path`` and the field where ``value`` is off."""
    if isinstance(shape, tuple):
        if value is None:
            return
        shape = shape[1]
    wanted = type(shape) if isinstance(shape, list | dict) else shape
    if not _has_type(value, wanted):
        got = type(value).__name__ if wanted in (list, dict) else json.dumps(value)[:40]
        raise _fail(path, where, f"expected {_TYPES[wanted]}, got {got}")
    if isinstance(shape, list):
        for number, item in enumerate(value):
            _check(item, shape[0], path, f"{where}[{number}]")
    elif isinstance(shape, dict) and str in shape:  # a mapping of names to one shape
        for name, item in value.items():
            _check(item, shape[str], path, f"{where}.{name}".lstrip("."))
    elif isinstance(shape, dict):
        fields = {key.rstrip("?"): key for key in shape}
        for name in value:
            if name not in fields:
                raise _fail(path, f"{where}.{name}".lstrip("."), "not a field of a recording")
        for name, key in fields.items():
            if name in value:
                _check(value[name], shape[key], path, f"{where}.{name}".lstrip("."))
            elif not key.endswith("?"):
                raise _fail(path, f"{where}.{name}".lstrip("."), "missing")
        if "text?" in shape and len(value) != 1:
            raise _fail(path, where, "an output has exactly one of text or image")


def load_recording(path: Path) -> Recording:
    """Read and check one recording.

    Raises
    ------
    RecordingError
        Naming the file and the field that is not what ``nox -s record`` writes,
        and what to do.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise _fail(path, "", f"not JSON ({error})") from None
    _check(data, SCHEMA, path)
    if data["schema"] != SCHEMA_VERSION:
        raise _fail(path, "schema", f"version {data['schema']}, this build reads {SCHEMA_VERSION}")
    if data["kind"] != path.parent.name:
        raise _fail(path, "kind", f"{data['kind']!r}, but the file is in {path.parent.name}/")
    if data["page"] != path.stem:
        raise _fail(path, "page", f"{data['page']!r}, but the file is {path.name}")
    for number, cell in enumerate(data["cells"]):
        for item in cell["outputs"]:
            if "image" in item and not (path.parent / item["image"]).is_file():
                where = f"cells[{number}].outputs"
                raise _fail(path, where, f"the figure {item['image']} is missing")
    cells = tuple(Cell(**{**c, "outputs": tuple(c["outputs"])}) for c in data["cells"])
    return Recording(path, data["page"], data["kind"], data["provenance"], cells, data["glue"])


def page_recordings(root: Path, page: str) -> list[Recording]:
    """Every device's recording of ``page`` under ``root`` (``docs/recorded``), by kind."""
    return [load_recording(path) for path in sorted(root.glob(f"*/{page}.json"))]


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
    """Whether ``recorded`` still describes the cell whose code hashes to ``source``.

    Examples
    --------
    >>> cell = Cell(3, "abc", {"tensorbook.speed": "1"}, True, "d")
    >>> freshness(cell, "abc", {"tensorbook.speed": "1"}).stale
    False
    >>> freshness(cell, "abc", {"tensorbook.speed": "2"}).why
    'tensorbook.speed changed'
    >>> freshness(cell, "xyz", {}).why
    "the cell's code changed"
    """
    if recorded.source != source:
        return Freshness(True, code_changed=True)
    names = {*recorded.modules, *modules}
    changed = tuple(sorted(n for n in names if recorded.modules.get(n) != modules.get(n)))
    return Freshness(bool(changed), modules=changed)


def text_diff(recorded: str, own: str, limit: int = 12) -> str:
    r"""A short line diff from this build's text to the recorded one (``-`` here, ``+`` there).

    Examples
    --------
    >>> print(text_diff("a\nb", "a\nc"))
    -c
    +b
    """
    lines = [
        line
        for line in difflib.unified_diff(own.split("\n"), recorded.split("\n"), n=0, lineterm="")
        if not line.startswith(("---", "+++", "@@"))
    ]
    if len(lines) > limit:
        lines = [*lines[:limit], f"... {len(lines) - limit} more lines"]
    return "\n".join(lines)


def unmarked_differences(recordings: Sequence[Recording]) -> list[str]:
    """Cells not tagged :data:`TAG` whose output differs between two devices' recordings.

    Only cells with the same code in both are compared (a stale one says nothing).
    """
    found = []
    for first, second in itertools.combinations(recordings, 2):
        theirs = {c.index: c for c in second.cells}
        for cell in first.cells:
            other = theirs.get(cell.index)
            if other is None or other.source != cell.source or cell.marked or other.marked:
                continue  # a tagged cell may differ; a changed one says nothing
            if other.digest != cell.digest:
                found.append(
                    f"{first.page}.md, cell {cell.index}: its output differs between "
                    f"{first.kind} and {second.kind}, and it is not tagged {TAG}; "
                    f"add {TAG} to its :tags:"
                )
    return found
