"""Time the book's build as a maintainer meets it, against ``import torch`` in the same run.

Run by ``nox -s bench`` (``python -m tensorbook_build.tools.bench``). Each figure is the
median of ``--runs`` runs (three by default), printed with the ratio to the median time
of ``python -c "import torch"`` measured in the same run, so that figures taken on a
busy or a fast machine can be read against each other. The builds work on a temporary
copy of docs/, conf/ and src/, so the edits they make never touch the checkout:

1. ``nox -s docs`` from cold, end to end: every edition, no output, no cache;
2. ``nox -s docs`` with nothing changed, end to end (nox, its environment, the build);
3. a rebuild after a prose edit to one page (the source edition: the new sentence is
   not translated yet, which fails a translation, as it should);
4. a rebuild after an edit to one module of ``src/tensorbook`` (the source edition).

Each line also names the pages the last run executed (jupyter-cache's new records).
"""

from __future__ import annotations

import argparse
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
from tensorbook_build.settings import LANGUAGES, LAYOUT, SOURCE_LANGUAGE, Layout

PROSE_PAGE = "tensors.md"
SRC_MODULE = "custom_relu.py"


def _median_seconds(runs: int, prepare: Callable[[int], None], run: Callable[[], None]) -> float:
    """The median wall time of ``run``, each time after ``prepare(i)`` (not timed)."""
    seconds = []
    for i in range(runs):
        prepare(i)
        start = time.perf_counter()
        run()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds)


def _never(_: int) -> None:
    """Nothing to prepare."""


def _import_torch() -> None:
    subprocess.run([sys.executable, "-c", "import torch"], check=True)


class Bench:
    """A copy of the book, and the builds timed on it."""

    def __init__(self, tree: Path, device: str, runs: int) -> None:
        self.tree = tree
        self.device = device
        self.runs = runs
        self.build = tree / "build"
        self.executed: list[str] = []

    def build_once(self, languages: Sequence[str] | None = None) -> None:
        """Build as ``nox -s docs`` does; stop the benchmark if the build fails."""
        results = build_site(
            self.build / "html",
            languages,
            device=self.device,
            layout=Layout(self.tree),
            extra=["-q"],
            capture=True,
        )
        if results[-1].returncode != 0:
            sys.exit(f"bench: the {results[-1].language} edition failed:\n{results[-1].output}")

    def recording(self, run: Callable[[], None]) -> Callable[[], None]:
        """``run``, noting in :attr:`executed` the pages it executed."""

        def recorded() -> None:
            before = executed_pages(self.build / ".jupyter_cache")
            run()
            after = executed_pages(self.build / ".jupyter_cache")
            self.executed = sorted(name for pk, name in after.items() if pk not in before)

        return recorded

    def append(self, path: Path, text: str) -> Callable[[int], None]:
        """A ``prepare`` that appends a different line to ``path`` before each run."""

        def prepare(i: int) -> None:
            with path.open("a", encoding="utf-8") as file:
                file.write(text.format(i=i))

        return prepare


def _report(label: str, seconds: float, torch_seconds: float, executed: list[str]) -> None:
    pages = f"executed {len(executed)}" + (f": {', '.join(executed)}" if executed else "")
    print(f"{label:<44} {seconds:7.2f} s {seconds / torch_seconds:7.2f} x   {pages}")


def main(argv: Sequence[str] | None = None) -> int:
    """Time the four situations and print their medians and ratios."""
    parser = argparse.ArgumentParser(
        prog="python -m tensorbook_build.tools.bench", description=__doc__.splitlines()[0]
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
    bench = Bench(tree, device, args.runs)
    print(f"a copy of the book in {tree}; medians of {args.runs} runs\n")
    print(f"{'':<44} {'median':>9} {'÷ torch':>9}")

    torch_seconds = _median_seconds(args.runs, _never, _import_torch)
    _report('python -c "import torch"', torch_seconds, torch_seconds, [])

    def cold(_: int) -> None:
        shutil.rmtree(bench.build, ignore_errors=True)

    def figure(label: str, prepare: Callable[[int], None], run: Callable[[], None]) -> None:
        seconds = _median_seconds(args.runs, prepare, bench.recording(run))
        _report(label, seconds, torch_seconds, bench.executed)

    # nox -s docs, end to end, into this copy's build folder (the checkout's pages, the
    # same as the copy's until the edits below): its first run installs the environment
    # where there is none yet, and is not timed
    nox = [sys.executable, "-m", "nox", "-s", "docs", "--", "--site", str(bench.build / "html")]

    def nox_docs() -> None:
        subprocess.run(nox, cwd=LAYOUT.root, check=True, capture_output=True)

    nox_docs()
    figure(f"nox -s docs, cold ({' + '.join(LANGUAGES)})", cold, nox_docs)
    figure("nox -s docs, nothing changed", _never, nox_docs)

    def source_edition() -> None:
        bench.build_once([SOURCE_LANGUAGE])

    prose = bench.append(tree / "docs" / PROSE_PAGE, "\nA sentence the benchmark added ({i}).\n")
    figure(f"after a prose edit ({PROSE_PAGE})", prose, source_edition)
    code = bench.append(tree / "src" / "tensorbook" / SRC_MODULE, "\n# benchmark edit {i}\n")
    figure(f"after a src edit ({SRC_MODULE})", code, source_edition)

    if not args.keep:
        shutil.rmtree(tree)
    return 0


if __name__ == "__main__":
    sys.exit(main())
