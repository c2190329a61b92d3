"""Loss curves on a log scale, as figures that need no display.

The figures are made with Matplotlib's object-oriented API and never touch
``pyplot``'s global state, so a page shows exactly the figure it returns and
a test can inspect it. ``python -m tensorbook.compare`` draws one with every
network of the book.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["loss_figure"]


def loss_figure(
    curves: Mapping[str, Sequence[float]],
    *,
    title: str = "",
    every: int = 100,
    against: str | None = None,
) -> Figure:
    r"""Plot one or more loss curves against the step, on a log scale.

    The axes are labelled with symbols, the loss :math:`L` (its formula) against the
    step :math:`t`, so the figure reads the same in every edition of the book; the
    page around it says what they are.

    Parameters
    ----------
    curves : mapping of str to sequence of float
        A label and the loss at each step, for each curve. One curve gets no
        legend.
    title : str
        Shown above the axes.
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
    >>> fig = loss_figure({"numpy_net": [100.0, 10.0, 1.0]}, title="demo")
    >>> ax = fig.axes[0]
    >>> ax.get_yscale(), ax.get_title()
    ('log', 'demo')
    >>> print(ax.get_xlabel(), ax.get_ylabel())
    $t$ $L = \sum\,(\hat{y} - y)^2$
    >>> fig = loss_figure({"a": [100.0, 10.0, 1.0], "b": [100.0, 11.0, 1.5]}, against="a")
    >>> difference = fig.axes[1].lines[0]
    >>> [f"{v:.2f}" for v in difference.get_ydata()], difference.get_label()
    (['nan', '0.10', '0.50'], 'b')
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
    if against is not None:
        fig = Figure(figsize=(6.4, 5.2), dpi=100, layout="constrained")
        ax, below = fig.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    else:
        fig = Figure(figsize=(6.4, 3.6), dpi=100, layout="constrained")
        ax = fig.subplots()
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
        (line,) = ax.plot(range(len(losses)), losses, label=label, linewidth=1.5)
        marked = [*range(0, len(losses), every), len(losses) - 1] if every else []
        ax.plot(marked, [losses[i] for i in marked], "o", color=line.get_color(), markersize=3)
    ax.set_yscale("log")
    ax.set_xlabel("$t$")
    ax.set_ylabel(r"$L = \sum\,(\hat{y} - y)^2$")
    ax.grid(True, which="major", linewidth=0.5, alpha=0.5)
    if title:
        ax.set_title(title)
    if len(curves) > 1:
        ax.legend()
    if against is not None:
        ax.set_xlabel("")
        _differences(below, curves, against, [line.get_color() for line in ax.lines[::2]])
    return fig


def _differences(
    ax: Axes, curves: Mapping[str, Sequence[float]], against: str, colours: Sequence[str]
) -> None:
    """Plot each curve's relative difference from ``curves[against]``, in its own colour."""
    reference = curves[against]
    for (label, losses), colour in zip(curves.items(), colours, strict=True):
        if label == against:
            continue
        if len(losses) != len(reference):
            msg = f"curve {label!r} has {len(losses)} steps and {against!r} {len(reference)}"
            raise ValueError(msg)
        relative = [abs(a / b - 1) or math.nan for a, b in zip(losses, reference, strict=True)]
        ax.plot(range(len(losses)), relative, label=label, color=colour, linewidth=1.2)
    ax.set_yscale("log")
    ax.set_xlabel("$t$")
    ax.set_ylabel(r"$|L / L_0 - 1|$")
    ax.grid(True, which="major", linewidth=0.5, alpha=0.5)
