"""The command line shared by every ``python -m tensorbook.<program>``."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

import torch

from tensorbook.device import DeviceUnavailableError, choose_device, describe_device
from tensorbook.problem import STEPS, make_problem
from tensorbook.seeding import DEFAULT_SEED
from tensorbook.versions import TrainOn

__all__ = ["parse_args", "positive_int", "run_training"]


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
    before: Callable[[argparse.Namespace], object] | None = None,
) -> int:
    """The ``main`` of every training program: parse the options, train, print the losses.

    Trains ``train_on`` on the book's problem made from ``--seed``, for
    ``--steps`` steps, printing the loss every 100 steps. A version on NumPy
    arrays runs on the CPU only, in its own dtype, so its program has no
    ``--dtype``; ``before`` runs after the options are parsed and before
    training (a check the program prints first). Returns the exit status, 0.

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
    numpy = train_on.start == "arrays"  # on the CPU only, in train_on's own dtype
    args = parse_args(argv, module=module, description=description, cpu_only=numpy, dtype=not numpy)
    if before is not None:
        before(args)
    dtype = None if numpy else args.dtype
    train_on(make_problem(seed=args.seed), args.device, dtype, steps=args.steps)
    return 0
