"""The fixture book's configuration: the book's own (conf/conf.py), with its folders."""

import runpy

from tensorbook_build.settings import LAYOUT

globals().update(
    (name, value)
    for name, value in runpy.run_path(str(LAYOUT.conf / "conf.py")).items()
    if not name.startswith("__")
)
# conf.py names these relative to conf/, which this folder stands in for
html_static_path = [str(LAYOUT.conf / "_static")]
html_favicon = str(LAYOUT.conf / "_static" / "favicon.svg")
