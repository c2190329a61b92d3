"""Memory and strides, drawn from the tensors themselves.

Each storage is one strip of cells, and each tensor the grid it reads from its strip.

A tensor reads element ``[i, j]`` from its storage at ``offset + i * stride[0] +
j * stride[1]``. The picture takes the strides and the offset from ``stride()`` and
``storage_offset()``, and draws two tensors on one strip only if they share one
storage (``untyped_storage().data_ptr()``): a view or a transpose shares its
original's strip, ``.contiguous()`` of a transpose gets a strip of its own.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch

from tensorbook.draw.svg import MAX_WIDTH, Canvas, Picture

__all__ = ["memory_picture", "storage_values"]

CELL = 30
GRID_W, GRID_H = 36, 30
MOST_CELLS = (MAX_WIDTH - 16) // CELL  # 12: a strip as wide as a phone's column


def storage_values(tensor: torch.Tensor) -> list[float]:
    """Every element of the storage ``tensor`` reads from, in the storage's order.

    Examples
    --------
    >>> x = torch.arange(6.0).reshape(2, 3)
    >>> storage_values(x.t()[1:])
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    """
    storage = tensor.untyped_storage()
    count = storage.nbytes() // tensor.element_size()
    whole = torch.empty(0, dtype=tensor.dtype, device=tensor.device)
    whole.set_(storage, 0, (count,), (1,))
    return whole.cpu().tolist()


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _reads(tensor: torch.Tensor) -> list[list[int]]:
    """The storage index of each element, as a grid (a 1-D tensor is one row)."""
    rows, cols = (1, tensor.shape[0]) if tensor.dim() == 1 else tuple(tensor.shape)
    strides = (0, tensor.stride(0)) if tensor.dim() == 1 else tensor.stride()
    offset = int(tensor.storage_offset())  # an int, or a SymInt only while torch traces
    return [[offset + i * strides[0] + j * strides[1] for j in range(cols)] for i in range(rows)]


def memory_picture(tensors: Mapping[str, torch.Tensor]) -> Picture:
    """Draw the storage strips of ``tensors`` and the grid each one reads from its strip.

    Parameters
    ----------
    tensors : mapping of str to torch.Tensor
        One- or two-dimensional tensors, each under the expression that made it; those
        that share a storage are drawn on one strip.

    Raises
    ------
    ValueError
        If there is no tensor, one has more than two dimensions, or a storage has more
        than :data:`MOST_CELLS` elements (12: wider than a phone's column).

    Examples
    --------
    >>> x = torch.arange(12.0).reshape(3, 4)
    >>> picture = memory_picture({"x": x, "x.t()": x.t(), "x.t().contiguous()": x.t().contiguous()})
    >>> [text for key, text in picture.words if key.startswith("layout")]
    ['stride (4, 1) · offset 0 · contiguous', 'stride (1, 4) · offset 0 · not contiguous', 'stride (3, 1) · offset 0 · contiguous']
    >>> picture.title
    'Storage and strides of x, x.t(), x.t().contiguous()'
    """
    if not tensors:
        msg = "no tensor to draw"
        raise ValueError(msg)
    storages: dict[int, list[str]] = {}
    for name, tensor in tensors.items():
        if tensor.dim() not in (1, 2):
            msg = f"{name} has {tensor.dim()} dimensions; the picture draws one or two"
            raise ValueError(msg)
        length = tensor.untyped_storage().nbytes() // tensor.element_size()
        if length > MOST_CELLS:
            msg = f"{name}'s storage has {length} elements, more than {MOST_CELLS} to draw"
            raise ValueError(msg)
        storages.setdefault(tensor.untyped_storage().data_ptr(), []).append(name)
    widest = max(len(storage_values(tensors[names[0]])) for names in storages.values())
    canvas = Canvas(max(330, 16 + widest * CELL))
    y = 4.0
    for number, names in enumerate(storages.values(), 1):
        values = storage_values(tensors[names[0]])
        canvas.words(8, y + 14, "storage", bold=True, number=number)
        y += 20
        for k, value in enumerate(values):
            canvas.rect(8 + k * CELL, y, CELL, 24, tone="blue")
            canvas.text(8 + k * CELL + CELL / 2, y + 16, _number(value), anchor="middle", mono=True)
            canvas.text(8 + k * CELL + CELL / 2, y + 36, str(k), anchor="middle", size=11)
        y += 48
        for name in names:
            tensor = tensors[name]
            reads = _reads(tensor)
            canvas.text(8, y + 14, name, mono=True, bold=True)
            y += 20
            canvas.words(
                8,
                y + 12,
                "layout_contiguous" if tensor.is_contiguous() else "layout_strided",
                size=11,
                stride=tuple(tensor.stride()),
                offset=tensor.storage_offset(),
            )
            y += 22
            canvas.words(8, y + 10, "reads", size=11)
            y += 14
            order = [index for row in reads for index in row]
            for k in range(len(values)):
                canvas.rect(8 + k * CELL, y, CELL, 18, tone="orange" if k in order else None)
            for position, index in enumerate(order):
                if order.index(index) == position:  # a broadcast view reads a cell twice
                    x = 8 + index * CELL + CELL / 2
                    canvas.text(x, y + 13, str(position), anchor="middle", size=11)
            y += 26
            for i, row in enumerate(reads):
                for j, index in enumerate(row):
                    x, top = 8 + j * GRID_W, y + i * GRID_H
                    canvas.rect(x, top, GRID_W, GRID_H, tone="green")
                    canvas.text(
                        x + GRID_W / 2, top + 14, _number(values[index]), anchor="middle", mono=True
                    )
                    canvas.text(x + GRID_W / 2, top + 26, f"[{index}]", anchor="middle", size=11)
            y += len(reads) * GRID_H + 14
    shown = ", ".join(tensors)
    return canvas.picture(
        ("memory_title", {"names": shown}),
        ("memory_desc", {"tensors": len(tensors), "storages": len(storages)}),
    )
