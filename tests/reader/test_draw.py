"""The pictures (tensorbook.draw) against the objects they were drawn from."""

from __future__ import annotations

import itertools
import math
import random
import re
from string import Formatter
from xml.etree import ElementTree as ET

import pytest
import torch

from tensorbook.draw.autograd import graph_picture
from tensorbook.draw.boundary import boundary_picture
from tensorbook.draw.broadcast import broadcast_picture
from tensorbook.draw.curves import curves_picture
from tensorbook.draw.digits import confusion_picture, digits_picture, filters_picture
from tensorbook.draw.grid import float_grid_picture, neighbours
from tensorbook.draw.joins import join_picture, sources
from tensorbook.draw.memory import memory_picture
from tensorbook.draw.network import network_lines, network_picture
from tensorbook.draw.svg import MAX_BYTES, Canvas
from tensorbook.draw.timeline import Span, profile_step, timeline_picture
from tensorbook.draw.words import WORDS
from tensorbook.graph import backward_graph
from tensorbook.images import read_digits
from tensorbook.plots import loss_figure
from tensorbook.problem import TUTORIAL_SIZES, Sizes
from tensorbook.wording import fill, parse
from tensorbook_build.extensions.pictures import (
    PDF_HEIGHT,
    is_picture,
    picture_latex,
    translate_picture,
)
from tensorbook_build.settings import LAYOUT

SVG = "{http://www.w3.org/2000/svg}"


def _pictures():
    m, row, column = torch.zeros(3, 4), torch.arange(4.0), torch.ones(3, 1)
    grid = torch.arange(12.0).reshape(3, 4)
    x = torch.ones(2, 2, requires_grad=True)
    out = ((x + 2) * (x + 2) * 3).mean()
    spans = [Span("cpu", "aten::mm", 0.0, 5.0), Span("gpu", "gemm", 2.0, 9.0)]
    return {
        "broadcast": lambda: broadcast_picture({"m": m, "row": row, "column": column}),
        "memory": lambda: memory_picture({"grid": grid, "grid.t()": grid.t()}),
        "joins": lambda: join_picture({"p": grid, "q": grid}, [("cat", 1), ("stack", 2)]),
        "graph": lambda: graph_picture(out, {"x": x}),
        "network": lambda: network_picture(TUTORIAL_SIZES),
        "grid": lambda: float_grid_picture(1.0, steps=(5e-8, -5e-8)),
        "timeline": lambda: timeline_picture(spans, device="cuda:0"),
        "boundary": lambda: boundary_picture(
            lambda p: (p[:, 0] > p[:, 1]).long() + (p[:, 0] > 0.5).long(),
            torch.rand(150, 2, generator=torch.Generator().manual_seed(0)),  # the book's 150
            torch.arange(3).repeat(50),
            name="demo",
        ),
        "curves": lambda: curves_picture(
            [1 / (e + 1) for e in range(300)], [0.5] * 300, name="demo"
        ),
        "losses": lambda: loss_figure(_float32_runs(), against="NumPy · float64"),
        # the heaviest digits picture the book draws: sixteen of its images
        "digits": lambda: digits_picture(
            read_digits()[0][:16], read_digits()[1][:16], name="splits.train"
        ),
        "mistakes": lambda: digits_picture(
            read_digits()[0][:3],
            read_digits()[1][:3],
            predicted=torch.tensor([1, 1, 1]),
            name="cnn",
        ),
        "filters": lambda: filters_picture(
            torch.randn(8, 1, 3, 3, generator=torch.Generator().manual_seed(0)), name="cnn[0]"
        ),
        "confusion": lambda: confusion_picture(
            torch.randint(0, 40, (10, 10), generator=torch.Generator().manual_seed(0)),
            name="cnn",
        ),
    }


def _float32_runs() -> dict[str, list[float]]:
    """Four runs of 500 steps shaped like the book's (tensors_by_hand): one loss falling
    over 14 decades, and three runs that part from it by rounding noise, which a line
    cannot leave out (the heaviest loss picture the book draws)."""
    noise = random.Random(0)
    loss = [3e7 * math.exp(-0.065 * t) + 1e-6 for t in range(500)]
    runs = {"NumPy · float64": loss}
    for label, size in [("float64", 1e-15), ("float32, float64 weights", 1e-7), ("float32", 1e-6)]:
        runs[f"torch · cuda:0 · {label}"] = [
            v * (1 + size * (1 + t / 20) * noise.uniform(-1, 1)) for t, v in enumerate(loss)
        ]
    return runs


@pytest.mark.parametrize("kind", list(_pictures()))
def test_a_picture_is_small_accessible_deterministic_svg(kind):
    draw = _pictures()[kind]
    first, second = draw(), draw()
    assert first.svg == second.svg  # the same objects, the same bytes
    assert first.size <= MAX_BYTES
    root = ET.fromstring(first.svg)  # well-formed XML
    assert root.get("role") == "img"
    assert root.get("width") == "100%"
    assert re.fullmatch(r"max-width:[\d.]+px;.*", root.get("style"))
    assert root.find(f"{SVG}title").text.strip()
    assert root.find(f"{SVG}desc").text.strip()
    assert is_picture(first.svg)
    # every word is a template filled in, and every colour is an ink the page sets
    assert all(key in WORDS for key, _ in first.words)
    assert "#000" not in first.svg
    assert "black" not in first.svg


@pytest.mark.parametrize("key", list(WORDS))
def test_every_template_reads_back_the_fields_it_was_filled_with(key):
    """An edition translates a word by parsing its fields back (wording.parse), which
    needs each field named once."""
    fields = {name: f"<{name}>" for _, name, _, _ in Formatter().parse(WORDS[key]) if name}
    assert parse(WORDS[key], fill(WORDS[key], **fields)) == fields


def test_the_broadcast_picture_shows_torch_s_result_shape():
    a, b = torch.zeros(4, 1, 3), torch.zeros(5, 1)
    picture = broadcast_picture({"a": a, "b": b}, a + b)
    assert str(tuple((a + b).shape)) in picture.texts
    assert picture.title.endswith(str(tuple((a + b).shape)))
    with pytest.raises(ValueError, match="not the broadcast shape"):
        broadcast_picture({"a": a, "b": b}, torch.zeros(4, 5))


def test_the_strides_picture_carries_exactly_torch_s_strides_and_strips():
    grid = torch.arange(12.0).reshape(3, 4)
    views = {"grid": grid, "grid[1:, 1:]": grid[1:, 1:], "grid.t()": grid.t()}
    copied = {**views, "grid.t().contiguous()": grid.t().contiguous()}
    picture = memory_picture(copied)
    layouts = [text for key, text in picture.words if key.startswith("layout")]
    for (name, tensor), text in zip(copied.items(), layouts, strict=True):
        assert f"stride {tuple(tensor.stride())}" in text, name
        assert f"offset {tensor.storage_offset()}" in text, name
        assert text.endswith("not contiguous") != tensor.is_contiguous(), name
    assert layouts[2].startswith("stride (1, 4)")  # the transpose's strides, as torch says
    strips = [text for key, text in picture.words if key == "storage"]
    assert strips == ["storage 1", "storage 2"]  # views share one strip, the copy has its own
    assert [t for k, t in memory_picture(views).words if k == "storage"] == ["storage 1"]


def test_the_grid_picture_rounds_each_step_as_torch_does():
    for center, dtype in ((1.0, torch.float32), (3.0, torch.float32), (1.0, torch.bfloat16)):
        grid = neighbours(center, 2, dtype)
        assert grid == sorted(grid)
        assert len(set(grid)) == 5
        gap = grid[3] - grid[2]
        steps = (0.4 * gap, -0.4 * gap, 0.6 * gap)
        shown = [
            t for k, t in float_grid_picture(center, steps, dtype=dtype).words if k == "grid_step"
        ]
        for step, text in zip(steps, shown, strict=True):
            landed = (torch.tensor(center, dtype=dtype) + step).item()
            assert text.endswith(f"→ {landed:.8g}"), (center, dtype, text)
    with pytest.raises(ValueError, match=r"not a torch\.float32 number"):
        float_grid_picture(0.1, steps=())
    with pytest.raises(ValueError, match="outside the 3 neighbours"):
        float_grid_picture(1.0, steps=(1e-3,))


def test_the_join_picture_places_elements_where_torch_puts_them():
    p, q = torch.zeros(2, 3), torch.ones(2, 3)
    for how, dim in [("cat", 0), ("cat", 1), ("stack", 0), ("stack", 2)]:
        joined = getattr(torch, how)([p, q], dim)
        assert torch.equal(sources([p, q], how, dim).float(), joined)  # q is 1, p is 0
    texts = join_picture({"p": p, "q": q}, [("stack", 2)]).texts
    assert "torch.stack([p, q], dim=2) → (2, 3, 2)" in texts


def test_the_graph_picture_lists_exactly_the_reachable_nodes_and_follows_the_network():
    w1 = torch.randn(5, 4, requires_grad=True)
    w2 = torch.randn(4, 2, requires_grad=True)
    x = torch.randn(3, 5)
    loss = x.mm(w1).clamp(min=0).mm(w2).pow(2).sum()
    picture = graph_picture(loss, {"w1": w1, "w2": w2}, name="loss")
    nodes = [node.label for node in backward_graph(loss, {"w1": w1, "w2": w2})]
    reached, queue = [], [loss.grad_fn]
    while queue:  # the walk, done again here, straight from torch
        fn = queue.pop(0)
        if fn not in reached:
            reached.append(fn)
            queue += [child for child, _ in fn.next_functions if child is not None]
    boxes = [t for t in picture.texts if t in nodes]
    assert len(boxes) == len(reached) == len(nodes)
    assert sorted(t for t in boxes if "Backward" in t) == sorted(
        fn.name() for fn in reached if fn.name() != "torch::autograd::AccumulateGrad"
    )
    assert "AccumulateGrad: w1 (5, 4)" in picture.texts
    assert "AccumulateGrad: w2 (4, 2)" in picture.texts
    changed = x.mm(w1).sigmoid().mm(w2).pow(2).sum()  # another network, another picture
    other = graph_picture(changed, {"w1": w1, "w2": w2}, name="loss")
    assert "SigmoidBackward0" in other.texts
    assert "ClampBackward1" not in other.texts
    loss.backward()
    after = graph_picture(loss, {"w1": w1, "w2": w2}, name="loss")
    assert [t for t in after.texts if t.startswith(".grad")] == [".grad (4, 2)", ".grad (5, 4)"]
    small = torch.tensor([1.0, -2.0], requires_grad=True)
    (small * small).sum().backward()  # .grad is 2 * small: few enough entries to show
    drawn = graph_picture((small * small).sum(), {"small": small}).texts
    assert f".grad = [{', '.join(f'{v:.3g}' for v in small.grad.tolist())}]" in drawn


def test_the_network_picture_shows_the_sizes_and_the_manual_net_s_own_lines():
    sizes = Sizes(n=8, d_in=7, h=6, d_out=5)
    texts = network_picture(sizes).texts
    assert {"x (8, 7)", "h (8, 6)", "h_relu (8, 6)", "y_pred (8, 5)"} <= set(texts)
    lines = [line for segment in network_lines() for line, _ in segment]
    assert "grad_w2 = h_relu.t().mm(grad_y_pred)" in lines
    assert set(lines) <= set(texts)
    assert len(lines) == 10  # 3 forward, the loss, 6 backward lines of manual_net


def test_the_timeline_traces_the_step_s_operators(device):
    a = torch.ones(16, 16, device=device)
    spans = profile_step(lambda: (a @ a).relu().sum().item(), device)
    cpu = [span.name for span in spans if span.lane == "cpu"]
    assert cpu == ["aten::matmul", "aten::relu", "aten::sum", "aten::item"]
    if device.type == "cuda":
        assert any(span.lane == "gpu" for span in spans)
    picture = timeline_picture(spans, device=str(device))
    assert set(cpu) <= set(picture.texts)


def test_every_word_is_listed_for_the_catalogs():
    listed = (LAYOUT.conf / "_templates" / "picture-wording.html").read_text(encoding="utf-8")
    assert re.findall(r'\{\{ _\("(.*?)"\) \}\}', listed) == list(WORDS.values())


def test_translation_keeps_numbers_and_names_and_changes_the_words():
    picture = _pictures()["memory"]()
    chinese = {
        "stride {stride} · offset {offset} · contiguous": "步幅 {stride} · 偏移 {offset} · 连续"
    }
    shown = translate_picture(picture.svg, lambda m: chinese.get(m, m))
    assert "步幅 (4, 1) · 偏移 0 · 连续" in shown
    assert shown.count("data-w=") == picture.svg.count("data-w=")
    assert translate_picture(picture.svg, lambda m: m) == picture.svg


def test_the_pdf_gets_a_tikz_drawing_with_every_word():
    canvas = Canvas(200)
    canvas.words(10, 20, "dim", dim=0)
    canvas.text(10, 40, "grad_w2 = h_relu.t()", mono=True)
    latex = picture_latex(canvas.picture(("result", {}), ("result", {})).svg)
    assert latex.startswith(r"\begin{center}\begin{tikzpicture}")
    assert r"{dim 0}" in latex
    assert r"{grad\_w2 = h\_relu.t()}" in latex
    assert r"\ttfamily" in latex


def test_a_tall_picture_is_scaled_to_fit_a_pdf_page():
    """A TikZ drawing cannot break across pages: a tall one is set smaller, width alone
    would leave the strides picture running into the footer."""
    grid = torch.arange(12.0).reshape(3, 4)
    svg = memory_picture(
        {"grid": grid, "grid.t()": grid.t(), "grid.t().contiguous()": grid.t().contiguous()}
    ).svg
    height = float(re.search(r'viewBox="0 0 [\d.]+ ([\d.]+)"', svg)[1])
    scale = float(re.search(r"tikzpicture\}\[x=([\d.]+)pt", picture_latex(svg))[1])
    assert height > PDF_HEIGHT
    assert height * scale <= PDF_HEIGHT + 0.5


def test_a_long_operator_name_leaves_the_timeline_as_wide_as_a_phone():
    """A reader's torch may name an operator at length; the row shows its start, and the
    picture still fits a 412 px phone's column (Canvas refuses a wider one)."""
    name = "aten::_scaled_dot_product_flash_attention_for_cpu_backward"
    picture = timeline_picture([Span("cpu", name, 0.0, 5.0)], device="cpu")
    shown = next(t for t in picture.texts if t.startswith("aten::"))
    assert name.startswith(shown.removesuffix("…"))
    assert len(shown) < len(name)


def test_the_loss_picture_puts_each_printed_loss_a_decade_apart_on_its_log_scale():
    """The dots mark the printed steps where the losses lie: a loss falling tenfold every
    100 steps puts them evenly, a decade apart, and a run equal to it for 100 steps has
    its difference drawn from the first step where the two part."""
    falling = [10.0 ** (2 - t / 100) for t in range(501)]
    parted = [v * (1 + 1e-3 * (t >= 100)) for t, v in enumerate(falling)]
    picture = loss_figure({"falling": falling, "parted": parted}, against="falling")
    dots = [
        float(y) for y in re.findall(r'<circle cx="[\d.]+" cy="([\d.]+)" r="2.5"/>', picture.svg)
    ]
    assert len(dots) == 2 * 6  # steps 0, 100, ..., 500 of each run
    gaps = {round(b - a, 1) for a, b in itertools.pairwise(sorted(set(dots)))}
    assert len(gaps) == 1  # one decade, the same height each time
    lines = re.findall(r'<polyline points="([\d.]+),', picture.svg)
    x_of = {round(float(x), 1) for x in re.findall(r'<circle cx="([\d.]+)"', picture.svg)}
    first_printed, second_printed = sorted(x_of)[:2]
    assert float(lines[-1]) == second_printed  # the difference starts at step 100
    assert float(lines[0]) == first_printed  # the losses at step 0
    assert picture.title == "The loss of falling, parted at each step, on a log scale"


def test_the_loss_picture_keeps_a_long_label_as_wide_as_a_phone():
    label = "torch · cuda:0 · float32 with float64 master weights and a long tail"
    picture = loss_figure({label: [2.0, 1.0], "short": [2.0, 1.5]})
    shown = next(t for t in picture.texts if t.startswith("torch"))
    assert shown.endswith("…")
    assert label.startswith(shown.removesuffix("…"))


def test_a_faint_line_is_faint_in_the_pdf_too():
    canvas = Canvas(100)
    canvas.line(0, 10, 90, 10, faint=True)
    canvas.line(0, 20, 90, 20, dashed=True)
    latex = picture_latex(canvas.picture(("result", {}), ("result", {})).svg)
    assert r"\draw[draw opacity=0.25] (0,10) -- (90,10);" in latex
    assert r"\draw[dashed] (0,20) -- (90,20);" in latex


def test_the_digits_picture_draws_each_pixel_at_the_step_of_its_value():
    """Every pixel of the images lies in exactly one box, whose opacity is its value's
    step; blank pixels in none."""
    images = read_digits()[0][:2].float()
    picture = digits_picture(images, torch.tensor([0, 1]), name="x")
    root = ET.fromstring(picture.svg)
    steps = torch.zeros(2, 8, 8)
    for group in root.iter(f"{SVG}g"):
        opacity = group.get("fill-opacity")
        if opacity is None or group.get("stroke") is not None:
            continue
        for rect in group.iter(f"{SVG}rect"):
            x, y, w, h = (float(rect.get(a)) for a in ("x", "y", "width", "height"))
            image = int((x - 6) // 36)  # side by side, 36 units apart, from x = 6
            left, top = round((x - 6 - image * 36) / 4), round((y - 6) / 4)
            cells = steps[image, top : top + round(h / 4), left : left + round(w / 4)]
            assert (cells == 0).all(), "a pixel drawn twice"
            cells += float(opacity)
    expected = torch.ceil(images[:, 0] / images.max() * 4) / 4
    assert torch.allclose(steps, expected)
