"""The command line shared by every ``python -m tensorbook.<program>``."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Protocol

import torch

from tensorbook.device import DeviceUnavailableError, choose_device, describe_device
from tensorbook.problem import STEPS, Problem, make_problem
from tensorbook.seeding import DEFAULT_SEED

__all__ = ["TrainOn", "parse_args", "positive_int", "run_training"]


class TrainOn(Protocol):
    """A network's ``train_on``: train on copies of a problem's arrays, return the losses."""

    def __call__(  # noqa: D102 - the protocol's docstring says it
        self,
        problem: Problem,
        device: torch.device,
        dtype: torch.dtype = ...,
        *,
        steps: int = ...,
        print_every: int = ...,
    ) -> list[float]: ...


def positive_int(text: str) -> int:
    """An option's value as an integer of at least 1, or argparse's error saying what it got.

    Examples
    --------
    >>> positive_int("3")
    3
    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a positive integer, got 0
    """
    try:
        value = int(text)
    except ValueError:
        msg = f"expected a positive integer, got {text!r}"
        raise argparse.ArgumentTypeError(msg) from None
    if value < 1:
        msg = f"expected a positive integer, got {value}"
        raise argparse.ArgumentTypeError(msg)
    return value


def parse_args(
    argv: Sequence[str] | None,
    *,
    module: str,
    description: str | None,
    cpu_only: bool = False,
    steps: bool = True,
    dtype: bool = True,
    extra: Callable[[argparse.ArgumentParser], object] | None = None,
) -> argparse.Namespace:
    """Parse ``--device``, ``--steps``, ``--seed`` and ``--dtype``; print the device line.

    ``steps=False`` and ``dtype=False`` leave out the options a program has no
    use for; ``extra`` adds a program's own options to the parser.

    ``args.device`` comes back as a resolved :class:`torch.device` and
    ``args.dtype`` as a :class:`torch.dtype`. A bad device exits with status 2
    and a one-line message, as argparse does for any other bad argument.

    Examples
    --------
    >>> args = parse_args(["--device", "cpu", "--steps", "3"], module="demo", description=None)
    Executed on CPU ...
    >>> args.device, args.steps, args.seed, args.dtype
    (device(type='cpu'), 3, 0, torch.float32)
    """
    parser = argparse.ArgumentParser(
        prog=f"python -m {module}",
        description=(description or "").strip().splitlines()[0] if description else None,
    )
    parser.add_argument(
        "--device",
        default=None,
        help="'auto', 'cpu', 'cuda' or 'cuda:N' (default: $TENSORBOOK_DEVICE, else 'auto')",
    )
    if steps:
        parser.add_argument(
            "--steps", type=positive_int, default=STEPS, help=f"training steps (default: {STEPS})"
        )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="random seed (default: 0)")
    if dtype:
        parser.add_argument(
            "--dtype",
            choices=("float32", "float64"),
            default="float32",
            help="floating-point type of the torch tensors (default: float32)",
        )
    if extra is not None:
        extra(parser)
    args = parser.parse_args(argv)
    try:
        args.device = torch.device(choose_device(args.device, given_by="--device").device)
    except (ValueError, DeviceUnavailableError) as error:
        parser.error(str(error))
    if cpu_only and args.device.type != "cpu":
        parser.error(f"{module} runs NumPy, which has no GPU: use --device cpu, not {args.device}")
    if args.seed < 0:
        parser.error(f"--seed must be non-negative, not {args.seed}")
    if dtype:
        args.dtype = getattr(torch, args.dtype)
    print(describe_device(args.device))
    return args


def run_training(
    argv: Sequence[str] | None,
    train_on: TrainOn,
    *,
    module: str,
    description: str | None,
    cpu_only: bool = False,
    dtype: bool = True,
    before: Callable[[argparse.Namespace], object] | None = None,
) -> int:
    """The ``main`` of every training program: parse the options, train, print the losses.

    Trains ``train_on`` on the book's problem made from ``--seed``, for
    ``--steps`` steps, printing the loss every 100 steps. ``dtype=False``
    leaves ``--dtype`` out and ``train_on`` with its own default; ``before``
    runs after the options are parsed and before training (a check the
    program prints first). Returns the exit status, 0.

    Examples
    --------
    >>> from tensorbook import manual_net
    >>> run_training(["--device", "cpu", "--steps", "2"], manual_net.train_on,
    ...              module="demo", description=None)
    Executed on CPU ...
    step   0  loss ...
    step   1  loss ...
    0
    """
    args = parse_args(argv, module=module, description=description, cpu_only=cpu_only, dtype=dtype)
    if before is not None:
        before(args)
    problem = make_problem(seed=args.seed)
    if dtype:
        train_on(problem, args.device, args.dtype, steps=args.steps)
    else:
        train_on(problem, args.device, steps=args.steps)
    return 0
