"""Loss curves on a log scale, as figures that need no display.

The figures are made with Matplotlib's object-oriented API and never touch
``pyplot``'s global state, so a page shows exactly the figure it returns and
a test can inspect it. ``python -m tensorbook.compare`` draws one with every
network of the book.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure

__all__ = ["loss_figure"]


def loss_figure(
    curves: Mapping[str, Sequence[float]], *, title: str = "", every: int = 100
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

    Raises
    ------
    ValueError
        If there is no curve, a curve is empty, or a loss is not positive (a
        log scale cannot show it).

    Examples
    --------
    >>> fig = loss_figure({"numpy_net": [100.0, 10.0, 1.0]}, title="demo")
    >>> ax = fig.axes[0]
    >>> ax.get_yscale(), ax.get_title()
    ('log', 'demo')
    >>> print(ax.get_xlabel(), ax.get_ylabel())
    $t$ $L = \sum\,(\hat{y} - y)^2$
    >>> loss_figure({"bad": [1.0, 0.0]})
    Traceback (most recent call last):
    ...
    ValueError: curve 'bad' has a loss that is not positive at step 1 (0.0); a log scale cannot show it
    """
    if not curves:
        msg = "no curve to plot"
        raise ValueError(msg)
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
    return fig
