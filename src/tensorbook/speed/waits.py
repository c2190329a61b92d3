"""What makes the CPU wait for a GPU: the operators a profile lists, and the sync debug mode.

Two ways of seeing a wait. :func:`mask_operators` lists the operators torch's profiler
saw for each way of applying a boolean mask, with the copies and waits of the CUDA
runtime that they made; :func:`waits_for_gpu` runs calls under
``torch.cuda.set_sync_debug_mode("error")``, which raises where torch synchronises.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence

import torch

from tensorbook import trace

__all__ = [
    "MASK_SPELLINGS",
    "common_calls",
    "mask_events",
    "mask_operators",
    "operator_lines",
    "sync_errors",
    "waits_for_gpu",
]

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
