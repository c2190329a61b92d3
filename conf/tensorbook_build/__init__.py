"""How tensorbook is built: settings, execution, rendering and publishing.

The maintainer's guide, ``conf/README.md``, lists the modules in the order of the build.
This ``__init__`` imports nothing, so that reading the settings stays cheap.
"""
