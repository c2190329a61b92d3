"""Pictures drawn from the objects a page has just computed, as SVG.

Each module draws one kind of picture from real objects (tensors, a backward graph,
a profiler's trace) and returns a :class:`tensorbook.draw.svg.Picture`, which a
notebook shows as ``image/svg+xml``. The words inside every picture are templates
kept in :mod:`tensorbook.draw.words`, so that the book's build can show them in each
edition's language. Like the package, this imports none of its modules.
"""
