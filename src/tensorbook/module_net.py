"""The network as an nn.Module subclass, and a dynamic one with a loop and a shared layer.

``TwoLayerNet`` is the ``nn`` version's network written as a class with its own
``forward``, the form most models take. ``DynamicNet`` decides in its ``forward``,
with ordinary Python, how many times to apply one hidden layer: autograd records
whatever ran, so the graph is built anew on every pass, and the shared layer's
gradient adds up its uses. ``python -m tensorbook.module_net`` trains ``TwoLayerNet``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import torch
from torch import nn

from tensorbook import cli
from tensorbook.losslog import LossLog
from tensorbook.problem import LEARNING_RATE, STEPS, check_tensors
from tensorbook.versions import TrainOn

__all__ = ["DynamicNet", "TwoLayerNet", "main", "train", "train_on"]


class TwoLayerNet(nn.Module):
    """``relu(x @ w1) @ w2`` as a module: its layers are attributes, its pass is ``forward``.

    Examples
    --------
    >>> model = TwoLayerNet(torch.eye(2, device=device), torch.tensor([[2.0], [3.0]], device=device))
    >>> model(torch.tensor([[1.0, -2.0]], device=device)).tolist()
    [[2.0]]
    >>> [name for name, _ in model.named_parameters()]
    ['hidden.weight', 'output.weight']
    """

    def __init__(self, w1: torch.Tensor, w2: torch.Tensor) -> None:
        super().__init__()
        check_tensors(w1.new_zeros(1, w1.shape[0]), w2.new_zeros(1, w2.shape[1]), w1, w2)
        (d_in, h), d_out = w1.shape, w2.shape[1]
        self.hidden = nn.Linear(d_in, h, bias=False, device=w1.device, dtype=w1.dtype)
        self.output = nn.Linear(h, d_out, bias=False, device=w1.device, dtype=w1.dtype)
        with torch.no_grad():  # start from the book's weights, as every version does
            self.hidden.weight.copy_(w1.t())
            self.output.weight.copy_(w2.t())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The prediction for each row of ``x``."""
        prediction: torch.Tensor = self.output(torch.relu(self.hidden(x)))  # module calls: Any
        return prediction


class DynamicNet(nn.Module):
    """A network whose depth is chosen anew, at random, on every forward pass.

    After the input layer, ``middle`` is applied between 0 and ``max_repeats``
    times, the same layer each time: its weights are shared by every use, and
    its gradient is the sum of what each use contributes. A pass that does not
    use it gives it no gradient at all.

    Examples
    --------
    >>> net = DynamicNet(5, 4, 2, seed=0).to(device)
    >>> x = torch.randn(3, 5, device=device)
    >>> net(x, repeats=0).sum().backward()
    >>> net.middle.weight.grad is None  # not used, so not in this pass's graph
    True
    >>> net(x, repeats=2).shape
    torch.Size([3, 2])
    """

    def __init__(
        self, d_in: int, h: int, d_out: int, *, max_repeats: int = 3, seed: int = 0
    ) -> None:
        super().__init__()
        if max_repeats < 0:
            msg = f"max_repeats must be 0 or more, not {max_repeats}"
            raise ValueError(msg)
        self.input = nn.Linear(d_in, h)
        self.middle = nn.Linear(h, h)
        self.output = nn.Linear(h, d_out)
        self.max_repeats = max_repeats
        self.generator = torch.Generator().manual_seed(seed)  # the depths, reproducibly

    def forward(self, x: torch.Tensor, repeats: int | None = None) -> torch.Tensor:
        """The prediction, through the shared middle layer ``repeats`` times (random by default)."""
        if repeats is None:
            repeats = int(torch.randint(0, self.max_repeats + 1, (), generator=self.generator))
        h = self.input(x).clamp(min=0)
        for _ in range(repeats):  # ordinary Python: autograd records the passes that ran
            h = self.middle(h).clamp(min=0)
        prediction: torch.Tensor = self.output(h)  # module calls: Any
        return prediction


def train(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    lr: float = LEARNING_RATE,
    momentum: float = 0.0,
    steps: int = STEPS,
    print_every: int = 100,
) -> list[float]:
    """Train any module with ``optim.SGD`` on the summed squared error; return the losses.

    Examples
    --------
    >>> net = DynamicNet(5, 8, 2, seed=0).to(device)
    >>> x, y = torch.randn(16, 5, device=device), torch.randn(16, 2, device=device)
    >>> losses = train(net, x, y, lr=1e-3, momentum=0.9, steps=200, print_every=0)
    >>> len(losses), losses[-1] < losses[0] / 2
    (200, True)
    """
    loss_fn = nn.MSELoss(reduction="sum")
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    log = LossLog(steps, print_every)
    for step in range(steps):
        loss = loss_fn(model(x), y)
        log.record(step, loss)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return log.losses


train_on = TrainOn(train, TwoLayerNet)
"""Train :class:`TwoLayerNet` on copies of a problem; what ``python -m tensorbook.module_net``
runs."""


def main(argv: Sequence[str] | None = None) -> int:
    """Train :class:`TwoLayerNet` on the book's problem and print the loss every 100 steps."""
    return cli.run_training(argv, train_on, module=__spec__.name, description=__doc__)


if __name__ == "__main__":
    sys.exit(main())
