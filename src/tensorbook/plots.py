"""Loss curves on a log scale, as a picture of :mod:`tensorbook.draw`.

The figure is drawn as the book's other pictures are (:class:`tensorbook.draw.svg.Canvas`):
its words are real text, at least 11 CSS px on a 412 px phone, in the page's colours
in either mode, named and described for a screen reader in the edition's language.
It was a Matplotlib figure, 640 px wide with 10 pt text: a phone shrank its words to
8 px. ``python -m tensorbook.compare`` draws one with every network of the book.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from tensorbook.draw.curves import _ticks  # round ticks, as the loss per epoch has
from tensorbook.draw.svg import MAX_WIDTH, MIN_TEXT, Canvas, Picture, text_width

__all__ = ["loss_figure"]

TONE_ORDER = ("blue", "orange", "green", "red", "purple", "grey")
"""Each curve's colour, in order: Matplotlib's first four, as the figure had."""
LOSS_AXIS = "L = Σ(ŷ − y)²"
DIFFERENCE_AXIS = "|L / L₀ − 1|"
STEP_AXIS = "t"
COLUMN = 2.0
"""The width, in picture units, in which a line keeps only its highest and lowest point:
500 steps over 320 units are more points than a phone's pixels show, and a noisy line of
them all weighed 4 kB."""
TOLERANCE = 0.3
"""How far, in picture units, a drawn line may pass from a point it leaves out."""
_LEFT, _RIGHT = 46.0, 366.0  # the plotted area's sides: room for "1e-15" and a last "500"
_HEIGHT, _BELOW = 170.0, 110.0  # the loss panel's height and the difference panel's
_LABELLED = 22.0  # the least distance between two labelled decades


def _simplified(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """``points`` thinned to what a line drawn through them shows.

    First each :data:`COLUMN` units of width keep their highest and lowest point, in
    order (a noisy stretch still fills the band it fills), then Ramer, Douglas and
    Peucker's algorithm leaves out each point within :data:`TOLERANCE` of the line
    through the rest (a smooth stretch keeps a few points).

    >>> _simplified([(0, 0), (2, 0.1), (4, 0), (6, 5), (8, 5)])  # (2, 0.1): within 0.3
    [(0, 0), (4, 0), (6, 5), (8, 5)]
    >>> _simplified([(0, 0), (0.5, 9), (1, 3), (1.5, 4), (2, 0), (3, 0), (4, 0)])
    [(0, 0), (0.5, 9), (2, 0), (4, 0)]
    """
    columns: dict[int, list[int]] = {}
    for i, (x, _) in enumerate(points):
        columns.setdefault(math.floor(x / COLUMN), []).append(i)
    kept = sorted(
        {0, len(points) - 1}
        | {
            extreme(column, key=lambda i: points[i][1])
            for column in columns.values()
            for extreme in (min, max)
        }
    )
    points = [points[i] for i in kept]
    keep = {0, len(points) - 1}
    spans = [(0, len(points) - 1)]
    while spans:
        first, last = spans.pop()
        (x1, y1), (x2, y2) = points[first], points[last]
        length = math.hypot(x2 - x1, y2 - y1) or 1.0
        farthest, far = first, TOLERANCE
        for i in range(first + 1, last):
            x, y = points[i]
            distance = abs((x2 - x1) * (y1 - y) - (x1 - x) * (y2 - y1)) / length
            if distance > far:
                farthest, far = i, distance
        if farthest != first:
            keep.add(farthest)
            spans += [(first, farthest), (farthest, last)]
    return [points[i] for i in sorted(keep)]


def _fit(label: str, room: float) -> str:
    """``label``, its end cut to an ellipsis where it is wider than ``room`` (monospace)."""
    while len(label) > 1 and text_width(label, mono=True) > room:
        label = label[:-2] + "…"
    return label


def _panel(
    canvas: Canvas, name: str, values: Sequence[float], top: float, height: float
) -> Callable[[float], float]:
    """A panel's log axis for ``values``, ``height`` tall from ``top``, named above it.

    Every decade gets a tick; as many get a label and a grid line as fit
    (:data:`_LABELLED` apart). Returns where a value lies on it.
    """
    canvas.text(8, top - 12, name)
    low = math.floor(math.log10(min(values)))
    high = max(math.ceil(math.log10(max(values))), low + 1)
    per_decade = height / (high - low)
    every = math.ceil(_LABELLED / per_decade)
    bottom = top + height
    canvas.line(_LEFT, top, _LEFT, bottom)
    for power in range(low, high + 1):
        y = bottom - (power - low) * per_decade
        labelled = power % every == 0
        canvas.line(_LEFT - (5 if labelled else 3), y, _LEFT, y)
        if labelled:
            canvas.line(_LEFT, y, _RIGHT, y, faint=True)
            canvas.text(_LEFT - 7, y + 4, f"1e{power}", anchor="end", size=MIN_TEXT)
    canvas.line(_LEFT, bottom, _RIGHT, bottom)
    return lambda value: bottom - (math.log10(value) - low) * per_decade


def loss_figure(
    curves: Mapping[str, Sequence[float]],
    *,
    every: int = 100,
    against: str | None = None,
) -> Picture:
    r"""Plot one or more loss curves against the step, on a log scale.

    The axes are labelled with symbols, the loss :math:`L` (its formula) against the
    step :math:`t`, so the figure reads the same in every edition of the book; the
    page around it says what they are. Its title and description, which a screen
    reader reads, are in the edition's words (:mod:`tensorbook.draw.words`).

    Parameters
    ----------
    curves : mapping of str to sequence of float
        A label and the loss at each step, for each curve. One curve gets no
        legend.
    every : int
        Steps at which the printed losses were taken; marked with dots, so the
        figure and the printed table can be read against each other.
    against : str, optional
        The label of one curve. Curves that lie on top of each other hide how far
        apart they are: with ``against``, a second panel below plots, for each other
        curve, its relative difference from this one, :math:`|L / L_0 - 1|`, on a log
        scale. Steps where the two are exactly equal are left out (a log scale cannot
        show 0), so a line starts where the curves part.

    Raises
    ------
    ValueError
        If there is no curve, a curve is empty, or a loss is not positive (a
        log scale cannot show it), or ``against`` names no curve or curves of
        another length.

    Examples
    --------
    >>> picture = loss_figure({"numpy_net": [100.0, 10.0, 1.0]})
    >>> picture.title
    'The loss of numpy_net at each step, on a log scale'
    >>> [w for w in picture.texts if not w.startswith("1e")]
    ['L = Σ(ŷ − y)²', '0', '1', '2', 't']
    >>> print(picture.words[1][1])
    The loss L = Σ(ŷ − y)² against the step t over 3 steps, on a log scale; at the last step: numpy_net 1.00e+00.
    >>> picture = loss_figure({"a": [100.0, 10.0, 1.0], "b": [100.0, 11.0, 1.5]}, against="a")
    >>> [w for w in picture.texts if not w.startswith("1e")][:4]
    ['a', 'b', 'L = Σ(ŷ − y)²', '|L / L₀ − 1|']
    >>> loss_figure({"bad": [1.0, 0.0]})
    Traceback (most recent call last):
    ...
    ValueError: curve 'bad' has a loss that is not positive at step 1 (0.0); a log scale cannot show it
    """
    if not curves:
        msg = "no curve to plot"
        raise ValueError(msg)
    if against is not None and against not in curves:
        msg = f"against={against!r} names no curve; give one of {sorted(curves)}"
        raise ValueError(msg)
    for label, losses in curves.items():
        if len(losses) == 0:
            msg = f"curve {label!r} is empty"
            raise ValueError(msg)
        for step, loss in enumerate(losses):
            if not loss > 0:
                msg = (
                    f"curve {label!r} has a loss that is not positive at step {step} ({loss}); "
                    "a log scale cannot show it"
                )
                raise ValueError(msg)
    tones = {label: TONE_ORDER[i % len(TONE_ORDER)] for i, label in enumerate(curves)}
    steps = max(len(losses) for losses in curves.values())
    ticks = [tick for tick in _ticks(max(steps - 1, 1)) if tick == int(tick)]

    def x_of(step: float) -> float:
        return _LEFT + step / ticks[-1] * (_RIGHT - _LEFT)

    canvas = Canvas(MAX_WIDTH)
    if len(curves) > 1:  # the legend
        for i, label in enumerate(curves):
            canvas.rect(_LEFT, 8 + 18 * i, 14, 4, tone=tones[label], solid=True)
            canvas.text(_LEFT + 20, 14 + 18 * i, _fit(label, MAX_WIDTH - _LEFT - 24), mono=True)
    top = 30.0 + (18 * len(curves) if len(curves) > 1 else 0)
    y_of = _panel(
        canvas, LOSS_AXIS, [v for losses in curves.values() for v in losses], top, _HEIGHT
    )
    for label, losses in curves.items():
        at = [(x_of(step), y_of(loss)) for step, loss in enumerate(losses)]
        canvas.curve(_simplified(at), tone=tones[label])
        for step in sorted({*range(0, len(losses), every), len(losses) - 1}) if every else ():
            canvas.dot(*at[step], tone=tones[label], radius=2.5)
    panels = [(top, top + _HEIGHT)]
    if against is not None:
        differences = _differences(curves, against)
        top += _HEIGHT + 34
        shown = [d for runs in differences.values() for run in runs for _, d in run]
        y_of = _panel(canvas, DIFFERENCE_AXIS, shown or [0.1, 1.0], top, _BELOW)
        for label, runs in differences.items():
            for run in runs:
                at = [(x_of(step), y_of(difference)) for step, difference in run]
                if len(at) == 1:  # a step alone where the two differ
                    canvas.dot(*at[0], tone=tones[label], radius=1)
                else:
                    canvas.curve(_simplified(at), tone=tones[label])
        panels.append((top, top + _BELOW))
    bottom = panels[-1][1]
    for tick in ticks:
        for panel_top, panel_bottom in panels:
            canvas.line(x_of(tick), panel_top, x_of(tick), panel_bottom, faint=True)
        canvas.line(x_of(tick), bottom, x_of(tick), bottom + 4)
        canvas.text(x_of(tick), bottom + 17, f"{tick:g}", anchor="middle", size=MIN_TEXT)
    canvas.text(_RIGHT, bottom + 33, STEP_AXIS, anchor="end")
    names = ", ".join(curves)
    ends = "; ".join(f"{label} {losses[-1]:.2e}" for label, losses in curves.items())
    if against is None:
        desc = ("loss_desc", {"steps": steps, "ends": ends})
    else:
        desc = ("loss_against_desc", {"steps": steps, "ends": ends, "against": against})
    return canvas.picture(("loss_title", {"names": names}), desc)


def _differences(
    curves: Mapping[str, Sequence[float]], against: str
) -> dict[str, list[list[tuple[int, float]]]]:
    """Each other curve's relative difference from ``curves[against]``, step by step.

    Split into runs of the steps where they differ (a step where they are equal leaves
    a gap: a log scale cannot show 0).
    """
    reference = curves[against]
    found = {}
    for label, losses in curves.items():
        if label == against:
            continue
        if len(losses) != len(reference):
            msg = f"curve {label!r} has {len(losses)} steps and {against!r} {len(reference)}"
            raise ValueError(msg)
        runs: list[list[tuple[int, float]]] = [[]]
        for step, (a, b) in enumerate(zip(losses, reference, strict=True)):
            if relative := abs(a / b - 1):
                runs[-1].append((step, relative))
            elif runs[-1]:
                runs.append([])
        found[label] = [run for run in runs if run]
    return found
