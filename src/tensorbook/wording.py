"""The sentences the programs print that a reader of the book reads on every page.

Each is a template that a program fills in (:func:`fill`) and that the book's build
reads back (:func:`parse`), so that a translated edition can show the same facts in
its own language, from its catalog, without running anything again. The templates'
words are kept here once; they import nothing, so the build can read them cheaply.

Examples
--------
>>> line = fill(DEVICE_LINE, where=fill(ON_CPU, machine="x86_64"), torch="2.13.0",
...             threads=fill(THREADS, count=2), python="3.11.7", numpy="2.3.5")
>>> line
'Executed on CPU (x86_64) · torch 2.13.0 · 2 CPU threads · Python 3.11.7 · NumPy 2.3.5'
>>> parse(DEVICE_LINE, line)["where"]
'CPU (x86_64)'
>>> parse(DEVICE_LINE, "something else") is None
True
"""

from __future__ import annotations

import re
import string
from functools import cache

__all__ = ["DEVICE_LINE", "ON_CPU", "ON_GPU", "TEMPLATES", "THREAD", "THREADS", "fill", "parse"]

DEVICE_LINE = "Executed on {where} · torch {torch} · {threads} · Python {python} · NumPy {numpy}"
"""The line every page prints first: where its code ran, with which torch, threads,
Python and NumPy (a GPU's CUDA version is in :data:`ON_GPU`)."""
ON_CPU = "CPU ({machine})"
ON_GPU = "GPU {name} (cuda:{index}, CUDA {cuda})"
THREAD = "{count} CPU thread"
THREADS = "{count} CPU threads"
TEMPLATES = (DEVICE_LINE, ON_CPU, ON_GPU, THREAD, THREADS)
"""Every template, in the order a translation reads them."""


def fill(template: str, **values: object) -> str:
    """The template with its fields filled in."""
    return template.format(**values)


@cache
def _pattern(template: str) -> re.Pattern[str]:
    parts = []
    for literal, field, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if field is not None:
            parts.append(f"(?P<{field}>.+?)")
    return re.compile("".join(parts) + r"\Z")


def parse(template: str, text: str) -> dict[str, str] | None:
    """The fields of ``text`` if it is ``template`` filled in, else ``None``."""
    match = _pattern(template).match(text)
    return match.groupdict() if match else None
