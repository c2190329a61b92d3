"""The speed harness: what it times is the book's step, counted and timed by its rules."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from tests.support.book import CUDA_MISSING, ROOT
from torch.utils.flop_counter import FlopCounterMode

from tensorbook import manual_net, speed
from tensorbook.problem import TUTORIAL_SIZES, Sizes, as_tensors, make_problem
from tensorbook.speed import Timing, step_flops, table, torch_step
from tensorbook.speed.peak import tf32_allowed

SMALL = Sizes(n=16, d_in=30, h=20, d_out=5)


@pytest.mark.parametrize("sizes", [SMALL, TUTORIAL_SIZES, Sizes(7, 3, 11, 2)], ids=str)
def test_the_flop_count_is_the_matrix_products_torch_counts(sizes):
    x, y, w1, w2 = as_tensors(make_problem(sizes), torch.device("cpu"))
    with FlopCounterMode(display=False) as counter:
        torch_step(x, y, w1, w2, lr=1e-6)
    assert counter.get_total_flops() == step_flops(sizes)


def test_the_timed_step_is_the_books_step(device):
    """Same loss and same update as manual_net's, in float64, on every device."""
    x, y, w1, w2 = as_tensors(make_problem(SMALL), device, torch.float64)
    loss, grad_w1, grad_w2 = manual_net.gradients(x, y, w1, w2)
    expected_w1, expected_w2 = w1 - 1e-3 * grad_w1, w2 - 1e-3 * grad_w2
    timed_loss = torch_step(x, y, w1, w2, lr=1e-3)
    torch.testing.assert_close(timed_loss, loss, rtol=1e-12, atol=0)
    torch.testing.assert_close(w1, expected_w1, rtol=1e-12, atol=1e-15)
    torch.testing.assert_close(w2, expected_w2, rtol=1e-12, atol=1e-15)


def test_the_numpy_step_is_the_torch_step():
    p = make_problem(SMALL)
    w1, w2 = p.w1.copy(), p.w2.copy()
    loss = speed.numpy_step(p.x, p.y, w1, w2, lr=1e-3)
    x, y, tw1, tw2 = as_tensors(p, torch.device("cpu"), torch.float64)
    assert loss == pytest.approx(torch_step(x, y, tw1, tw2, lr=1e-3).item(), rel=1e-12)
    np.testing.assert_allclose(w1, tw1.numpy(), rtol=1e-12)


def test_the_profile_shows_which_mask_spellings_count_the_mask():
    """Read and tensor-valued write run nonzero; a scalar write becomes masked_fill_."""
    ops = speed.mask_operators(torch.device("cpu"))
    assert list(ops) == list(speed.MASK_SPELLINGS)
    counts = {spelling: any("nonzero" in op for op in names) for spelling, names in ops.items()}
    assert counts == {
        "g[m]": True,
        "g[m] = 0": False,
        "g[m] = v[m]": True,
        "g.masked_fill_(m, 0)": False,
    }
    scalar_write = ops["g[m] = 0"]
    assert scalar_write[0] == "aten::index_put_"
    assert scalar_write[-1] == "    aten::masked_fill_"  # called by index_put_'s implementation


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason=CUDA_MISSING)
def test_what_waits_for_the_gpu_is_what_the_profile_shows():
    """The spellings that run nonzero wait; the book's step and the timed step do not."""
    cuda = torch.device("cuda")
    ops = speed.mask_operators(cuda)
    counts = {spelling: any("nonzero" in op for op in names) for spelling, names in ops.items()}
    assert speed.waits_for_gpu(cuda) == counts
    assert counts["g[m]"]
    assert not counts["g[m] = 0"]
    x, y, w1, w2 = as_tensors(make_problem(SMALL), cuda)
    torch_step(x, y, w1, w2, lr=1e-6)  # first calls: lazy initialisation may sync
    manual_net.gradients(x, y, w1, w2)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        torch_step(x, y, w1, w2, lr=1e-6)
        manual_net.gradients(x, y, w1, w2)  # grad_h[h < 0] = 0 is a masked_fill_
    finally:
        torch.cuda.set_sync_debug_mode("default")


def test_timings_report_median_spread_and_rate():
    t = Timing("NumPy", TUTORIAL_SIZES, (3e-3, 1e-3, 2e-3))
    assert t.median == 2e-3
    assert t.spread == (1e-3, 3e-3)
    assert t.flops_per_second == pytest.approx(step_flops(TUTORIAL_SIZES) / 2e-3)
    with pytest.raises(ValueError, match="positive seconds"):
        Timing("NumPy", TUTORIAL_SIZES, ())
    with pytest.raises(ValueError, match="positive seconds"):
        Timing("NumPy", TUTORIAL_SIZES, (1e-3, 0.0))


def test_the_table_divides_by_numpy_at_the_same_sizes_and_knows_the_peak():
    bigger = Sizes(128, 1000, 100, 10)
    timings = [
        Timing("NumPy", TUTORIAL_SIZES, (4e-3,)),
        Timing("torch cuda:0", TUTORIAL_SIZES, (1e-3,), peak=1e12),
        Timing("torch cuda:0", bigger, (1e-3,), peak=1e12),
    ]
    rows = str(table(timings)).splitlines()
    assert rows[2].endswith("4.0x")
    assert f"{100 * step_flops(TUTORIAL_SIZES) / 1e-3 / 1e12:.1f}%" in rows[2]
    assert rows[3].endswith("-")  # no NumPy figure at that size, so no speed-up
    # the notebook's table holds the same figures, a group of rows for each size
    groups = table(timings)._repr_html_().split("<tbody>")[1:]
    assert len(groups) == 2
    assert '<td class="tb-figure">4.0x</td>' in groups[0]
    assert groups[1].endswith('<td class="tb-figure">-</td></tr></tbody></table>')


def test_the_speedup_chart_draws_a_line_for_each_run_on_log_scales():
    sizes = [TUTORIAL_SIZES, Sizes(256, 1024, 256, 64), Sizes(4096, 4096, 4096, 4096)]
    timings = [Timing("NumPy", s, (1.0,)) for s in sizes]
    timings += [Timing("torch cpu", s, (0.5,)) for s in sizes[:2]]
    timings += [Timing("torch cuda:0", s, (0.01,)) for s in sizes]
    picture = speed.speedup_figure(timings)
    assert picture.svg.count("<polyline ") == 2
    assert picture.svg.count("<circle ") == 5  # a dot for each timing but NumPy's
    # F runs from 13 MFLOP to 340 GFLOP, the speed-up from 2 to 100: whole decades
    assert [t for t in picture.texts if t[-1] in "MGT"] == [
        "10M",
        "100M",
        "1G",
        "10G",
        "100G",
        "1T",
    ]
    assert {"1", "10", "100", "50"} <= set(picture.texts)


@pytest.mark.parametrize(
    ("name", "peak"),
    [
        ("NVIDIA H100 80GB HBM3", 66.9e12),
        ("NVIDIA H100 PCIe", 51.2e12),
        ("NVIDIA H200", 66.9e12),
        ("NVIDIA A100-SXM4-40GB", 19.5e12),
        ("NVIDIA A100 80GB PCIe", 19.5e12),
        ("NVIDIA L4", 30.3e12),
        ("NVIDIA L40S", 91.6e12),
        ("NVIDIA L40", None),  # not an L4: a name is matched whole
        ("NVIDIA H100 NVL", None),  # not the SXM H100
        ("NVIDIA A10G", None),  # not an A10
        ("Tesla V100-SXM2-16GB", 15.7e12),
        ("Some Future GPU", None),
    ],
)
def test_the_peak_is_looked_up_by_the_gpus_name(monkeypatch, name, peak):
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda _device=None: name)
    assert speed.fp32_peak(torch.device("cuda", 0)) == (peak and pytest.approx(peak))
    monkeypatch.setattr(torch, "get_float32_matmul_precision", lambda: "high")
    assert speed.fp32_peak(torch.device("cuda", 0)) is None  # TF32 allowed: another peak


@pytest.mark.parametrize(
    ("matmul", "generic", "legacy", "allowed"),
    [
        ("none", "none", "highest", False),
        ("none", "none", "high", True),
        ("tf32", "none", "highest", True),
        ("ieee", "tf32", "high", False),  # the most specific setting wins
        ("none", "tf32", "highest", True),
    ],
)
def test_tf32_is_read_from_the_new_settings_first(monkeypatch, matmul, generic, legacy, allowed):
    # torch.backends.cuda.matmul refuses new attributes: stand in for the whole object
    monkeypatch.setattr(torch.backends.cuda, "matmul", SimpleNamespace(fp32_precision=matmul))
    monkeypatch.setattr(torch.backends, "fp32_precision", generic)

    def legacy_getter() -> str:
        if (matmul, generic) != ("none", "none"):
            msg = "mixed legacy and new APIs"  # what torch raises once the new API is used
            raise RuntimeError(msg)
        return legacy

    monkeypatch.setattr(torch, "get_float32_matmul_precision", legacy_getter)
    assert tf32_allowed() is allowed


def test_timing_on_a_device(device):
    t = speed.time_torch(SMALL, device, warmup=1, repeats=3, steps=2)
    assert t.label == f"torch {device}"
    assert len(t.seconds) == 3
    assert all(s > 0 for s in t.seconds)
    t = speed.time_torch(SMALL, device, item_every_step=True, warmup=1, repeats=2)
    assert t.label == f"torch {device}, loss.item() each step"


def test_bad_counts_are_refused():
    with pytest.raises(ValueError, match="warmup >= 1, repeats >= 1 and steps >= 1"):
        speed.time_numpy(SMALL, warmup=0)
    with pytest.raises(ValueError, match="got 1, 0, None"):
        speed.time_torch(SMALL, torch.device("cpu"), warmup=1, repeats=0)


def test_a_cuda_graph_needs_cuda(device):
    if device.type != "cuda":
        with pytest.raises(ValueError, match="CUDA graphs need a CUDA device, not cpu"):
            speed.cuda_graph_step(SMALL, device)
        return
    eager = speed.time_torch(TUTORIAL_SIZES, device, warmup=1, repeats=3)
    graph = speed.cuda_graph_step(TUTORIAL_SIZES, device, warmup=1, repeats=3)
    assert graph.label == f"torch {device}, CUDA graph"
    print(
        f"tutorial size on {device}: eager {eager.median * 1e6:.1f} us, "
        f"graph {graph.median * 1e6:.1f} us"
    )


def test_a_step_is_sixteen_operations_as_the_chapter_says():
    """Each is one kernel launch on a GPU; views such as ``.t()`` launch nothing."""
    from torch.utils._python_dispatch import TorchDispatchMode

    calls = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            calls.append(func)
            return func(*args, **(kwargs or {}))

    x, y, w1, w2 = as_tensors(make_problem(SMALL), torch.device("cpu"))
    with Recorder():
        torch_step(x, y, w1, w2, lr=1e-6)
    assert len([f for f in calls if f is not torch.ops.aten.t.default]) == 16
    assert "sixteen small kernels" in (ROOT / "docs" / "speed.md").read_text(encoding="utf-8")
