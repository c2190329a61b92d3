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

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from tensorbook.draw.svg import MAX_WIDTH, Canvas, Picture, text_width

__all__ = ["Span", "profile_step", "timeline_picture"]

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


def profile_step(step: Callable[[], object], device: torch.device) -> list[Span]:
    """Run ``step`` twice under the profiler, tracing the second; the spans it traced.

    The CPU's spans are its top-level operators (those no other operator called); on
    a CUDA device, the GPU's kernels follow.

    Examples
    --------
    >>> a = torch.ones(8, 8, device=device)
    >>> spans = profile_step(lambda: (a @ a).sum().item(), device)
    >>> [span.name for span in spans if span.lane == "cpu"]
    ['aten::matmul', 'aten::sum', 'aten::item']
    """
    from torch.profiler import DeviceType, ProfilerActivity, profile, record_function

    os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # Kineto's start and stop lines: noise
    activities = [ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(ProfilerActivity.CUDA)
    # the profiler's first operators are slow to start: trace a warm-up step first, and
    # keep the second step's operators, those its record_function is the caller of
    with profile(activities=activities) as prof:
        for mark in (_WARM_UP, _STEP):
            with record_function(mark):
                step()
    events = list(prof.events())
    (marked,) = [event for event in events if event.name == _STEP and event.cpu_parent is None]
    start, end = marked.time_range.start, marked.time_range.end
    spans = []
    for event in events:
        if event.device_type == DeviceType.CUDA:
            if start <= event.time_range.start <= end + 1e6:  # kernels run after their launch
                spans.append(Span("gpu", event.name, event.time_range.start, event.time_range.end))
        elif event.cpu_parent is marked:
            spans.append(Span("cpu", event.name, event.time_range.start, event.time_range.end))
    return sorted(spans, key=lambda span: (span.lane, span.start))


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
