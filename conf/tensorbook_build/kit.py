"""The GPU kit: ``python -m tensorbook_build.kit --device cuda --out DIR``.

One command for a GPU machine without network, in an environment that has its own
CUDA torch (2.11 or newer) and the wheels of ``nox -s wheels`` (conf/README.md, "On a GPU").
Everything it writes is under ``DIR``; each step's output goes to ``DIR/logs/<step>.log``:

1. ``device``: ``python -m tensorbook.device DEVICE`` (stops the kit without it);
2. ``doctests``: every doctest, on the device;
3. ``tests``: the fast tier of the suite (``-m`` as ``nox -s fast``), on the device;
4. ``book``: both editions built on the device into ``DIR/book`` (its wall time);
5. ``cpu-book``: the English edition built on the CPU into ``DIR/cpu-book`` (its wall
   time, against the device's; skipped when the device is the CPU);
6. ``record``: the recordings (:mod:`tensorbook_build.record`) of both builds, into
   ``docs/recorded`` for a GPU (``--recorded`` to change it), checking the marks;
7. ``speed``: torch on the device against NumPy at the sweep's largest size, and on a
   GPU a CUDA-graph step against eager at the tutorial's sizes;

then ``DIR/summary.json`` and ``DIR/summary.txt``: each step's status and seconds, the
tests' counts (from JUnit reports) and the figures. A step that fails is recorded and
the kit goes on; it exits non-zero if any did. The book tier (two more cold builds) and
the browser tier are left out: on the GPU the kit's own build is the book's check, and
the run must finish within ten minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tensorbook_build.ledger import FOLDER
from tensorbook_build.settings import DEVICE_VARIABLE, LAYOUT

__all__ = ["FAST_TIER", "SPEED_SCRIPT", "Step", "main", "run_kit"]

FAST_TIER = "not book and not browser and not slow and not pdf and not lighthouse"
"""The tests the kit runs: ``nox -s fast``'s tier."""

SPEED_SCRIPT = """
import json, sys
import torch
from tensorbook import speed
from tensorbook.problem import TUTORIAL_SIZES
device = torch.device(sys.argv[1])
sweep = speed.GPU_SWEEP if device.type == "cuda" else speed.CPU_SWEEP
largest = sweep[-1]
numpy = speed.time_numpy(largest, repeats=3)
eager_largest = speed.time_torch(largest, device, repeats=3)
figures = {
    "largest_sizes": [largest.n, largest.d_in, largest.h, largest.d_out],
    "numpy_largest_s": numpy.median,
    "torch_largest_s": eager_largest.median,
    "speedup_largest": numpy.median / eager_largest.median,
}
if device.type == "cuda":
    eager = speed.time_torch(TUTORIAL_SIZES, device)
    graphed = speed.cuda_graph_step(TUTORIAL_SIZES, device)
    figures.update(eager_tutorial_s=eager.median, graph_tutorial_s=graphed.median,
                   graph_gain=eager.median / graphed.median)
print(json.dumps(figures))
"""
"""Measures the speed targets in a process of its own; prints them as one JSON line."""


@dataclass
class Step:
    """One step of the kit: its command, how it ended and how long it took."""

    name: str
    command: list[str]
    returncode: int | None = None
    seconds: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def status(self) -> str:
        """``passed``, ``failed`` or ``skipped``."""
        if self.returncode is None:
            return "skipped"
        return "passed" if self.returncode == 0 else "failed"


def _counts(junit: Path) -> dict[str, int]:
    """Tests, failures, errors and skips from a JUnit report."""
    if not junit.is_file():
        return {}
    root = ET.parse(junit).getroot()
    suites = [root] if root.tag == "testsuite" else list(root)
    keys = ("tests", "failures", "errors", "skipped")
    return {key: sum(int(s.get(key, 0)) for s in suites) for key in keys}


def _run(step: Step, out: Path, env: dict[str, str], timeout: float) -> str:
    log = out / "logs" / f"{step.name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    try:
        result = subprocess.run(
            step.command, cwd=LAYOUT.root, env=env, capture_output=True, text=True,
            timeout=max(timeout, 1), check=False,
        )  # fmt: skip
        output = result.stdout + result.stderr
        step.returncode = result.returncode
    except subprocess.TimeoutExpired as error:
        output = f"{error}\n(stopped: the kit's time was up)"
        step.returncode = 124
    step.seconds = round(time.perf_counter() - start, 1)
    log.write_text(" ".join(step.command) + "\n\n" + output, encoding="utf-8")
    print(f"tensorbook kit: {step.name}: {step.status} in {step.seconds} s", flush=True)
    return output


def run_kit(
    device: str,
    out: Path,
    *,
    recorded: Path | None = None,
    budget: float = 600.0,
    only: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Run every step on ``device`` (or the steps named in ``only``), writing under ``out``.

    Returns the summary it writes.
    """
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    python = sys.executable
    if recorded is None:
        # a rehearsal on the CPU must never land in the book as if it were a recording
        recorded = out / FOLDER if device == "cpu" else LAYOUT.docs / FOLDER
    env = {**os.environ, DEVICE_VARIABLE: device}
    started = time.perf_counter()
    steps = [
        Step("device", [python, "-m", "tensorbook.device", device]),
        Step(
            "doctests",
            [
                python,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--device",
                device,
                "--doctest-glob=*.md",
                f"--junitxml={out / 'doctests.xml'}",
                "src/tensorbook",
                "docs",
            ],
        ),
        Step(
            "tests",
            [
                python,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--device",
                device,
                "-m",
                FAST_TIER,
                f"--junitxml={out / 'tests.xml'}",
            ],
        ),
        Step(
            "book",
            [
                python,
                "-m",
                "tensorbook_build",
                "--device",
                device,
                "--site",
                str(out / "book" / "html"),
            ],
        ),
        Step(
            "cpu-book",
            [
                python,
                "-m",
                "tensorbook_build",
                "--device",
                "cpu",
                "--language",
                "en",
                "--site",
                str(out / "cpu-book" / "html"),
            ],
        ),
        Step(
            "record",
            [
                python,
                "-m",
                "tensorbook_build.record",
                "--device",
                device,
                "--from-build",
                str(out / "book"),
                "--out",
                str(recorded),
            ],
        ),
        Step(
            "record-cpu",
            [
                python,
                "-m",
                "tensorbook_build.record",
                "--device",
                "cpu",
                "--from-build",
                str(out / "cpu-book"),
                "--out",
                str(recorded),
            ],
        ),
        Step("speed", [python, "-c", SPEED_SCRIPT, device]),
    ]
    figures: dict[str, object] = {}
    for step in steps:
        if device == "cpu" and step.name in ("cpu-book", "record-cpu"):
            continue  # the device's own build is the CPU's
        if only is not None and step.name not in only:
            continue
        if step.name == "record" and steps[3].status != "passed":
            continue
        if step.name == "record-cpu" and steps[4].status != "passed":
            continue
        left = budget - (time.perf_counter() - started)
        output = _run(step, out, env, left)
        if step.name == "device" and step.returncode != 0:
            break
        if step.name in ("doctests", "tests"):
            step.counts = _counts(out / f"{step.name}.xml")
        if step.name == "speed" and step.returncode == 0:
            figures.update(json.loads(output.strip().splitlines()[-1]))
    by_name = {s.name: s for s in steps}
    if by_name["book"].status == "passed":
        figures["build_s"] = by_name["book"].seconds
    if by_name["cpu-book"].status == "passed":
        figures["cpu_build_s"] = by_name["cpu-book"].seconds
        figures["build_ratio"] = round(by_name["book"].seconds / by_name["cpu-book"].seconds, 2)
    summary: dict[str, Any] = {  # what summary.json holds
        "device": device,
        "recorded_into": str(recorded),
        "total_s": round(time.perf_counter() - started, 1),
        "budget_s": budget,
        "steps": [{**asdict(s), "status": s.status} for s in steps],
        "figures": figures,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    (out / "summary.txt").write_text(_text(summary), encoding="utf-8")
    return summary


def _text(summary: dict[str, Any]) -> str:
    lines = [f"tensorbook GPU kit on {summary['device']}: {summary['total_s']} s in all"]
    for step in summary["steps"]:
        counts = ", ".join(f"{k} {v}" for k, v in step["counts"].items())
        lines.append(
            f"  {step['name']:<11} {step['status']:<8} {step['seconds']:>7} s  {counts}".rstrip()
        )
    for name, value in summary["figures"].items():
        shown = f"{value:.4g}" if isinstance(value, float) else value
        lines.append(f"  {name}: {shown}")
    lines.append(f"recordings written into {summary['recorded_into']}")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tensorbook_build.kit --device DEVICE --out DIR [--recorded DIR]``."""
    parser = argparse.ArgumentParser(prog="python -m tensorbook_build.kit", description=__doc__)
    parser.add_argument("--device", required=True, help="cuda, cuda:N, or cpu to rehearse")
    parser.add_argument("--out", type=Path, required=True, help="the folder for everything")
    parser.add_argument(
        "--recorded", type=Path, help="default: docs/recorded (DIR/recorded on cpu)"
    )
    parser.add_argument("--budget", type=float, default=600.0, help="seconds for all steps")
    parser.add_argument("--only", action="append", help="run only this step (repeatable)")
    args = parser.parse_args(argv)
    summary = run_kit(
        args.device, args.out, recorded=args.recorded, budget=args.budget, only=args.only
    )
    print((args.out / "summary.txt").read_text(encoding="utf-8"), end="")
    failed = [s for s in summary["steps"] if s["status"] == "failed"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
