"""Train every network of the book from the same start and plot their losses together.

``python -m tensorbook.compare --device cuda --output losses.png`` runs the
NumPy net on the CPU and the four torch versions on the device, printing each
one's loss every 100 steps, and saves the five curves in one figure.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import torch

from tensorbook import autograd_net, cli, custom_relu, manual_net, nn_net, numpy_net
from tensorbook.plots import loss_figure
from tensorbook.problem import Problem, make_problem

__all__ = ["main", "train_every_network"]


def train_every_network(
    problem: Problem,
    device: torch.device,
    dtype: torch.dtype = torch.float32,
    *,
    steps: int,
    print_every: int = 100,
) -> dict[str, list[float]]:
    """Each network's losses, by name; NumPy on the CPU in float64, the rest on ``device``.

    Examples
    --------
    >>> from tensorbook.problem import Sizes
    >>> curves = train_every_network(make_problem(Sizes(8, 5, 4, 2)), device, steps=3,
    ...                              print_every=0)
    >>> list(curves)
    ['NumPy', 'torch, by hand', 'torch, autograd', 'torch, custom Function', 'nn + optim']
    """
    curves = {}
    if print_every:
        print("NumPy, float64, on the CPU")
    curves["NumPy"] = numpy_net.train_on(
        problem, torch.device("cpu"), steps=steps, print_every=print_every
    )
    programs = {
        "torch, by hand": manual_net,
        "torch, autograd": autograd_net,
        "torch, custom Function": custom_relu,
        "nn + optim": nn_net,
    }
    for label, program in programs.items():
        if print_every:
            print(f"{label}, {str(dtype).removeprefix('torch.')}, on {device}")
        curves[label] = program.train_on(
            problem, device, dtype, steps=steps, print_every=print_every
        )
    return curves


def main(argv: Sequence[str] | None = None) -> int:
    """Train every network of the book and save their loss curves in one figure."""

    def add_output(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--output", type=Path, default=Path("losses.png"), help="PNG to write")

    args = cli.parse_args(argv, module=__spec__.name, description=__doc__, extra=add_output)
    curves = train_every_network(
        make_problem(seed=args.seed), args.device, args.dtype, steps=args.steps
    )
    figure = loss_figure(curves, title=f"The book's networks, torch on {args.device}")
    figure.savefig(args.output)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
