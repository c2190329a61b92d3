"""``python -m tensorbook`` lists the programs that the book runs."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

PROGRAMS = (
    "numpy_net",
    "manual_net",
    "precision",
    "autograd_net",
    "custom_relu",
    "nn_net",
    "module_net",
    "compare",
    "graph",
    "training",
    "classification",
    "speed",
)
"""Modules with a ``main``, in the order the book meets them."""


def main(argv: Sequence[str] | None = None) -> int:
    """Print each program with the first line of its docstring.

    Examples
    --------
    >>> main([])
    The programs of tensorbook; run one with python -m tensorbook.<name> --help
    <BLANKLINE>
      numpy_net     A two-layer ReLU network in plain NumPy, with gradients written by hand.
    ...
      graph         Read the autograd graph behind a tensor and draw it.
    0
    """
    if argv is None:
        argv = sys.argv[1:]
    if argv:
        print(f"python -m tensorbook takes no arguments, got {' '.join(argv)}", file=sys.stderr)
        return 2
    print("The programs of tensorbook; run one with python -m tensorbook.<name> --help\n")
    for name in PROGRAMS:
        module = importlib.import_module(f"tensorbook.{name}")
        summary = (module.__doc__ or "").strip().splitlines()[0]
        print(f"  {name:<13} {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
