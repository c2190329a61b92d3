"""How tensorbook is built (``conf/README.md`` lists the modules in the build's order).

This ``__init__`` imports nothing, so that reading the settings stays cheap.
"""
