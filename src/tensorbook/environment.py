"""The environment variables the book's programs read.

The book's build sets them for its kernels; this module imports nothing, so
naming them costs the build nothing.

Examples
--------
>>> DEVICE_VARIABLE
'TENSORBOOK_DEVICE'
"""

from __future__ import annotations

__all__ = ["DEVICE_VARIABLE"]

DEVICE_VARIABLE = "TENSORBOOK_DEVICE"
"""Read by :func:`tensorbook.device.choose_device` when no device is passed."""
