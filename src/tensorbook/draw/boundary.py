"""A classifier's decision boundary in the plane, with the points it was judged on.

The plane is cut into a grid of square cells; each cell is classified at its centre,
and the boundary is drawn in ink wherever two neighbouring cells get different classes.
Each point is a small square in its true class's colour, so a point on the wrong side
of the boundary is one the classifier gets wrong.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from tensorbook.draw.svg import Canvas, Picture

__all__ = ["boundary_picture"]

CLASS_TONES = ("blue", "orange", "green", "purple", "red")
"""The colour of each class, in order."""
AREA = 300
"""The plotted square's side, in picture units."""
_MARK = 4.0
_TOP = 8.0


def _grid(
    lows: tuple[float, float], highs: tuple[float, float], cells: int
) -> tuple[torch.Tensor, float, float]:
    """The centres of ``cells`` × ``cells`` cells covering the box, row by row from the top."""
    (x0, y0), (x1, y1) = lows, highs
    step_x, step_y = (x1 - x0) / cells, (y1 - y0) / cells
    xs = x0 + step_x * (torch.arange(cells) + 0.5)
    ys = y1 - step_y * (torch.arange(cells) + 0.5)  # the picture's rows run downwards
    grid_y, grid_x = torch.meshgrid(ys, xs, indexing="ij")
    return torch.stack([grid_x.flatten(), grid_y.flatten()], dim=1), step_x, step_y


def boundary_picture(
    classify: Callable[[torch.Tensor], torch.Tensor],
    points: torch.Tensor,
    labels: torch.Tensor,
    *,
    name: str,
    cells: int = 60,
) -> Picture:
    """Draw where ``classify`` changes its answer, over ``points`` coloured by ``labels``.

    Parameters
    ----------
    classify : callable
        From an ``(n, 2)`` float32 tensor of points on the CPU to their ``n`` classes.
    points, labels : torch.Tensor
        The points, ``(n, 2)``, and their true classes, ``(n,)``, drawn as squares.
    name : str
        What is classifying, for the picture's title (code or a number, not words).
    cells : int
        The grid's cells along each side.

    Raises
    ------
    ValueError
        If ``points`` is not ``(n, 2)``, or there are more classes than colours, or
        the picture is over :data:`~tensorbook.draw.svg.MAX_BYTES` (a few hundred
        points: draw a sample of them).

    Examples
    --------
    >>> points = torch.tensor([[-1.0, 0.0], [1.0, 0.0]])
    >>> picture = boundary_picture(lambda p: (p[:, 0] > 0).long(), points,
    ...                            torch.tensor([0, 0]), name="x > 0", cells=4)
    >>> picture.title
    'Decision boundary of x > 0'
    >>> [text for key, text in picture.words if key == "boundary_desc"]  # doctest: +ELLIPSIS
    ['... 2 points ... 1 of them on the wrong side of it.']
    """
    if points.dim() != 2 or points.shape[1] != 2 or len(points) != len(labels):
        shapes = f"{tuple(points.shape)} and {tuple(labels.shape)}"
        msg = f"expected (n, 2) points and n labels, got {shapes}"
        raise ValueError(msg)
    points, labels = points.detach().cpu().float(), labels.detach().cpu()
    classes = int(labels.max().item()) + 1
    if classes > len(CLASS_TONES):
        msg = f"{classes} classes but colours for only {len(CLASS_TONES)}"
        raise ValueError(msg)
    margin = 0.05 * (points.max() - points.min()).item()
    lows = (points[:, 0].min().item() - margin, points[:, 1].min().item() - margin)
    highs = (points[:, 0].max().item() + margin, points[:, 1].max().item() + margin)
    centres, step_x, step_y = _grid(lows, highs, cells)
    grid = classify(centres).reshape(cells, cells).cpu()
    wrong = int((classify(points).cpu() != labels).sum().item())

    canvas = Canvas(AREA + 2 * _TOP)
    cell = AREA / cells
    canvas.rect(_TOP, _TOP, AREA, AREA)
    # the boundary: a vertical stroke between left and right neighbours that differ, a
    # horizontal one between upper and lower; consecutive strokes joined into one line
    for across in (True, False):
        for i in range(cells - 1):
            start = None
            for j in range(cells + 1):
                if across:
                    differs = j < cells and bool(grid[j, i] != grid[j, i + 1])
                else:
                    differs = j < cells and bool(grid[i, j] != grid[i + 1, j])
                if differs and start is None:
                    start = j
                elif not differs and start is not None:
                    at = _TOP + (i + 1) * cell
                    a, b = _TOP + start * cell, _TOP + j * cell
                    if across:
                        canvas.line(at, a, at, b)
                    else:
                        canvas.line(a, at, b, at)
                    start = None
    for (x, y), label in zip(points.tolist(), labels.tolist(), strict=True):
        px = _TOP + (x - lows[0]) / step_x * cell
        py = _TOP + (highs[1] - y) / step_y * cell
        half = _MARK / 2
        canvas.rect(px - half, py - half, _MARK, _MARK, tone=CLASS_TONES[label], solid=True)
    legend = _TOP + AREA + 20
    x = _TOP
    for label in range(classes):
        canvas.rect(x, legend - 8, 8, 8, tone=CLASS_TONES[label], solid=True)
        canvas.words(x + 12, legend, "class", number=label)
        x += 80
    return canvas.picture(
        ("boundary_title", {"name": name}),
        ("boundary_desc", {"grid": f"{cells} × {cells}", "points": len(labels), "wrong": wrong}),
    )
