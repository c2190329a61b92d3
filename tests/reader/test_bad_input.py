"""Wrong shapes reach the networks' public functions as a ValueError naming the shapes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tensorbook import autograd_net, manual_net, nn_net, numpy_net
from tensorbook.losslog import LossLog
from tensorbook.plots import loss_figure
from tensorbook.problem import Sizes, as_tensors, make_problem
from tensorbook.seeding import seed_everything

PROBLEM = make_problem(Sizes(n=4, d_in=3, h=5, d_out=2))
NAMED_SHAPES = r"x \(4, 3\), y \(4, 2\), w1 \(5, 3\), w2 \(5, 2\)"


def test_numpy_net_names_the_shapes():
    p = PROBLEM
    with pytest.raises(ValueError, match=NAMED_SHAPES):
        numpy_net.gradients(p.x, p.y, p.w1.T, p.w2)
    with pytest.raises(ValueError, match=NAMED_SHAPES):
        numpy_net.train(p.x, p.y, p.w1.T.copy(), p.w2.copy(), steps=1, print_every=0)


@pytest.mark.parametrize("net", [manual_net, autograd_net, nn_net], ids=lambda m: m.__name__)
def test_torch_nets_name_the_shapes(net, device):
    x, y, w1, w2 = as_tensors(PROBLEM, device)
    with pytest.raises(ValueError, match=NAMED_SHAPES):
        net.gradients(x, y, w1.t(), w2)


def test_wrong_number_of_dimensions_is_named():
    p = PROBLEM
    with pytest.raises(ValueError, match=r"x \(12,\).*x must be 2-D"):
        numpy_net.gradients(p.x.ravel(), p.y, p.w1, p.w2)


def test_targets_that_do_not_fit_are_named():
    p = PROBLEM
    with pytest.raises(ValueError, match=r"y's rows \(3\) must equal x's rows \(4\)"):
        numpy_net.gradients(p.x, p.y[:3], p.w1, p.w2)


def test_mixed_dtypes_are_named(device):
    x, y, w1, w2 = as_tensors(PROBLEM, device)
    with pytest.raises(ValueError, match=r"dtypes differ: .*w2 torch.float64"):
        manual_net.gradients(x, y, w1, w2.double())


def test_nn_train_names_shapes_of_data_that_does_not_fit_the_model(device):
    x, y, w1, w2 = as_tensors(PROBLEM, device)
    model = nn_net.build_model(w1, w2)
    with pytest.raises(ValueError, match=r"x \(4, 2\)"):
        nn_net.train(model, x[:, :2], y, steps=1, print_every=0)


def test_numpy_net_refuses_a_gpu():
    with pytest.raises(ValueError, match="NumPy runs on the CPU only"):
        numpy_net.train_on(PROBLEM, torch.device("cuda"))


def test_integer_tensors_are_refused():
    with pytest.raises(ValueError, match="floating-point"):
        as_tensors(PROBLEM, torch.device("cpu"), torch.int64)


@pytest.mark.parametrize("value", [0, -1, 2.5, True])
def test_sizes_must_be_positive_ints(value):
    with pytest.raises(ValueError, match="must be a positive int"):
        Sizes(n=value, d_in=1, h=1, d_out=1)


def test_seed_must_be_a_non_negative_int():
    with pytest.raises(ValueError, match="non-negative int"):
        seed_everything(-1)


def test_loss_log_refuses_skipped_steps():
    log = LossLog(steps=3, print_every=0)
    log.record(0, 1.0)
    with pytest.raises(ValueError, match="expected step 1, got 2"):
        log.record(2, 1.0)


def test_loss_figure_refuses_an_empty_mapping():
    with pytest.raises(ValueError, match="no curve"):
        loss_figure({})


def test_loss_figure_refuses_nan():
    with pytest.raises(ValueError, match="not positive at step 0"):
        loss_figure({"nan": [float(np.nan)]})
