"""What the tests share: the book's pages and builds, a local server, a browser.

``tests`` is importable from the checkout's root (pytest's ``pythonpath``), so the
tests and nox's sessions import these as ``tests.support.<module>``.
"""
