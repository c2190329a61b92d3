"""Import a reader's receipt into the device ledger: ``nox -s record -- --import FILE``.

A receipt (:mod:`tensorbook.receipt`) is a recording made on a reader's machine, sent to
the book. It is untrusted: it becomes ``docs/recorded/contributed-<device>/<page>.json``,
labelled contributed, only if it passes every check, each refusal one line naming what
is wrong, before anything is written:

- it is at most :data:`MAX_BYTES`, JSON, and the recording format
  (``recording.schema.json``) with :data:`LIMITS` on its sizes and its ``figures``;
- its page is a chapter's name, its commit one of this repository's, and its cells
  those of the page at that commit: each cell's code and the modules it imports;
- no cell raised an error (``raised``) but those the page shows on purpose (tagged
  ``raises-exception``): a run that failed says nothing of the reader's machine;
- the device its provenance names is the one its run printed it ran on (the device line);
- no text of it, printed or of its provenance, holds markup (:data:`MARKUP`), and no
  picture holds script; its pictures are then dropped: a contributed recording shows
  text only, which the page escapes.

The recording is written to a temporary file beside its place, then renamed.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import hashlib
import io
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any, cast

from tensorbook.receipt import TAUGHT, slug
from tensorbook.wording import DEVICE_LINE, ON_GPU, parse
from tensorbook_build.execute import read_page
from tensorbook_build.ledger import (
    FOLDER,
    SCHEMA,
    TAG,
    Recording,
    cell_keys,
    page_recordings,
    schema_problem,
)
from tensorbook_build.settings import LAYOUT

MAX_BYTES = 4 * 2**20
"""The most a receipt may weigh: the book's largest recording, with its pictures, is 60 kB."""
LIMITS = {"text": 200_000, "cells": 500, "outputs": 200, "figures": 100, "figure": 1_000_000}
"""The most characters in one printed text, cells in a page, outputs in a cell, pictures,
and characters in one picture."""
PREFIX = "contributed-"  # of a contributed recording's kind: never one of the book's own
PAGE_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
COMMIT = re.compile(r"[0-9a-f]{40}")
MARKUP = re.compile(
    r"</?(?:script|iframe|object|embed|svg|foreignobject|link|meta|style|img|a)\b"
    r"|<[a-z][^>]*\son[a-z]+\s*=|javascript\s*:",
    re.IGNORECASE,
)
"""What no text a chapter prints holds: an HTML element that runs or loads something, an
event handler attribute (``onload=``), a ``javascript:`` address. A browser reads a tag
only where a name follows ``<`` at once, so ``x < a`` or ``<class 'int'>`` is text.

>>> [bool(MARKUP.search(t)) for t in ("x < a", "one = 1 < 2", "<class 'int'>", "<svg onload=f>")]
[False, False, False, True]
"""
SVG_SCRIPT = re.compile(
    r"<script|(?<=\s)on[a-z]+\s*=|javascript\s*:|<foreignobject|href\s*=\s*[\"'](?!#)",
    re.IGNORECASE,
)
"""What no picture the book draws holds: script, a handler, a link out."""


class ReceiptRefused(ValueError):
    """A receipt that is not imported: the one line says why."""


def receipt_schema() -> dict[str, Any]:
    """The recording format with :data:`LIMITS`, and a receipt's pictures (``figures``)."""
    schema: dict[str, Any] = copy.deepcopy(SCHEMA)
    schema["properties"]["figures"] = {
        "type": "object",
        "maxProperties": LIMITS["figures"],
        "additionalProperties": {"type": "string", "maxLength": LIMITS["figure"]},
    }
    schema["properties"].pop("contributed", None)  # the import says so, not the receipt
    cells = schema["properties"]["cells"]
    cells["maxItems"] = LIMITS["cells"]
    # the error each cell raised ("" for none): the receipt's, not the ledger's
    cells["items"]["properties"]["raised"] = {"type": "string", "maxLength": 200}
    cells["items"]["required"] = [*cells["items"]["required"], "raised"]
    outputs = cells["items"]["properties"]["outputs"]
    outputs["maxItems"] = LIMITS["outputs"]
    for value in outputs["items"]["properties"].values():
        value["maxLength"] = LIMITS["text"]
    for value in schema["properties"]["provenance"]["properties"].values():
        if value.get("type") == "string":
            value["maxLength"] = 200
    return schema


def _git(*arguments: str, root: Path = LAYOUT.root) -> bytes | None:
    done = subprocess.run(["git", "-C", str(root), *arguments], capture_output=True, check=False)
    return done.stdout if done.returncode == 0 else None


def book_cells(
    page: str, commit: str, root: Path = LAYOUT.root
) -> tuple[dict[int, Any], set[int], set[int]]:
    """The page's code cells at ``commit``: :func:`~tensorbook_build.ledger.cell_keys`, tagged.

    Returns the keys by cell index, the indices of the cells tagged ``device-dependent``
    and those of the cells tagged ``raises-exception``.
    """
    text = _git("show", f"{commit}:docs/{page}.md", root=root)
    if text is None:
        msg = f"field page: docs/{page}.md is not in commit {commit[:12]}"
        raise ReceiptRefused(msg)
    book = read_page(text.decode("utf-8"))
    if not book.code:
        msg = f"field page: {page}.md runs no code at commit {commit[:12]}: it has no receipt"
        raise ReceiptRefused(msg)
    archive = _git("archive", "--format=tar", commit, "src/tensorbook", root=root)
    if archive is None:
        msg = f"commit {commit[:12]} has no src/tensorbook"
        raise ReceiptRefused(msg)
    with tempfile.TemporaryDirectory(prefix="tensorbook-receipt-") as folder:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        keys = cell_keys(book.code, Path(folder) / "src")
    tagged = {tag: {cell.index for cell in book.cells if tag in cell.tags} for tag in (TAG, TAUGHT)}
    return keys, tagged[TAG], tagged[TAUGHT]


def _text_problem(text: str, where: str) -> str:
    found = MARKUP.search(text)
    return f"{where}: markup ({found[0][:20]!r}); a chapter prints none" if found else ""


def _device_problem(cells: list[dict[str, Any]], provenance: dict[str, Any]) -> str:
    """Where the device line the run printed first contradicts the provenance, what it says.

    The provenance is the reader's word; the line is what the chapter's code printed.
    """
    for cell in sorted(cells, key=lambda c: c["index"]):
        for item in cell["outputs"]:
            for line in item.get("text", "").splitlines():
                if (said := parse(DEVICE_LINE, line)) is None:
                    continue
                where, gpu = said["where"], provenance["gpu"]
                on_gpu = parse(ON_GPU, where)
                if on_gpu is None:  # a CPU's line: the provenance names no GPU
                    contradicts = gpu is not None or provenance["device"] != "cpu"
                else:
                    contradicts = gpu is None or gpu["name"] != on_gpu["name"]
                if contradicts:
                    named = gpu["name"] if gpu else provenance["device"]
                    return (
                        f"field provenance: it names {named[:40]!r}, but its run printed that "
                        f"it ran on {where[:60]}: the receipt's machine is not the one that ran it"
                    )
                return ""
    return ""


def checked(given: object, root: Path = LAYOUT.root) -> tuple[dict[str, Any], list[str]]:
    """The recording a receipt's data becomes, and notes; :class:`ReceiptRefused` else."""
    if problem := schema_problem(given, receipt_schema()):
        # jsonschema quotes the value: a long one is cut, so that the refusal stays a line
        problem = re.sub(r"'([^'\n]{40})[^']{20,}'", r"'\1...'", problem.replace("\n", " "))
        msg = f"{problem}; a receipt is what python -m tensorbook.receipt writes"
        raise ReceiptRefused(msg)
    data = cast(dict[str, Any], given)  # the schema's shape
    page, provenance = data["page"], data["provenance"]
    if not PAGE_NAME.fullmatch(page):
        msg = f"field page: {page[:40]!r} is not a chapter's name (a-z, 0-9, _)"
        raise ReceiptRefused(msg)
    for field, value in provenance.items():
        texts = value.values() if isinstance(value, dict) else [value]
        for text in (t for t in texts if isinstance(t, str)):
            if problem := _text_problem(text, f"field provenance.{field}"):
                raise ReceiptRefused(problem)
    commit = provenance["commit"]
    if not COMMIT.fullmatch(commit):
        msg = (
            f"field provenance.commit: {commit[:50]!r} is not a commit's full hash: the "
            "receipt must run a notebook the published site offers"
        )
        raise ReceiptRefused(msg)
    if _git("cat-file", "-e", f"{commit}^{{commit}}", root=root) is None:
        msg = f"commit {commit[:12]} is not in this repository: git fetch it first"
        raise ReceiptRefused(msg)
    keys, marked, taught = book_cells(page, commit, root)
    order = {index: number for number, index in enumerate(sorted(keys), start=1)}
    if sorted(c["index"] for c in data["cells"]) != sorted(keys):
        msg = (
            f"its cells are not the code cells of {page}.md at commit {commit[:12]} "
            f"({len(data['cells'])} cells, the page has {len(keys)})"
        )
        raise ReceiptRefused(msg)
    figures, notes, cells = data.get("figures", {}), [], []
    for cell in data["cells"]:
        index = cell["index"]
        # the page's index, and the count the reader's run printed as it went
        named = f"cell {index} (code cell {order[index]} of {len(keys)})"
        source, modules = keys[index]
        if cell["source"] != source:
            msg = f"{named}: its code is not {page}.md's at commit {commit[:12]}"
            raise ReceiptRefused(msg)
        if cell["raised"] and index not in taught:
            msg = (
                f"{named} raised "
                f"{cell['raised'][:40]}, which {page}.md does not: the reader's run failed"
            )
            raise ReceiptRefused(msg)
        if cell["modules"] != modules:
            changed = sorted(
                n for n in {*modules, *cell["modules"]} if modules.get(n) != cell["modules"].get(n)
            )
            msg = (
                f"{named}: {', '.join(changed)} is not the book's at commit {commit[:12]}: "
                "the receipt ran another version of the package"
            )
            raise ReceiptRefused(msg)
        kept = []
        for number, item in enumerate(cell["outputs"]):
            where = f"{named}, output {number}"
            if "text" in item:
                if problem := _text_problem(item["text"], where):
                    raise ReceiptRefused(problem)
                kept.append(item)
                continue
            name = item["image"]
            if name not in figures:
                msg = f"{where}: its picture {name[:60]!r} is not in the receipt"
                raise ReceiptRefused(msg)
            if name.endswith(".svg") and (found := SVG_SCRIPT.search(figures[name])):
                msg = f"{where}: its picture holds script ({found[0][:20]!r})"
                raise ReceiptRefused(msg)
            notes.append(f"{named}: its picture is not kept (contributed recordings show text)")
        ledger_cell = {key: value for key, value in cell.items() if key != "raised"}
        cells.append({**ledger_cell, "marked": index in marked, "outputs": kept})
    if problem := _device_problem(data["cells"], provenance):
        raise ReceiptRefused(problem)
    gpu = provenance["gpu"]
    kind = PREFIX + slug(gpu["name"] if gpu else provenance["model"])[:48].strip("-")
    recording = {
        "schema": data["schema"],
        "page": page,
        "kind": kind,
        "provenance": provenance,
        "cells": cells,
        "contributed": {"imported": dt.date.today().isoformat(), "receipt": ""},
    }
    return recording, notes


def import_receipt(
    path: Path, root: Path = LAYOUT.root, recorded: Path = LAYOUT.docs / FOLDER
) -> tuple[Path, list[str]]:
    """Check the receipt at ``path`` against the repository at ``root``; write it in ``recorded``.

    Returns the recording's path and notes for the maintainer: what was dropped or
    replaced, and cells whose output differs from another device's but are not tagged.
    """
    if not path.is_file():
        msg = f"{path}: no such file"
        raise ReceiptRefused(msg)
    size = path.stat().st_size
    if size > MAX_BYTES:
        msg = (
            f"{path.name} is {size / 2**20:.1f} MB; a receipt is at most {MAX_BYTES / 2**20:.0f} MB"
        )
        raise ReceiptRefused(msg)
    raw = path.read_bytes()
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        msg = f"{path.name} is not JSON: {error}"
        raise ReceiptRefused(msg) from error
    recording, notes = checked(data, root)
    recording["contributed"]["receipt"] = hashlib.sha256(raw).hexdigest()[:16]
    if problem := schema_problem(recording, SCHEMA):  # the ledger's own check, as it will read it
        raise ReceiptRefused(problem)
    folder = recorded / recording["kind"]
    target = folder / f"{recording['page']}.json"
    if target.exists():  # one slot a model: the newest receipt is the one shown
        notes.append(
            f"it replaces the contributed recording {target}, of the same model "
            f"({recording['provenance']['model']}): one receipt a model is kept, the newest"
        )
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(recording, indent=1, ensure_ascii=False) + "\n"
    with tempfile.NamedTemporaryFile(
        "w", dir=folder, suffix=".tmp", delete=False, encoding="utf-8"
    ) as file:
        file.write(text)
    Path(file.name).replace(target)
    notes.extend(_differences(recording, page_recordings(recorded, recording["page"])))
    return target, notes


def _differences(recording: dict[str, Any], everyone: list[Recording]) -> list[str]:
    """Cells the page does not tag whose reader's output differs from the book's recordings.

    The page's tags follow the book's own devices: a reader's machine is no reason to
    change one, so these are for the maintainer to read, not advice to tag.
    """
    book = [r for one in everyone if not one.contributed for r in (one, one.beside) if r]
    notes = []
    for cell in (c for c in recording["cells"] if not c["marked"]):
        for other in book:
            theirs = next((c for c in other.cells if c.index == cell["index"]), None)
            if theirs and theirs.source == cell["source"] and theirs.digest != cell["digest"]:
                notes.append(
                    f"cell {cell['index']}: what the reader's run printed differs from "
                    f"{other.kind}'s, in a cell the page does not tag {TAG}: read it in the "
                    "recording before you commit it"
                )
                break
    return notes


def main(argv: list[str] | None = None) -> int:
    """``python -m tensorbook_build.receipts FILE``: import one receipt."""
    parser = argparse.ArgumentParser(
        prog="nox -s record -- --import", description="Import a reader's receipt into the ledger."
    )
    parser.add_argument("receipt", type=Path)
    args = parser.parse_args(argv)
    try:
        target, notes = import_receipt(args.receipt)
    except ReceiptRefused as error:
        print(f"tensorbook_build.receipts: refused {args.receipt.name}: {error}", file=sys.stderr)
        return 1
    print(f"tensorbook_build.receipts: wrote {target}")
    for note in notes:
        print(f"tensorbook_build.receipts: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
