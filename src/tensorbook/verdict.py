"""A claim of the book, checked on the reader's machine: a verdict, never an error.

In the book, a hidden cell asserts what the page says, so a build that contradicts its
prose stops. A chapter's download runs the same check inside :func:`verdict`, which
prints what the book measured, then whether the claim holds on this machine, and goes on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["verdict"]


@contextlib.contextmanager
def verdict(book: str, *, measured: str, holds: str, fails: str) -> Iterator[None]:
    """Run a check's ``assert`` statements as a verdict: it prints, and never raises.

    Parameters
    ----------
    book : str
        What the book's build printed just before the check: its figures.
    measured : str
        The sentence that introduces ``book``, printed first.
    holds : str
        The sentence printed when every assertion holds.
    fails : str
        The sentence printed when one does not, followed by its message (its figures).

    Yields
    ------
    None
        The check runs in the ``with`` block. An error other than an ``AssertionError``
        is a fault of the check, not a verdict, and is raised.

    Examples
    --------
    >>> words = {"measured": "In the book:", "holds": "Holds here.", "fails": "Not here:"}
    >>> with verdict("0.7x", **words):
    ...     assert 2 > 1
    In the book:
    0.7x
    Holds here.
    >>> with verdict("0.7x", **words):
    ...     assert 0.5 > 1, "0.5x"
    In the book:
    0.7x
    Not here:
    0.5x
    """
    print(measured)
    print(book)
    try:
        yield
    except AssertionError as error:
        print(fails)
        print(str(error) or "(the check gave no figures)")
    else:
        print(holds)
