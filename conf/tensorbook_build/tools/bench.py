"""Time the book's build in the situations that matter and say which pages were executed.

Run by ``nox -s bench`` (``python -m tensorbook_build.tools.bench``). It works on a
temporary copy of docs/, conf/ and src/, so the edits it makes never touch the checkout.
Every build is ``nox -s docs``'s own (``tensorbook_build.build.build_site``), all
editions unless said otherwise:

1. a cold build of the English edition alone: no output, no cache;
2. a cold build of every edition, the translations after the English: what they add
   is the difference between 2 and 1;
3. a rebuild with nothing changed;
4. a rebuild after a prose edit to one page;
5. a rebuild after an edit to one module of src/tensorbook.

A page counts as executed when the build added a record for it to jupyter-cache.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from tensorbook_build.build import build_site, executed_pages
from tensorbook_build.settings import LANGUAGES, LAYOUT, SOURCE_LANGUAGE, Layout

PROSE_PAGE = "tensors.md"
PROSE_EDIT = "\nThis sentence was added by the build benchmark.\n"
SRC_MODULE = "custom_relu.py"
SRC_EDIT = "\n# A comment added by the build benchmark.\n"


def _build(
    tree: Path, label: str, languages: Sequence[str] | None = None, device: str = "cpu"
) -> float:
    build = tree / "build"
    before = executed_pages(build / ".jupyter_cache")
    start = time.perf_counter()
    results = build_site(
        build / "html",
        languages,
        device=device,
        layout=Layout(tree),
        extra=["-q"],
        capture=True,
    )
    seconds = time.perf_counter() - start
    if results[-1].returncode != 0:
        sys.exit(f"bench: the build '{label}' failed:\n{results[-1].output}")
    after = executed_pages(build / ".jupyter_cache")
    executed = sorted(uri for pk, uri in after.items() if pk not in before)
    print(f"{label:<46} {seconds:6.1f} s   executed {len(executed)}: {', '.join(executed)}")
    return seconds


def main() -> int:
    """Run the five builds and print their figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    parser.add_argument("--device", default="cpu", help="cpu (default), cuda or cuda:N")
    args = parser.parse_args()
    build = partial(_build, device=args.device)

    tree = Path(tempfile.mkdtemp(prefix="tensorbook-bench-"))
    for part in ("docs", "conf", "src"):
        shutil.copytree(
            LAYOUT.root / part, tree / part, ignore=shutil.ignore_patterns("__pycache__")
        )
    print(f"benchmarking a copy of the book in {tree}\n")

    languages, source = LANGUAGES, SOURCE_LANGUAGE
    alone = build(tree, f"cold build, {source} alone (no output, no cache)", [source])
    shutil.rmtree(tree / "build")
    both = build(tree, f"cold build, {' + '.join(languages)} (every edition)")
    print(f"{'  what the translations add':<46} {both - alone:6.1f} s")
    build(tree, "rebuild, nothing changed")
    with (tree / "docs" / PROSE_PAGE).open("a", encoding="utf-8") as page:
        page.write(PROSE_EDIT)
    # the edit adds a message that the catalogs lack, which fails a translated edition
    # (as it should); the source edition shows what the edit costs
    build(tree, f"rebuild after a prose edit ({PROSE_PAGE}), {source}", [source])
    with (tree / "src" / "tensorbook" / SRC_MODULE).open("a", encoding="utf-8") as module:
        module.write(SRC_EDIT)
    build(tree, f"rebuild after a src edit ({SRC_MODULE}), {source}", [source])

    if not args.keep:
        shutil.rmtree(tree)
    print("\ntargets: cold <= 30 s; the translations add <= 5 s and execute nothing;")
    print("         unchanged <= 3 s; prose edit executes 0 pages;")
    print(f"         src edit executes only the pages that import tensorbook.{SRC_MODULE[:-3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
