"""Time the book's build as a maintainer meets it, against ``import torch`` in the same run.

Run by ``nox -s bench``. Each figure is the median of ``--runs`` runs with its ratio to
``import torch``'s, on a temporary copy of the book: ``nox -s docs`` from cold, then with
nothing changed; the source edition after a prose edit, then after a ``src`` edit (a
translation would fail on the untranslated sentence). Each line names the pages executed.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tensorbook.device import choose_device
from tensorbook_build.build import build_site, executed_pages
from tensorbook_build.settings import JOBS, LANGUAGES, LAYOUT, SOURCE_LANGUAGE, Layout

PROSE_PAGE = "tensors.md"
SRC_MODULE = "custom_relu.py"


def _appending(path: Path, text: str) -> Callable[[int], None]:
    """A ``prepare`` that appends a different line to ``path`` before each run."""

    def prepare(i: int) -> None:
        with path.open("a", encoding="utf-8") as file:
            file.write(text.format(i=i))

    return prepare


def main(argv: Sequence[str] | None = None) -> int:
    """Time the four situations and print their medians and ratios."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.bench", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (default 3)")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:N")
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    args = parser.parse_args(argv)
    device = choose_device(args.device, given_by="--device").device  # before any copying

    tree = Path(tempfile.mkdtemp(prefix="tensorbook-bench-"))
    for part in ("docs", "conf", "src"):
        shutil.copytree(
            LAYOUT.root / part, tree / part, ignore=shutil.ignore_patterns("__pycache__")
        )
    for name in ("pyproject.toml", "README.md", "LICENSE"):  # the reader's wheel is built
        shutil.copyfile(LAYOUT.root / name, tree / name)
    build = tree / "build"
    print(f"a copy of the book in {tree}; medians of {args.runs} runs\n")
    print(f"{'':<44} {'median':>9} {'÷ torch':>9}")

    def figure(
        label: str, run: Callable[[], object], prepare: Callable[[int], None] = lambda _: None
    ) -> float:
        """Print ``run``'s median time (each after ``prepare(i)``, untimed), ratio and pages."""
        seconds = []
        for i in range(args.runs):
            prepare(i)
            start = time.perf_counter()
            before = executed_pages(build / ".jupyter_cache")
            run()
            after = executed_pages(build / ".jupyter_cache")
            seconds.append(time.perf_counter() - start)
        median = statistics.median(seconds)
        executed = sorted(name for pk, name in after.items() if pk not in before)
        pages = f"executed {len(executed)}" + (f": {', '.join(executed)}" if executed else "")
        print(f"{label:<44} {median:7.2f} s {median / (torch or median):7.2f} x   {pages}")
        return median

    torch = 0.0  # the first figure's ratio is to itself
    import_torch = [sys.executable, "-c", "import torch"]
    torch = figure('python -c "import torch"', lambda: subprocess.run(import_torch, check=True))

    # nox -s docs, end to end, into this copy's build folder (the checkout's pages, the
    # same as the copy's until the edits below): its first run installs the environment
    # where there is none yet, and is not timed
    nox = [sys.executable, "-m", "nox", "-s", "docs", "--", "--site", str(build / "html")]

    floors: list[float] = []  # each cold run's, from the seconds the stage printed per page

    def nox_docs() -> None:
        done = subprocess.run(nox, cwd=LAYOUT.root, check=True, capture_output=True, text=True)
        pages = [float(s) for s in re.findall(r"\.md: executed in ([\d.]+) s", done.stdout)]
        if pages:
            floors.append(max(sum(pages) / JOBS, *pages))

    nox_docs()
    floors.clear()
    cold = figure(
        f"nox -s docs, cold ({' + '.join(LANGUAGES)})",
        nox_docs,
        lambda _: shutil.rmtree(build, ignore_errors=True),
    )
    floor = statistics.median(floors)
    print(f"{'  its floor: execution ÷ JOBS, or the longest page':<44} {floor:7.2f} s"
          f"   the cold build is {cold / floor:.2f} x its floor")  # fmt: skip
    figure("nox -s docs, nothing changed", nox_docs)

    def source_edition() -> None:
        results = build_site(
            build / "html",
            [SOURCE_LANGUAGE],
            device=device,
            layout=Layout(tree),
            extra=["-q"],
            capture=True,
        )
        if results[-1].returncode != 0:
            sys.exit(f"bench: {results[-1].failure}:\n{results[-1].output}")

    prose = _appending(tree / "docs" / PROSE_PAGE, "\nA sentence the benchmark added ({i}).\n")
    figure(f"after a prose edit ({PROSE_PAGE})", source_edition, prose)
    code = _appending(tree / "src" / "tensorbook" / SRC_MODULE, "\n# benchmark edit {i}\n")
    figure(f"after a src edit ({SRC_MODULE})", source_edition, code)

    if not args.keep:
        shutil.rmtree(tree)
    return 0


if __name__ == "__main__":
    sys.exit(main())
