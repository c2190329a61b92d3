"""Record a training loss every step and print it every few steps."""

from __future__ import annotations

from collections.abc import Callable

import torch

__all__ = ["LossLog"]


class LossLog:
    """Collect one loss per step; print the first, every ``print_every``-th and the last.

    Torch losses are kept as tensors and read back to the host once, in
    :attr:`losses`, so that recording them does not force the GPU to
    synchronise at every step; only the printed steps do.

    Parameters
    ----------
    steps : int
        How many steps the training loop will record.
    print_every : int
        Print every this many steps; ``0`` prints nothing.
    write : callable
        Where printed lines go; :func:`print` by default.

    Examples
    --------
    >>> log = LossLog(steps=250, print_every=100)
    >>> for step in range(250):
    ...     log.record(step, 1000.0 / (step + 1))
    step    0  loss 1.000000e+03
    step  100  loss 9.900990e+00
    step  200  loss 4.975124e+00
    step  249  loss 4.000000e+00
    >>> len(log.losses), log.losses[1]
    (250, 500.0)
    """

    def __init__(
        self, steps: int, print_every: int = 100, write: Callable[[str], object] = print
    ) -> None:
        if steps < 1:
            msg = f"steps must be at least 1, not {steps}"
            raise ValueError(msg)
        if print_every < 0:
            msg = f"print_every must be 0 (print nothing) or positive, not {print_every}"
            raise ValueError(msg)
        self.steps = steps
        self.print_every = print_every
        self._write = write
        self._values: list[float | torch.Tensor] = []

    def record(self, step: int, loss: float | torch.Tensor) -> None:
        """Keep the loss of ``step`` and print it if this step is due."""
        if step != len(self._values):
            msg = f"expected step {len(self._values)}, got {step}"
            raise ValueError(msg)
        if isinstance(loss, torch.Tensor):
            loss = loss.detach()
        self._values.append(loss)
        due = step % self.print_every == 0 or step == self.steps - 1 if self.print_every else False
        if due:
            value = loss.item() if isinstance(loss, torch.Tensor) else float(loss)
            self._write(f"step {step:>4}  loss {value:.6e}")

    @property
    def losses(self) -> list[float]:
        """Every recorded loss as a Python float, read back in one transfer."""
        tensors = [v for v in self._values if isinstance(v, torch.Tensor)]
        if not tensors:
            return [float(v) for v in self._values]
        if len(tensors) != len(self._values):
            msg = "a LossLog holds either floats or tensors, not both"
            raise TypeError(msg)
        return torch.stack(tensors).cpu().tolist()
