"""Choose the device the book's programs run on, and say what ran them.

A request comes from an argument, else from the ``TENSORBOOK_DEVICE`` environment
variable, else from a default; :func:`choose_device` resolves it once and says which
of the three it came from. The accepted spellings are ``"auto"``, ``"cpu"``,
``"cuda"`` and ``"cuda:N"``. Only ``"auto"`` may fall back to the CPU, and it says so;
an explicit request for CUDA on a machine without it is an error naming its source.
"""

from __future__ import annotations

import logging
import os
import platform
import re
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from tensorbook.environment import DEVICE_VARIABLE
from tensorbook.wording import DEVICE_LINE, ON_CPU, ON_GPU, THREAD, THREADS, fill

if TYPE_CHECKING:
    import torch

__all__ = [
    "Choice",
    "DeviceUnavailableError",
    "choose_device",
    "describe_device",
    "main",
    "resolve_device",
]

_SPELLINGS = "'auto', 'cpu', 'cuda' or 'cuda:N'"
_CUDA_PATTERN = re.compile(r"cuda(?::(\d+))?")

logger = logging.getLogger(__name__)


class DeviceUnavailableError(RuntimeError):
    """A device was asked for by name but this machine does not have it."""


class Choice(NamedTuple):
    """A device, as torch spells it (``"cpu"``, ``"cuda:0"``), and where it was asked for."""

    device: str
    source: str


def _cuda_inventory() -> str:
    """Say, in a few words, which CUDA devices this process can see."""
    import torch

    if not torch.cuda.is_available():
        build = torch.version.cuda
        if build is None:
            return f"this torch {torch.__version__} is a CPU-only build"
        return f"torch {torch.__version__} was built for CUDA {build} but finds no usable GPU"
    count = torch.cuda.device_count()
    names = ", ".join(f"cuda:{i} ({torch.cuda.get_device_name(i)})" for i in range(count))
    return f"{count} CUDA device{'s' if count != 1 else ''}: {names}"


def choose_device(
    given: str | torch.device | None = None,
    environ: Mapping[str, str] = os.environ,
    *,
    given_by: str = "the argument",
    default: str = "auto",
) -> Choice:
    """Resolve a device request, and say where it came from.

    Parameters
    ----------
    given : str, torch.device or None
        ``"auto"``, ``"cpu"``, ``"cuda"`` or ``"cuda:N"`` (any case, spaces
        ignored), or a ``torch.device`` of type ``cpu`` or ``cuda``. ``None`` reads
        ``TENSORBOOK_DEVICE`` from ``environ``, and means ``default`` when that is
        unset or empty.
    environ : Mapping[str, str]
        The environment to read.
    given_by : str
        What ``given`` was given by, as the source to name: ``"--device"``,
        ``"-D tensorbook_device"``.
    default : str
        The request when neither is given: ``"auto"`` for the programs, ``"cpu"``
        for the book's build and tests.

    Returns
    -------
    Choice
        The device, ``cuda:N`` for an explicit or automatic GPU choice, else
        ``cpu`` (``"cuda"`` resolves to the current CUDA device, with its index);
        and its source: ``given_by``, ``"environment variable TENSORBOOK_DEVICE"``
        or ``"the default"``.

    Raises
    ------
    ValueError
        If the request is not one of the accepted spellings.
    DeviceUnavailableError
        If CUDA, or a CUDA index, was asked for and this machine lacks it.

    Notes
    -----
    ``"auto"`` picks the current CUDA device (``cuda:0`` unless the program
    chose another with :func:`torch.cuda.set_device`) when CUDA is available,
    and otherwise the CPU, logging a warning that says it fell back.

    Examples
    --------
    >>> choose_device(" CPU ", given_by="--device")
    Choice(device='cpu', source='--device')
    >>> choose_device(None, {"TENSORBOOK_DEVICE": "cpu"})
    Choice(device='cpu', source='environment variable TENSORBOOK_DEVICE')
    >>> choose_device(None, {}, default="cpu")
    Choice(device='cpu', source='the default')
    >>> choose_device(None, {"TENSORBOOK_DEVICE": "tpu"})
    Traceback (most recent call last):
    ...
    ValueError: unknown device 'tpu' (from environment variable TENSORBOOK_DEVICE): ...
    """
    if given is not None:
        source = given_by
    elif environ.get(DEVICE_VARIABLE, "").strip():
        given, source = environ[DEVICE_VARIABLE], f"environment variable {DEVICE_VARIABLE}"
    else:
        given, source = default, "the default"
    if not isinstance(given, str):
        import torch  # free: whoever made a torch.device has imported it

        if not isinstance(given, torch.device):
            msg = f"device must be a str, torch.device or None, not {type(given).__name__}"
            raise TypeError(msg)
        if given.type not in ("cpu", "cuda"):
            msg = f"unsupported device type {given.type!r} (from {source}): expected {_SPELLINGS}"
            raise ValueError(msg)
        given = str(given)
    text = given.strip().lower()
    if text == "cpu":
        return Choice("cpu", source)
    # only now: torch takes seconds to import, which the book's build on the CPU never pays
    import torch

    if text == "auto":
        if torch.cuda.is_available():
            return Choice(f"cuda:{torch.cuda.current_device()}", source)
        logger.warning(
            "device 'auto' (from %s): no CUDA device (%s), so running on the CPU",
            source,
            _cuda_inventory(),
        )
        return Choice("cpu", source)

    match = _CUDA_PATTERN.fullmatch(text)
    if match is None:
        msg = f"unknown device {given!r} (from {source}): expected {_SPELLINGS}"
        raise ValueError(msg)
    if not torch.cuda.is_available():
        msg = (
            f"CUDA was asked for ({given!r}, from {source}) but {_cuda_inventory()}; "
            f"ask for 'cpu' or 'auto' instead"
        )
        raise DeviceUnavailableError(msg)
    index = torch.cuda.current_device() if match.group(1) is None else int(match.group(1))
    if index >= torch.cuda.device_count():
        inventory = _cuda_inventory()
        msg = f"CUDA was asked for ({given!r}, from {source}) but this machine has {inventory}"
        raise DeviceUnavailableError(msg)
    return Choice(f"cuda:{index}", source)


def resolve_device(spec: str | torch.device | None = None) -> torch.device:
    """The device :func:`choose_device` chooses for ``spec``, as a :class:`torch.device`.

    Examples
    --------
    >>> resolve_device("cpu")
    device(type='cpu')
    >>> resolve_device("tpu")
    Traceback (most recent call last):
    ...
    ValueError: unknown device 'tpu' (from the argument): expected 'auto', 'cpu', 'cuda' or 'cuda:N'
    """
    import torch

    return torch.device(choose_device(spec).device)


def describe_device(device: torch.device) -> str:
    """Say what runs code on ``device``: its name, and the torch, threads, Python, NumPy.

    This is the device line that every page of the book prints near its top; its
    words are :mod:`tensorbook.wording`'s, which a translated edition translates.

    Parameters
    ----------
    device : torch.device
        A device returned by :func:`resolve_device`.

    Returns
    -------
    str
        One line, for example
        ``Executed on CPU (x86_64) · torch 2.13.0+cpu · 2 CPU threads · Python 3.11.7 ·
        NumPy 2.3.5``; on a GPU, its name and CUDA version.

    Examples
    --------
    >>> line = describe_device(torch.device("cpu"))
    >>> line.startswith("Executed on CPU (")
    True
    >>> f"torch {torch.__version__}" in line, f"Python {platform.python_version()}" in line
    (True, True)
    """
    import numpy as np
    import torch

    count = torch.get_num_threads()
    threads = fill(THREADS if count != 1 else THREAD, count=count)
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        name = torch.cuda.get_device_name(index)
        where = fill(ON_GPU, name=name, index=index, cuda=torch.version.cuda)
    else:
        where = fill(ON_CPU, machine=platform.machine() or "unknown architecture")
    return fill(
        DEVICE_LINE,
        where=where,
        torch=torch.__version__,
        threads=threads,
        python=platform.python_version(),
        numpy=np.__version__,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tensorbook.device [SPEC]``: say what SPEC resolves to, or why it cannot.

    The build sessions run this first, so that an unavailable device stops them
    before any work, with one line saying why.

    Examples
    --------
    >>> main(["cpu"])
    cpu: Executed on CPU ...
    0
    >>> main(["tpu"])
    2
    """
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) > 1:
        print("usage: python -m tensorbook.device [auto|cpu|cuda|cuda:N]", file=sys.stderr)
        return 2
    try:
        device = resolve_device(args[0] if args else None)
    except (ValueError, DeviceUnavailableError) as error:
        print(f"python -m tensorbook.device: {error}", file=sys.stderr)
        return 2
    print(f"{device}: {describe_device(device)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
