"""The autograd graph, drawn by walking the real ``grad_fn.next_functions`` chain.

One box per backward node, with torch's own name (``MulBackward0``, ``MmBackward0``,
...), from :func:`tensorbook.graph.backward_graph`; the leaves (``AccumulateGrad``)
with their names and shapes, and what ``backward`` does for them: before it, that
they will get a ``.grad``; after it, the ``.grad`` they hold (its values when it has
at most :data:`MOST_VALUES` entries, else its shape). Drawing the same graph before
and after ``backward()`` shows both. An arrow down the left side, with its words, says
which way gradients flow.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from tensorbook.draw.svg import Canvas, Picture, text_width
from tensorbook.draw.words import WORDS
from tensorbook.graph import backward_graph
from tensorbook.wording import fill

__all__ = ["graph_picture"]

LEVEL = 66
BOX_H = 24
GAP = 12
MARGIN = 30  # left of the boxes: the arrow that says which way gradients flow
MOST_VALUES = 4
"""A leaf's ``.grad`` with at most this many entries is drawn as its values."""


def _grad_words(grad: torch.Tensor) -> tuple[str, dict[str, object]]:
    """The template and fields that show a ``.grad``: its values, or if large its shape."""
    if grad.numel() <= MOST_VALUES:
        return "grad_values", {"values": _nested(grad.detach().tolist())}
    return "grad_filled", {"shape": tuple(grad.shape)}


def _nested(values: object) -> str:
    """``tolist()``'s nested lists, each number to three significant figures."""
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v) for v in values) + "]"
    return f"{values:.3g}"


def graph_picture(
    output: torch.Tensor, names: Mapping[str, torch.Tensor] | None = None, *, name: str = "out"
) -> Picture:
    """Draw the backward graph of ``output``: its ``grad_fn`` on top, the leaves below.

    Parameters
    ----------
    output : torch.Tensor
        A tensor with a ``grad_fn``.
    names : mapping of str to torch.Tensor, optional
        The page's names for the leaves.
    name : str
        The page's name for ``output``, for the title.

    Raises
    ------
    ValueError
        If ``output`` has no ``grad_fn``.

    Examples
    --------
    >>> x = torch.ones(2, 2, requires_grad=True)
    >>> out = (x * x).sum()
    >>> before = graph_picture(out, {"x": x})
    >>> before.texts
    ['SumBackward0', 'MulBackward0', 'AccumulateGrad: x (2, 2)', 'gets .grad', 'gradients flow this way']
    >>> out.backward()
    >>> graph_picture(out, {"x": x}).texts[3]
    '.grad = [[2, 2], [2, 2]]'
    """
    nodes = backward_graph(output, names)
    levels: dict[int, list[int]] = {}
    for i, node in enumerate(nodes):
        levels.setdefault(node.depth, []).append(i)
    # 11, the smallest a word may be, so that two leaves side by side fit a phone's column
    widths = [text_width(node.label, 11, mono=True) + 12 for node in nodes]
    below: dict[int, tuple[str, str]] = {}  # under each leaf: a template's key, filled in
    for i, node in enumerate(nodes):
        if node.is_leaf:
            grad = node.variable.grad if node.variable is not None else None
            key, fields = ("gets_grad", {}) if grad is None else _grad_words(grad)
            below[i] = (key, fill(WORDS[key], **fields))
            widths[i] = max(widths[i], text_width(below[i][1], 11) + 12)
    span = max(
        sum(widths[i] for i in members) + GAP * (len(members) - 1) for members in levels.values()
    )
    canvas = Canvas(MARGIN + max(300, span + 8))
    left: dict[int, float] = {}
    for members in levels.values():
        total = sum(widths[i] for i in members) + GAP * (len(members) - 1)
        x = MARGIN + (canvas.width - MARGIN - total) / 2
        for i in members:
            left[i] = x
            x += widths[i] + GAP

    def top(i: int) -> float:
        return 8 + nodes[i].depth * LEVEL

    filled = 0
    for i, node in enumerate(nodes):
        canvas.rect(left[i], top(i), widths[i], BOX_H, tone="green" if node.is_leaf else "blue")
        middle = left[i] + widths[i] / 2
        canvas.text(middle, top(i) + 16, node.label, anchor="middle", mono=True, size=11)
        if node.is_leaf:
            key, shown = below[i]
            filled += key != "gets_grad"
            canvas.text(middle, top(i) + BOX_H + 14, shown, anchor="middle", size=11, key=key)
        for k, j in enumerate(node.inputs):
            # a node reached twice from here (y * y) gets two arrows, side by side
            twins = node.inputs.count(j)
            shift = 0.0 if twins == 1 else (node.inputs[:k].count(j) - (twins - 1) / 2) * 12
            start = left[i] + widths[i] / 2 + shift
            end = left[j] + widths[j] / 2 + shift
            canvas.line(start, top(i) + BOX_H, end, top(j) - 1, arrow=True)
    bottom = canvas.height
    canvas.line(MARGIN / 2, 8, MARGIN / 2, bottom, arrow=True)
    canvas.words(8, bottom + 18, "gradient_flow", size=11)
    leaves = sum(node.is_leaf for node in nodes)
    return canvas.picture(
        ("graph_title", {"output": name}),
        (
            "graph_desc",
            {"count": len(nodes), "output": name, "leaves": leaves, "filled": filled},
        ),
    )
