"""One training step's timeline, drawn from the torch profiler's trace of it.

One row per operator over time; on a GPU build, the GPU's kernels in a row below the
CPU's.

A timeline is a measurement, like the speed chapter's timings: the times are this
build's, on this machine, and change from build to build, so its bytes do too (the
picture says so in its caption). What is deterministic is the drawing: the same trace
drawn twice gives the same bytes, positions rounded to a tenth of a unit. Rounding
the times themselves coarser would not make two builds agree, only hide the
measurement, so they are drawn as measured.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from tensorbook.draw.svg import MAX_WIDTH, Canvas, Picture, text_width
from tensorbook.trace import Event, is_operator, trace

__all__ = ["Span", "find_mark", "profile_step", "step_spans", "timeline_picture", "trace_step"]

ROW = 18
AREA = 280
"""The widest the time axis is drawn; less where the operators' names need the room."""
_WARM_UP, _STEP = "tensorbook.warm_up", "tensorbook.step"
LONGEST_NAME = 28
"""The most characters of an operator's name a row shows, so the time axis keeps room."""


def _short(name: str) -> str:
    return name if len(name) <= LONGEST_NAME else name[: LONGEST_NAME - 1] + "…"


@dataclass(frozen=True)
class Span:
    """One operator's run: ``lane`` is ``"cpu"`` or ``"gpu"``; times in microseconds."""

    lane: str
    name: str
    start: float
    end: float


def find_mark(events: Sequence[Event], name: str) -> int:
    """The index of the CPU range ``record_function(name)`` made, at the top of the calls.

    On a GPU the profiler also lists the mark's annotation on the GPU's timeline, an
    event of the same name in the ``"gpu"`` lane; the CPU's range is the one whose
    children are the operators the CPU ran.

    Raises
    ------
    ValueError
        If the profile holds no such range, or more than one.

    >>> find_mark([Event("m", "cpu", None), Event("m", "gpu", None)], "m")
    0
    """
    found = [
        i
        for i, event in enumerate(events)
        if event.name == name and event.lane == "cpu" and event.parent is None
    ]
    if len(found) != 1:
        msg = f"the profile has {len(found)} CPU ranges named {name!r}, not one"
        raise ValueError(msg)
    return found[0]


def step_spans(events: Sequence[Event]) -> list[Span]:
    """The spans of the step a profile marked ``tensorbook.step``: CPU, then GPU.

    The CPU's spans are the operators the mark is the caller of (not the runtime calls
    or the profiler's own events there); the GPU's are its kernels and copies that start
    within a second after the step began (kernels run after their launch), the marks'
    own annotations left out.

    Raises
    ------
    ValueError
        If the profile holds no single step, or was recorded without times.
    """
    marked = find_mark(events, _STEP)
    start, end = events[marked].start, events[marked].end
    if start is None or end is None:
        msg = f"the profile's {_STEP!r} has no times: it was recorded without them"
        raise ValueError(msg)
    spans = []
    for event in events:
        if event.start is None or event.end is None:
            continue
        if event.lane == "gpu":
            if event.name not in (_WARM_UP, _STEP) and start <= event.start <= end + 1e6:
                spans.append(Span("gpu", event.name, event.start, event.end))
        elif event.parent == marked and is_operator(event.name):
            spans.append(Span("cpu", event.name, event.start, event.end))
    return sorted(spans, key=lambda span: (span.lane, span.start))


def profile_step(step: Callable[[], object], device: torch.device) -> list[Span]:
    """Run ``step`` twice under the profiler and the spans of the second (:func:`step_spans`).

    The profiler's first operators are slow to start, so a warm-up step is traced first.

    Examples
    --------
    >>> a = torch.ones(8, 8, device=device)
    >>> spans = profile_step(lambda: (a @ a).sum().item(), device)
    >>> [span.name for span in spans if span.lane == "cpu"]
    ['aten::matmul', 'aten::sum', 'aten::item']
    """
    return step_spans(trace_step(step, device))


def trace_step(step: Callable[[], object], device: torch.device) -> list[Event]:
    """Every event of ``step`` run twice under the profiler.

    Each run is in a range of its own: a warm-up, then ``tensorbook.step``, which
    :func:`step_spans` reads.
    """
    from torch.profiler import record_function

    def marked_steps() -> None:
        for mark in (_WARM_UP, _STEP):
            with record_function(mark):
                step()

    return trace(marked_steps, device)


def timeline_picture(spans: Sequence[Span], *, device: str) -> Picture:
    """Draw ``spans`` over time: a row per CPU operator, then one row of GPU kernels.

    Parameters
    ----------
    spans : sequence of Span
        What :func:`profile_step` traced.
    device : str
        The device the step ran on, for the title (``"cpu"``, ``"cuda:0"``).

    Raises
    ------
    ValueError
        If there is no span.

    Examples
    --------
    >>> spans = [Span("cpu", "aten::mm", 10.0, 30.0), Span("cpu", "aten::sum", 31.0, 35.0)]
    >>> picture = timeline_picture(spans, device="cpu")
    >>> [t for t in picture.texts if t.startswith("aten::")], picture.texts[-1]
    (['aten::mm', 'aten::sum'], '25 µs')
    """
    if not spans:
        msg = "no span to draw"
        raise ValueError(msg)
    origin = min(span.start for span in spans)
    total = max(span.end for span in spans) - origin
    rows: dict[tuple[str, str], int] = {}
    for span in spans:
        key = ("gpu", "") if span.lane == "gpu" else ("cpu", span.name)
        rows.setdefault(key, len(rows))
    label = max(text_width(_short(name), 11, mono=True) for _, name in rows) + 16
    label = max(label, 60)
    area = min(AREA, MAX_WIDTH - label - 12)
    canvas = Canvas(label + area + 12)
    canvas.words(8, 14, "measured", size=11)
    top = 24
    gpu_rows = [index for (lane, _), index in rows.items() if lane == "gpu"]
    for (lane, name), index in rows.items():
        y = top + index * ROW
        if lane == "gpu":
            canvas.words(8, y + 13, "gpu_row", size=11, bold=True)
        else:
            canvas.text(8, y + 13, _short(name), mono=True, size=11)
    for span in spans:
        index = rows[("gpu", "") if span.lane == "gpu" else ("cpu", span.name)]
        x = label + (span.start - origin) / total * area if total else label
        width = max(1.0, (span.end - span.start) / total * area if total else area)
        canvas.rect(
            x,
            top + index * ROW + 3,
            width,
            ROW - 6,
            tone="orange" if span.lane == "gpu" else "blue",
            solid=True,
        )
    bottom = top + len(rows) * ROW + 4
    if gpu_rows:
        canvas.line(8, top + gpu_rows[0] * ROW, label + area, top + gpu_rows[0] * ROW, dashed=True)
    canvas.line(label, bottom, label + area, bottom)
    canvas.words(label, bottom + 14, "microseconds", size=11, time=0)
    canvas.words(
        label + area, bottom + 14, "microseconds", size=11, anchor="end", time=round(total)
    )
    operators = len({span.name for span in spans if span.lane == "cpu"})
    return canvas.picture(
        ("timeline_title", {"device": device}),
        ("timeline_desc", {"ops": operators, "total": round(total)}),
    )
