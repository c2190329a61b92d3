"""How an adapter ends the build: with one error, not Sphinx's crash report."""

from __future__ import annotations

from typing import NoReturn

from sphinx.util import logging

logger = logging.getLogger(__name__)


def stop(message: str) -> NoReturn:
    """End the build now, with ``message`` as its one error.

    Sphinx lets ``SystemExit`` through, where any other exception gets its crash report
    (sphinx-doc/sphinx#14543, fixed by the open sphinx-doc/sphinx#14606).
    """
    logger.error(message)
    raise SystemExit(2)
