"""What the tests share: the book's pages and builds, a local server, a browser; and
the GPU kit (``python -m tests.support.kit``) with the evidence it gathers.

``tests`` is importable from the checkout's root (pytest's ``pythonpath``), so the
tests and nox's sessions import these as ``tests.support.<module>``.
"""
