"""Record the device-dependent outputs: ``python -m tensorbook_build.record --device DEVICE``.

It builds the English edition on that device into ``build/record/<device>``, or takes
a build that did (``--from-build``), and writes each page's recording
(:mod:`tensorbook_build.ledger`). It fails if a cell's output differs between two
devices' recordings but its page does not tag it ``device-dependent``.
"""

from __future__ import annotations

import argparse
import platform
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tensorbook.device import DeviceUnavailableError, choose_device
from tensorbook.environment import DEVICE_VARIABLE
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
from tensorbook_build.settings import KERNEL_THREADS, LAYOUT, SOURCE_LANGUAGE


def capture_provenance(device: str, command: str) -> dict[str, Any]:
    """Where and with what the pages ran: the kernels run in this process's environment."""
    import numpy as np
    import torch

    commit = source_commit(LAYOUT.root, SOURCES)
    gpu = None
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(device)  # "cuda": the current one
        query = ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]
        try:
            driver = subprocess.run(query, capture_output=True, text=True, check=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            driver = None
        gpu = {
            "name": props.name,
            "driver": driver.stdout.split()[0] if driver and driver.stdout.split() else "unknown",
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
        "threads": KERNEL_THREADS,
        "commit": (commit.sha + ("+modified" if commit.modified else "")) if commit else "unknown",
        "commit_date": commit.date if commit else "",
        "run_date": time.strftime("%Y-%m-%d", time.gmtime()),
        "command": command,
    }


def record_build(build: Path, device: str, out: Path, command: str) -> tuple[list[Path], list[str]]:
    """Write a recording for every page that ``build`` executed on ``device``.

    A page whose execution failed has no outputs in the build's cache: it is not
    recorded, and its name is returned with the recordings written, so that a run in
    which one page failed still records the others, and a later run fills it in.
    """
    provenance = capture_provenance(device, command)
    gpu_name = provenance["gpu"]["name"] if provenance["gpu"] else ""
    kind = device_kind(device.split(":", maxsplit=1)[0], gpu_name)
    # MyST-NB writes each page's notebook beside the site without its outputs (in cache
    # mode they live in jupyter-cache), so the outputs are merged in from the cache
    import nbformat
    from jupyter_cache import get_cache

    cache = get_cache(str(build / ".jupyter_cache"))
    written, failed = [], []
    for notebook_path in sorted((build / "jupyter_execute" / SOURCE_LANGUAGE).glob("*.ipynb")):
        try:
            _, notebook = cache.merge_match_into_notebook(nbformat.read(notebook_path, 4))
        except KeyError:  # jupyter-cache keeps only a notebook that executed to its end
            failed.append(notebook_path.stem)
            continue
        data, figures = recording_from_notebook(notebook, notebook_path.stem, kind, provenance)
        written.append(write_recording(out, data, figures))
    return written, failed


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tensorbook_build.record --device DEVICE [--out DIR] [--from-build DIR]``."""
    parser = argparse.ArgumentParser(
        prog="python -m tensorbook_build.record",
        description="Execute the pages on a device and record their device-dependent outputs.",
    )
    parser.add_argument("--device", help=f"cpu, cuda or cuda:N (default: ${DEVICE_VARIABLE})")
    parser.add_argument("--out", type=Path, default=LAYOUT.docs / FOLDER, help="docs/recorded")
    parser.add_argument("--from-build", type=Path, help="record from this executed build")
    args = parser.parse_args(argv)
    try:
        device = choose_device(args.device, given_by="--device", default="cpu").device
    except (ValueError, DeviceUnavailableError) as error:
        print(f"tensorbook_build.record: {error}", file=sys.stderr)
        return 2
    given = sys.argv[1:] if argv is None else list(argv)
    # paths in the checkout as the checkout names them: a recording names no machine's folders
    root = f"{LAYOUT.root}/"
    command = "python -m tensorbook_build.record " + shlex.join(a.replace(root, "") for a in given)
    build = args.from_build
    if build is None:
        build = LAYOUT.root / "build" / "record" / device.replace(":", "-")
        results = build_site(build / "html", [SOURCE_LANGUAGE], device=device)
        if any(r.returncode != 0 for r in results):
            print("tensorbook_build.record: the build failed; recording what executed",
                  file=sys.stderr)  # fmt: skip
    written, failed = record_build(build, device, args.out, command)
    for path in written:
        print(f"tensorbook_build.record: wrote {path}")
    problems = [
        problem
        for page in sorted({p.stem for p in written})
        for problem in unmarked_differences(page_recordings(args.out, page))
    ]
    for problem in problems:
        print(f"tensorbook_build.record: {problem}", file=sys.stderr)
    for page in failed:
        print(f"tensorbook_build.record: {page}.md not recorded: it did not execute to its end",
              file=sys.stderr)  # fmt: skip
    return 1 if problems or failed else 0


if __name__ == "__main__":
    sys.exit(main())
