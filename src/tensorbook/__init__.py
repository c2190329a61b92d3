"""The programs that the tensorbook book runs.

Each module does one job and is imported on its own; this package imports
none of them, so that changing one module re-executes only the pages that
use it.
"""

__version__ = "0.2.0"
