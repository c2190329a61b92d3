"""Sphinx set up with the book's configuration, in the test's own process, not built."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util.docutils import docutils_namespace

from tensorbook_build.settings import LAYOUT


@contextlib.contextmanager
def process_state_kept() -> Iterator[None]:
    """Put back what a Sphinx set up in this process changes, once the block ends.

    Sphinx sets up the ``sphinx`` logger for its application (its handlers, and records
    rewritten to ``ERROR: ... [type]``), registers the extensions' directives, roles and
    node classes with docutils (a second Sphinx then warns that each node class "is
    already registered"), and the configuration adapter sets the kernels' variables in
    ``os.environ``: all are put back as they were (docutils' as sphinx-build does, with
    ``docutils_namespace``), so that a later test runs as it would without this one.
    """
    environ = dict(os.environ)
    logger = logging.getLogger("sphinx")
    handlers, level, propagate = list(logger.handlers), logger.level, logger.propagate
    try:
        with docutils_namespace():
            yield
    finally:
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate
        os.environ.clear()
        os.environ.update(environ)


@contextlib.contextmanager
def configured_sphinx(root: Path, **overrides: Any) -> Iterator[Sphinx]:
    """Sphinx on an empty ``root/docs``, every handler connected, ``overrides`` as ``-D``."""
    (root / "docs").mkdir(parents=True, exist_ok=True)
    with process_state_kept():
        yield Sphinx(
            srcdir=root / "docs",
            confdir=LAYOUT.conf,
            outdir=root / "html",
            doctreedir=root / "doctrees",
            buildername="html",
            confoverrides=overrides,
            status=None,
            warning=None,
        )
