"""What one build executes with, resolved once: the device, torch, the kernels' settings.

The driver resolves it (:func:`resolve_spec`, the one place the device is resolved) and
gives the execute stage and each edition's Sphinx the one value, as JSON. The kernels
receive it as their environment (:meth:`BuildSpec.kernel_environment`), the one place
the build makes their variables.

Examples
--------
>>> spec = BuildSpec(device="cpu", kind="cpu", torch="2.13.0", src="/book/src")
>>> BuildSpec.from_json(spec.to_json()) == spec
True
>>> spec.context
'device cpu, torch 2.13.0, 1 threads'
>>> BuildSpec.from_json('{"device": "cpu"}')
Traceback (most recent call last):
...
ValueError: -D tensorbook_spec is not a build spec (missing kind, src, torch); let python -m tensorbook_build write it
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import json
import os
from dataclasses import dataclass
from pathlib import Path

from tensorbook.environment import DEVICE_VARIABLE
from tensorbook.receipt_kernel import THREAD_VARIABLES  # what the kernels' libraries read
from tensorbook_build.settings import KERNEL_THREADS, LAYOUT


@dataclass(frozen=True)
class BuildSpec:
    """Everything a build's pages execute with; equal specs execute pages alike."""

    device: str  # resolved: cpu or cuda:N, never auto
    kind: str  # the folder name of this device's recordings (receipt.device_kind)
    torch: str  # the installed torch's version
    src: str  # the folder of the tensorbook package the kernels import
    threads: int = KERNEL_THREADS
    warm_kernels: bool = True  # forked from a warm fork server; False starts each afresh
    work: str = ""  # the build's working folder: its cache, its executed notebooks

    def to_json(self) -> str:
        """The spec as one line of JSON, the value of ``-D tensorbook_spec``."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> BuildSpec:
        """Read a spec that :meth:`to_json` wrote; ``ValueError`` naming what is wrong."""
        fix = "let python -m tensorbook_build write it"
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            msg = f"-D tensorbook_spec is not JSON ({error}); {fix}"
            raise ValueError(msg) from None
        fields = {f.name: f for f in dataclasses.fields(cls)}
        required = {n for n, f in fields.items() if f.default is dataclasses.MISSING}
        missing = sorted(required - set(data)) if isinstance(data, dict) else sorted(required)
        unknown = sorted(set(data) - set(fields)) if isinstance(data, dict) else []
        if missing or unknown:
            problem = f"missing {', '.join(missing)}" if missing else f"unknown {unknown}"
            msg = f"-D tensorbook_spec is not a build spec ({problem}); {fix}"
            raise ValueError(msg)
        spec = cls(**data)
        for name, field in fields.items():
            wanted = {"str": str, "int": int, "bool": bool}[str(field.type)]
            if type(value := getattr(spec, name)) is not wanted:
                msg = f"-D tensorbook_spec: {name} must be a {field.type}, not {value!r}"
                raise ValueError(msg)
        return spec

    @property
    def context(self) -> str:
        """What the pages' cache keys say the outputs depend on besides their code."""
        return f"device {self.device}, torch {self.torch}, {self.threads} threads"

    def kernel_environment(self, environ: dict[str, str] | None = None) -> dict[str, str]:
        """The kernels' variables: the device, ``src`` first on the path, the threads.

        Examples
        --------
        >>> spec = BuildSpec(device="cpu", kind="cpu", torch="2.13.0", src="/book/src")
        >>> env = spec.kernel_environment({"PYTHONPATH": "/other"})
        >>> env["TENSORBOOK_DEVICE"], env["PYTHONPATH"].split(os.pathsep), env["OMP_NUM_THREADS"]
        ('cpu', ['/book/src', '/other'], '1')
        """
        given = (os.environ if environ is None else environ).get("PYTHONPATH", "")
        paths = [self.src, *(p for p in given.split(os.pathsep) if p and p != self.src)]
        return {
            DEVICE_VARIABLE: self.device,
            "PYTHONPATH": os.pathsep.join(paths),
            **dict.fromkeys(THREAD_VARIABLES, str(self.threads)),
        }


def resolve_spec(
    request: str | None,
    *,
    given_by: str,
    src: Path = LAYOUT.src,
    work: Path | None = None,
    warm_kernels: bool = True,
) -> BuildSpec:
    """Resolve a device request (``None``: ``$TENSORBOOK_DEVICE``, else ``cpu``) into a spec.

    Raises what :func:`tensorbook.device.choose_device` raises, naming ``given_by``.
    """
    from tensorbook.device import choose_device
    from tensorbook.receipt import device_kind

    device = choose_device(request, given_by=given_by, default="cpu").device
    kind = "cpu"
    if device != "cpu":
        import torch

        kind = device_kind("cuda", torch.cuda.get_device_name(torch.device(device)))
    return BuildSpec(
        device=device,
        kind=kind,
        torch=importlib.metadata.version("torch"),
        src=str(src.resolve()),
        warm_kernels=warm_kernels,
        work=str(work.resolve()) if work is not None else "",
    )


@functools.cache
def read_spec(text: str) -> BuildSpec:
    """The spec in a configuration's ``tensorbook_spec`` (already checked), read once."""
    return BuildSpec.from_json(text)
