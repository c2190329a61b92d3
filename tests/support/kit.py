"""The GPU kit: ``python -m tests.support.kit --device cuda --out DIR``.

One offline command for a GPU machine (conf/README.md, "On a GPU"): the device check,
the doctests and the fast tests on the device, the book built on the device and on the
CPU, the GPU's recordings with the same machine's CPU beside them (into ``docs/recorded``
for a GPU) and the speed figures.
``DIR/logs/<step>.log`` holds each step's output, ``DIR/summary.json`` and ``summary.txt``
each step's status and seconds, the tests' counts and the figures. A failed step does not
stop the kit; it then exits non-zero.

``--compat`` (``nox -s compat``) runs only the doctests and the CPU build with this
environment's torch, and adds their outcome to ``docs/recorded/compat.json``.
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
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tensorbook.environment import DEVICE_VARIABLE
from tensorbook_build.ledger import COMPAT, FOLDER
from tensorbook_build.settings import LAYOUT

FAST_TIER = "not book and not browser and not slow and not pdf and not lighthouse"  # nox -s fast

# the speed targets, measured in a process of their own, printed as one JSON line; NumPy
# and torch's CPU side on one core, as the speed chapter times them (SPEED_THREADS)
SPEED_SCRIPT = """
import json, sys
import torch
torch.set_num_threads(1)
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
    "numpy_threads": 1,
}
if device.type == "cuda":
    eager = speed.time_torch(TUTORIAL_SIZES, device)
    graphed = speed.cuda_graph_step(TUTORIAL_SIZES, device)
    figures.update(eager_tutorial_s=eager.median, graph_tutorial_s=graphed.median,
                   graph_gain=eager.median / graphed.median)
print(json.dumps(figures))
"""

SPEED_THREADS = dict.fromkeys(("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"), "1")
# a recording only from a build that ran: the pages that executed are recorded even where
# another page failed, and the summary names the ones that did not
NEEDS = {"record": "book"}
# the lines of a step's log that say what failed, by step: a page's error, a test's id
FAILURE_LINES = {
    "book": re.compile(
        r"^(ERROR: .*|.*WARNING: .*stderr was found.*|tensorbook_build: .* failed)$"
    ),
    "cpu-book": re.compile(r"^(ERROR: .*|tensorbook_build: .* failed)$"),
    "record": re.compile(r"^tensorbook_build\.record: .*(not recorded|differs|untagged).*$"),
}


@dataclass
class Step:
    """One step of the kit: its command, how it ended and how long it took."""

    name: str
    command: list[str]
    returncode: int | None = None
    seconds: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)  # what failed, a line each
    env: dict[str, str] = field(default_factory=dict)  # set for this step alone

    @property
    def status(self) -> str:
        """``passed``, ``failed`` or ``skipped``."""
        if self.returncode is None:
            return "skipped"
        return "passed" if self.returncode == 0 else "failed"

    def run(self, logs: Path, env: Mapping[str, str] | None, timeout: float | None) -> str:
        """Run the command from the checkout, its output into ``logs/<name>.log``; the output."""
        logs.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        if self.env:
            env = {**(os.environ if env is None else env), **self.env}
        try:
            result = subprocess.run(
                self.command, cwd=LAYOUT.root, env=env, capture_output=True, text=True,
                timeout=None if timeout is None else max(timeout, 1), check=False,
            )  # fmt: skip
            output, self.returncode = result.stdout + result.stderr, result.returncode
        except subprocess.TimeoutExpired as error:
            output, self.returncode = f"{error}\n(stopped: the kit's time was up)", 124
        self.seconds = round(time.perf_counter() - start, 1)
        text = " ".join(self.command) + "\n\n" + output
        (logs / f"{self.name}.log").write_text(text, encoding="utf-8")
        print(f"{self.name}: {self.status} in {self.seconds} s", flush=True)
        return output


def steps(device: str, out: Path, recorded: Path) -> list[Step]:
    """The kit's steps on ``device``, in order, writing under ``out``."""
    python = sys.executable
    pytest = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--device", device]
    build = [python, "-m", "tensorbook_build", "--device"]
    record = [python, "-m", "tensorbook_build.record", "--device"]
    gpu = device != "cpu"  # whose recording has the same machine's CPU beside it
    return [
        Step("device", [python, "-m", "tensorbook.device", device]),
        Step("doctests", [*pytest, "--doctest-glob=*.md", f"--junitxml={out / 'doctests.xml'}",
                          "src/tensorbook", "docs"]),
        Step("tests", [*pytest, "-m", FAST_TIER, f"--junitxml={out / 'tests.xml'}"]),
        Step("book", [*build, device, "--site", str(out / "book" / "html")]),
        Step("cpu-book", [*build, "cpu", "--language", "en", "--site",
                          str(out / "cpu-book" / "html")]),
        Step("record", [*record, device, "--from-build", str(out / "book"), "--out",
                        str(recorded), *(["--cpu-build", str(out / "cpu-book")] if gpu else [])]),
        Step("evidence", [python, "-m", "tests.support.evidence", "--device", device,
                          "--out", str(out / "evidence.json")]),
        Step("speed", [python, "-c", SPEED_SCRIPT, device], env=SPEED_THREADS),
    ]  # fmt: skip


def _counts(junit: Path) -> dict[str, int]:
    """Tests, failures, errors and skips from a JUnit report."""
    if not junit.is_file():
        return {}
    suites = ET.parse(junit).getroot()  # pytest's <testsuites>
    keys = ("tests", "failures", "errors", "skipped")
    return {key: sum(int(s.get(key, 0)) for s in suites) for key in keys}


def _first_line(text: str) -> str:
    """The first line of ``text`` that says something (pytest's ``E`` lines first)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    said = [line[1:].strip() for line in lines if line.startswith("E ")]
    return (said or lines or [""])[0][:200]


def failures(step: Step, out: Path, output: str) -> list[str]:
    r"""What failed in ``step``, a line each.

    A test's id and its first error line, or a page's error as the build reported it.

    >>> failures(Step("book", []), Path(), "ok\nERROR: docs/speed.md: code cell 3 raised\n")
    ['ERROR: docs/speed.md: code cell 3 raised']
    """
    junit = out / f"{step.name}.xml"
    if step.name in ("doctests", "tests") and junit.is_file():
        found = []
        for case in ET.parse(junit).getroot().iter("testcase"):
            for problem in (*case.findall("failure"), *case.findall("error")):
                message = problem.get("message") or problem.text or ""
                where = f"{case.get('classname', '')}::{case.get('name', '')}".lstrip(":")
                found.append(f"{where}: {_first_line(message)}")
        return found
    pattern = FAILURE_LINES.get(step.name)
    if pattern is None:
        return [_first_line(output)] if output.strip() else []
    return [line for line in output.splitlines() if pattern.match(line)]


def run_kit(
    device: str, out: Path, *, budget: float = 600.0, only: Sequence[str] | None = None
) -> dict[str, Any]:
    """Run every step on ``device`` (or the steps named in ``only``); the summary it writes."""
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    # a rehearsal on the CPU must never land in the book as if it were a recording
    recorded = out / FOLDER if device == "cpu" else LAYOUT.docs / FOLDER
    env = {**os.environ, DEVICE_VARIABLE: device}
    started = time.perf_counter()
    kit = steps(device, out, recorded)
    by_name = {s.name: s for s in kit}
    figures: dict[str, object] = {}
    for step in kit:
        if (
            (device == "cpu" and step.name == "cpu-book")  # the same build
            or (only is not None and step.name not in only)
            or (step.name in NEEDS and by_name[NEEDS[step.name]].status == "skipped")
        ):
            continue
        output = step.run(out / "logs", env, budget - (time.perf_counter() - started))
        if step.name == "device" and step.returncode != 0:
            break
        if step.name in ("doctests", "tests"):
            step.counts = _counts(out / f"{step.name}.xml")
        if step.status == "failed":
            step.failures = failures(step, out, output)
        if step.name == "speed" and step.returncode == 0:
            figures.update(json.loads(output.strip().splitlines()[-1]))
    if by_name["book"].status == "passed":
        figures["build_s"] = by_name["book"].seconds
    if by_name["cpu-book"].status == "passed":
        figures["cpu_build_s"] = by_name["cpu-book"].seconds
        figures["build_ratio"] = round(by_name["book"].seconds / by_name["cpu-book"].seconds, 2)
    summary: dict[str, Any] = {
        "device": device,
        "recorded_into": str(recorded),
        "total_s": round(time.perf_counter() - started, 1),
        "budget_s": budget,
        "steps": [{**asdict(s), "status": s.status} for s in kit],
        "figures": figures,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    lines = [f"tensorbook GPU kit on {device}: {summary['total_s']} s in all"]
    for step in summary["steps"]:
        counts = ", ".join(f"{k} {v}" for k, v in step["counts"].items())
        lines.append(
            f"  {step['name']:<11} {step['status']:<8} {step['seconds']:>7} s  {counts}".rstrip()
        )
        lines += [f"      {failure}" for failure in step["failures"]]
    lines += [f"  {k}: {f'{v:.4g}' if isinstance(v, float) else v}" for k, v in figures.items()]
    lines.append(f"recordings written into {recorded}")
    (out / "summary.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return summary


def add_result(path: Path, result: dict[str, str]) -> list[dict[str, str]]:
    """Add ``result`` to the list in ``path``, replacing the run of the same torch and Python.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp, "compat.json")
    ...     _ = add_result(path, {"torch": "2.11.0", "python": "3.11.7", "pages": "failed"})
    ...     runs = add_result(path, {"torch": "2.11.0", "python": "3.11.7", "pages": "passed"})
    >>> [r["pages"] for r in runs]
    ['passed']
    """
    runs = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
    runs = [r for r in runs if (r["torch"], r["python"]) != (result["torch"], result["python"])]
    runs = sorted([*runs, result], key=lambda r: (r["torch"], r["python"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
    return runs


def compat(path: Path) -> int:
    """The ``doctests`` and ``cpu-book`` steps with this torch; their outcome added to ``path``."""
    import numpy as np
    import torch

    work = LAYOUT.root / "build" / f"compat-{torch.__version__}"
    run = {s.name: s for s in steps("cpu", work, recorded=work / FOLDER)}
    for name in ("doctests", "cpu-book"):
        run[name].run(work / "logs", env=None, timeout=None)
    result = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "device": "cpu",  # what both steps ran on: the status page's table says so
        "doctests": run["doctests"].status,
        "pages": run["cpu-book"].status,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "command": "nox -s compat (python -m tests.support.kit --compat)",
    }
    add_result(path, result)
    print(f"tests.support.kit: {json.dumps(result)} -> {path}")
    return 0 if result["doctests"] == result["pages"] == "passed" else 1


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tests.support.kit --device DEVICE --out DIR``, or ``--compat``."""
    parser = argparse.ArgumentParser(prog="python -m tests.support.kit", description=__doc__)
    parser.add_argument("--device", help="cuda, cuda:N, or cpu to rehearse")
    parser.add_argument("--out", type=Path, help="the folder for everything")
    parser.add_argument("--budget", type=float, default=600.0, help="seconds for all steps")
    parser.add_argument("--only", action="append", help="run only this step (repeatable)")
    parser.add_argument("--compat", action="store_true", help="the compatibility run instead")
    args = parser.parse_args(argv)
    if args.compat:
        return compat(LAYOUT.docs / FOLDER / COMPAT)
    if args.device is None or args.out is None:
        parser.error("--device and --out are required (or --compat)")
    summary = run_kit(args.device, args.out, budget=args.budget, only=args.only)
    print((args.out / "summary.txt").read_text(encoding="utf-8"), end="")
    return 1 if any(s["status"] == "failed" for s in summary["steps"]) else 0


if __name__ == "__main__":
    sys.exit(main())
