"""Training and validation loss after each epoch, and the epoch where validation was best.

Each epoch's loss is a small square, blue for training and orange for validation, so
that the two can be told apart without a legend's lines; a long run is thinned to at
most :data:`MARKS` squares a curve, always keeping the last epoch and the one with the
lowest validation loss, which a dashed line marks: the epoch early stopping would keep.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from tensorbook.draw.svg import Canvas, Picture

__all__ = ["MARKS", "curves_picture"]

MARKS = 100
"""The most squares drawn for one curve."""
WIDTH, HEIGHT = 300.0, 170.0
"""The plotted area, in picture units."""
_LEFT, _TOP, _MARK = 40.0, 10.0, 3.0


def _ticks(top: float) -> list[float]:
    """Round values from 0 to at least ``top``, at most seven of them.

    >>> _ticks(1.8), _ticks(0.9)
    ([0.0, 0.5, 1.0, 1.5, 2.0], [0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    """
    power = 10 ** math.floor(math.log10(top))
    steps = (power * f for f in (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0))
    step = next(step for step in steps if math.ceil(top / step - 1e-9) <= 6)
    return [round(k * step, 10) for k in range(math.ceil(top / step - 1e-9) + 1)]


def curves_picture(
    train_loss: Sequence[float], validation_loss: Sequence[float], *, name: str
) -> Picture:
    """Draw both losses against the epoch; a dashed line marks the lowest validation loss.

    ``name`` says whose losses they are, in the title: code or a number, not words.

    Raises
    ------
    ValueError
        If the curves are empty, of different lengths, or a loss is not finite and
        non-negative.

    Examples
    --------
    >>> picture = curves_picture([1.0, 0.5, 0.25], [1.1, 0.7, 0.8], name="model")
    >>> picture.title
    'Training and validation loss of model over 3 epochs'
    >>> [text for key, text in picture.words if key == "lowest_epoch"]
    ['lowest validation loss: epoch 1']
    >>> curves_picture([1.0], [1.0, 2.0], name="model")
    Traceback (most recent call last):
    ...
    ValueError: 1 training losses but 2 validation losses: give one of each per epoch
    """
    epochs = len(train_loss)
    if epochs != len(validation_loss) or epochs == 0:
        msg = (
            f"{epochs} training losses but {len(validation_loss)} validation losses: "
            "give one of each per epoch"
        )
        raise ValueError(msg)
    losses = [*train_loss, *validation_loss]
    if not all(math.isfinite(loss) and loss >= 0 for loss in losses):
        msg = "every loss must be finite and at least 0"
        raise ValueError(msg)
    best = min(range(epochs), key=lambda epoch: validation_loss[epoch])
    ticks = _ticks(max(losses) or 1.0)
    top = ticks[-1]
    span = max(epochs - 1, 1)

    def x(epoch: float) -> float:
        return _LEFT + WIDTH * epoch / span

    def y(loss: float) -> float:
        return _TOP + HEIGHT * (1 - loss / top)

    canvas = Canvas(_LEFT + WIDTH + 20)
    canvas.line(_LEFT, _TOP, _LEFT, _TOP + HEIGHT)
    canvas.line(_LEFT, _TOP + HEIGHT, _LEFT + WIDTH, _TOP + HEIGHT)
    for tick in ticks:
        canvas.line(_LEFT - 4, y(tick), _LEFT, y(tick))
        canvas.text(_LEFT - 6, y(tick) + 4, f"{tick:g}", anchor="end", size=11)
    for epoch in sorted({0, epochs // 2, epochs - 1}):
        canvas.line(x(epoch), _TOP + HEIGHT, x(epoch), _TOP + HEIGHT + 4)
        canvas.text(x(epoch), _TOP + HEIGHT + 16, str(epoch), anchor="middle", size=11)
    canvas.words(_LEFT + WIDTH / 2, _TOP + HEIGHT + 32, "epoch_axis", anchor="middle")
    canvas.line(x(best), _TOP, x(best), _TOP + HEIGHT, dashed=True)
    right = best > epochs / 2
    canvas.words(
        x(best) + (-4 if right else 4), _TOP + 12, "lowest_epoch",
        anchor="end" if right else "start", size=11, epoch=best,
    )  # fmt: skip
    every = math.ceil(epochs / MARKS)
    shown = sorted({*range(0, epochs, every), epochs - 1, best})
    for curve, tone in ((train_loss, "blue"), (validation_loss, "orange")):
        for epoch in shown:
            canvas.rect(
                x(epoch) - _MARK / 2, y(curve[epoch]) - _MARK / 2, _MARK, _MARK,
                tone=tone, solid=True,
            )  # fmt: skip
    legend = _TOP + HEIGHT + 52
    for offset, tone, key in ((0, "blue", "training_loss"), (150, "orange", "validation_loss")):
        canvas.rect(_LEFT + offset, legend - 8, 8, 8, tone=tone, solid=True)
        canvas.words(_LEFT + offset + 12, legend, key)
    return canvas.picture(
        ("curves_title", {"name": name, "epochs": epochs}),
        (
            "curves_desc",
            {
                "best": best,
                "low": f"{validation_loss[best]:.3f}",
                "last": f"{validation_loss[-1]:.3f}",
                "train": f"{train_loss[-1]:.3f}",
            },
        ),
    )
