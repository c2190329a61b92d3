"""Time the book's build in four situations and say which pages were executed.

Run by ``nox -s bench``. It works on a temporary copy of docs/, conf/ and src/, so
the edits it makes never touch the checkout:

1. a cold build of the English edition: no output, no cache;
2. each translated edition after it, reusing its executed outputs;
3. a rebuild of the English edition with nothing changed;
4. a rebuild after a prose edit to one page;
5. a rebuild after an edit to one module of src/tensorbook.

A page counts as executed when the build added a record for it to jupyter-cache.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from book_build import ROOT, book_languages, executed_pages, sphinx_command

PROSE_PAGE = "tensors.md"
PROSE_EDIT = "\nThis sentence was added by the build benchmark.\n"
SRC_MODULE = "custom_relu.py"
SRC_EDIT = "\n# A comment added by the build benchmark.\n"


def _build(
    tree: Path, label: str, rows: list[tuple[str, float, list[str]]], language: str = "en"
) -> None:
    out = tree / "build" / "html"
    cache_dir = tree / "build" / ".jupyter_cache"
    before = executed_pages(cache_dir)
    command = sphinx_command(
        out, language=language, docs=tree / "docs", conf=tree / "conf", extra=["-q"]
    )
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(f"bench: the build '{label}' failed:\n{result.stdout}\n{result.stderr}")
    after = executed_pages(cache_dir)
    executed = sorted(uri for pk, uri in after.items() if pk not in before)
    rows.append((label, seconds, executed))
    print(f"{label:<44} {seconds:6.1f} s   executed {len(executed)}: {', '.join(executed)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy")
    args = parser.parse_args()

    tree = Path(tempfile.mkdtemp(prefix="tensorbook-bench-"))
    for part in ("docs", "conf", "src", "tests"):
        shutil.copytree(ROOT / part, tree / part, ignore=shutil.ignore_patterns("__pycache__"))
    print(f"benchmarking a copy of the book in {tree}\n")

    rows: list[tuple[str, float, list[str]]] = []
    languages, source = book_languages(tree / "conf")
    _build(tree, f"cold build, {source} (no output, no cache)", rows, source)
    for language in languages:
        if language != source:
            _build(tree, f"then {language} (reusing the outputs)", rows, language)
    _build(tree, "rebuild, nothing changed", rows)
    with (tree / "docs" / PROSE_PAGE).open("a", encoding="utf-8") as page:
        page.write(PROSE_EDIT)
    _build(tree, f"rebuild after a prose edit ({PROSE_PAGE})", rows)
    with (tree / "src" / "tensorbook" / SRC_MODULE).open("a", encoding="utf-8") as module:
        module.write(SRC_EDIT)
    _build(tree, f"rebuild after a src edit ({SRC_MODULE})", rows)

    if not args.keep:
        shutil.rmtree(tree)
    print("\ntargets: cold <= 30 s; each translation adds <= 5 s and executes 0 pages;")
    print("         unchanged <= 3 s; prose edit executes 0 pages;")
    print(f"         src edit executes only the pages that import tensorbook.{SRC_MODULE[:-3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
