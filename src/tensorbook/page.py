"""What each page of the book runs first: choose the device, seed, say what ran it."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import torch

from tensorbook.device import describe_device, resolve_device
from tensorbook.seeding import DEFAULT_SEED, seed_everything

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["start"]


def _png(figure: Figure) -> bytes:
    from IPython.core.pylabtools import print_figure

    return print_figure(figure, "png", bbox_inches="tight")


def _show_figures_as_png() -> None:
    """Let IPython display a bare Matplotlib ``Figure`` as a PNG image.

    The book's figures are built without ``pyplot``, so the inline backend's
    automatic display never sees them; a page shows a figure by leaving it as
    a cell's last expression, and this registers the formatter for that. It is
    registered by type name, so that pages without figures never import
    Matplotlib (half a second per page).
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return
    png = shell.display_formatter.formatters["image/png"]
    png.for_type_by_name("matplotlib.figure", "Figure", _png)


def start(seed: int = DEFAULT_SEED) -> torch.device:
    """Resolve the book's device, seed every generator, print the device line.

    The device comes from ``TENSORBOOK_DEVICE``, which the build sets; see
    :func:`tensorbook.device.resolve_device`.

    Returns
    -------
    torch.device
        The device the page's cells should use.

    Examples
    --------
    >>> start() == resolve_device()
    Executed on ...
    True
    """
    device = resolve_device()
    seed_everything(seed)
    _show_figures_as_png()
    print(describe_device(device))
    return device
