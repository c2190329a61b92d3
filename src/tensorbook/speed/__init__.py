"""Measure one training step of the two-layer network: NumPy, torch on the CPU, torch on a GPU.

The speed chapter's harness, a module an idea:

* :mod:`~tensorbook.speed.step`, the timed step, its FLOP count and learning rate;
* :mod:`~tensorbook.speed.timing`, the timer: warm-up, repeats, CUDA events, the sweep;
* :mod:`~tensorbook.speed.peak`, a GPU's float32 peak, which the rates are set against;
* :mod:`~tensorbook.speed.results`, the speed-up, the table and the figure;
* :mod:`~tensorbook.speed.waits`, what makes the CPU wait for a GPU, which the CUDA
  chapter measures too.

Their public names are this package's: ``speed.sweep(device)``, ``speed.table(timings)``.
``python -m tensorbook.speed`` prints the table for the CPU, and for the GPU when
``--device`` names one.
"""

from tensorbook.speed.peak import fp32_peak
from tensorbook.speed.results import ResultsTable, speedup, speedup_figure, table
from tensorbook.speed.step import numpy_step, step_flops, timing_lr, torch_step
from tensorbook.speed.timing import (
    CPU_SWEEP,
    GPU_SWEEP,
    Timing,
    cuda_graph_step,
    item_seconds,
    sweep,
    time_numpy,
    time_torch,
    torch_label,
)
from tensorbook.speed.waits import MASK_SPELLINGS, common_calls, mask_operators, waits_for_gpu

__all__ = [
    "CPU_SWEEP",
    "GPU_SWEEP",
    "MASK_SPELLINGS",
    "ResultsTable",
    "Timing",
    "common_calls",
    "cuda_graph_step",
    "fp32_peak",
    "item_seconds",
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
