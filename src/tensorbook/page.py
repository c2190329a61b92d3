"""What each page of the book runs first: choose the device, seed, say what ran it."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import torch

from tensorbook.device import describe_device, resolve_device
from tensorbook.seeding import DEFAULT_SEED, seed_everything

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["glue", "start"]

GLUE_PREFIX = "application/papermill.record/"
"""The MIME prefix under which MyST-NB finds a glued value and does not display it."""


def _png(figure: Figure) -> bytes:
    from IPython.core.pylabtools import print_figure

    png: bytes = print_figure(figure, "png", bbox_inches="tight")  # IPython's is unannotated
    return png


def _configure_ipython() -> None:
    """Set up the kernel a page runs in: figures as PNG, errors as one line.

    The book's figures are built without ``pyplot``, so the inline backend's
    automatic display never sees them; a page shows a figure by leaving it as
    a cell's last expression, and this registers the formatter for that. It is
    registered by type name, so that pages without figures never import
    Matplotlib (half a second per page).

    A taught error is shown as its type and message, under the cell that raised
    it. IPython's default quotes source context around every frame, which for an
    error raised inside torch means a page of torch's internals, the absolute
    paths of the machine that built the book, and seconds of build time.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        return
    png = shell.display_formatter.formatters["image/png"]
    png.for_type_by_name("matplotlib.figure", "Figure", _png)
    shell.InteractiveTB.set_mode(mode="Minimal")


def start(seed: int = DEFAULT_SEED) -> torch.device:
    """Resolve the book's device, seed every generator, print the device line.

    Inside a notebook it also sets up figures and tracebacks; see
    ``_configure_ipython``.

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
    _configure_ipython()
    print(describe_device(device))
    return device


def glue(name: str, text: str) -> None:
    """Hand ``text`` to the page's prose, where ``{glue:text}`name``` shows it.

    A sentence that states a computed figure takes it from here, so prose and
    output cannot disagree. This writes the output that MyST-NB's ``glue``
    writes, without importing MyST-NB, which a page's download does not have;
    outside a notebook there is no prose to fill, so the value is printed.

    Examples
    --------
    >>> glue("speedup", f"{3.14159:.1f}")
    speedup: 3.1
    """
    if not isinstance(text, str):
        msg = f"glue {name!r}: format the value as text first, got {type(text).__name__}"
        raise TypeError(msg)
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        print(f"{name}: {text}")
        return
    from IPython.display import display

    metadata = {"scrapbook": {"name": name, "mime_prefix": GLUE_PREFIX}}
    display({GLUE_PREFIX + "text/plain": text}, raw=True, metadata=metadata)
