r"""The device ledger: outputs recorded on other devices, with where and when they ran.

The site is built on a CPU, yet some cells print what only a GPU shows. Their page
marks them with the cell tag :data:`TAG` (``device-dependent``); ``nox -s record --
--device cuda`` (:mod:`tensorbook_build.record`) executes the pages on that device and
writes, per page, ``docs/recorded/<kind>/<page>.json``, where ``<kind>`` is
:func:`device_kind` (``cpu``, or the GPU's model, ``nvidia-h100-80gb-hbm3``), with the
figures beside it as PNG files. A build then shows each marked cell's own output first
and the recorded ones of other devices beside it, each labelled with its provenance
(:mod:`tensorbook_build.extensions.ledger`).

A recording holds, as JSON (:data:`SCHEMA`, checked on load by :func:`load_recording`):

* ``provenance``: the device, its model (for a GPU: name, driver, CUDA, compute
  capability, memory), torch, Python and NumPy, the kernels' threads, the commit and
  its date, the date of the run and the exact command;
* ``cells``: each code cell's notebook index, a hash of its source, a hash of each
  ``tensorbook`` module imported by it or by a cell before it (the cache key's hashes,
  :func:`tensorbook_build.execute.page_hashes`), a digest of what it printed, and, for
  a marked cell, its outputs (text, or a figure's file);
* ``glue``: every figure the page glued, for the ``{recorded}`` role.

A recorded cell is *stale* (:func:`freshness`) when its source, or one of those
modules, changed since it ran; :func:`unmarked_differences` finds cells whose output
differs between two devices' recordings although the page does not mark them.

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
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "FOLDER",
    "SCHEMA",
    "SCHEMA_VERSION",
    "TAG",
    "Cell",
    "Freshness",
    "Recording",
    "RecordingError",
    "cell_module_hashes",
    "device_kind",
    "freshness",
    "load_recording",
    "output_digest",
    "page_recordings",
    "recording_from_notebook",
    "source_hash",
    "text_diff",
    "unmarked_differences",
    "write_recording",
]

TAG = "device-dependent"
"""The cell tag of a cell whose output depends on the device that ran it."""
FOLDER = "recorded"
"""Under ``docs/``: one folder per device kind, one JSON file per page."""
SCHEMA_VERSION = 1

# Each field: its type, and for a nested object its own fields. "?" marks a field that
# may be null (a CPU recording has no GPU).
SCHEMA: dict[str, Any] = {
    "schema": int,
    "page": str,
    "kind": str,
    "provenance": {
        "device": str,
        "model": str,
        "gpu?": {"name": str, "driver": str, "cuda": str, "capability": str, "memory_gib": float},
        "torch": str,
        "python": str,
        "numpy": str,
        "threads": int,
        "commit": str,
        "commit_date": str,
        "run_date": str,
        "command": str,
    },
    "cells": [
        {
            "index": int,
            "source": str,
            "modules": {str: str},
            "marked": bool,
            "digest": str,
            "outputs": [{"text?": str, "image?": str}],
        }
    ],
    "glue": {str: {"text": str, "cell": int}},
}
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

    def label_fields(self) -> dict[str, str]:
        """The provenance a reader is shown: model, CUDA, torch, date, commit.

        Examples
        --------
        >>> r = Recording(Path("x.json"), "speed", "cpu", {"model": "CPU (x86_64)",
        ...     "gpu": None, "torch": "2.13.0", "run_date": "2026-12-01",
        ...     "commit": "1a2b3c4d5e6f7a8b"}, ())
        >>> r.label_fields()
        {'model': 'CPU (x86_64)', 'cuda': '', 'torch': '2.13.0', 'date': '2026-12-01', 'commit': '1a2b3c4'}
        """
        gpu = self.provenance.get("gpu") or {}
        return {
            "model": self.provenance["model"],
            "cuda": gpu.get("cuda", ""),
            "torch": self.provenance["torch"],
            "date": self.provenance["run_date"],
            "commit": self.provenance["commit"][:7],
        }


def device_kind(device_type: str, gpu_name: str = "") -> str:
    """The folder name of a device's recordings: ``cpu``, or the GPU's model as a slug."""
    if device_type == "cpu" or not gpu_name:
        return device_type
    return re.sub(r"[^a-z0-9]+", "-", gpu_name.lower()).strip("-")


def source_hash(code: str) -> str:
    """A short hash of a cell's code, blind to surrounding blank lines."""
    return hashlib.sha256(code.strip().encode()).hexdigest()[:16]


def _outputs_text(outputs: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """A cell's outputs as the page shows them: streams joined, text, figures as PNG bytes.

    The chunking of printed text depends on when the kernel flushed, so consecutive
    stream outputs are joined; a glued value is not shown and is left out.
    """
    shown: list[dict[str, str]] = []
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream":
            if shown and "text" in shown[-1] and shown[-1].get("_stream"):
                shown[-1]["text"] += output["text"]
            else:
                shown.append({"text": output["text"], "_stream": "1"})
            continue
        if kind == "error":
            shown.append({"text": f"{output['ename']}: {output['evalue']}"})
            continue
        data = output.get("data", {})
        if any(mime.startswith("application/papermill.record/") for mime in data):
            continue
        if "image/png" in data:
            shown.append({"png": data["image/png"]})
        elif "text/plain" in data:
            shown.append({"text": data["text/plain"]})
    for item in shown:
        item.pop("_stream", None)
        if "text" in item:
            item["text"] = item["text"].rstrip("\n")
    return shown


def output_digest(shown: Sequence[Mapping[str, str]], ignore_line: str = "") -> str:
    """A digest of a cell's shown outputs; lines matching ``ignore_line`` (a regex) left out.

    The mark check compares digests between devices; the device line every page prints
    first is about the device by design, so it is left out of the comparison.
    """
    digest = hashlib.sha256()
    for item in shown:
        if "text" in item:
            lines = item["text"].split("\n")
            if ignore_line:
                lines = [line for line in lines if not re.fullmatch(ignore_line, line)]
            digest.update(("text\0" + "\n".join(lines) + "\0").encode())
        else:
            digest.update(b"image\0" + base64.b64decode(item.get("png", "")) + b"\0")
    return digest.hexdigest()[:16]


def cell_module_hashes(codes: Sequence[str], src_dir: Path) -> list[dict[str, str]]:
    """For each cell, the ``tensorbook`` modules imported by it or the cells before it.

    With their hashes, as the cache key computes them
    (:func:`tensorbook_build.execute.page_hashes`): a later cell may use what an earlier
    one imported, so a cell depends on everything imported up to it.
    """
    from tensorbook_build.execute import page_hashes

    result = []
    for end in range(1, len(codes) + 1):
        page = "".join(f"```{{code-cell}} ipython3\n{code}\n```\n" for code in codes[:end])
        result.append(dict(page_hashes(page, src_dir).values()))
    return result


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
    cells = list(notebook["cells"])
    code_indices = [i for i, cell in enumerate(cells) if cell["cell_type"] == "code"]
    codes = ["".join(cells[i]["source"]) for i in code_indices]
    modules = cell_module_hashes(codes, src_dir)
    records: list[dict[str, Any]] = []
    figures: dict[str, bytes] = {}
    glue: dict[str, dict[str, Any]] = {}
    for position, index in enumerate(code_indices):
        cell = cells[index]
        tags = cell.get("metadata", {}).get("tags", [])
        for output in cell.get("outputs", []):
            for mime, value in output.get("data", {}).items():
                if mime == "application/papermill.record/text/plain":
                    name = output.get("metadata", {}).get("scrapbook", {}).get("name", "")
                    if name:
                        glue[name] = {"text": str(value), "cell": index}
        shown = _outputs_text(cell.get("outputs", []))
        marked = TAG in tags
        outputs: list[dict[str, str]] = []
        if marked:
            for number, item in enumerate(shown):
                if "text" in item:
                    outputs.append({"text": item["text"]})
                else:
                    name = f"{page}/cell-{index}-{number}.png"
                    figures[name] = base64.b64decode(item["png"])
                    outputs.append({"image": name})
        records.append(
            {
                "index": index,
                "source": source_hash(codes[position]),
                "modules": modules[position],
                "marked": marked,
                "digest": output_digest(shown, ignore_line),
                "outputs": outputs,
            }
        )
    data = {
        "schema": SCHEMA_VERSION,
        "page": page,
        "kind": kind,
        "provenance": dict(provenance),
        "cells": records,
        "glue": dict(sorted(glue.items())),
    }
    return data, figures


def write_recording(root: Path, data: Mapping[str, Any], figures: Mapping[str, bytes]) -> Path:
    """Write one page's recording under ``root/<kind>/``, replacing its earlier figures."""
    folder: Path = root / data["kind"]
    figure_folder = folder / data["page"]
    if figure_folder.is_dir():
        for old in figure_folder.glob("*.png"):
            old.unlink()
    for name, content in figures.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content)
    path = folder / f"{data['page']}.json"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    _check(data, SCHEMA, path, "")  # what is written must load
    return path


def _type_name(kind: object) -> str:
    names: dict[object, str] = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "true or false",
    }
    return names.get(kind, "an object" if isinstance(kind, dict) else "a list")


def _fail(path: Path, where: str, problem: str) -> RecordingError:
    return RecordingError(
        f"{path}: field {where or '(top level)'}: {problem}. Recordings are written by "
        "nox -s record -- --device DEVICE, not by hand: record the page again, or delete "
        "the file"
    )


def _check(value: object, shape: object, path: Path, where: str) -> None:
    """Raise :class:`RecordingError` naming ``path`` and the field where ``value`` is off."""
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            raise _fail(path, where, f"expected an object, got {type(value).__name__}")
        keys = [k for k in shape if isinstance(k, str)]
        if not keys:  # a mapping of names to one shape
            (key_shape, item_shape) = next(iter(shape.items()))
            for key, item in value.items():
                _check(key, key_shape, path, f"{where}.{key}" if where else str(key))
                _check(item, item_shape, path, f"{where}.{key}" if where else str(key))
            return
        wanted = {k.rstrip("?"): k for k in keys}
        for name in value:
            if name not in wanted:
                raise _fail(path, _join(where, name), "not a field of a recording")
        for name, key in wanted.items():
            here = _join(where, name)
            if name not in value:
                if key.endswith("?") and where.endswith("]"):  # an output: text or image
                    continue
                raise _fail(path, here, "missing")
            if value[name] is None and key.endswith("?"):
                continue
            _check(value[name], shape[key], path, here)
        if where.endswith("]") and "text?" in shape and len(value) != 1:
            raise _fail(path, where, "an output has exactly one of text or image")
        return
    if isinstance(shape, list):
        if not isinstance(value, list):
            raise _fail(path, where, f"expected a list, got {type(value).__name__}")
        for number, item in enumerate(value):
            _check(item, shape[0], path, f"{where}[{number}]")
        return
    # the schema's leaves are types (str, int...)
    ok = isinstance(shape, type) and isinstance(value, shape)
    ok = ok and not (shape is int and isinstance(value, bool))
    if shape is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok:
        raise _fail(path, where, f"expected {_type_name(shape)}, got {json.dumps(value)[:40]}")


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


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
    _check(data, SCHEMA, path, "")
    if data["schema"] != SCHEMA_VERSION:
        raise _fail(path, "schema", f"version {data['schema']}, this build reads {SCHEMA_VERSION}")
    if data["kind"] != path.parent.name:
        raise _fail(path, "kind", f"{data['kind']!r}, but the file is in {path.parent.name}/")
    if data["page"] != path.stem:
        raise _fail(path, "page", f"{data['page']!r}, but the file is {path.name}")
    for number, cell in enumerate(data["cells"]):
        for item in cell["outputs"]:
            if "image" in item and not (path.parent / item["image"]).is_file():
                raise _fail(
                    path, f"cells[{number}].outputs", f"the figure {item['image']} is missing"
                )
    cells = tuple(
        Cell(c["index"], c["source"], c["modules"], c["marked"], c["digest"], tuple(c["outputs"]))
        for c in data["cells"]
    )
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
    changed = sorted(
        name
        for name in {*recorded.modules, *modules}
        if recorded.modules.get(name) != modules.get(name)
    )
    if changed:
        return Freshness(True, modules=tuple(changed))
    return Freshness(False)


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
    """Cells whose output differs between two devices' recordings but are not marked.

    Only cells with the same code in both are compared (a stale one says nothing).
    Each finding names the page, the cell and the two kinds.
    """
    found = []
    for number, first in enumerate(recordings):
        for second in recordings[number + 1 :]:
            theirs = {c.index: c for c in second.cells}
            for cell in first.cells:
                other = theirs.get(cell.index)
                if other is None or other.source != cell.source or cell.marked or other.marked:
                    continue
                if other.digest != cell.digest:
                    found.append(
                        f"{first.page}.md, cell {cell.index}: its output differs between "
                        f"{first.kind} and {second.kind}, and it is not tagged {TAG}; "
                        f"add {TAG} to its :tags:"
                    )
    return found
