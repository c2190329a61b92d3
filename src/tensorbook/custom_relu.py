"""ReLU as a custom torch.autograd.Function, with its gradient checked.

``python -m tensorbook.custom_relu`` runs :func:`torch.autograd.gradcheck` on
it, then trains the two-layer network with it in place of ``clamp``.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Sequence

import torch
from torch.autograd.function import BackwardCFunction, FunctionCtx

from tensorbook import autograd_net, cli
from tensorbook.versions import TrainOn

__all__ = ["MyReLU", "check_gradient", "main", "my_relu", "train_on"]


class MyReLU(torch.autograd.Function):
    """ReLU with a hand-written backward pass.

    ``forward`` computes only the result; ``setup_context`` keeps the input
    with ``ctx.save_for_backward``; ``backward`` reads it back to know where the
    gradient must be blocked. Keeping ``forward`` free of ``ctx`` is what lets the
    ``torch.func`` transforms that differentiate (``jacrev``, ``vjp``) use the
    function; ``vmap`` needs more (``generate_vmap_rule = True``, or a ``vmap``
    static method), which this class leaves out.

    Examples
    --------
    >>> x = torch.tensor([-1.0, 2.0], device=device, requires_grad=True)
    >>> y = MyReLU.apply(x)
    >>> y.sum().backward()
    >>> y.tolist(), x.grad.tolist(), y.grad_fn.name()
    ([0.0, 2.0], [0.0, 1.0], 'MyReLUBackward')
    >>> torch.func.jacrev(MyReLU.apply)(x.detach()).tolist()
    [[0.0, 0.0], [0.0, 1.0]]
    >>> torch.func.vmap(MyReLU.apply)(x.detach().unsqueeze(0))
    Traceback (most recent call last):
    ...
    RuntimeError: You tried to vmap over MyReLU, but it does not have vmap support. ...
    """

    @staticmethod
    def forward(h: torch.Tensor) -> torch.Tensor:
        """ReLU of ``h``."""
        return h.clamp(min=0)

    @staticmethod
    def setup_context(
        ctx: FunctionCtx,
        inputs: tuple[torch.Tensor],
        output: torch.Tensor,  # noqa: ARG004 - torch passes the output; ReLU's backward needs only h
    ) -> None:
        """Keep the input ``h`` for the backward pass."""
        (h,) = inputs
        ctx.save_for_backward(h)

    @staticmethod
    def backward(ctx: BackwardCFunction, grad_output: torch.Tensor) -> torch.Tensor:
        """The gradient with respect to ``h``: ``grad_output`` where ``h`` was positive."""
        (h,) = ctx.saved_tensors
        grad_h = grad_output.clone()
        grad_h[h < 0] = 0
        return grad_h


def my_relu(h: torch.Tensor) -> torch.Tensor:
    """Apply :class:`MyReLU`; a plain function, so it can stand where ``clamp`` stood.

    Examples
    --------
    >>> my_relu(torch.tensor([-3.0, 0.5], device=device)).tolist()
    [0.0, 0.5]
    """
    # torch leaves Function.apply unannotated: the call is untyped and returns Any
    result: torch.Tensor = MyReLU.apply(h)  # type: ignore[no-untyped-call]
    return result


def check_gradient(device: torch.device, seed: int = 0, size: int = 20) -> bool:
    """Compare :class:`MyReLU`'s backward with finite differences, in float64.

    The inputs are pushed at least 0.1 away from zero, where ReLU has a kink
    and a finite difference straddling it would be wrong rather than the
    backward pass.

    Returns
    -------
    bool
        True when :func:`torch.autograd.gradcheck` passes; it raises otherwise.

    Examples
    --------
    >>> check_gradient(device)
    True
    """
    generator = torch.Generator().manual_seed(seed)
    h = torch.randn(size, size, generator=generator, dtype=torch.float64)
    h = (h + 0.1 * h.sign()).to(device).requires_grad_()
    return torch.autograd.gradcheck(MyReLU.apply, (h,), eps=1e-6, atol=1e-6)


train_on = TrainOn(functools.partial(autograd_net.train, relu=my_relu), "leaves")
"""Train autograd's version with :func:`my_relu` on copies of a problem; what ``python -m
tensorbook.custom_relu`` runs."""


def main(argv: Sequence[str] | None = None) -> int:
    """Check the gradient, then train the network with :func:`my_relu`."""

    def report_gradcheck(args: argparse.Namespace) -> None:
        verdict = "passed" if check_gradient(args.device) else "failed"
        print(f"gradcheck of MyReLU on {args.device}: {verdict}")

    return cli.run_training(
        argv, train_on, module=__spec__.name, description=__doc__, before=report_gradcheck
    )


if __name__ == "__main__":
    sys.exit(main())
