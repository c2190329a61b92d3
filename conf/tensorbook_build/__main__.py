"""``python -m tensorbook_build``: build the book (see :mod:`tensorbook_build.build`)."""

import sys

try:
    from tensorbook_build.build import main
except KeyboardInterrupt:  # a Ctrl-C while the driver imports has started nothing
    print("tensorbook_build: interrupted; no process of this build is left", file=sys.stderr)  # noqa: T201 - build.INTERRUPTED, not imported yet
    sys.exit(130)

sys.exit(main())
