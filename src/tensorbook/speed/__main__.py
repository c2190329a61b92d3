"""``python -m tensorbook.speed``: time the step across the sweep and print the table."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import tensorbook.speed
from tensorbook import cli
from tensorbook.speed.results import table
from tensorbook.speed.timing import sweep

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Time the step across the sweep and print the table."""
    args = cli.parse_args(
        argv,
        module=tensorbook.speed.__name__,
        description=tensorbook.speed.__doc__,
        steps=False,
        dtype=False,
    )
    print(table(sweep(args.device)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
