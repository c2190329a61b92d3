"""``torch.cat`` against ``torch.stack``, drawn from the tensors joined.

The inputs are blocks, each in its own colour, and each result shows where every
input's elements land.

Where each element lands is computed by the same join, not by a rule written here:
the inputs are replaced by tensors of their own shape holding their index, and joined
exactly as asked, so the colours are ``cat``'s or ``stack``'s own answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from tensorbook.draw.svg import Canvas, Picture, text_width

__all__ = ["join_picture", "sources"]

CELL = 18
ORDER = ("blue", "orange", "green", "purple", "red", "grey")
JOINS = {"cat": torch.cat, "stack": torch.stack}


def sources(inputs: Sequence[torch.Tensor], how: str, dim: int) -> torch.Tensor:
    """Which input each element of the joined result comes from, as the join computes it.

    Examples
    --------
    >>> p, q = torch.ones(2, 2), torch.zeros(2, 2)
    >>> sources([p, q], "cat", 1).tolist()
    [[0, 0, 1, 1], [0, 0, 1, 1]]
    >>> sources([p, q], "stack", 2).tolist()
    [[[0, 1], [0, 1]], [[0, 1], [0, 1]]]
    """
    marked = [torch.full(t.shape, i, dtype=torch.long) for i, t in enumerate(inputs)]
    return JOINS[how](marked, dim)


def _grid(canvas: Canvas, x: float, y: float, source: torch.Tensor) -> None:
    rows = source.tolist() if source.dim() == 2 else [source.tolist()]
    for i, row in enumerate(rows):
        for j, which in enumerate(row):
            canvas.rect(x + j * CELL, y + i * CELL, CELL, CELL, tone=ORDER[which % len(ORDER)])


def join_picture(inputs: Mapping[str, torch.Tensor], joins: Sequence[tuple[str, int]]) -> Picture:
    """Draw ``inputs`` and, for each ``(how, dim)`` in ``joins``, the result of that join.

    Parameters
    ----------
    inputs : mapping of str to torch.Tensor
        One- or two-dimensional tensors, under their names on the page.
    joins : sequence of (str, int)
        ``("cat", dim)`` or ``("stack", dim)``; each is computed with torch on the real
        inputs, and a result of three dimensions is drawn as its slices along dim 0,
        as torch prints it.

    Raises
    ------
    ValueError
        If there is no input or no join, an input has more than two dimensions, or a
        join is neither ``cat`` nor ``stack``. torch's own error if the join fails.

    Examples
    --------
    >>> p, q = torch.ones(2, 3), torch.zeros(2, 3)
    >>> picture = join_picture({"p": p, "q": q}, [("cat", 1), ("stack", 0)])
    >>> [t for t in picture.texts if t.startswith("torch.")]
    ['torch.cat([p, q], dim=1) → (2, 6)', 'torch.stack([p, q], dim=0) → (2, 2, 3)']
    """
    if not inputs or not joins:
        msg = "nothing to join"
        raise ValueError(msg)
    for name, tensor in inputs.items():
        if tensor.dim() not in (1, 2):
            msg = f"{name} has {tensor.dim()} dimensions; the picture draws one or two"
            raise ValueError(msg)
    for how, _ in joins:
        if how not in JOINS:
            msg = f"{how!r} is not a join the picture draws; it draws 'cat' and 'stack'"
            raise ValueError(msg)
    tensors = list(inputs.values())
    names = ", ".join(inputs)
    results = [(how, dim, JOINS[how](tensors, dim)) for how, dim in joins]
    labels = [
        f"torch.{how}([{names}], dim={dim}) → {tuple(result.shape)}" for how, dim, result in results
    ]
    widest = max(text_width(label, 11, mono=True) for label in labels)
    canvas = Canvas(max(300, widest + 20))
    x = 8.0
    for i, (name, tensor) in enumerate(inputs.items()):
        label = f"{name} {tuple(tensor.shape)}"
        canvas.text(x, 16, label, mono=True, size=11)
        _grid(canvas, x, 24, torch.full(tensor.shape, i, dtype=torch.long))
        width = max(text_width(label, 11, mono=True), tensor.shape[-1] * CELL)
        x += width + 24
    y = 24 + max(t.shape[0] if t.dim() == 2 else 1 for t in tensors) * CELL + 12
    for (how, dim, _), label in zip(results, labels, strict=True):
        canvas.line(8, y, canvas.width - 8, y, dashed=True)
        canvas.text(8, y + 18, label, mono=True, size=11)
        y += 28
        source = sources(tensors, how, dim)
        if source.dim() == 3:
            x = 8.0
            for k in range(source.shape[0]):
                canvas.text(x, y + 10, f"[{k}]", mono=True, size=11)
                _grid(canvas, x, y + 14, source[k])
                x += source.shape[2] * CELL + 20
            y += 14 + source.shape[1] * CELL + 10
        else:
            _grid(canvas, 8, y, source)
            y += (source.shape[0] if source.dim() == 2 else 1) * CELL + 10
    joined = ", ".join(f"{how}(dim={dim})" for how, dim in joins)
    return canvas.picture(
        ("join_title", {"joins": joined, "names": names}),
        ("join_desc", {"joins": joined, "names": names}),
    )
