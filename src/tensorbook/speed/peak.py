"""A GPU's float32 peak, from its name, so that a timing can say how much of it was reached."""

from __future__ import annotations

import re

import torch

__all__ = ["fp32_peak", "tf32_allowed"]


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
