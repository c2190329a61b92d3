"""Run a chapter's code cells in a fresh Jupyter kernel of this very Python, for a receipt.

The kernel is started from a kernel specification written for the run, naming
:data:`sys.executable`: a ``python3`` specification found on the machine (one that
``python -m ipykernel install --user`` wrote from another environment, say) would run
the cells with another torch and another tensorbook than the ones the receipt names.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tensorbook.environment import DEVICE_VARIABLE

if TYPE_CHECKING:
    from jupyter_client.blocking.client import BlockingKernelClient

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
"""Set to 1 for the kernel: the book records its pages on one CPU thread."""
CELL_TIMEOUT_S = 900  # a cell still running then is stopped: the book's slowest take 600 s
KERNEL_MISSING = "the receipt runs the chapter in a Jupyter kernel: pip install ipykernel"
KERNEL_NAME = "tensorbook-receipt"  # the specification's, in a folder of the run's own


class ReceiptError(Exception):
    """What stops a receipt, in one line that says what to do."""


def check_kernel() -> None:
    """Raise :class:`ReceiptError` unless this Python can start a Jupyter kernel."""
    if not all(importlib.util.find_spec(name) for name in ("jupyter_client", "ipykernel")):
        raise ReceiptError(KERNEL_MISSING)


def kernel_spec(folder: Path) -> Path:
    """Write, under ``folder``, a kernel specification that runs :data:`sys.executable`."""
    spec = folder / "kernels" / KERNEL_NAME
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "tensorbook receipt", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
    return spec.parent


def run_cells(
    codes: Sequence[str], device: str | None, ended: Callable[[int, float], None] | None = None
) -> list[list[dict[str, Any]]]:
    """Run ``codes`` in a fresh kernel of this Python; each cell's outputs, as a notebook's.

    A cell that raises is recorded with its error, and the next cells still run. As each
    cell ends, ``ended`` is given its number (from 1) and the seconds it took.
    """
    check_kernel()
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    environment = {**os.environ, **dict.fromkeys(THREAD_VARIABLES, "1")}
    if device:
        environment[DEVICE_VARIABLE] = device
    with tempfile.TemporaryDirectory(prefix="tensorbook-receipt-") as folder:
        specs = KernelSpecManager(
            kernel_dirs=[str(kernel_spec(Path(folder)))], ensure_native_kernel=False
        )
        # Unix sockets in a private folder, where there are: no port open to the machine
        local = (
            {"transport": "ipc", "ip": str(Path(folder, "kernel"))} if os.name == "posix" else {}
        )
        manager = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs, **local)
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
