"""A GPU's evidence for the CPU's tests: ``python -m tests.support.evidence --device cuda``.

Code written for a device the developer cannot run is tested against what that device
did. This gathers, on a device, what the book's code reads there: the profiler's events
for each mask spelling and for one traced step, which everyday calls make the CPU wait
under the sync debug mode, and what torch warned while the mode was set. It writes them,
with where, when and from which commit they came, to one JSON file; ``tests/evidence/``
keeps each GPU run's, and ``tests/reader/test_evidence.py`` replays every one on a CPU.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensorbook.trace import Event, TraceError, events_from_json, events_to_json
from tensorbook_build.ledger import read_json

PROVENANCE = ("machine", "gpu", "torch", "python", "date", "commit", "how")
SCHEMA = {  # the events are checked as they are read (tensorbook.trace.events_from_json)
    "type": "object",
    "required": ["provenance", "mask_events", "waits", "sync_debug_warnings"],
    "properties": {
        "provenance": {
            "type": "object",
            "required": list(PROVENANCE),
            "properties": {key: {"type": "string", "minLength": 1} for key in PROVENANCE},
        },
        "mask_events": {"type": "object", "minProperties": 1},
        "waits": {"type": "object", "additionalProperties": {"type": "boolean"}},
        "sync_debug_warnings": {"type": "array", "items": {"type": "string"}},
    },
}


class EvidenceError(ValueError):
    """An evidence file that is not what :func:`gather` writes: names the file and field."""


@dataclass(frozen=True)
class Evidence:
    """One device's evidence, as :func:`load` reads it."""

    path: Path
    provenance: dict[str, str]
    mask_events: dict[str, list[Event]]  # spelling -> its profile
    step_marks: list[Event]  # the warm-up's and the step's ranges, as the profiler listed them
    step_events: list[Event] | None  # a whole traced step, with times; None where not kept
    waits: dict[str, bool]  # a call as written -> whether it made the CPU wait
    sync_debug_warnings: list[str]


def gather(device_name: str, command: str) -> dict[str, Any]:
    """Everything :class:`Evidence` holds, measured now on ``device_name``."""
    import os

    import torch

    from tensorbook.draw import timeline
    from tensorbook.problem import TUTORIAL_SIZES, as_tensors, make_problem
    from tensorbook.speed.step import timing_lr, torch_step
    from tensorbook.speed.waits import common_calls, mask_events, waits_for_gpu
    from tensorbook_build.record import capture_provenance
    from tensorbook_build.spec import resolve_spec

    device = torch.device(device_name)
    found = capture_provenance(resolve_spec(device_name, given_by="--device"), command)
    gpu = found["gpu"] or {}
    step_tensors = as_tensors(make_problem(TUTORIAL_SIZES), device)
    lr = timing_lr(TUTORIAL_SIZES)
    step_events = timeline.trace_step(lambda: torch_step(*step_tensors, lr).item(), device)
    marks = ("tensorbook.warm_up", "tensorbook.step")
    evidence: dict[str, Any] = {
        "provenance": {
            "machine": f"{found['model']}"
            + (f" ({gpu['memory_gib']} GiB, driver {gpu['driver']})" if gpu else "")
            + f", {os.cpu_count()} CPU cores",
            "gpu": gpu.get("name", "none: a rehearsal on the CPU"),
            "torch": found["torch"],
            "python": found["python"],
            "numpy": found["numpy"],
            "date": found["run_date"],
            "commit": found["commit"],
            "how": f"{command}: each event's caller is its index in the list",
        },
        "mask_events": {
            spelling: events_to_json(events) for spelling, events in mask_events(device).items()
        },
        "step_marks": [
            {"name": e.name, "lane": e.lane, "parent": None, "start": e.start, "end": e.end}
            for e in step_events
            if e.name in marks
        ],
        "step_events": events_to_json(step_events),
        "waits": {},
        "sync_debug_warnings": [],
    }
    if device.type == "cuda":
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:  # what torch says when the mode is set, seen unfiltered
                torch.cuda.set_sync_debug_mode("error")
            finally:
                torch.cuda.set_sync_debug_mode("default")
            evidence["waits"] = {  # the mask spellings (speed.md), then everyday calls (cuda.md)
                **waits_for_gpu(device),
                **waits_for_gpu(device, common_calls(device)),
            }
        evidence["sync_debug_warnings"] = sorted({str(w.message) for w in seen})
    return evidence


def _events(path: Path, field: str, rows: object) -> list[Event]:
    try:
        return events_from_json(rows)
    except TraceError as error:
        msg = f"{path}: {field}: {error}"
        raise EvidenceError(msg) from None


def load(path: Path) -> Evidence:
    """The evidence in ``path``, checked field by field (:class:`EvidenceError`)."""
    try:
        data, problem = read_json(path, SCHEMA)
    except OSError as error:
        data, problem = None, f"not readable: {error}"
    if problem:
        msg = f"{path}: {problem}"
        raise EvidenceError(msg)
    masks, step = data["mask_events"], data.get("step_events")
    return Evidence(
        path=path,
        provenance=data["provenance"],
        mask_events={s: _events(path, f"mask_events[{s!r}]", rows) for s, rows in masks.items()},
        step_marks=_events(path, "step_marks", data.get("step_marks")),
        step_events=None if step is None else _events(path, "step_events", step),
        waits=data["waits"],
        sync_debug_warnings=data["sync_debug_warnings"],
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tests.support.evidence --device DEVICE --out FILE``."""
    parser = argparse.ArgumentParser(prog="python -m tests.support.evidence", description=__doc__)
    parser.add_argument("--device", required=True, help="cuda or cuda:N (cpu to rehearse)")
    parser.add_argument("--out", type=Path, required=True, help="the JSON file to write")
    args = parser.parse_args(argv)
    command = "python -m tests.support.evidence " + shlex.join(
        sys.argv[1:] if argv is None else list(argv)
    )
    evidence = gather(args.device, command)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(evidence, indent=1, ensure_ascii=False) + "\n"
    partial = args.out.with_name(args.out.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(args.out)
    load(args.out)  # what was written reads back
    print(f"tests.support.evidence: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
