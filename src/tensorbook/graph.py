"""Read the autograd graph behind a tensor and draw it.

Autograd records, for every tensor computed from tensors that require grad,
the function that will run backward (``grad_fn``) and, through
``grad_fn.next_functions``, the functions that produced its inputs. Leaves
appear as ``AccumulateGrad`` nodes holding the tensor whose ``.grad`` they
fill. This module walks that chain as it is, so the picture in the book is
the graph torch built, not a drawing of what it should be.

``python -m tensorbook.graph --output graph.png`` draws the graph of the
book's example, ``out = (a * b + b.sin()).sum()``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import torch
from matplotlib.figure import Figure
from torch.autograd.graph import Node

from tensorbook import cli

__all__ = [
    "GraphNode",
    "backward_graph",
    "describe_graph",
    "example_leaves",
    "graph_figure",
    "main",
]


@dataclass(frozen=True)
class GraphNode:
    """One node of a backward graph.

    ``label`` is the backward function's name; for a leaf, ``AccumulateGrad``
    (torch's name for the node that fills a leaf's ``.grad``), the name given to its
    tensor and the tensor's shape. ``inputs`` are the indices of the
    nodes it passes gradients to; ``depth`` is the length of the longest path
    from the output, so that every edge points one or more levels down. A leaf's
    ``variable`` is its tensor, whose ``.grad`` ``backward`` fills.
    """

    label: str
    inputs: tuple[int, ...]
    depth: int
    is_leaf: bool
    variable: torch.Tensor | None = field(default=None, compare=False, repr=False)


def backward_graph(
    output: torch.Tensor, names: Mapping[str, torch.Tensor] | None = None
) -> list[GraphNode]:
    """List the nodes of ``output``'s backward graph; node 0 is ``output.grad_fn``.

    Parameters
    ----------
    output : torch.Tensor
        A tensor with a ``grad_fn``.
    names : mapping of str to torch.Tensor, optional
        Names for leaf tensors, used as their labels.

    Raises
    ------
    ValueError
        If ``output`` has no ``grad_fn`` (it is a leaf, or was computed
        without grad).

    Examples
    --------
    >>> x = torch.ones(2, 2, device=device, requires_grad=True)
    >>> out = (x * x).sum()
    >>> [(n.label, n.inputs, n.depth) for n in backward_graph(out, {"x": x})]
    [('SumBackward0', (1,), 0), ('MulBackward0', (2, 2), 1), ('AccumulateGrad: x (2, 2)', (), 2)]
    >>> backward_graph(x)
    Traceback (most recent call last):
    ...
    ValueError: this tensor has no grad_fn: it is a leaf or was computed without grad, so it has no backward graph
    """
    if output.grad_fn is None:
        msg = (
            "this tensor has no grad_fn: it is a leaf or was computed without grad, "
            "so it has no backward graph"
        )
        raise ValueError(msg)
    leaf_names = {id(t): name for name, t in (names or {}).items()}
    order: list[Node] = []  # backward functions, in the order first reached
    index: dict[int, int] = {}
    edges: list[list[int]] = []
    queue = [output.grad_fn]
    while queue:
        fn = queue.pop(0)
        if id(fn) in index:
            continue
        index[id(fn)] = len(order)
        order.append(fn)
        edges.append([])
        for child, _ in fn.next_functions:
            if child is not None:  # inputs that need no gradient, such as constants
                queue.append(child)
    for i, fn in enumerate(order):
        edges[i] = [index[id(child)] for child, _ in fn.next_functions if child is not None]

    depth = [0] * len(order)
    changed = True
    while changed:  # longest-path layering; the graph is acyclic and small
        changed = False
        for i, targets in enumerate(edges):
            for j in targets:
                if depth[j] < depth[i] + 1:
                    depth[j] = depth[i] + 1
                    changed = True

    nodes = []
    for i, fn in enumerate(order):
        variable = getattr(fn, "variable", None)
        if isinstance(variable, torch.Tensor):
            name = leaf_names.get(id(variable), "leaf")
            label = f"{fn.name().rpartition(':')[2]}: {name} {tuple(variable.shape)}"
        else:
            label = fn.name()
        leaf = variable if isinstance(variable, torch.Tensor) else None
        nodes.append(GraphNode(label, tuple(edges[i]), depth[i], variable is not None, leaf))
    return nodes


def describe_graph(output: torch.Tensor, names: Mapping[str, torch.Tensor] | None = None) -> str:
    """The backward graph as an indented tree of text; shared nodes are shown once.

    Examples
    --------
    >>> x = torch.ones(2, device=device, requires_grad=True)
    >>> y = x + 2
    >>> print(describe_graph((y * y).mean(), {"x": x}))
    MeanBackward0
    └── MulBackward0
        ├── AddBackward0
        │   └── AccumulateGrad: x (2,)
        └── AddBackward0 (the same node as above)
    """
    nodes = backward_graph(output, names)
    lines = [nodes[0].label]
    seen = {0}

    def walk(i: int, prefix: str) -> None:
        children = nodes[i].inputs
        for k, j in enumerate(children):
            last = k == len(children) - 1
            branch, indent = ("└── ", "    ") if last else ("├── ", "│   ")
            if j in seen:
                lines.append(f"{prefix}{branch}{nodes[j].label} (the same node as above)")
                continue
            seen.add(j)
            lines.append(f"{prefix}{branch}{nodes[j].label}")
            walk(j, prefix + indent)

    walk(0, "")
    return "\n".join(lines)


def graph_figure(
    output: torch.Tensor, names: Mapping[str, torch.Tensor] | None = None, *, title: str = ""
) -> Figure:
    """Draw the backward graph: the output's ``grad_fn`` on top, the leaves at the bottom.

    Arrows point the way gradients flow during ``backward()``. Leaves are
    drawn in a second colour.

    Examples
    --------
    >>> x = torch.ones(2, device=device, requires_grad=True)
    >>> fig = graph_figure((x * 3).sum(), {"x": x})
    >>> sorted(t.get_text() for t in fig.axes[0].texts if t.get_text())
    ['AccumulateGrad: x (2,)', 'MulBackward0', 'SumBackward0']
    """
    nodes = backward_graph(output, names)
    levels: dict[int, list[int]] = {}
    for i, node in enumerate(nodes):
        levels.setdefault(node.depth, []).append(i)
    position: dict[int, tuple[float, float]] = {}
    for depth, members in levels.items():
        for k, i in enumerate(members):
            position[i] = (k - (len(members) - 1) / 2, -float(depth))

    width = max(len(m) for m in levels.values())
    fig = Figure(figsize=(max(4.0, 2.4 * width), 0.8 * len(levels) + 0.4), dpi=100)
    ax = fig.add_axes((0, 0, 1, 0.92 if title else 1))
    ax.set_axis_off()
    ax.set_xlim(-width / 2 - 0.1, width / 2 + 0.1)
    ax.set_ylim(-len(levels) + 0.5, 0.5)
    boxes = {}
    for i, node in enumerate(nodes):
        boxes[i] = ax.text(
            *position[i],
            node.label,
            ha="center",
            va="center",
            family="monospace",
            fontsize=9,
            bbox={
                "boxstyle": "round,pad=0.4",
                "facecolor": "#d8ecd2" if node.is_leaf else "#dbe6f4",
                "edgecolor": "0.3",
            },
        )
    for i, node in enumerate(nodes):
        for k, j in enumerate(node.inputs):
            # ``y * y`` reaches the same node twice: bend repeated edges apart
            repeat = node.inputs[:k].count(j)
            bend = 0.0 if node.inputs.count(j) == 1 else (-0.3 if repeat % 2 else 0.3)
            ax.annotate(
                "",
                xy=position[j],
                xytext=position[i],
                arrowprops={
                    "arrowstyle": "-|>",
                    "color": "0.35",
                    "patchA": boxes[i].get_bbox_patch(),
                    "patchB": boxes[j].get_bbox_patch(),
                    "shrinkA": 1,
                    "shrinkB": 1,
                    "connectionstyle": f"arc3,rad={bend}",
                },
            )
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def example_leaves(
    device: torch.device, dtype: torch.dtype = torch.float32
) -> tuple[torch.Tensor, torch.Tensor]:
    """The two leaves of the book's graph example: ``a`` (3,) and ``b`` (3,), requiring grad.

    Examples
    --------
    >>> a, b = example_leaves(device)
    >>> print(describe_graph((a * b + b.sin()).sum(), {"a": a, "b": b}))
    SumBackward0
    └── AddBackward0
        ├── MulBackward0
        │   ├── AccumulateGrad: a (3,)
        │   └── AccumulateGrad: b (3,)
        └── SinBackward0
            └── AccumulateGrad: b (3,) (the same node as above)
    """
    a = torch.tensor([1.0, 2.0, 3.0], device=device, dtype=dtype, requires_grad=True)
    b = torch.tensor([0.5, -1.0, 2.0], device=device, dtype=dtype, requires_grad=True)
    return a, b


def main(argv: Sequence[str] | None = None) -> int:
    """Print the book's example graph as text and save it as a picture."""

    def add_output(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--output", type=Path, default=Path("graph.png"), help="PNG to write")

    args = cli.parse_args(
        argv, module=__spec__.name, description=__doc__, steps=False, extra=add_output
    )
    a, b = example_leaves(args.device, args.dtype)
    out = (a * b + b.sin()).sum()
    print(describe_graph(out, {"a": a, "b": b}))
    figure = graph_figure(out, {"a": a, "b": b}, title="out = (a * b + b.sin()).sum()")
    figure.savefig(args.output)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
