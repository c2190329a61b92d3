"""The two-layer network, drawn from the book's own code.

Its shapes flow forward, and the backward lines of the hand-written net sit on the
arrows they compute.

The lines are read from the source of :func:`tensorbook.manual_net.forward` and
:func:`tensorbook.manual_net.gradients`, so the picture shows the code that ran, and
the shapes come from the :class:`~tensorbook.problem.Sizes` the page trains at.
"""

from __future__ import annotations

import inspect
import re

from tensorbook import manual_net
from tensorbook.draw.svg import Canvas, Picture, text_width
from tensorbook.problem import Sizes

__all__ = ["network_lines", "network_picture"]

_ASSIGNMENT = re.compile(r"^\s+((\w+)(?:\[[^]]*\])? = .+?)\s*(?:#.*)?$")
# what each line computes, by the tensor it assigns: the forward pass's arrow it sits on
_SEGMENT = {
    "h": 0, "grad_w1": 0,
    "h_relu": 1, "grad_h": 1,
    "y_pred": 2, "grad_w2": 2, "grad_h_relu": 2,
    "loss": 3, "grad_y_pred": 3,
}  # fmt: skip
BOX_W, BOX_H, LINE = 150, 24, 15


def network_lines() -> list[list[tuple[str, bool]]]:
    """The lines of the manual net on each of its four arrows, as ``(line, backward)``.

    Examples
    --------
    >>> for line, backward in network_lines()[1]:
    ...     print("backward" if backward else "forward ", line)
    forward  h_relu = h.clamp(min=0)
    backward grad_h = grad_h_relu.clone()
    backward grad_h[h < 0] = 0
    """
    source = inspect.getsource(manual_net.forward) + inspect.getsource(manual_net.gradients)
    segments: list[list[tuple[str, bool]]] = [[], [], [], []]
    for text in source.splitlines():
        match = _ASSIGNMENT.match(text)
        if match and match[2] in _SEGMENT:
            segments[_SEGMENT[match[2]]].append((match[1], match[2].startswith("grad_")))
    return segments


def network_picture(sizes: Sizes) -> Picture:
    """Draw the two-layer network at ``sizes``: x → h → h_relu → y_pred → loss.

    Examples
    --------
    >>> picture = network_picture(Sizes(n=64, d_in=1000, h=100, d_out=10))
    >>> picture.texts[2:4]
    ['x (64, 1000)', 'h (64, 100)']
    >>> "grad_w2 = h_relu.t().mm(grad_y_pred)" in picture.texts
    True
    """
    shapes = {
        "x": (sizes.n, sizes.d_in),
        "h": (sizes.n, sizes.h),
        "h_relu": (sizes.n, sizes.h),
        "y_pred": (sizes.n, sizes.d_out),
        "loss": (),
    }
    weights = {0: f"w1 {(sizes.d_in, sizes.h)}", 2: f"w2 {(sizes.h, sizes.d_out)}"}
    segments = network_lines()
    widest = max(text_width(line, 11, mono=True) for lines in segments for line, _ in lines)
    canvas = Canvas(max(300, 56 + widest + 8))
    canvas.words(30, 14, "forward", size=11, anchor="middle")
    canvas.words(56, 14, "backward", size=11)
    y = 22.0
    for k, (name, shape) in enumerate(shapes.items()):
        canvas.rect(8, y, BOX_W, BOX_H, tone="green" if name == "loss" else "blue")
        label = f"{name} {shape}" if shape else name
        canvas.text(16, y + 16, label, mono=True)
        y += BOX_H
        if k == len(segments):
            break
        lines = segments[k]
        notes = [(weights[k], False)] if k in weights else []
        height = LINE * (len(lines) + len(notes)) + 14
        canvas.line(30, y, 30, y + height, arrow=True)  # forward, down
        canvas.line(44, y + height, 44, y, arrow=True, dashed=True)  # backward, up
        for i, (line, _) in enumerate([*notes, *lines]):
            canvas.text(56, y + 16 + i * LINE, line, mono=True, size=11)
        y += height
    fields = {name: shape for name, shape in shapes.items() if name != "loss"}
    return canvas.picture(
        ("network_title", {}),
        (
            "network_desc",
            {
                "x": fields["x"],
                "w1": (sizes.d_in, sizes.h),
                "h": fields["h"],
                "w2": (sizes.h, sizes.d_out),
                "y_pred": fields["y_pred"],
            },
        ),
    )
