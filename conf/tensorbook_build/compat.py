"""A compatibility run: the doctests and the pages with this environment's torch.

``TENSORBOOK_TORCH=2.11.0 nox -s compat`` installs that torch in place of the pinned
one and runs this: the kit's ``doctests`` and ``cpu-book`` steps
(:mod:`tensorbook_build.kit`) into ``build/compat-<torch>``, their outcome then added
to ``docs/recorded/compat.json``, which the status page shows.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from tensorbook_build.kit import steps
from tensorbook_build.ledger import COMPAT, FOLDER
from tensorbook_build.settings import LAYOUT


def add_result(path: Path, result: dict[str, str]) -> list[dict[str, str]]:
    """Add ``result`` to the list in ``path``, replacing the run of the same torch and Python.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp, "compat.json")
    ...     _ = add_result(path, {"torch": "2.11.0", "python": "3.11.7", "pages": "failed"})
    ...     runs = add_result(path, {"torch": "2.11.0", "python": "3.11.7", "pages": "passed"})
    >>> [r["pages"] for r in runs]
    ['passed']
    """
    runs = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
    runs = [r for r in runs if (r["torch"], r["python"]) != (result["torch"], result["python"])]
    runs = sorted([*runs, result], key=lambda r: (r["torch"], r["python"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tensorbook_build.compat [--out docs/recorded/compat.json]``."""
    parser = argparse.ArgumentParser(prog="python -m tensorbook_build.compat")
    parser.add_argument("--out", type=Path, default=LAYOUT.docs / FOLDER / COMPAT)
    args = parser.parse_args(argv)
    import numpy as np
    import torch

    work = LAYOUT.root / "build" / f"compat-{torch.__version__}"
    run = {s.name: s for s in steps("cpu", work, recorded=work / FOLDER)}
    for name in ("doctests", "cpu-book"):
        run[name].run(work / "logs", env=None, timeout=None)
    result = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "doctests": run["doctests"].status,
        "pages": run["cpu-book"].status,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "command": "nox -s compat (python -m tensorbook_build.compat)",
    }
    add_result(args.out, result)
    print(f"tensorbook_build.compat: {json.dumps(result)} -> {args.out}")
    return 0 if result["doctests"] == result["pages"] == "passed" else 1


if __name__ == "__main__":
    sys.exit(main())
