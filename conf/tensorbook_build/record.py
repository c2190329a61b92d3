"""Record the device-dependent outputs: ``python -m tensorbook_build.record --device DEVICE``.

It builds the English edition on that device into ``build/record/<device>``, or takes
a build that did (``--from-build``), and writes each page's recording
(:mod:`tensorbook_build.ledger`). On a GPU it also records the same machine's CPU
(built too, or ``--cpu-build``) beside the GPU's, in the same process and so with the
same torch. It fails if a cell's output differs between two devices' recordings but its
page does not tag it ``device-dependent``.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
from collections.abc import Container, Sequence
from pathlib import Path
from typing import Any

from tensorbook.device import DeviceUnavailableError
from tensorbook.environment import DEVICE_VARIABLE
from tensorbook.receipt import provenance
from tensorbook_build.build import build_site
from tensorbook_build.ledger import (
    BESIDE,
    FOLDER,
    page_recordings,
    recording_from_notebook,
    unmarked_differences,
    write_recording,
)
from tensorbook_build.provenance import SOURCES, source_commit
from tensorbook_build.settings import LAYOUT, SOURCE_LANGUAGE
from tensorbook_build.spec import BuildSpec, resolve_spec


def capture_provenance(spec: BuildSpec, command: str) -> dict[str, Any]:
    """Where and with what the pages ran, as a receipt says it: the kernels ran with our torch."""
    commit = source_commit(LAYOUT.root, SOURCES)
    book = {
        "commit": (commit.sha + ("+modified" if commit.modified else "")) if commit else "unknown",
        "commit_date": commit.date if commit else "",
    }
    return {**provenance(spec.device, book, command), "threads": spec.threads}


def record_build(
    build: Path, spec: BuildSpec, out: Path, command: str, pages: Container[str] | None = None
) -> tuple[list[Path], list[str]]:
    """Write, under ``out/<kind>``, a recording of every page (of ``pages``) ``build`` executed.

    A page whose execution failed has no outputs in the build's cache: it is not
    recorded, and its name is returned with the recordings written, so that a run in
    which one page failed still records the others, and a later run fills it in. A build
    whose pages executed with another device, torch or thread count than ``spec``'s is
    refused with a :class:`ValueError`.
    """
    provenance = capture_provenance(spec, command)
    # MyST-NB writes each page's notebook beside the site without its outputs (in cache
    # mode they live in jupyter-cache), so the outputs are merged in from the cache
    import nbformat
    from jupyter_cache import get_cache

    folder = build / "jupyter_execute" / SOURCE_LANGUAGE
    notebooks = {
        path.stem: nbformat.read(path, 4)
        for path in sorted(folder.glob("*.ipynb"))
        if pages is None or path.stem in pages
    }
    for page, notebook in notebooks.items():  # before anything is written
        # the hidden cell execute.context_cell adds names what the page executed with
        if not any(f"# {spec.context}" in cell.source.splitlines() for cell in notebook.cells):
            msg = f"{build} did not execute {page}.md with {spec.context}: record a build "
            raise ValueError(msg + f"made on --device {spec.device}")
    cache = get_cache(str(build / ".jupyter_cache"))
    written, failed = [], []
    for page, notebook in notebooks.items():
        try:
            _, executed = cache.merge_match_into_notebook(notebook)
        except KeyError:  # jupyter-cache keeps only a notebook that executed to its end
            failed.append(page)
            continue
        data, figures = recording_from_notebook(executed, page, spec.kind, provenance)
        written.append(write_recording(out, data, figures))
    return written, failed


def _build(device: str) -> Path:
    """Build the English edition on ``device`` into ``build/record/<device>``: the folder."""
    folder = LAYOUT.root / "build" / "record" / device.replace(":", "-")
    results = build_site(folder / "html", [SOURCE_LANGUAGE], device=device)
    if any(r.returncode != 0 for r in results):
        print(f"tensorbook_build.record: the build on {device} failed; recording what executed",
              file=sys.stderr)  # fmt: skip
    return folder


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tensorbook_build.record --device DEVICE [--out DIR] [--from-build DIR]``.

    On a GPU, ``--cpu-build DIR`` is the same machine's CPU build, recorded beside it.
    """
    parser = argparse.ArgumentParser(
        prog="python -m tensorbook_build.record",
        description="Execute the pages on a device and record their device-dependent outputs.",
    )
    parser.add_argument("--device", help=f"cpu, cuda or cuda:N (default: ${DEVICE_VARIABLE})")
    parser.add_argument("--out", type=Path, default=LAYOUT.docs / FOLDER, help="docs/recorded")
    parser.add_argument("--from-build", type=Path, help="record from this executed build")
    parser.add_argument("--cpu-build", type=Path, help="the same machine's CPU build, for a GPU")
    args = parser.parse_args(argv)
    try:
        spec = resolve_spec(args.device, given_by="--device")
    except (ValueError, DeviceUnavailableError) as error:
        print(f"tensorbook_build.record: {error}", file=sys.stderr)
        return 2
    given = sys.argv[1:] if argv is None else list(argv)
    # paths in the checkout as the checkout names them: a recording names no machine's folders
    root = f"{LAYOUT.root}/"
    command = "python -m tensorbook_build.record " + shlex.join(a.replace(root, "") for a in given)
    if spec.device == "cpu" and args.cpu_build:
        parser.error("--cpu-build is the CPU build beside a GPU's: give it with --device cuda")
    named = {"cpu": args.cpu_build, spec.device: args.from_build}  # a GPU's CPU beside it
    builds = {device: build or _build(device) for device, build in named.items()}
    try:
        written, missed = record_build(builds[spec.device], spec, args.out, command)
        failed = [f"{page}.md" for page in missed]
        if spec.device != "cpu":  # the same machine's CPU beside each page: what the GPU changed
            pages, beside = {path.stem for path in written}, args.out / spec.kind / BESIDE
            for page in pages:  # a GPU's and its CPU's recordings come from one run
                (beside / f"{page}.json").unlink(missing_ok=True)
                shutil.rmtree(beside / page, ignore_errors=True)
            cpu = resolve_spec("cpu", given_by="--cpu-build")
            done, missed = record_build(builds["cpu"], cpu, beside.parent, command, pages)
            written += done
            failed += [f"{page}.md on the CPU beside {spec.kind}" for page in missed]
    except ValueError as error:
        print(f"tensorbook_build.record: {error}", file=sys.stderr)
        return 2
    for path in written:
        print(f"tensorbook_build.record: wrote {path}")
    problems = [
        problem
        for page in sorted({p.stem for p in written})
        for problem in unmarked_differences(page_recordings(args.out, page))
    ]
    for problem in problems:
        print(f"tensorbook_build.record: {problem}", file=sys.stderr)
    for page in failed:
        print(f"tensorbook_build.record: {page} not recorded: it did not execute to its end",
              file=sys.stderr)  # fmt: skip
    return 1 if problems or failed else 0


if __name__ == "__main__":
    sys.exit(main())
