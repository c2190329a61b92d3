"""``python -m tensorbook_build``: build the book (see :mod:`tensorbook_build.build`)."""

import sys

from tensorbook_build.build import main

sys.exit(main())
