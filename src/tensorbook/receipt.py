r"""Run a chapter on your machine and write what it measured: ``python -m tensorbook.receipt speed``.

It runs the chapter's notebook, the one the book's site offers for download
(``tensorbook-<chapter>.ipynb`` in this folder, or ``--notebook FILE_OR_ADDRESS``), in a
fresh Jupyter kernel (``ipykernel``) on one CPU thread, as the book ran it, printing a
line as each cell ends, and writes a receipt, ``receipt-<chapter>-<device>.json`` in
this folder: the book's recording format (its device ledger's), with where it ran: the
device, the GPU's name, driver and CUDA version, torch, Python, NumPy, the book's commit
(the notebook names it) and the date. It prints your figures beside those the
chapter's prose quotes, and where to send the file (the notebook's last cell says too).

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
import importlib.util
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.request import urlopen

import tensorbook
from tensorbook.environment import DEVICE_VARIABLE
from tensorbook.recording import (
    BOOK,
    PAGE_CELLS,
    module_hashes,
    output_digest,
    shown_outputs,
    source_hash,
)

if TYPE_CHECKING:
    from jupyter_client.blocking.client import BlockingKernelClient

SCHEMA_VERSION = 1  # the recording format's (the book's recording.schema.json)
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
"""Set to 1 for the kernel: the book records its pages on one CPU thread."""
TAG = "device-dependent"  # the page's tag of a cell whose output depends on the device
CELL_TIMEOUT_S = 900  # a cell still running then is stopped: the book's slowest take 600 s
KERNEL_MISSING = "the receipt runs the chapter in a Jupyter kernel: pip install ipykernel"


class ReceiptError(Exception):
    """What stops a receipt, in one line that says what to do."""


def device_kind(device_type: str, gpu_name: str) -> str:
    """The book's name for a kind of device: ``cpu``, or the GPU's model as a slug."""
    if device_type == "cpu" or not gpu_name:
        return device_type
    return re.sub(r"[^a-z0-9]+", "-", gpu_name.lower()).strip("-")


def figure_in(text: str, pattern: str) -> str | None:
    """The figure ``pattern``'s first group finds in ``text``, or ``None``."""
    found = re.search(pattern, text, flags=re.MULTILINE)
    return found.group(1) if found else None


def read_notebook(where: str) -> dict[str, Any]:
    """A chapter's notebook, from a file or an ``http(s)`` address."""
    try:
        if re.match(r"https?://", where):
            with urlopen(where, timeout=60) as response:
                text = response.read().decode("utf-8")
        else:
            text = Path(where).read_text(encoding="utf-8")
        notebook: dict[str, Any] = json.loads(text)
    except (OSError, ValueError) as error:
        msg = f"cannot read the notebook {where}: {error}; download it from the chapter's page"
        raise ReceiptError(msg) from error
    if PAGE_CELLS not in notebook.get("metadata", {}) or BOOK not in notebook["metadata"]:
        msg = f"{where} is not a chapter's notebook as the book's site offers it: download it again"
        raise ReceiptError(msg)
    return notebook


def page_cells(notebook: Mapping[str, Any]) -> list[tuple[int, str, bool]]:
    """The page's code cells in the notebook: index in the page, code, whether tagged :data:`TAG`.

    A cell the download changed (a check made a verdict) runs the page's own code.
    """
    by_id = {cell.get("id"): cell for cell in notebook["cells"]}
    cells = []
    for entry in notebook["metadata"][PAGE_CELLS]:
        cell = by_id[entry["id"]]
        code = entry.get("code", cell["source"])
        marked = TAG in cell.get("metadata", {}).get("tags", [])
        cells.append((entry["index"], "".join(code) if isinstance(code, list) else code, marked))
    return cells


def check_kernel() -> None:
    """Raise :class:`ReceiptError` unless this Python can start a Jupyter kernel."""
    if not all(importlib.util.find_spec(name) for name in ("jupyter_client", "ipykernel")):
        raise ReceiptError(KERNEL_MISSING)


def run_cells(
    codes: Sequence[str], device: str | None, ended: Callable[[int, float], None] | None = None
) -> list[list[dict[str, Any]]]:
    """Run ``codes`` in a fresh kernel of this Python; each cell's outputs, as a notebook's.

    A cell that raises is recorded with its error, and the next cells still run. As each
    cell ends, ``ended`` is given its number (from 1) and the seconds it took.
    """
    check_kernel()
    from jupyter_client.manager import KernelManager

    environment = {**os.environ, **dict.fromkeys(THREAD_VARIABLES, "1")}
    if device:
        environment[DEVICE_VARIABLE] = device
    with tempfile.TemporaryDirectory(prefix="tensorbook-receipt-") as folder:
        # Unix sockets in a private folder, where there are: no port open to the machine
        local = (
            {"transport": "ipc", "ip": str(Path(folder, "kernel"))} if os.name == "posix" else {}
        )
        manager = KernelManager(kernel_name="python3", **local)
        manager.start_kernel(env=environment, cwd=folder)
        client = manager.client()
        try:
            client.start_channels()
            client.wait_for_ready(timeout=120)
            outputs = []
            for number, code in enumerate(codes, start=1):
                start = time.monotonic()
                outputs.append(_run(client, code))
                if ended:
                    ended(number, time.monotonic() - start)
            return outputs
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)


def _run(client: BlockingKernelClient, code: str) -> list[dict[str, Any]]:
    """One cell's outputs; the kernel's messages turned into nbformat's outputs."""
    request = client.execute(code, store_history=True)
    outputs: list[dict[str, Any]] = []
    deadline = time.monotonic() + CELL_TIMEOUT_S
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            msg = f"a cell ran over {CELL_TIMEOUT_S} s; its code begins {code[:60]!r}"
            raise ReceiptError(msg)
        message = client.get_iopub_msg(timeout=left)
        if message["parent_header"].get("msg_id") != request:
            continue
        kind, content = message["msg_type"], message["content"]
        if kind == "status" and content["execution_state"] == "idle":
            return outputs
        if kind == "stream":
            outputs.append({"output_type": kind, "name": content["name"], "text": content["text"]})
        elif kind in {"execute_result", "display_data"}:
            outputs.append({"output_type": kind, "data": content["data"]})
        elif kind == "error":
            outputs.append({"output_type": kind, "ename": content["ename"],
                            "evalue": content["evalue"]})  # fmt: skip
        elif kind == "clear_output":
            outputs.clear()


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


def receipt_data(
    page: str,
    cells: Sequence[tuple[int, str, bool]],
    outputs: Sequence[Sequence[Mapping[str, Any]]],
    where: Mapping[str, Any],
) -> dict[str, Any]:
    """The receipt: the recording of ``page``'s ``cells`` that printed ``outputs``.

    Its pictures are in ``figures``, by the name a recording gives their files.
    """
    package = Path(tensorbook.__file__).parent
    modules = module_hashes([code for _, code, _ in cells], package)
    records, figures = [], {}
    for (index, code, marked), printed, imported in zip(cells, outputs, modules, strict=True):
        shown, kept = shown_outputs(printed), []
        for number, item in enumerate(shown):
            if "text" in item:
                kept.append(item)
                continue
            [(suffix, content)] = item.items()
            name = f"{page}/cell-{index}-{number}.{suffix}"
            figures[name] = content  # an SVG's text, a PNG's base64
            kept.append({"image": name})
        records.append({
            "index": index, "source": source_hash(code), "modules": imported,
            "marked": marked, "digest": output_digest(shown), "outputs": kept,
        })  # fmt: skip
    gpu = where["gpu"]
    kind = device_kind(where["device"].split(":")[0], gpu["name"] if gpu else "")
    return {"schema": SCHEMA_VERSION, "page": page, "kind": kind, "provenance": dict(where),
            "cells": records, "figures": figures}  # fmt: skip


def side(whose: str, value: str, at: str, label: str) -> str:
    """One side of a comparison: ``whose`` figure in ``label``'s unit, where it was measured."""
    _, _, unit = label.partition("{}")
    return f"{whose} {value}{unit}" + (f" (at {at})" if at else "")


def comparison(book: Mapping[str, Any], data: Mapping[str, Any]) -> list[str]:
    """What the reader reads after the run: their figures beside those the prose quotes.

    The first line says where the book's are from; then a line per figure, in the
    chapter's words and units, in the order the chapter prints them. A figure the
    reader's run did not print is said with the last line its cell printed instead (a
    CPU has no CUDA graphs, a cell may raise).
    """
    printed = {
        cell["index"]: "\n".join(o["text"] for o in cell["outputs"] if "text" in o)
        for cell in data["cells"]
    }
    figures = book.get("figures", {})
    if not figures:
        return []
    source = next(iter(figures.values()))["source"]
    head = (
        "Your figures beside those the chapter's prose quotes, recorded by the book on a GPU "
        f"({source})"
    )
    if not book.get("built_on_gpu"):  # the notebook's other figures are the CPU's
        head += ", not on the CPU that built the book's site, whose figures the notebook shows"
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


def closing(book: Mapping[str, Any], model: str) -> list[str]:
    """What the reader is told of the file written: what it holds, where it is, where it goes."""
    lines = [
        (
            "The receipt holds what each cell printed, its pictures, the machine as this Python "
            f"sees it ({model}), the versions of torch, Python and NumPy, the date and the "
            "book's commit; no name or address of yours, and no path into your home folder "
            "(one in an error or a warning is written ~). It is JSON: open it to see."
        ),
        "On Colab, download it from the Files pane (the folder icon on the left).",
    ]
    if book.get("repository"):
        lines.append(
            f"To share it, attach it to a new issue at {book['repository']}/issues/new . The "
            "issue is public, under your GitHub account, and once the book takes the receipt "
            "in, its outputs are shown on the book's site, as a reader's."
        )
    else:
        lines.append(
            "This copy of the book names no repository to send it to: the file stays with you."
        )
    return lines


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
    try:
        from tensorbook.device import choose_device

        device = choose_device(args.device, given_by="--device").device
        notebook = read_notebook(args.notebook or f"tensorbook-{args.chapter}.ipynb")
        book = notebook["metadata"][BOOK]
        if book["page"] != args.chapter:
            msg = f"the notebook is the {book['page']} chapter's, not {args.chapter}'s"
            raise ReceiptError(msg)
        if book["version"] != tensorbook.__version__:
            msg = (f"the notebook was made with tensorbook {book['version']} and this is "
                   f"{tensorbook.__version__}: run the notebook's first cell, then this again")  # fmt: skip
            raise ReceiptError(msg)
        cells = page_cells(notebook)
        check_kernel()
        print(
            f"tensorbook.receipt: running the {args.chapter} chapter's {len(cells)} code cells "
            f"on {device}, in a new Jupyter kernel; a line as each ends"
        )

        def ended(number: int, seconds: float) -> None:
            print(f"  cell {number} of {len(cells)}: {seconds:.1f} s", flush=True)

        outputs = run_cells([code for _, code, _ in cells], device, ended)
        command = f"python -m tensorbook.receipt {args.chapter}"
        data = receipt_data(args.chapter, cells, outputs, provenance(device, book, command))
    except (ReceiptError, ValueError) as error:
        print(f"tensorbook.receipt: {error}", file=sys.stderr)
        return 2
    out = args.out or Path(f"receipt-{args.chapter}-{data['kind']}.json")
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    failed = sum(any(o.get("output_type") == "error" for o in cell) for cell in outputs)
    print(
        f"tensorbook.receipt: wrote the receipt {out.name}, in {out.resolve().parent}"
        + (f" ({failed} cells raised an error)" if failed else "")
    )
    for line in [*comparison(book, data), *closing(book, data["provenance"]["model"])]:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
