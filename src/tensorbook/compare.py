"""Train every network of the book from the same start and plot their losses together.

``python -m tensorbook.compare --device cuda --output losses.svg`` runs the
NumPy net on the CPU and the four torch versions on the device, printing each
one's loss every 100 steps, and saves the five curves in one picture (SVG).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import torch

from tensorbook import autograd_net, cli, custom_relu, manual_net, nn_net, numpy_net
from tensorbook.plots import loss_figure
from tensorbook.problem import Problem, as_tensors, make_problem

__all__ = ["gradients_of_every_version", "main", "train_every_network"]


def gradients_of_every_version(
    problem: Problem, device: torch.device
) -> dict[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """Loss and gradients for ``w1`` and ``w2`` from each torch version, by name, in float64.

    Each version starts from ``problem``'s weights, on ``device``; NumPy's
    gradients, the reference they are compared with, are
    ``numpy_net.gradients(problem.x, problem.y, problem.w1, problem.w2)``.

    Examples
    --------
    >>> from tensorbook.problem import Sizes
    >>> p = make_problem(Sizes(8, 5, 4, 2))
    >>> versions = gradients_of_every_version(p, device)
    >>> list(versions)
    ['torch by hand', 'autograd', 'custom Function', 'nn']
    >>> _, grad_w1, grad_w2 = numpy_net.gradients(p.x, p.y, p.w1, p.w2)
    >>> all(np.allclose(g1.cpu().numpy(), grad_w1) and np.allclose(g2.cpu().numpy(), grad_w2)
    ...     for _, g1, g2 in versions.values())
    True
    """
    x, y, w1, w2 = as_tensors(problem, device, torch.float64)
    return {
        "torch by hand": manual_net.gradients(x, y, w1, w2),
        "autograd": autograd_net.gradients(x, y, w1, w2),
        "custom Function": autograd_net.gradients(x, y, w1, w2, relu=custom_relu.my_relu),
        "nn": nn_net.gradients(x, y, w1, w2),
    }


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
    """Train every network of the book and save their loss curves in one picture."""

    def add_output(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--output", type=Path, default=Path("losses.svg"), help="SVG to write")

    args = cli.parse_args(argv, module=__spec__.name, description=__doc__, extra=add_output)
    curves = train_every_network(
        make_problem(seed=args.seed), args.device, args.dtype, steps=args.steps
    )
    args.output.write_text(loss_figure(curves).svg, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
