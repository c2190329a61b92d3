"""The CPU and a GPU compute the same book: every net, the custom Function, the errors.

Tolerances, by dtype:

* float64: the devices add the same products in different orders (blocked matrix
  products, parallel reductions), which moves the last bits, about 1e-16 of a value,
  and 500 steps of gradient descent carry that forward without amplifying it much:
  losses agree to 1e-9 relative over the whole run.
* float32: the same reordering moves about 1e-7 of each value, and the losses fall
  by twelve orders of magnitude, so near the end they are differences of nearly
  equal numbers and the relative error grows; over the first 100 steps, while the
  loss is far from its floor, they agree to 1e-3 relative.
"""

from __future__ import annotations

import importlib

import pytest
import torch
from tests.support.book import CUDA_MISSING

from tensorbook.custom_relu import my_relu
from tensorbook.problem import Sizes, as_tensors, check_tensors, make_problem

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason=CUDA_MISSING)
NETS = ["manual_net", "autograd_net", "custom_relu", "nn_net"]
TOLERANCE = {torch.float64: (500, 1e-9), torch.float32: (100, 1e-3)}


@pytest.mark.cuda
@needs_cuda
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("net", NETS)
def test_a_net_trains_alike_on_the_cpu_and_the_gpu(net, dtype):
    module = importlib.import_module(f"tensorbook.{net}")
    steps, rtol = TOLERANCE[dtype]
    problem = make_problem()
    on_cpu = module.train_on(problem, torch.device("cpu"), dtype, steps=steps, print_every=0)
    on_gpu = module.train_on(problem, torch.device("cuda"), dtype, steps=steps, print_every=0)
    torch.testing.assert_close(torch.tensor(on_gpu), torch.tensor(on_cpu), rtol=rtol, atol=0)


def test_the_custom_function_is_exact_on_both_devices(device):
    """ReLU only copies or zeroes, so forward and backward agree bit for bit.

    Each run differentiates a leaf of its own: ``h.to("cpu")`` is ``h`` itself, so a
    ``requires_grad_()`` on it would make ``h`` the leaf, the second run's copy a
    non-leaf, and a CPU-CPU run would accumulate both runs' gradients into one.
    """
    h = torch.randn(64, 100, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    results = []
    for on in (torch.device("cpu"), device):
        leaf = h.detach().to(on).requires_grad_()
        out = my_relu(leaf)
        out.backward(torch.arange(out.numel(), dtype=out.dtype, device=on).view_as(out))
        results.append((out.detach().cpu(), leaf.grad.cpu()))
    assert not h.requires_grad
    assert torch.equal(results[0][0], results[1][0])
    assert torch.equal(results[0][1], results[1][1])


def test_tensors_on_two_devices_are_named_before_anything_runs():
    """The check every net runs first; ``meta`` stands in for a second device."""
    x, y, w1, w2 = as_tensors(make_problem(Sizes(4, 3, 2, 1)), torch.device("cpu"))
    with pytest.raises(ValueError, match="devices differ: x cpu, y cpu, w1 meta, w2 cpu"):
        check_tensors(x, y, w1.to("meta"), w2)


@pytest.mark.cuda
@needs_cuda
def test_torch_itself_refuses_to_mix_a_gpu_and_the_cpu():
    x, y, w1, w2 = as_tensors(make_problem(Sizes(4, 3, 2, 1)), torch.device("cpu"))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        x.cuda().mm(w1)
    with pytest.raises(ValueError, match="devices differ: x cuda:0, y cpu, w1 cpu, w2 cpu"):
        check_tensors(x.cuda(), y, w1, w2)
