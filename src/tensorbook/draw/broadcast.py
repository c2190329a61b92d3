"""Broadcasting, drawn from the tensors that broadcast.

Their shapes are lined up from the right, the dimensions that are stretched marked,
and the result's shape below.

The result's shape is torch's own (:func:`torch.broadcast_shapes`); a result tensor,
when given, must have it, so the picture cannot disagree with the cell above it.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from tensorbook.draw.svg import Canvas, Picture, text_width

__all__ = ["broadcast_picture"]

CELL = 52
ROW = 30


def _shape(shape: tuple[int, ...]) -> str:
    return str(tuple(shape))


def broadcast_picture(
    operands: Mapping[str, torch.Tensor], result: torch.Tensor | None = None
) -> Picture:
    """Draw how the shapes of ``operands`` broadcast.

    Parameters
    ----------
    operands : mapping of str to torch.Tensor
        Each operand under the name the page gives it.
    result : torch.Tensor, optional
        What the cell computed from them; its shape is checked against torch's rule.

    Raises
    ------
    ValueError
        If there are no operands, or ``result`` does not have the broadcast shape.
    RuntimeError
        torch's own, if the shapes do not broadcast.

    Examples
    --------
    >>> m, row = torch.zeros(3, 4), torch.arange(4.0)
    >>> picture = broadcast_picture({"m": m, "row": row}, m + row)
    >>> picture.title
    'Broadcasting (3, 4), (4,) to (3, 4)'
    >>> [text for key, text in picture.words if key == "stretched"]
    ['stretched']
    >>> broadcast_picture({"m": m}, torch.zeros(4))
    Traceback (most recent call last):
    ...
    ValueError: the result's shape (4,) is not the broadcast shape (3, 4)
    """
    if not operands:
        msg = "no operands to draw"
        raise ValueError(msg)
    shapes = {name: tuple(t.shape) for name, t in operands.items()}
    shape = tuple(torch.broadcast_shapes(*shapes.values()))
    if result is not None and tuple(result.shape) != shape:
        msg = f"the result's shape {_shape(tuple(result.shape))} is not the broadcast shape {_shape(shape)}"
        raise ValueError(msg)
    rank = len(shape)
    names = [*shapes, "result"]
    label = max(text_width(name, 12, mono=True) for name in names) + 16
    right = label + rank * CELL + 12
    tail = max(text_width(_shape(s), 12, mono=True) for s in [*shapes.values(), shape])
    canvas = Canvas(max(300, right + tail + 10))
    for j in range(rank):
        canvas.words(label + j * CELL + CELL / 2, 16, "dim", anchor="middle", size=11, dim=j)
    stretched = 0
    y = 24
    for name, own in shapes.items():
        canvas.text(8, y + 19, name, mono=True)
        for j in range(rank):
            k = j - (rank - len(own))  # the operand's own dimension, right-aligned
            size = own[k] if k >= 0 else None
            x = label + j * CELL
            grows = (size is None or size == 1) and shape[j] != 1
            stretched += grows
            canvas.rect(
                x + 2,
                y + 2,
                CELL - 4,
                ROW - 4,
                tone="orange" if grows else "blue",
                dashed=size is None,
            )
            shown = "(1)" if size is None else str(size)
            if grows:
                shown += f"→{shape[j]}"
            canvas.text(x + CELL / 2, y + 19, shown, anchor="middle", mono=True)
        canvas.text(right, y + 19, _shape(own), mono=True)
        y += ROW
    canvas.line(8, y + 3, right - 12, y + 3)
    y += 6
    canvas.words(8, y + 19, "result", bold=True)
    for j in range(rank):
        x = label + j * CELL
        canvas.rect(x + 2, y + 2, CELL - 4, ROW - 4, tone="green")
        canvas.text(x + CELL / 2, y + 19, str(shape[j]), anchor="middle", mono=True, bold=True)
    canvas.text(right, y + 19, _shape(shape), mono=True, bold=True)
    y += ROW + 14
    canvas.rect(8, y, 22, 14, tone="orange")
    canvas.words(36, y + 11, "stretched", size=11)
    canvas.rect(130, y, 22, 14, dashed=True)
    canvas.words(158, y + 11, "missing", size=11)
    listed = ", ".join(_shape(s) for s in shapes.values())
    return canvas.picture(
        ("broadcast_title", {"shapes": listed, "result": _shape(shape)}),
        (
            "broadcast_desc",
            {"shapes": listed, "result": _shape(shape), "stretched": stretched},
        ),
    )
