"""Time the step: NumPy, torch on the CPU, torch on a GPU, and the step as a CUDA graph.

The rules of the timing:

* every measurement starts with warm-up steps, which are not timed;
* a repeat times a batch of steps and divides; a :class:`Timing` keeps every repeat,
  and tables show their median and their spread (fastest to slowest);
* GPU work is timed with CUDA events recorded on the stream around the batch, and
  read after one synchronisation at its end, so nothing inside the timed region
  waits for the GPU unless that wait is what is measured (``loss.item()`` on every
  step is measured that way on purpose).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from tensorbook.problem import TUTORIAL_SIZES, Sizes, as_tensors, make_problem
from tensorbook.speed.peak import fp32_peak
from tensorbook.speed.step import numpy_step, step_flops, timing_lr, torch_step

__all__ = [
    "CPU_SWEEP",
    "GPU_SWEEP",
    "Timing",
    "cuda_graph_step",
    "item_seconds",
    "sweep",
    "time_numpy",
    "time_torch",
    "torch_label",
]

CPU_SWEEP = (
    TUTORIAL_SIZES,
    Sizes(n=256, d_in=1024, h=256, d_out=64),
    Sizes(n=512, d_in=1024, h=512, d_out=512),
)
"""Sizes a CPU can sweep in a few seconds: from the tutorial's to about 1.9 GFLOP a step."""

GPU_SWEEP = (
    *CPU_SWEEP,
    Sizes(n=1024, d_in=1024, h=1024, d_out=1024),
    Sizes(n=2048, d_in=2048, h=2048, d_out=2048),
    Sizes(n=4096, d_in=4096, h=4096, d_out=4096),
)
"""The CPU sweep continued to sizes where a data-centre GPU's float32 units are kept busy."""


@dataclass(frozen=True)
class Timing:
    """Seconds per step of one way of running the step, at one size, one per repeat."""

    label: str
    sizes: Sizes
    seconds: tuple[float, ...]
    peak: float | None = None  # the device's FLOP/s, where known

    def __post_init__(self) -> None:
        """Refuse a timing without positive seconds."""
        if not self.seconds or min(self.seconds) <= 0:
            msg = f"{self.label}: a timing needs positive seconds, not {self.seconds}"
            raise ValueError(msg)

    @property
    def median(self) -> float:
        """The median of the repeats, in seconds."""
        return statistics.median(self.seconds)

    @property
    def flops_per_second(self) -> float:
        """The step's floating-point operations over its median time."""
        return step_flops(self.sizes) / self.median

    @property
    def spread(self) -> tuple[float, float]:
        """Fastest and slowest repeat, in seconds per step."""
        return min(self.seconds), max(self.seconds)


REPEAT_SECONDS = 0.05
"""How long one repeat lasts when the number of steps in it is left to the timer."""


def _check_counts(warmup: int, repeats: int, steps: int | None) -> None:
    if warmup < 1 or repeats < 1 or (steps is not None and steps < 1):
        msg = (
            f"need warmup >= 1, repeats >= 1 and steps >= 1 (or None); "
            f"got {warmup}, {repeats}, {steps}"
        )
        raise ValueError(msg)


LONG_STEP_SECONDS = 1.0
"""A step longer than this is repeated at most three times (NumPy at the largest sizes)."""


def _calibrate(
    run: Callable[[], object], sync: Callable[[], object], repeats: int, steps: int | None
) -> tuple[int, int]:
    """Steps per repeat (about REPEAT_SECONDS each) and repeats, from one more warm step."""
    sync()
    start = time.perf_counter()
    run()
    sync()
    seconds = time.perf_counter() - start
    if seconds > LONG_STEP_SECONDS:
        repeats = min(repeats, 3)
    return steps or max(1, min(1000, round(REPEAT_SECONDS / seconds))), repeats


def _time_on_cpu(
    run: Callable[[], object], warmup: int, repeats: int, steps: int | None
) -> list[float]:
    for _ in range(warmup - 1):
        run()
    steps, repeats = _calibrate(run, lambda: None, repeats, steps)
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            run()
        seconds.append((time.perf_counter() - start) / steps)
    return seconds


def _time_on_gpu(
    run: Callable[[], object], warmup: int, repeats: int, steps: int | None
) -> list[float]:
    for _ in range(warmup - 1):
        run()
    steps, repeats = _calibrate(run, torch.cuda.synchronize, repeats, steps)
    pairs = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(steps):
            run()
        end.record()
        pairs.append((start, end))
    torch.cuda.synchronize()  # the one wait, after every repeat has been queued
    return [start.elapsed_time(end) / 1000 / steps for start, end in pairs]


def time_numpy(
    sizes: Sizes, *, warmup: int = 2, repeats: int = 5, steps: int | None = None
) -> Timing:
    """Time :func:`numpy_step` at ``sizes``, in float32 like the torch runs.

    ``steps`` per repeat; None leaves it to the timer (a repeat of about 0.05 s).

    >>> t = time_numpy(Sizes(8, 5, 4, 2), repeats=3, steps=2)
    >>> t.label, len(t.seconds), t.median > 0
    ('NumPy', 3, True)
    """
    _check_counts(warmup, repeats, steps)
    lr = timing_lr(sizes)
    p = make_problem(sizes)
    x, y, w1, w2 = (a.astype(np.float32) for a in (p.x, p.y, p.w1, p.w2))
    seconds = _time_on_cpu(lambda: numpy_step(x, y, w1, w2, lr), warmup, repeats, steps)
    return Timing("NumPy", sizes, tuple(seconds))


def time_torch(
    sizes: Sizes,
    device: torch.device,
    *,
    item_every_step: bool = False,
    warmup: int = 3,
    repeats: int = 5,
    steps: int | None = None,
) -> Timing:
    """Time :func:`torch_step` at ``sizes`` on ``device``, in float32.

    With ``item_every_step`` each step also reads the loss with ``loss.item()``,
    as a loop that prints or logs every loss does; on a GPU that waits for the step.
    """
    _check_counts(warmup, repeats, steps)
    lr = timing_lr(sizes)
    x, y, w1, w2 = as_tensors(make_problem(sizes), device, torch.float32)

    def run() -> object:
        loss = torch_step(x, y, w1, w2, lr)
        return loss.item() if item_every_step else loss

    if device.type == "cuda":
        with torch.cuda.device(device):  # events and synchronisation on this GPU
            seconds = _time_on_gpu(run, warmup, repeats, steps)
    else:
        seconds = _time_on_cpu(run, warmup, repeats, steps)
    label = torch_label(device) + (", loss.item() each step" if item_every_step else "")
    return Timing(label, sizes, tuple(seconds), fp32_peak(device))


def item_seconds(device: torch.device, *, calls: int = 1000, repeats: int = 5) -> float:
    """The median time of one ``.item()`` of a number already computed on ``device``.

    What reading a loss costs apart from waiting for the step that computes it: on a
    GPU a copy to the CPU's memory and a wait for that copy alone, on a CPU a read.

    >>> 0 < item_seconds(torch.device("cpu"), calls=10, repeats=1) < 1e-3
    True
    """
    if calls < 1 or repeats < 1:
        msg = f"need calls >= 1 and repeats >= 1; got {calls}, {repeats}"
        raise ValueError(msg)
    ready = torch.ones((), device=device)
    ready.item()  # a first call may initialise
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            ready.item()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def torch_label(device: torch.device) -> str:
    """The label of :func:`time_torch`'s timings on ``device``, as tables show it.

    >>> torch_label(torch.device("cpu"))
    'torch cpu'
    """
    return f"torch {device}"


def cuda_graph_step(
    sizes: Sizes,
    device: torch.device,
    *,
    warmup: int = 3,
    repeats: int = 5,
    steps: int | None = None,
) -> Timing:
    """Time the step captured once in a CUDA graph and replayed: one launch a step.

    Raises
    ------
    ValueError
        If ``device`` is not a CUDA device: CUDA graphs exist only there.

    >>> cuda_graph_step(TUTORIAL_SIZES, torch.device("cpu"))
    Traceback (most recent call last):
    ...
    ValueError: CUDA graphs need a CUDA device, not cpu
    """
    if device.type != "cuda":
        msg = f"CUDA graphs need a CUDA device, not {device}"
        raise ValueError(msg)
    _check_counts(warmup, repeats, steps)
    lr = timing_lr(sizes)
    x, y, w1, w2 = as_tensors(make_problem(sizes), device, torch.float32)
    # Capture needs the step's kernels and workspaces ready: run it on a side stream first.
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        for _ in range(3):
            torch_step(x, y, w1, w2, lr)
    torch.cuda.current_stream(device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        torch_step(x, y, w1, w2, lr)
    with torch.cuda.device(device):
        seconds = _time_on_gpu(graph.replay, warmup, repeats, steps)
    return Timing(f"torch {device}, CUDA graph", sizes, tuple(seconds), fp32_peak(device))


def sweep(device: torch.device) -> list[Timing]:
    """Time NumPy, torch on the CPU and, for a CUDA ``device``, torch on it.

    Each at each size of the sweep that fits: :data:`GPU_SWEEP` with a GPU, else
    :data:`CPU_SWEEP`.

    Past the CPU's sweep only NumPy, the baseline, runs on the CPU, warmed up by a
    single step: at 4096 a step takes a CPU core many seconds.
    """
    on_gpu = device.type == "cuda"
    timings = []
    for sizes in GPU_SWEEP if on_gpu else CPU_SWEEP:
        small = sizes in CPU_SWEEP
        timings.append(time_numpy(sizes, warmup=2 if small else 1))
        if small:
            timings.append(time_torch(sizes, torch.device("cpu")))
        if on_gpu:
            timings.append(time_torch(sizes, device))
    return timings
