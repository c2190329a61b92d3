"""The environment variables the book's programs read.

Kept apart from :mod:`tensorbook.device`, which imports torch, so that the
book's build can name the variable it sets for the kernels without paying for
that import on every build.

Examples
--------
>>> DEVICE_VARIABLE
'TENSORBOOK_DEVICE'
"""

from __future__ import annotations

__all__ = ["DEVICE_VARIABLE"]

DEVICE_VARIABLE = "TENSORBOOK_DEVICE"
"""Read by :func:`tensorbook.device.resolve_device` when no device is passed."""
