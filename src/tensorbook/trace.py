"""What torch's profiler saw, as plain data: the events of one traced call.

A live profile (:func:`trace`) and a profile recorded on another machine
(:func:`events_from_json`) are the same list of :class:`Event`, so what reads a profile
(:func:`tensorbook.speed.waits.operator_lines`, :func:`tensorbook.draw.timeline.step_spans`)
is tested on a CPU against the profiles a GPU recorded (``tests/recorded/``).

Examples
--------
>>> events = trace(lambda: torch.ones(3).sum(), torch.device("cpu"))
>>> [event.name for event in events if event.parent is None]
['aten::ones', 'aten::sum']
>>> events_from_json(events_to_json(events)) == events
True
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import torch

__all__ = [
    "Event",
    "TraceError",
    "events_from_json",
    "events_to_json",
    "is_operator",
    "is_runtime_call",
    "trace",
]


class TraceError(ValueError):
    """A recorded profile that is not a list of events as :func:`events_to_json` writes."""


@dataclass(frozen=True)
class Event:
    """One event of a profile.

    ``lane`` is where it ran: ``"cpu"`` for an operator or a call the CPU made
    (a CUDA runtime call too), ``"gpu"`` for a kernel or a copy on the device.
    ``parent`` is the index, in the same list, of the CPU event that called it
    (``None`` at the top, and for the GPU's events). ``start`` and ``end`` are in
    microseconds, or ``None`` where a recording kept no times.
    """

    name: str
    lane: str
    parent: int | None
    start: float | None = None
    end: float | None = None


def is_operator(name: str) -> bool:
    """Whether ``name`` is an operator's (``aten::mm``): operators have a namespace.

    With the GPU traced too, the profiler also lists events of its own and of the
    driver among the CPU's (``Activity Buffer Request``, ``Lazy Function Loading``):
    neither operators nor runtime calls.

    >>> is_operator("aten::mm"), is_operator("Activity Buffer Request")
    (True, False)
    """
    return "::" in name


def is_runtime_call(name: str) -> bool:
    """Whether ``name`` is a CUDA runtime call (``cudaLaunchKernel``), not an operator.

    The profiler lists the runtime calls an operator makes as CPU events nested under
    it, on a GPU only; operators have a namespace (``aten::``), runtime calls none.

    >>> is_runtime_call("cudaStreamSynchronize"), is_runtime_call("aten::nonzero")
    (True, False)
    """
    return name.startswith("cuda") and "::" not in name


def trace(call: Callable[[], object], device: torch.device) -> list[Event]:
    """Run ``call`` once under torch's profiler; every event it listed, in order.

    On a CUDA device the GPU's own events (its kernels and copies) are traced too.
    """
    from torch.profiler import DeviceType, ProfilerActivity, profile

    # Kineto, the profiler's engine, writes a line to the process's stderr at every
    # start and stop unless its log level is above 5; on a page that is noise.
    os.environ.setdefault("KINETO_LOG_LEVEL", "6")
    activities = [ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(ProfilerActivity.CUDA)
    with warnings.catch_warnings():
        # torch 2.11 warns, once per process, on a profiler's first start that it keeps
        # no events across cycles (2.13 only on a restart); one cycle is all this needs
        warnings.filterwarnings("ignore", "Warning: Profiler clears events", UserWarning)
        with profile(activities=activities) as prof:
            call()
        # parents first: an event starts no earlier than its caller, and ends no later
        listed = sorted(prof.events(), key=lambda e: (e.time_range.start, -e.time_range.end))
    index = {id(event): i for i, event in enumerate(listed)}
    return [
        Event(
            name=event.name,
            lane="gpu" if event.device_type == DeviceType.CUDA else "cpu",
            parent=None if event.cpu_parent is None else index.get(id(event.cpu_parent)),
            start=float(event.time_range.start),
            end=float(event.time_range.end),
        )
        for event in listed
    ]


def events_to_json(events: Sequence[Event]) -> list[dict[str, Any]]:
    """``events`` as JSON-ready dictionaries, for a recording."""
    return [asdict(event) for event in events]


def events_from_json(rows: object) -> list[Event]:
    """The events a recording holds, checked: each parent is an earlier CPU event.

    Raises
    ------
    TraceError
        If ``rows`` is not what :func:`events_to_json` writes.

    >>> events_from_json([{"name": "aten::sum", "lane": "cpu", "parent": 3}])
    Traceback (most recent call last):
    ...
    tensorbook.trace.TraceError: event 0 (aten::sum): its parent 3 is not an earlier event
    """
    if not isinstance(rows, list):
        msg = f"a profile is a list of events, not {type(rows).__name__}"
        raise TraceError(msg)
    events: list[Event] = []
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping) or not isinstance(row.get("name"), str):
            msg = f"event {i} is not an object with a name: {row!r}"
            raise TraceError(msg)
        try:
            event = Event(**row)
        except TypeError as error:
            msg = f"event {i} ({row['name']}): {error}"
            raise TraceError(msg) from None
        if event.lane not in {"cpu", "gpu"}:
            msg = f"event {i} ({event.name}): lane {event.lane!r} is neither 'cpu' nor 'gpu'"
            raise TraceError(msg)
        if event.parent is not None and not (
            isinstance(event.parent, int)
            and 0 <= event.parent < i
            and events[event.parent].lane == "cpu"
        ):
            msg = f"event {i} ({event.name}): its parent {event.parent} is not an earlier event"
            raise TraceError(msg)
        events.append(event)
    return events
