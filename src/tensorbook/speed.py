"""Measure one training step of the two-layer network: NumPy, torch on the CPU, torch on a GPU.

A step is the book's hand-written step (forward, loss, backward, update), written
here so that it never makes a GPU report back to the CPU: the loss stays a tensor
and ReLU's gradient mask is applied with ``masked_fill``. The rules of the timing:

* every measurement starts with warm-up steps, which are not timed;
* a repeat times a batch of steps and divides; the table shows the median of the
  repeats and their spread (fastest to slowest);
* GPU work is timed with CUDA events recorded on the stream around the batch, and
  read after one synchronisation at its end, so nothing inside the timed region
  waits for the GPU unless that wait is what is measured (``loss.item()`` on every
  step is measured that way on purpose);
* FLOP/s count the five matrix products of a step, ``2 N D_in H + 3 N H D_out``
  multiply-adds at two operations each, and leave out the element-wise work.

``python -m tensorbook.speed`` prints the table for the CPU, and for the GPU when
``--device`` names one.
"""

from __future__ import annotations

import contextlib
import functools
import html
import math
import re
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from tensorbook import cli, trace
from tensorbook.draw.svg import Canvas, Picture
from tensorbook.problem import LEARNING_RATE, TUTORIAL_SIZES, Sizes, as_tensors, make_problem

if TYPE_CHECKING:
    from IPython.lib.pretty import PrettyPrinter

__all__ = [
    "CPU_SWEEP",
    "GPU_SWEEP",
    "MASK_SPELLINGS",
    "ResultsTable",
    "Timing",
    "cuda_graph_step",
    "fp32_peak",
    "main",
    "mask_operators",
    "numpy_step",
    "speedup",
    "speedup_figure",
    "step_flops",
    "sweep",
    "table",
    "time_numpy",
    "time_torch",
    "timing_lr",
    "torch_label",
    "torch_step",
    "waits_for_gpu",
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

# Float32 peak of the CUDA cores (no tensor cores: torch's default float32 matmul
# precision, "highest", does not use TF32), dense, at boost clock, from NVIDIA's data
# sheets. Each pattern must match the whole of torch.cuda.get_device_name(), so that
# "NVIDIA L40" is not taken for an L4, nor "NVIDIA H100 NVL" for an H100 SXM.
_FP32_PEAK_TFLOPS = (
    (r"NVIDIA H100 PCIe", 51.2),
    (r"NVIDIA H100 80GB HBM3", 66.9),  # SXM5
    (r"NVIDIA H200", 66.9),  # SXM
    (r"NVIDIA A100[- ].*", 19.5),  # every A100: SXM4 and PCIe, 40 and 80 GB
    (r"NVIDIA L40S", 91.6),
    (r"NVIDIA L4", 30.3),
    (r"NVIDIA A10", 31.2),
    (r"Tesla V100-SXM2-(16|32)GB", 15.7),
    (r"Tesla V100-PCIE-(16|32)GB", 14.0),
    (r"Tesla T4", 8.1),
)


def timing_lr(sizes: Sizes) -> float:
    """The learning rate of the timed steps: the book's, scaled down as the step grows.

    At the book's learning rate the larger problems diverge within a few steps, and
    overflowing to ``inf`` and ``nan`` would change what is timed; the size of a
    finite step does not change the time of a float32 product.

    >>> timing_lr(TUTORIAL_SIZES) == LEARNING_RATE
    True
    """
    return LEARNING_RATE * step_flops(TUTORIAL_SIZES) / step_flops(sizes)


def step_flops(sizes: Sizes) -> int:
    """Floating-point operations of the five matrix products in one training step.

    >>> step_flops(Sizes(n=64, d_in=1000, h=100, d_out=10))
    25984000
    """
    n, d_in, h, d_out = sizes.n, sizes.d_in, sizes.h, sizes.d_out
    return 2 * (2 * n * d_in * h + 3 * n * h * d_out)


def fp32_peak(device: torch.device) -> float | None:
    """The device's float32 peak in FLOP/s, where it is known; None for a CPU.

    Also None when torch may use TF32 tensor cores for float32 matrix products,
    since the achieved rate would then be compared with the wrong peak.

    >>> fp32_peak(torch.device("cpu")) is None
    True
    """
    if device.type != "cuda" or tf32_allowed():
        return None
    return _peak_of_name(torch.cuda.get_device_name(device))


def tf32_allowed() -> bool:
    """Whether CUDA float32 matrix products may use TF32 tensor cores.

    Reads ``torch.backends.cuda.matmul.fp32_precision`` ("ieee" or "tf32"); its
    "none" defers to ``torch.backends.fp32_precision``, and a "none" there to the
    legacy ``torch.get_float32_matmul_precision()``. The legacy getter is read
    only then: it raises once the new settings have been used.

    >>> tf32_allowed()  # torch's default
    False
    """
    # torch.backends gets fp32_precision at import, from a module object it puts in
    # sys.modules in its own place, so that its stub cannot show it
    generic = torch.backends.fp32_precision  # type: ignore[attr-defined]
    settings: tuple[str, str] = (torch.backends.cuda.matmul.fp32_precision, generic)
    for setting in settings:
        if setting != "none":
            return setting == "tf32"
    return torch.get_float32_matmul_precision() != "highest"


def _peak_of_name(name: str) -> float | None:
    """The float32 peak of the GPU that torch names ``name``, matched whole; else None.

    >>> _peak_of_name("NVIDIA L4"), _peak_of_name("NVIDIA L40")
    (30300000000000.0, None)
    """
    for pattern, tflops in _FP32_PEAK_TFLOPS:
        if re.fullmatch(pattern, name.strip()):
            return tflops * 1e12
    return None


def numpy_step(x: np.ndarray, y: np.ndarray, w1: np.ndarray, w2: np.ndarray, lr: float) -> float:
    """One step of gradient descent in NumPy, updating ``w1`` and ``w2`` in place.

    Returns the loss before the update, as the training loops do.

    >>> p = make_problem(Sizes(8, 5, 4, 2))
    >>> w1, w2 = p.w1.copy(), p.w2.copy()
    >>> first = numpy_step(p.x, p.y, w1, w2, lr=1e-2)
    >>> numpy_step(p.x, p.y, w1, w2, lr=1e-2) < first
    True
    """
    h = x @ w1
    h_relu = np.maximum(h, 0)
    diff = h_relu @ w2 - y
    loss = float((diff * diff).sum())
    grad_y = 2.0 * diff
    grad_w2 = h_relu.T @ grad_y
    grad_h = grad_y @ w2.T
    grad_h[h < 0] = 0
    grad_w1 = x.T @ grad_h
    w1 -= lr * grad_w1
    w2 -= lr * grad_w2
    return loss


def torch_step(
    x: torch.Tensor, y: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, lr: float
) -> torch.Tensor:
    """The same step with torch tensors on any device; nothing in it waits for a GPU.

    The loss comes back as a 0-d tensor. ReLU's mask is applied with
    ``masked_fill_``, the operator that the book's ``grad_h[h < 0] = 0`` comes to
    (:func:`mask_operators` shows the way), called directly.

    >>> p = make_problem(Sizes(8, 5, 4, 2))
    >>> x, y, w1, w2 = as_tensors(p, device, torch.float64)
    >>> reference = (p.w1.copy(), p.w2.copy())
    >>> loss = torch_step(x, y, w1, w2, lr=1e-2)
    >>> expected = numpy_step(p.x, p.y, *reference, lr=1e-2)
    >>> bool(abs(loss.item() - expected) < 1e-9 * expected)
    True
    >>> bool(np.allclose(w1.cpu().numpy(), reference[0], rtol=1e-12, atol=0))
    True
    """
    h = x.mm(w1)
    h_relu = h.clamp(min=0)
    diff = h_relu.mm(w2) - y
    loss = diff.pow(2).sum()
    grad_y = 2.0 * diff
    grad_w2 = h_relu.t().mm(grad_y)
    grad_h = grad_y.mm(w2.t()).masked_fill_(h < 0, 0)
    grad_w1 = x.t().mm(grad_h)
    w1.sub_(lr * grad_w1)
    w2.sub_(lr * grad_w2)
    return loss


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


def speedup(
    timings: Sequence[Timing], sizes: Sizes, device: torch.device, *, baseline: str = "NumPy"
) -> float:
    """How many times faster torch on ``device`` ran than ``baseline`` at ``sizes``.

    The ratio of the two medians: the baseline's time over torch's.

    Raises
    ------
    LookupError
        If ``timings`` has no timing of either at ``sizes``, naming what it has.

    >>> t = [Timing("NumPy", TUTORIAL_SIZES, (2e-3, 3e-3, 4e-3)),
    ...      Timing("torch cpu", TUTORIAL_SIZES, (1e-3, 1e-3, 2e-3))]
    >>> speedup(t, TUTORIAL_SIZES, torch.device("cpu"))
    3.0
    >>> speedup(t, TUTORIAL_SIZES, torch.device("cuda"))
    Traceback (most recent call last):
    ...
    LookupError: no timing of 'torch cuda' at Sizes(n=64, d_in=1000, h=100, d_out=10); ...
    """
    medians = {(t.label, t.sizes): t.median for t in timings}
    for label in (baseline, torch_label(device)):
        if (label, sizes) not in medians:
            have = sorted({f"{lbl!r} at {s}" for lbl, s in medians})
            msg = f"no timing of {label!r} at {sizes}; have {', '.join(have)}"
            raise LookupError(msg)
    return medians[baseline, sizes] / medians[torch_label(device), sizes]


MASK_SPELLINGS: dict[str, Callable[[torch.Tensor, torch.Tensor, torch.Tensor], object]] = {
    "g[m]": lambda g, m, _v: g[m],
    "g[m] = 0": lambda g, m, _v: g.__setitem__(m, 0),
    "g[m] = v[m]": lambda g, m, v: g.__setitem__(m, v[m]),
    "g.masked_fill_(m, 0)": lambda g, m, _v: g.masked_fill_(m, 0),
}
"""Ways of applying a boolean mask ``m`` to ``g``: a read, a write of one number, a
write of a tensor's values, and ``masked_fill_``; ``v`` is a tensor shaped like ``g``."""

_BOOKKEEPING = frozenset(
    {"aten::empty", "aten::as_strided", "aten::as_strided_", "aten::select", "aten::view"}
    | {"aten::reshape", "aten::lift_fresh", "aten::detach_", "aten::to"}
)
"""Views and allocations, which compute nothing: left out of :func:`operator_lines`."""


def _makes_the_cpu_wait(name: str) -> bool:
    """A runtime call that copies between host and device or waits for the device."""
    return name.startswith("cudaMemcpy") or name.endswith("Synchronize")


def operator_lines(events: Sequence[trace.Event]) -> list[str]:
    """A profile's operators, each indented by its depth in the calls, and their waits.

    Views and allocations are left out. On a GPU the profiler also lists the CUDA
    runtime calls each operator makes; of those, only the copies and the waits
    (``cudaMemcpyAsync``, ``cudaStreamSynchronize``) are kept, the CPU waiting for
    the GPU made visible: the launches and queries every kernel needs are left out, and
    so are the profiler's own events (its buffers, the wait at its stop, which no
    operator made).

    >>> events = [trace.Event("aten::nonzero", "cpu", None),
    ...           trace.Event("cudaLaunchKernel", "cpu", 0),
    ...           trace.Event("Activity Buffer Request", "cpu", 0),
    ...           trace.Event("cudaMemcpyAsync", "cpu", 0),
    ...           trace.Event("cudaStreamSynchronize", "cpu", 0),
    ...           trace.Event("aten::view", "cpu", 0),
    ...           trace.Event("cudaDeviceSynchronize", "cpu", None)]
    >>> operator_lines(events)
    ['aten::nonzero', '  cudaMemcpyAsync', '  cudaStreamSynchronize']
    """

    def shown(event: trace.Event) -> bool:
        if trace.is_operator(event.name):
            return event.name not in _BOOKKEEPING
        made_by_an_operator = event.parent is not None
        return (
            made_by_an_operator
            and trace.is_runtime_call(event.name)
            and (_makes_the_cpu_wait(event.name))
        )

    lines = []
    for event in events:
        if event.lane != "cpu" or not shown(event):
            continue
        depth, parent = 0, event.parent
        while parent is not None:
            depth += shown(events[parent])
            parent = events[parent].parent
        lines.append("  " * depth + event.name)
    return lines


def _mask_operands(device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    g, v = torch.randn(2, 64, 100, generator=generator).to(device)
    return g, g < 0, v


def mask_events(device: torch.device) -> dict[str, list[trace.Event]]:
    """What torch's profiler lists for each of :data:`MASK_SPELLINGS` on ``device``."""
    return {
        spelling: trace.trace(functools.partial(apply, *_mask_operands(device)), device)
        for spelling, apply in MASK_SPELLINGS.items()
    }


def mask_operators(device: torch.device) -> dict[str, list[str]]:
    """The operators torch runs for each of :data:`MASK_SPELLINGS`, and where it waits.

    Each spelling's profile read by :func:`operator_lines`: so ``index_put_``
    calling ``masked_fill_`` shows as one line indented under the other.

    >>> ops = mask_operators(device)
    >>> [any("nonzero" in op for op in ops[spelling]) for spelling in ops]
    [True, False, True, False]
    >>> [op.strip() for op in ops["g.masked_fill_(m, 0)"]]
    ['aten::masked_fill_']
    """
    return {spelling: operator_lines(events) for spelling, events in mask_events(device).items()}


_PROTOTYPE_WARNING = "Synchronization debug mode is a prototype feature"


@contextlib.contextmanager
def sync_errors() -> Iterator[None]:
    """Inside, a call that makes the CPU wait for the GPU raises ``RuntimeError``.

    ``torch.cuda.set_sync_debug_mode("error")`` for the block, and the mode it
    found set again after it, however the block or the setting ends: a mode left at
    ``"error"`` would fail every later wait in the process. torch (2.11 and 2.13)
    warns when the mode is set that it is a prototype which "does not yet detect all
    synchronizing operations"; the caller says that where it matters, so the warning
    is not passed on.
    """
    previous = torch.cuda.get_sync_debug_mode()
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", _PROTOTYPE_WARNING, UserWarning)
            torch.cuda.set_sync_debug_mode("error")
        yield
    finally:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", _PROTOTYPE_WARNING, UserWarning)
            torch.cuda.set_sync_debug_mode(previous)


def waits_for_gpu(
    device: torch.device, actions: Mapping[str, Callable[[], object]] | None = None
) -> dict[str, bool]:
    """For each action, whether it makes the CPU wait for the GPU.

    ``actions`` maps a name to a call with no arguments; by default, each of
    :data:`MASK_SPELLINGS` on fresh operands. Each runs once unwatched (a first
    call may initialise and synchronise), then inside :func:`sync_errors`. The mode
    is experimental and sees only the synchronisations torch itself checks:
    ``False`` means none was seen.

    Raises
    ------
    ValueError
        If ``device`` is not a CUDA device: only a GPU is waited for.

    >>> waits_for_gpu(torch.device("cpu"))
    Traceback (most recent call last):
    ...
    ValueError: only a CUDA device can be waited for, not cpu
    """
    if device.type != "cuda":
        msg = f"only a CUDA device can be waited for, not {device}"
        raise ValueError(msg)
    if actions is None:
        actions = {
            spelling: functools.partial(apply, *_mask_operands(device))
            for spelling, apply in MASK_SPELLINGS.items()
        }
    waits = {}
    for name, action in actions.items():
        action()
        torch.cuda.synchronize(device)
        try:
            with sync_errors():
                action()
            waits[name] = False
        except RuntimeError as error:
            if "synchroniz" not in str(error):
                raise
            waits[name] = True
    return waits


def common_calls(device: torch.device) -> dict[str, Callable[[], object]]:
    """Everyday calls on a tensor on ``device``, as they are written, for :func:`waits_for_gpu`.

    ``g`` is a float matrix, ``m = g < 0`` a mask of it, ``idx`` a tensor of integer
    indices and ``host`` a matrix in the CPU's memory; the names say the call.

    >>> calls = common_calls(torch.device("cpu"))
    >>> calls["g.max()"]().item() == max(max(row) for row in calls["g.tolist()"]())
    True
    >>> len(calls), "g[0, 0] = 1.0" in calls
    (19, True)
    """
    generator = torch.Generator().manual_seed(0)
    host = torch.randn(64, 100, generator=generator)
    g = host.to(device)
    m = g < 0
    idx = torch.tensor([0, 2, 4], device=device)
    return {
        "g.sum().item()": lambda: g.sum().item(),
        "g.tolist()": g.tolist,
        "g.cpu()": g.cpu,
        "g.to('cpu', non_blocking=True)": lambda: g.to("cpu", non_blocking=True),
        "if g.sum() > 0:": lambda: bool(g.sum() > 0),
        "print(g)": lambda: repr(g),
        "g.nonzero()": g.nonzero,
        "g[m]": lambda: g[m],
        "g.masked_select(m)": lambda: g.masked_select(m),
        "torch.unique(m)": lambda: torch.unique(m),
        "host.to(device)": lambda: host.to(device),
        "torch.tensor(1.0, device=device)": lambda: torch.tensor(1.0, device=device),
        "g[0, 0] = 1.0": lambda: g.__setitem__((0, 0), 1.0),
        "g[idx]": lambda: g[idx],
        "g[m] = 0": lambda: g.__setitem__(m, 0),
        "torch.where(m, g, 0)": lambda: torch.where(m, g, 0),
        "g.max()": g.max,
        "g.argmax()": g.argmax,
        "g.std()": g.std,
    }


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


_COLUMNS = ("sizes (N, D_in, H, D_out)", "run", "per step (spread)", "GFLOP/s", "of peak")


@dataclass(frozen=True)
class ResultsTable:
    """Timings as a table: printed as text, shown in a notebook as an HTML table.

    Each row holds the sizes, the run's label, the median per step, the spread,
    GFLOP/s, the share of the device's peak and the speed-up over the baseline, as
    they are shown. The HTML form is a real table, whose cells wrap: the rows at one
    size are grouped under a heading of their own, so that on a phone every column
    still shows.
    """

    baseline: str
    rows: tuple[tuple[str, str, str, str, str, str, str], ...]

    def __str__(self) -> str:
        """The table as fixed-width text, one line a row."""
        header = (*_COLUMNS, f"vs {self.baseline}")
        lines = [header] + [
            (sizes, run, f"{step} ({spread})", gflops, peak, ratio)
            for sizes, run, step, spread, gflops, peak, ratio in self.rows
        ]
        widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
        text = []
        for number, line in enumerate(lines):
            cells = [
                cell.rjust(width) if column > 1 and number else cell.ljust(width)
                for column, (cell, width) in enumerate(zip(line, widths, strict=True))
            ]
            text.append("  ".join(cells).rstrip())
        return "\n".join(text)

    def _repr_pretty_(self, printer: PrettyPrinter, _cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        figure = ' class="tb-figure"'
        head = "".join(
            f'<th scope="col"{figure if i else ""}>{html.escape(name)}</th>'
            for i, name in enumerate(("run", "per step (spread)", "GFLOP/s", "of peak"))
        )
        head += f'<th scope="col"{figure}>vs {html.escape(self.baseline)}</th>'
        groups: dict[str, list[str]] = {}
        for sizes, run, step, spread, gflops, peak, ratio in self.rows:
            cells = [
                run,
                f'{step}<br><span class="tb-spread">({spread})</span>',
                gflops,
                peak,
                ratio,
            ]
            groups.setdefault(sizes, []).append(
                "<tr>"
                + "".join(
                    f"<td{figure if i else ''}>{cell if i == 1 else html.escape(cell)}</td>"
                    for i, cell in enumerate(cells)
                )
                + "</tr>"
            )
        body = "".join(
            f'<tbody><tr><th scope="rowgroup" colspan="5">N, D_in, H, D_out = '
            f"{html.escape(sizes)}</th></tr>{''.join(rows)}</tbody>"
            for sizes, rows in groups.items()
        )
        return f'<table class="tb-results"><thead><tr>{head}</tr></thead>{body}</table>'


def table(timings: Sequence[Timing], baseline: str = "NumPy") -> ResultsTable:
    """The timings as a table: per step (median and spread), GFLOP/s, % of peak, speed-up.

    The speed-up divides the median of the ``baseline`` timing at the same sizes.

    >>> t = [Timing("NumPy", TUTORIAL_SIZES, (2e-3, 3e-3, 4e-3)),
    ...      Timing("torch cpu", TUTORIAL_SIZES, (1e-3, 1e-3, 2e-3))]
    >>> print(table(t))
    sizes (N, D_in, H, D_out)  run        per step (spread)    GFLOP/s  of peak  vs NumPy
    64, 1000, 100, 10          NumPy      3.00 ms (2.00-4.00)      8.7        -      1.0x
    64, 1000, 100, 10          torch cpu  1.00 ms (1.00-2.00)     26.0        -      3.0x

    In a notebook it is an HTML table, a group of rows for each size:

    >>> table(t)._repr_html_().count("<tbody>"), table(t)._repr_html_().count("<tr>")
    (1, 4)
    """
    baselines = {t.sizes: t.median for t in timings if t.label == baseline}
    rows = []
    for t in timings:
        scale, unit = (1e3, "ms") if t.median < 1 else (1.0, "s")
        low, high = t.spread
        rows.append(
            (
                f"{t.sizes.n}, {t.sizes.d_in}, {t.sizes.h}, {t.sizes.d_out}",
                t.label,
                f"{t.median * scale:.2f} {unit}",
                f"{low * scale:.2f}-{high * scale:.2f}",
                f"{t.flops_per_second / 1e9:.1f}",
                f"{100 * t.flops_per_second / t.peak:.1f}%" if t.peak else "-",
                f"{baselines[t.sizes] / t.median:.1f}x" if t.sizes in baselines else "-",
            )
        )
    return ResultsTable(baseline, tuple(rows))


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


_SI = {0: "", 3: "k", 6: "M", 9: "G", 12: "T"}


def _decade(power: int) -> str:
    """``10**power`` as a short tick label: 0.1, 1, 10, 100, 1k, ..., 10M, 100M, 1G."""
    base = 3 * (power // 3)
    if power < 0 or base not in _SI:
        return f"{10.0**power:g}"
    return f"{10 ** (power - base)}{_SI[base]}"


def speedup_figure(timings: Sequence[Timing], baseline: str = "NumPy") -> Picture:
    """Speed-up over ``baseline`` against the work in a step, both on log scales.

    A picture of :mod:`tensorbook.draw` (its words are real text, at least 11 CSS px on
    a phone, in the page's colours), not a Matplotlib figure. The axes are labelled with
    symbols, the step's floating-point operations :math:`F` and the ratio of times, so
    the chart reads the same in every edition; a dashed line marks 50.

    >>> t = [Timing("NumPy", TUTORIAL_SIZES, (2e-3,)), Timing("torch cpu", TUTORIAL_SIZES, (1e-3,))]
    >>> picture = speedup_figure(t)
    >>> picture.title, [w for w in picture.texts if w.startswith(("torch", "t("))]
    ('Speed-up over NumPy against the work in a step', ['torch cpu', 't(NumPy) / t'])
    """
    baselines = {t.sizes: t.median for t in timings if t.label == baseline}
    runs = {
        label: sorted(
            (step_flops(t.sizes), baselines[t.sizes] / t.median)
            for t in timings
            if t.label == label and t.sizes in baselines
        )
        for label in dict.fromkeys(t.label for t in timings if t.label != baseline)
    }
    points = [point for line in runs.values() for point in line]
    if not points:
        msg = f"no timing to set against {baseline!r} at its sizes"
        raise ValueError(msg)
    x_low = math.floor(math.log10(min(f for f, _ in points)))
    x_high = max(math.ceil(math.log10(max(f for f, _ in points))), x_low + 1)
    y_low = math.floor(math.log10(min(1.0, *(r for _, r in points))))
    y_high = math.ceil(math.log10(max(50.0, *(r for _, r in points))))
    left, right, top = 44.0, 350.0, 36.0 + 18 * len(runs)
    bottom = top + 180

    def x_of(flops: float) -> float:
        return left + (math.log10(flops) - x_low) / (x_high - x_low) * (right - left)

    def y_of(ratio: float) -> float:
        return bottom - (math.log10(ratio) - y_low) / (y_high - y_low) * (bottom - top)

    canvas = Canvas(right + 24)  # room for the last tick's label, centred on it
    tones = ("blue", "orange", "green", "purple", "red")
    for i, label in enumerate(runs):  # the legend
        canvas.rect(left, 8 + 18 * i, 14, 4, tone=tones[i % len(tones)], solid=True)
        canvas.text(left + 20, 14 + 18 * i, label, mono=True)
    canvas.text(8, top - 14, f"t({baseline}) / t", mono=True)
    for power in range(y_low, y_high + 1):
        y = y_of(10.0**power)
        canvas.line(left - 4, y, right if power == 0 else left, y)  # a line at 1: as fast
        canvas.text(left - 7, y + 4, _decade(power), anchor="end")
    canvas.line(left, y_of(50), right, y_of(50), dashed=True)
    canvas.text(right, y_of(50) - 4, "50", anchor="end")
    canvas.line(left, top, left, bottom)
    for power in range(x_low, x_high + 1):
        x = x_of(10.0**power)
        canvas.line(x, bottom, x, bottom + 4)
        canvas.text(x, bottom + 17, _decade(power), anchor="middle")
    canvas.text(right, bottom + 34, "F (FLOP)", anchor="end", mono=True)
    for i, line in enumerate(runs.values()):
        canvas.polyline([(x_of(f), y_of(r)) for f, r in line], tone=tones[i % len(tones)])
    return canvas.picture(
        ("speedup_title", {"baseline": baseline}),
        ("speedup_desc", {"baseline": baseline, "runs": ", ".join(runs)}),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Time the step across the sweep and print the table."""
    args = cli.parse_args(argv, module=__spec__.name, description=__doc__, steps=False, dtype=False)
    print(table(sweep(args.device)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
