"""Small grey images, learned filters and a confusion matrix, drawn from their tensors.

A pixel is a square in one colour whose strength follows its value, in :data:`LEVELS`
steps; neighbouring pixels at the same step are one box, which keeps a picture of
sixteen 8 × 8 images under 20 kB. A filter is drawn the same way,
blue where a weight is positive and orange where it is negative.
"""

from __future__ import annotations

import torch

from tensorbook.draw.svg import Canvas, Picture

__all__ = ["LEVELS", "confusion_picture", "digits_picture", "filters_picture"]

LEVELS = 4
"""The strengths a pixel is drawn in, besides blank."""
_PIXEL = 4.0
_GAP = 4.0
_LEFT = 6.0


def _levels(values: torch.Tensor) -> torch.Tensor:
    """Each of ``values`` (at least 0) as a step from 0 (blank) to :data:`LEVELS`.

    >>> _levels(torch.tensor([0.0, 0.1, 0.5, 1.0])).tolist()
    [0, 1, 2, 4]
    """
    top = values.max()
    if top <= 0:
        return torch.zeros_like(values, dtype=torch.long)
    return torch.ceil(values / top * LEVELS).long()


def _draw_grid(
    canvas: Canvas, levels: torch.Tensor, x: float, y: float, *, pixel: float, tone: str
) -> None:
    """Draw a ``(H, W)`` grid of steps as boxes, one for a run of pixels at one step.

    A run spans columns of one row; the runs below it that span the same columns at the
    same step join its box.
    """
    boxes: dict[tuple[int, int, int], int] = {}  # (first column, end, step): its first row
    finished: list[tuple[int, int, int, int, int]] = []  # rows, then columns, then step
    for row, steps in enumerate([*levels.tolist(), []]):
        runs = set()
        start = 0
        for column in range(1, len(steps) + 1):
            if column == len(steps) or steps[column] != steps[start]:
                if steps[start]:
                    runs.add((start, column, steps[start]))
                start = column
        for run in [run for run in boxes if run not in runs]:
            finished.append((boxes.pop(run), row, *run))
        for run in runs:
            boxes.setdefault(run, row)
    for top, bottom, first, end, step in sorted(finished):
        canvas.shade(
            x + first * pixel, y + top * pixel, (end - first) * pixel, (bottom - top) * pixel,
            tone=tone, opacity=step / LEVELS,
        )  # fmt: skip


def digits_picture(
    images: torch.Tensor,
    labels: torch.Tensor,
    *,
    name: str,
    predicted: torch.Tensor | None = None,
    columns: int = 8,
) -> Picture:
    """Draw ``(N, 1, H, W)`` images in rows of ``columns``, each with its label under it.

    With ``predicted``, each label is followed by what was predicted (``7 → 1``), and the
    picture is titled as the mistakes of ``name`` (code or a number, not words). Values
    are drawn from 0 (blank) to the largest of all the images (the strongest colour).

    Raises
    ------
    ValueError
        If ``images`` is not ``(N, 1, H, W)`` with one label (and prediction) each.

    Examples
    --------
    >>> images = torch.zeros(2, 1, 8, 8)
    >>> images[0, 0, 2:6, 3] = 16
    >>> picture = digits_picture(images, torch.tensor([1, 0]), name="splits.train")
    >>> picture.title, picture.texts
    ('2 images of splits.train, with their labels', ['1', '0'])
    >>> digits_picture(images, torch.tensor([1]), name="x")
    Traceback (most recent call last):
    ...
    ValueError: expected (N, 1, H, W) images and N labels, got (2, 1, 8, 8) and (1,)
    """
    count = len(images)
    shapes_agree = predicted is None or predicted.shape == labels.shape
    if images.dim() != 4 or images.shape[1] != 1 or labels.shape != (count,) or not shapes_agree:
        msg = (
            f"expected (N, 1, H, W) images and N labels, got {tuple(images.shape)} "
            f"and {tuple(labels.shape)}"
        )
        raise ValueError(msg)
    height, width = images.shape[2] * _PIXEL, images.shape[3] * _PIXEL
    step_x = max(width, 30.0) + _GAP
    levels = _levels(images.detach().cpu().float().clamp(min=0))
    canvas = Canvas(_LEFT * 2 + columns * step_x - _GAP)
    for k in range(count):
        x = _LEFT + (k % columns) * step_x
        y = 6 + (k // columns) * (height + 24)
        canvas.rect(x - 0.5, y - 0.5, width + 1, height + 1, dashed=True)
        _draw_grid(canvas, levels[k, 0], x, y, pixel=_PIXEL, tone="blue")
        label = str(int(labels[k]))
        if predicted is not None:
            label += f" → {int(predicted[k])}"
        canvas.text(x + width / 2, y + height + 15, label, anchor="middle", size=11)
    if predicted is None:
        return canvas.picture(
            ("digits_title", {"count": count, "name": name}), ("digits_desc", {"count": count})
        )
    return canvas.picture(
        ("mistakes_title", {"count": count, "name": name}), ("mistakes_desc", {"name": name})
    )


def filters_picture(weight: torch.Tensor, *, name: str) -> Picture:
    """Draw each ``(1, kh, kw)`` filter of a first convolution's ``(O, 1, kh, kw)`` weight.

    Raises
    ------
    ValueError
        If ``weight`` is not a one-channel convolution's.

    Examples
    --------
    >>> weight = torch.tensor([[[[1.0, -1.0], [0.0, 0.5]]]])
    >>> picture = filters_picture(weight, name="cnn[0]")
    >>> picture.title
    'The 1 learned filters of cnn[0], 2 × 2 each'
    >>> [text for key, text in picture.words if key == "filters_desc"]  # doctest: +ELLIPSIS
    ["Each filter's weights, ... the largest weight is 1.00 in size."]
    """
    if weight.dim() != 4 or weight.shape[1] != 1:
        msg = f"expected a (O, 1, kh, kw) weight, got {tuple(weight.shape)}"
        raise ValueError(msg)
    weight = weight.detach().cpu().float()
    largest = weight.abs().max()
    kh, kw = weight.shape[2:]
    pixel = 10.0
    step_x = max(kw * pixel, 24.0) + 12
    canvas = Canvas(_LEFT * 2 + len(weight) * step_x - 12)
    for k, kernel in enumerate(weight[:, 0]):
        x = _LEFT + k * step_x
        canvas.rect(x - 0.5, 6 - 0.5, kw * pixel + 1, kh * pixel + 1, dashed=True)
        for sign, tone in ((1, "blue"), (-1, "orange")):
            part = (sign * kernel).clamp(min=0)
            levels = torch.ceil(part / largest * LEVELS).long()
            _draw_grid(canvas, levels, x, 6, pixel=pixel, tone=tone)
        canvas.text(x + kw * pixel / 2, 6 + kh * pixel + 15, str(k), anchor="middle", size=11)
    return canvas.picture(
        ("filters_title", {"count": len(weight), "name": name, "size": f"{kh} × {kw}"}),
        ("filters_desc", {"largest": f"{largest:.2f}"}),
    )


def confusion_picture(matrix: torch.Tensor, *, name: str) -> Picture:
    """Draw a confusion matrix: a row per true class, a column per predicted class.

    Each cell's colour grows with its share of its row, and a cell that holds any images
    shows their count.

    Raises
    ------
    ValueError
        If ``matrix`` is not square.

    Examples
    --------
    >>> picture = confusion_picture(torch.tensor([[3, 1], [0, 4]]), name="cnn")
    >>> picture.title, sorted(picture.texts)  # the classes twice, and three counts
    ('Confusion matrix of cnn', ['0', '0', '1', '1', '1', '3', '4', 'predicted digit', 'true digit'])
    """
    if matrix.dim() != 2 or matrix.shape[0] != matrix.shape[1]:
        msg = f"expected a square (classes, classes) matrix, got {tuple(matrix.shape)}"
        raise ValueError(msg)
    matrix = matrix.detach().cpu()
    classes = len(matrix)
    cell = min(26.0, 260.0 / classes)
    left, top = 56.0, 34.0
    canvas = Canvas(left + classes * cell + 10)
    canvas.words(left + classes * cell / 2, 12, "predicted_digit", anchor="middle", size=11)
    canvas.words(4, top - 6, "true_digit", size=11)
    for k in range(classes):
        canvas.text(left + (k + 0.5) * cell, top - 6, str(k), anchor="middle", size=11)
        canvas.text(left - 6, top + (k + 0.5) * cell + 4, str(k), anchor="end", size=11)
    shares = matrix.float() / matrix.sum(dim=1, keepdim=True).clamp(min=1)
    for row in range(classes):
        for column in range(classes):
            x, y = left + column * cell, top + row * cell
            canvas.rect(x, y, cell, cell)
            count = int(matrix[row, column])
            if count:
                tone = "blue" if row == column else "orange"
                share = max(float(shares[row, column]), 1 / LEVELS)
                canvas.shade(x, y, cell, cell, tone=tone, opacity=share)
                canvas.text(x + cell / 2, y + cell / 2 + 4, str(count), anchor="middle", size=11)
    right = int(matrix.diagonal().sum())
    return canvas.picture(
        ("confusion_title", {"name": name}),
        ("confusion_desc", {"right": right, "total": int(matrix.sum())}),
    )
