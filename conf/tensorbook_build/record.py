"""Record the device-dependent outputs: ``python -m tensorbook_build.record --device DEVICE``.

``nox -s record -- --device cuda`` runs it. It builds the English edition on that
device into a folder of its own (``build/record/<device>``, so the site in
``build/html`` and its cache are left alone), then reads each executed notebook and
writes its recording (:mod:`tensorbook_build.ledger`) to ``docs/recorded/<kind>/``,
with the provenance of this machine and of the run. It ends by comparing every
device's recordings: a cell whose output differs between two devices but that its page
does not tag ``device-dependent`` is listed, and the command fails.

``--from-build DIR`` records from a build folder that already executed the pages on
that device (the GPU kit does, so that it executes them once).
"""

from __future__ import annotations

import argparse
import platform
import re
import shlex
import string
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tensorbook.device import DeviceUnavailableError, choose_device
from tensorbook.wording import DEVICE_LINE
from tensorbook_build.build import build_site
from tensorbook_build.ledger import (
    FOLDER,
    device_kind,
    page_recordings,
    recording_from_notebook,
    unmarked_differences,
    write_recording,
)
from tensorbook_build.provenance import SOURCES, source_commit
from tensorbook_build.settings import DEVICE_VARIABLE, KERNEL_THREADS, LAYOUT, SOURCE_LANGUAGE

__all__ = ["DEVICE_LINE_PATTERN", "capture_provenance", "main", "record_build"]

DEVICE_LINE_PATTERN = "".join(
    re.escape(literal) + (".+" if name is not None else "")
    for literal, name, _, _ in string.Formatter().parse(DEVICE_LINE)
)
"""The device line every page prints first: left out of the mark check, being about the
device by design."""


def _cpu_name() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return ""
    found = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return found[1].strip() if found else ""


def _driver() -> str:
    try:
        result = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, check=True, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return result.stdout.strip().splitlines()[0] if result.stdout.strip() else "unknown"


def capture_provenance(device: str, command: str, root: Path = LAYOUT.root) -> dict[str, Any]:
    """Where and with what the pages ran: this process's torch, NumPy, Python and device.

    The kernels run in this environment, so its versions are theirs; their threads are
    the build's :data:`~tensorbook_build.settings.KERNEL_THREADS`.
    """
    import numpy as np
    import torch

    commit = source_commit(root, SOURCES)
    gpu = None
    if device.startswith("cuda"):
        index = torch.device(device).index
        index = torch.cuda.current_device() if index is None else index
        props = torch.cuda.get_device_properties(index)
        gpu = {
            "name": props.name,
            "driver": _driver(),
            "cuda": torch.version.cuda or "",
            "capability": f"{props.major}.{props.minor}",
            "memory_gib": round(props.total_memory / 2**30, 1),
        }
        model = props.name
    else:
        cpu = _cpu_name()
        model = f"CPU ({platform.machine()}{', ' + cpu if cpu else ''})"
    return {
        "device": device,
        "model": model,
        "gpu": gpu,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "threads": KERNEL_THREADS,
        "commit": (commit.sha + ("+modified" if commit.modified else "")) if commit else "unknown",
        "commit_date": commit.date if commit else "",
        "run_date": time.strftime("%Y-%m-%d", time.gmtime()),
        "command": command,
    }


def record_build(
    build: Path, device: str, out: Path, *, command: str, src: Path = LAYOUT.src
) -> list[Path]:
    """Write a recording for every page that ``build`` executed on ``device``."""
    provenance = capture_provenance(device, command, src.parent)
    kind = device_kind(
        device.split(":", maxsplit=1)[0], provenance["gpu"]["name"] if provenance["gpu"] else ""
    )
    # MyST-NB writes each page's notebook beside the site without its outputs (in cache
    # mode they live in jupyter-cache), so the outputs are merged in from the cache
    import nbformat
    from jupyter_cache import get_cache

    cache = get_cache(str(build / ".jupyter_cache"))
    written = []
    for notebook_path in sorted((build / "jupyter_execute" / SOURCE_LANGUAGE).glob("*.ipynb")):
        unexecuted = nbformat.read(notebook_path, as_version=4)
        try:
            _, notebook = cache.merge_match_into_notebook(unexecuted)
        except KeyError:
            msg = f"{notebook_path.stem}.md: no executed outputs in {build}/.jupyter_cache"
            raise RuntimeError(msg) from None
        data, figures = recording_from_notebook(
            notebook,
            page=notebook_path.stem,
            kind=kind,
            provenance=provenance,
            src_dir=src,
            ignore_line=DEVICE_LINE_PATTERN,
        )
        written.append(write_recording(out, data, figures))
    return written


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tensorbook_build.record --device DEVICE [--out DIR] [--from-build DIR]``."""
    parser = argparse.ArgumentParser(
        prog="python -m tensorbook_build.record",
        description="Execute the pages on a device and record their device-dependent outputs.",
    )
    parser.add_argument("--device", help=f"cpu, cuda or cuda:N (default: ${DEVICE_VARIABLE})")
    parser.add_argument("--out", type=Path, default=LAYOUT.docs / FOLDER, help="docs/recorded")
    parser.add_argument("--work", type=Path, help="build folder; default build/record/<device>")
    parser.add_argument("--from-build", type=Path, help="record from this executed build")
    args = parser.parse_args(argv)
    try:
        device = choose_device(args.device, given_by="--device", default="cpu").device
    except (ValueError, DeviceUnavailableError) as error:
        print(f"tensorbook_build.record: {error}", file=sys.stderr)
        return 2
    command = "python -m tensorbook_build.record " + shlex.join(
        sys.argv[1:] if argv is None else list(argv)
    )
    build = args.from_build
    if build is None:
        build = args.work or LAYOUT.root / "build" / "record" / device.replace(":", "-")
        results = build_site(build / "html", [SOURCE_LANGUAGE], device=device)
        if any(r.returncode != 0 for r in results):
            print("tensorbook_build.record: the build failed; nothing recorded", file=sys.stderr)
            return 1
    written = record_build(build, device, args.out, command=command)
    for path in written:
        print(f"tensorbook_build.record: wrote {path}")
    problems = [
        problem
        for page in sorted({p.stem for p in written})
        for problem in unmarked_differences(page_recordings(args.out, page))
    ]
    for problem in problems:
        print(f"tensorbook_build.record: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
