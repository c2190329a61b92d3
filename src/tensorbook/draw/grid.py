"""The floating-point grid around a number, drawn from torch's own neighbours of it.

Near a power of two the grid is uneven: the numbers below it are twice as close
together as those above, so whether a small step survives rounding depends on its
direction. The picture places each neighbour (``torch.nextafter``) at its true value,
and each step twice: where exact arithmetic would put it, and where the dtype rounds it.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from tensorbook.draw.svg import Canvas, Picture

__all__ = ["float_grid_picture", "neighbours"]

WIDTH = 340
LEFT, RIGHT = 20, 320
AXIS = 56


def neighbours(center: float, count: int, dtype: torch.dtype = torch.float32) -> list[float]:
    """The ``count`` numbers of ``dtype`` below ``center``, ``center``, and ``count`` above.

    Examples
    --------
    >>> [f"{v - 1:+.3g}" for v in neighbours(1.0, 1)]
    ['-5.96e-08', '+0', '+1.19e-07']
    """
    here = torch.tensor(center, dtype=dtype)
    below, above = [here], [here]
    for _ in range(count):
        below.append(torch.nextafter(below[-1], torch.tensor(-torch.inf, dtype=dtype)))
        above.append(torch.nextafter(above[-1], torch.tensor(torch.inf, dtype=dtype)))
    return [v.item() for v in [*reversed(below[1:]), here, *above[1:]]]


def float_grid_picture(
    center: float,
    steps: Sequence[float],
    *,
    dtype: torch.dtype = torch.float32,
    count: int = 3,
) -> Picture:
    """Draw the numbers of ``dtype`` around ``center`` and where ``center + step`` rounds.

    Parameters
    ----------
    center : float
        A number of ``dtype``, drawn in the middle.
    steps : sequence of float
        Each is added to ``center`` in ``dtype``: an arrow to the exact sum, and a dot
        on the grid number it rounds to.
    dtype : torch.dtype
        A floating-point type.
    count : int
        How many neighbours to draw on each side.

    Raises
    ------
    ValueError
        If ``center`` is not a number of ``dtype``, or a step lands outside the drawn
        neighbours.

    Examples
    --------
    >>> picture = float_grid_picture(1.0, steps=(5e-8, -5e-8))
    >>> [text for key, text in picture.words if key == "grid_step"]
    ['1 + 5e-08 → 1', '1 - 5e-08 → 0.99999994']
    >>> [text for key, text in picture.words if key.startswith("grid_gap")]
    ['gap 5.96e-08', 'gap 1.19e-07']
    """
    exact = torch.tensor(center, dtype=torch.float64)
    if torch.tensor(center, dtype=dtype).double() != exact:
        msg = f"{center!r} is not a {dtype} number; give one, e.g. 1.0"
        raise ValueError(msg)
    grid = neighbours(center, count, dtype)
    low, high = grid[0], grid[-1]
    for step in steps:
        if not low < center + step < high:
            msg = f"the step {step:g} lands outside the {count} neighbours drawn; give count"
            raise ValueError(msg)

    def x_of(value: float) -> float:
        return LEFT + (value - low) / (high - low) * (RIGHT - LEFT)

    canvas = Canvas(WIDTH)
    canvas.line(LEFT - 10, AXIS, RIGHT + 10, AXIS)
    for value in grid:
        canvas.line(x_of(value), AXIS - 8, x_of(value), AXIS + 8)
    # beside its tick, so that a dashed line falling on the centre does not cross it
    canvas.text(x_of(center) + 4, AXIS + 22, f"{center:g}", mono=True, bold=True)
    gaps = (("grid_gap", center - grid[count - 1]), ("grid_gap", grid[count + 1] - center))
    for (key, gap), side in zip(gaps, (-1, 1), strict=True):
        # each gap named on its own side of the centre, so the two never overlap
        anchor = "end" if side < 0 else "start"
        canvas.words(
            x_of(center) + side * 4, AXIS - 14, key, anchor=anchor, size=11, gap=f"{gap:.3g}"
        )
    y = AXIS + 44
    for step in steps:
        landed = (torch.tensor(center, dtype=dtype) + step).item()
        canvas.line(x_of(center), y, x_of(center + step), y, arrow=True)
        canvas.line(x_of(landed), y + 4, x_of(landed), AXIS + 8, dashed=True)
        sign = "+" if step > 0 else "-"
        canvas.words(
            x_of(center), y + 18, "grid_step", anchor="middle", size=11,
            center=f"{center:g}", sign=sign, step=f"{abs(step):g}", result=f"{landed:.8g}",
        )  # fmt: skip
        y += 36
    name = str(dtype).removeprefix("torch.")
    return canvas.picture(
        ("grid_title", {"dtype": name, "center": f"{center:g}"}),
        (
            "grid_desc",
            {
                "dtype": name,
                "center": f"{center:g}",
                "count": count,
                "below": f"{gaps[0][1]:.3g}",
                "above": f"{gaps[1][1]:.3g}",
            },
        ),
    )
