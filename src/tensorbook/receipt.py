r"""Run a chapter on your machine and write what it measured: ``python -m tensorbook.receipt speed``.

It runs the chapter's notebook, the one the book's site offers for download
(``tensorbook-<chapter>.ipynb`` in this folder, or ``--notebook FILE_OR_ADDRESS``), in a
fresh Jupyter kernel of this Python (:mod:`tensorbook.receipt_kernel`) on one CPU
thread, as the book ran it, printing a line as each cell ends, and writes a receipt,
``receipt-<chapter>-<device>.json`` in this folder: the book's recording format (its
device ledger's), with where it ran: the device, the GPU's name, driver and CUDA
version, torch, Python, NumPy, the book's commit (the notebook names it) and the date.
It prints your figures beside those the chapter's prose quotes, and where to send the
file (the notebook's last cell says too). Before anything runs, it checks that this
package is the code the notebook was made with; a run in which a cell raised an error
the chapter does not show on purpose writes nothing.

Examples
--------
>>> figure_in("at 64: 1.4x\nat 4096: 298.1x", r"(?s).*: ([\d.]+)x")
'298.1'
>>> side("yours", "0.16", "", "one .item(): {} µs")
'yours 0.16 µs'
>>> device_kind("cuda", "Tesla T4"), device_kind("cpu", "")
('tesla-t4', 'cpu')
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple
from urllib.error import URLError
from urllib.parse import urlsplit
from urllib.request import urlopen

import tensorbook
from tensorbook.environment import DEVICE_VARIABLE
from tensorbook.receipt_kernel import ReceiptError, check_kernel, run_cells
from tensorbook.recording import (
    BOOK,
    PAGE_CELLS,
    module_hashes,
    output_digest,
    shown_outputs,
    source_hash,
)

SCHEMA_VERSION = 1  # the recording format's (the book's recording.schema.json)
TAG = "device-dependent"  # the page's tag of a cell whose output depends on the device
TAUGHT = "raises-exception"  # the page's tag of a cell that shows an error on purpose


class PageCell(NamedTuple):
    """One of the page's code cells in the notebook."""

    page_index: int  # in the page, markdown counted: the importer's and the ledger's number
    code: str  # the page's own (a download may have changed it: a check made a verdict)
    marked: bool  # tagged :data:`TAG`
    taught: bool  # tagged :data:`TAUGHT`: the error it raises is the chapter's lesson


def slug(name: str) -> str:
    """A machine's name as a folder's: lower case, a run of other characters one ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def device_kind(device_type: str, gpu_name: str) -> str:
    """The book's name for a kind of device: ``cpu``, or the GPU's model as a :func:`slug`."""
    if device_type == "cpu" or not gpu_name:
        return device_type
    return slug(gpu_name)


def figure_in(text: str, pattern: str) -> str | None:
    """The figure ``pattern``'s first group finds in ``text``, or ``None``."""
    found = re.search(pattern, text, flags=re.MULTILINE)
    return found.group(1) if found else None


def read_notebook(where: str) -> dict[str, Any]:
    """A chapter's notebook, from a file or an ``http(s)`` address."""
    if where.endswith(".py"):
        msg = (f"{where} is the chapter's script; the receipt runs its notebook: give "
               f"--notebook {where.removesuffix('.py')}.ipynb, from the same page")  # fmt: skip
        raise ReceiptError(msg)
    try:
        if re.match(r"https?://", where):
            with urlopen(where, timeout=60) as response:
                text = response.read().decode("utf-8")
        else:
            text = Path(where).read_text(encoding="utf-8")
        notebook: dict[str, Any] = json.loads(text)
    except URLError as error:
        fix = "download it from the chapter's page"
        if urlsplit(where).hostname in {"localhost", "127.0.0.1"}:
            fix = ("this copy of the book is served only while python -m http.server -d "
                   "build/html 8000 runs in the book's folder (the notebook's first cell "
                   "says so): start it, or " + fix)  # fmt: skip
        msg = f"cannot read the notebook {where}: {error.reason}; {fix}"
        raise ReceiptError(msg) from error
    except (OSError, ValueError) as error:
        msg = f"cannot read the notebook {where}: {error}; download it from the chapter's page"
        raise ReceiptError(msg) from error
    if PAGE_CELLS not in notebook.get("metadata", {}) or BOOK not in notebook["metadata"]:
        msg = f"{where} is not a chapter's notebook as the book's site offers it: download it again"
        raise ReceiptError(msg)
    return notebook


def page_cells(notebook: Mapping[str, Any]) -> list[PageCell]:
    """The page's code cells in the notebook, in the page's order."""
    by_id = {cell.get("id"): cell for cell in notebook["cells"]}
    cells = []
    for entry in notebook["metadata"][PAGE_CELLS]:
        cell = by_id[entry["id"]]
        code = entry.get("code", cell["source"])
        tags = cell.get("metadata", {}).get("tags", [])
        text = "".join(code) if isinstance(code, list) else code
        cells.append(PageCell(entry["index"], text, TAG in tags, TAUGHT in tags))
    return cells


def changed_modules(book: Mapping[str, Any], cells: Sequence[PageCell]) -> list[str]:
    """The modules the cells import that are not the ones the notebook was made with.

    The notebook's ``modules`` are their hashes at the book's build; the importer
    refuses a receipt that ran others, though the version number be the same.
    """
    made = book.get("modules")
    if made is None:  # a notebook from before the build stamped them: the import will say
        return []
    package = Path(tensorbook.__file__).parent
    here = module_hashes([cell.code for cell in cells], package)[-1] if cells else {}
    return sorted(name for name in {*made, *here} if made.get(name) != here.get(name))


def provenance(device: str, book: Mapping[str, str], command: str) -> dict[str, Any]:
    """Where the receipt ran, in the recording format's fields; the commit is ``book``'s."""
    import numpy as np
    import torch

    gpu = None
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(device)
        query = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
        try:
            done = subprocess.run(query, capture_output=True, text=True, check=True, timeout=30)
            driver = done.stdout.split()[0] if done.stdout.split() else "unknown"
        except (OSError, subprocess.SubprocessError):
            driver = "unknown"
        gpu = {
            "name": props.name,
            "driver": driver,
            "cuda": torch.version.cuda or "",
            "capability": f"{props.major}.{props.minor}",
            "memory_gib": round(props.total_memory / 2**30, 1),
        }
        model = props.name
    else:
        info = Path("/proc/cpuinfo")
        text = info.read_text(encoding="utf-8") if info.is_file() else ""
        cpu = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
        model = f"CPU ({platform.machine()}{', ' + cpu[1].strip() if cpu else ''})"
    return {
        "device": device,
        "model": model,
        "gpu": gpu,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "threads": 1,
        "commit": book["commit"],
        "commit_date": book.get("commit_date", ""),
        "run_date": time.strftime("%Y-%m-%d", time.gmtime()),
        "command": command,
    }


def raised(outputs: Sequence[Mapping[str, Any]]) -> str:
    """The name of the error a cell's outputs end in, or ``""``."""
    errors = [o["ename"] for o in outputs if o.get("output_type") == "error"]
    return errors[-1] if errors else ""


def receipt_data(
    page: str,
    cells: Sequence[PageCell],
    outputs: Sequence[Sequence[Mapping[str, Any]]],
    where: Mapping[str, Any],
) -> dict[str, Any]:
    """The receipt: the recording of ``page``'s ``cells`` that printed ``outputs``.

    Its pictures are in ``figures``, by the name a recording gives their files; each
    cell's ``raised`` names the error it raised, or is ``""`` (the importer checks it
    against the page's cells that show an error on purpose).
    """
    package = Path(tensorbook.__file__).parent
    modules = module_hashes([cell.code for cell in cells], package)
    records, figures = [], {}
    for cell, printed, imported in zip(cells, outputs, modules, strict=True):
        shown, kept = shown_outputs(printed), []
        for number, item in enumerate(shown):
            if "text" in item:
                kept.append(item)
                continue
            [(suffix, content)] = item.items()
            name = f"{page}/cell-{cell.page_index}-{number}.{suffix}"
            figures[name] = content  # an SVG's text, a PNG's base64
            kept.append({"image": name})
        records.append({
            "index": cell.page_index, "source": source_hash(cell.code), "modules": imported,
            "marked": cell.marked, "digest": output_digest(shown), "outputs": kept,
            "raised": raised(printed),
        })  # fmt: skip
    gpu = where["gpu"]
    kind = device_kind(where["device"].split(":")[0], gpu["name"] if gpu else "")
    return {"schema": SCHEMA_VERSION, "page": page, "kind": kind, "provenance": dict(where),
            "cells": records, "figures": figures}  # fmt: skip


def failures(
    cells: Sequence[PageCell], outputs: Sequence[Sequence[Mapping[str, Any]]]
) -> list[str]:
    """Each cell that raised an error the chapter does not show on purpose, said in a line.

    A cell is named as the run's progress names it (``code cell 3 of 19``), with the
    first line of its code, and then its error.
    """
    said = []
    for number, (cell, printed) in enumerate(zip(cells, outputs, strict=True), start=1):
        errors = [o for o in printed if o.get("output_type") == "error"]
        if errors and not cell.taught:
            first = next((line for line in cell.code.splitlines() if line.strip()), "")
            error = f"{errors[-1]['ename']}: {errors[-1]['evalue']}"
            said.append(f"code cell {number} of {len(cells)} ({first.strip()!r}) raised {error}")
    return said


def side(whose: str, value: str, at: str, label: str) -> str:
    """One side of a comparison: ``whose`` figure in ``label``'s unit, where it was measured."""
    _, _, unit = label.partition("{}")
    return f"{whose} {value}{unit}" + (f" (at {at})" if at else "")


def comparison(book: Mapping[str, Any], data: Mapping[str, Any]) -> list[str]:
    """What the reader reads after the run: their figures beside those the prose quotes.

    The first line says where the book's are from, and whether they are older than the
    chapter's code; then a line per figure, in the chapter's words and units, in the
    order the chapter prints them. A figure the reader's run did not print is said with
    the last line its cell printed instead (a CPU has no CUDA graphs, a cell may raise).
    """
    printed = {
        cell["index"]: "\n".join(o["text"] for o in cell["outputs"] if "text" in o)
        for cell in data["cells"]
    }
    figures = book.get("figures", {})
    if not figures:
        return []
    first = next(iter(figures.values()))
    head = (
        "Your figures beside those the chapter's prose quotes, which the book measured on a "
        f"GPU: {first['source']}"
    )
    if any(figure.get("stale") for figure in figures.values()):
        head += (
            ", before the chapter's code last changed, so they may not be what this code "
            "measures there"
        )
    if not book.get("built_on_gpu"):  # the prose's other figures are the CPU's
        head += "; the other figures the chapter's text quotes are from a CPU"
    lines = [f"{head}:"]

    def printed_at(figure: Mapping[str, Any]) -> tuple[int, int]:
        found = re.search(figure["pattern"], printed.get(figure["cell"], ""), re.MULTILINE)
        return figure["cell"], found.start(1) if found else 0

    for figure in sorted(figures.values(), key=printed_at):
        text, label = printed.get(figure["cell"], ""), figure.get("label", "{}")
        yours = figure_in(text, figure["pattern"])
        if yours is None:
            said = [line for line in text.splitlines() if line.strip()]
            instead = (
                f'your run printed "{said[-1].strip()}"' if said else "your run printed nothing"
            )
            mine = f"yours none ({instead})"
        else:
            at = figure_in(text, figure["at"]) if figure.get("at") else None
            mine = side("yours", yours, at or "", label)
        head, _, _ = label.partition("{}")
        theirs = side("the book's", figure["book"], figure.get("book_at", ""), label)
        lines.append(f"  {head}{mine}; {theirs}")
    return lines


def on_colab() -> bool:
    """Whether this Python runs in Google Colab, where a file is downloaded from a pane.

    Colab's runtime sets ``COLAB_RELEASE_TAG``, which a notebook's ``!`` command inherits.
    """
    return "COLAB_RELEASE_TAG" in os.environ


def closing(book: Mapping[str, Any], model: str, colab: bool = False) -> list[str]:
    """What the reader is told of the file written: what it holds, where it is, where it goes."""
    lines = [
        (
            f"The receipt holds what each cell printed, its pictures, the machine as this Python "
            f"sees it: {model}; the versions of torch, Python and NumPy, the date and the "
            "book's commit. Of a file's path it keeps the part inside the Python installation "
            "and the file's name, and no other folder: no name or address of yours. It is "
            "JSON: open it to see."
        ),
    ]
    if colab:
        lines.append("On Colab, download it from the Files pane (the folder icon on the left).")
    if book.get("repository"):
        send = book.get("send") or f"{book['repository']}/issues/new"  # filled in, if it says
        lines.append(
            f"To share it, attach it to a new issue: {send} . The issue is public, under your "
            "GitHub account. Once the book takes the receipt in, what its cells printed, "
            "without their pictures, is shown on the book's site, labelled as a reader's "
            "report, which the book does not check; a later receipt from a machine of the same "
            "model takes its place."
        )
    else:
        lines.append(
            "This copy of the book names no repository to send it to: the file stays with you."
        )
    return lines


def _checked(book: Mapping[str, Any], chapter: str, cells: Sequence[PageCell]) -> None:
    """Refuse, before anything runs, a notebook this package cannot make a receipt of."""
    if book["page"] != chapter:
        msg = f"the notebook is the {book['page']} chapter's, not {chapter}'s"
        raise ReceiptError(msg)
    if book["version"] != tensorbook.__version__:
        msg = (f"the notebook was made with tensorbook {book['version']} and this is "
               f"{tensorbook.__version__}: run the notebook's first cell, then this again")  # fmt: skip
        raise ReceiptError(msg)
    if changed := changed_modules(book, cells):
        wheel = book.get("wheel") or f"tensorbook=={tensorbook.__version__}"
        msg = (
            f"the installed tensorbook {tensorbook.__version__} is not the code this notebook "
            f"was made with ({', '.join(changed[:3])} {'differs' if len(changed) == 1 else 'differ'}), so the book would refuse its "
            f"receipt: reinstall it with {sys.executable} -m pip install --force-reinstall "
            f"--no-deps {wheel} , then run this again"
        )
        raise ReceiptError(msg)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tensorbook.receipt CHAPTER [--notebook FILE] [--out FILE] [--device D]``."""
    parser = argparse.ArgumentParser(
        prog="python -m tensorbook.receipt",
        description=(
            "Run a chapter of the book here, in a Jupyter kernel (pip install ipykernel), and "
            "write a receipt of what it measured: receipt-CHAPTER-DEVICE.json in this folder."
        ),
    )
    parser.add_argument("chapter", help="the chapter's name, as in its address: speed, cuda, ...")
    parser.add_argument("--notebook", help="its notebook (default: tensorbook-CHAPTER.ipynb here)")
    parser.add_argument(
        "--out", type=Path, help="the receipt (default: receipt-CHAPTER-DEVICE.json)"
    )
    parser.add_argument(
        "--device", help=f"cpu, cuda or cuda:N (default: ${DEVICE_VARIABLE}, else a GPU if any)"
    )
    args = parser.parse_args(argv)
    from tensorbook.device import DeviceUnavailableError, choose_device

    try:
        device = choose_device(args.device, given_by="--device").device
        notebook = read_notebook(args.notebook or f"tensorbook-{args.chapter}.ipynb")
        book = notebook["metadata"][BOOK]
        cells = page_cells(notebook)
        _checked(book, args.chapter, cells)
        check_kernel()
        print(
            f"tensorbook.receipt: running the {args.chapter} chapter's {len(cells)} code cells "
            f"on {device}, in a new Jupyter kernel of {sys.executable}; a line as each ends"
        )

        def ended(number: int, seconds: float) -> None:
            print(f"  code cell {number} of {len(cells)}: {seconds:.1f} s", flush=True)

        outputs = run_cells([cell.code for cell in cells], device, ended)
        if failed := failures(cells, outputs):
            left = len(failed) - 1
            more = {0: "", 1: " (and 1 more cell raised one)"}.get(
                left, f" (and {left} more cells raised one)"
            )
            msg = (
                f"no receipt written: {failed[0]}, an error the chapter does not raise{more}. "
                "Run the notebook itself in this Python to see why, then run this again once "
                "its cells run"
            )
            print(f"tensorbook.receipt: {msg}", file=sys.stderr)
            return 1
        command = f"python -m tensorbook.receipt {args.chapter}"
        data = receipt_data(args.chapter, cells, outputs, provenance(device, book, command))
    except (ReceiptError, ValueError, DeviceUnavailableError) as error:
        print(f"tensorbook.receipt: {error}", file=sys.stderr)
        return 2
    out = args.out or Path(f"receipt-{args.chapter}-{data['kind']}.json")
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    taught = sum(cell.taught and bool(raised(o)) for cell, o in zip(cells, outputs, strict=True))
    shown = (
        f"; {taught} cell{'s' * (taught != 1)} raised the error{'s' * (taught != 1)} the chapter "
        "shows on purpose"
        if taught
        else ""
    )
    print(f"tensorbook.receipt: wrote the receipt {out.name}, in {out.resolve().parent}{shown}")
    model = data["provenance"]["model"]
    for line in [*comparison(book, data), *closing(book, model, on_colab())]:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
