"""What the timings say: the speed-up over a baseline, as a number, a table and a figure."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from tensorbook.draw.svg import Canvas, Picture
from tensorbook.problem import Sizes
from tensorbook.speed.step import step_flops
from tensorbook.speed.timing import Timing, torch_label

if TYPE_CHECKING:
    from IPython.lib.pretty import PrettyPrinter

__all__ = ["ResultsTable", "speedup", "speedup_figure", "table"]


def speedup(
    timings: Sequence[Timing], sizes: Sizes, device: torch.device, *, baseline: str = "NumPy"
) -> float:
    """How many times faster torch on ``device`` ran than ``baseline`` at ``sizes``.

    The ratio of the two medians: the baseline's time over torch's.

    Raises
    ------
    LookupError
        If ``timings`` has no timing of either at ``sizes``, naming what it has.

    >>> from tensorbook.problem import TUTORIAL_SIZES
    >>> t = [Timing("NumPy", TUTORIAL_SIZES, (2e-3, 3e-3, 4e-3)),
    ...      Timing("torch cpu", TUTORIAL_SIZES, (1e-3, 1e-3, 2e-3))]
    >>> speedup(t, TUTORIAL_SIZES, torch.device("cpu"))
    3.0
    >>> speedup(t, TUTORIAL_SIZES, torch.device("cuda"))
    Traceback (most recent call last):
    ...
    LookupError: no timing of 'torch cuda' at Sizes(n=64, d_in=1000, h=100, d_out=10); ...
    """
    medians = {(t.label, t.sizes): t.median for t in timings}
    for label in (baseline, torch_label(device)):
        if (label, sizes) not in medians:
            have = sorted({f"{lbl!r} at {s}" for lbl, s in medians})
            msg = f"no timing of {label!r} at {sizes}; have {', '.join(have)}"
            raise LookupError(msg)
    return medians[baseline, sizes] / medians[torch_label(device), sizes]


_COLUMNS = ("sizes (N, D_in, H, D_out)", "run", "per step (spread)", "GFLOP/s", "of peak")


@dataclass(frozen=True)
class ResultsTable:
    """Timings as a table: printed as text, shown in a notebook as an HTML table.

    Each row holds the sizes, the run's label, the median per step, the spread,
    GFLOP/s, the share of the device's peak and the speed-up over the baseline, as
    they are shown. The HTML form is a real table, whose cells wrap: the rows at one
    size are grouped under a heading of their own, so that on a phone every column
    still shows.
    """

    baseline: str
    rows: tuple[tuple[str, str, str, str, str, str, str], ...]

    def __str__(self) -> str:
        """The table as fixed-width text, one line a row."""
        header = (*_COLUMNS, f"vs {self.baseline}")
        lines = [header] + [
            (sizes, run, f"{step} ({spread})", gflops, peak, ratio)
            for sizes, run, step, spread, gflops, peak, ratio in self.rows
        ]
        widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
        text = []
        for number, line in enumerate(lines):
            cells = [
                cell.rjust(width) if column > 1 and number else cell.ljust(width)
                for column, (cell, width) in enumerate(zip(line, widths, strict=True))
            ]
            text.append("  ".join(cells).rstrip())
        return "\n".join(text)

    def _repr_pretty_(self, printer: PrettyPrinter, _cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        figure = ' class="tb-figure"'
        head = "".join(
            f'<th scope="col"{figure if i else ""}>{html.escape(name)}</th>'
            for i, name in enumerate(("run", "per step (spread)", "GFLOP/s", "of peak"))
        )
        head += f'<th scope="col"{figure}>vs {html.escape(self.baseline)}</th>'
        groups: dict[str, list[str]] = {}
        for sizes, run, step, spread, gflops, peak, ratio in self.rows:
            cells = [
                run,
                f'{step}<br><span class="tb-spread">({spread})</span>',
                gflops,
                peak,
                ratio,
            ]
            groups.setdefault(sizes, []).append(
                "<tr>"
                + "".join(
                    f"<td{figure if i else ''}>{cell if i == 1 else html.escape(cell)}</td>"
                    for i, cell in enumerate(cells)
                )
                + "</tr>"
            )
        body = "".join(
            f'<tbody><tr><th scope="rowgroup" colspan="5">N, D_in, H, D_out = '
            f"{html.escape(sizes)}</th></tr>{''.join(rows)}</tbody>"
            for sizes, rows in groups.items()
        )
        return f'<table class="tb-results"><thead><tr>{head}</tr></thead>{body}</table>'


def table(timings: Sequence[Timing], baseline: str = "NumPy") -> ResultsTable:
    """The timings as a table: per step (median and spread), GFLOP/s, % of peak, speed-up.

    The speed-up divides the median of the ``baseline`` timing at the same sizes.

    >>> from tensorbook.problem import TUTORIAL_SIZES
    >>> t = [Timing("NumPy", TUTORIAL_SIZES, (2e-3, 3e-3, 4e-3)),
    ...      Timing("torch cpu", TUTORIAL_SIZES, (1e-3, 1e-3, 2e-3))]
    >>> print(table(t))
    sizes (N, D_in, H, D_out)  run        per step (spread)    GFLOP/s  of peak  vs NumPy
    64, 1000, 100, 10          NumPy      3.00 ms (2.00-4.00)      8.7        -      1.0x
    64, 1000, 100, 10          torch cpu  1.00 ms (1.00-2.00)     26.0        -      3.0x

    In a notebook it is an HTML table, a group of rows for each size:

    >>> table(t)._repr_html_().count("<tbody>"), table(t)._repr_html_().count("<tr>")
    (1, 4)
    """
    baselines = {t.sizes: t.median for t in timings if t.label == baseline}
    rows = []
    for t in timings:
        scale, unit = (1e3, "ms") if t.median < 1 else (1.0, "s")
        low, high = t.spread
        rows.append(
            (
                f"{t.sizes.n}, {t.sizes.d_in}, {t.sizes.h}, {t.sizes.d_out}",
                t.label,
                f"{t.median * scale:.2f} {unit}",
                f"{low * scale:.2f}-{high * scale:.2f}",
                f"{t.flops_per_second / 1e9:.1f}",
                f"{100 * t.flops_per_second / t.peak:.1f}%" if t.peak else "-",
                f"{baselines[t.sizes] / t.median:.1f}x" if t.sizes in baselines else "-",
            )
        )
    return ResultsTable(baseline, tuple(rows))


_SI = {0: "", 3: "k", 6: "M", 9: "G", 12: "T"}


def _decade(power: int) -> str:
    """``10**power`` as a short tick label: 0.1, 1, 10, 100, 1k, ..., 10M, 100M, 1G."""
    base = 3 * (power // 3)
    if power < 0 or base not in _SI:
        return f"{10.0**power:g}"
    return f"{10 ** (power - base)}{_SI[base]}"


def speedup_figure(timings: Sequence[Timing], baseline: str = "NumPy") -> Picture:
    """Speed-up over ``baseline`` against the work in a step, both on log scales.

    A picture of :mod:`tensorbook.draw` (its words are real text, at least 11 CSS px on
    a phone, in the page's colours), not a Matplotlib figure. The axes are labelled with
    symbols, the step's floating-point operations :math:`F` and the ratio of times, so
    the chart reads the same in every edition; a dashed line marks 50.

    >>> from tensorbook.problem import TUTORIAL_SIZES
    >>> t = [Timing("NumPy", TUTORIAL_SIZES, (2e-3,)), Timing("torch cpu", TUTORIAL_SIZES, (1e-3,))]
    >>> picture = speedup_figure(t)
    >>> picture.title, [w for w in picture.texts if w.startswith(("torch", "t("))]
    ('Speed-up over NumPy against the work in a step', ['torch cpu', 't(NumPy) / t'])
    """
    baselines = {t.sizes: t.median for t in timings if t.label == baseline}
    runs = {
        label: sorted(
            (step_flops(t.sizes), baselines[t.sizes] / t.median)
            for t in timings
            if t.label == label and t.sizes in baselines
        )
        for label in dict.fromkeys(t.label for t in timings if t.label != baseline)
    }
    points = [point for line in runs.values() for point in line]
    if not points:
        msg = f"no timing to set against {baseline!r} at its sizes"
        raise ValueError(msg)
    x_low = math.floor(math.log10(min(f for f, _ in points)))
    x_high = max(math.ceil(math.log10(max(f for f, _ in points))), x_low + 1)
    y_low = math.floor(math.log10(min(1.0, *(r for _, r in points))))
    y_high = math.ceil(math.log10(max(50.0, *(r for _, r in points))))
    left, right, top = 44.0, 350.0, 36.0 + 18 * len(runs)
    bottom = top + 180

    def x_of(flops: float) -> float:
        return left + (math.log10(flops) - x_low) / (x_high - x_low) * (right - left)

    def y_of(ratio: float) -> float:
        return bottom - (math.log10(ratio) - y_low) / (y_high - y_low) * (bottom - top)

    canvas = Canvas(right + 24)  # room for the last tick's label, centred on it
    tones = ("blue", "orange", "green", "purple", "red")
    for i, label in enumerate(runs):  # the legend
        canvas.rect(left, 8 + 18 * i, 14, 4, tone=tones[i % len(tones)], solid=True)
        canvas.text(left + 20, 14 + 18 * i, label, mono=True)
    canvas.text(8, top - 14, f"t({baseline}) / t", mono=True)
    for power in range(y_low, y_high + 1):
        y = y_of(10.0**power)
        canvas.line(left - 4, y, right if power == 0 else left, y)  # a line at 1: as fast
        canvas.text(left - 7, y + 4, _decade(power), anchor="end")
    canvas.line(left, y_of(50), right, y_of(50), dashed=True)
    canvas.text(right, y_of(50) - 4, "50", anchor="end")
    canvas.line(left, top, left, bottom)
    for power in range(x_low, x_high + 1):
        x = x_of(10.0**power)
        canvas.line(x, bottom, x, bottom + 4)
        canvas.text(x, bottom + 17, _decade(power), anchor="middle")
    canvas.text(right, bottom + 34, "F (FLOP)", anchor="end", mono=True)
    for i, line in enumerate(runs.values()):
        canvas.polyline([(x_of(f), y_of(r)) for f, r in line], tone=tones[i % len(tones)])
    return canvas.picture(
        ("speedup_title", {"baseline": baseline}),
        ("speedup_desc", {"baseline": baseline, "runs": ", ".join(runs)}),
    )
