"""Wheels for building the book on a GPU machine that has CUDA torch and no network.

Such a machine keeps its own torch, and everything torch needs; this gathers what
else the book's runtime, docs and test dependencies need (Sphinx, MyST-NB, pytest,
NumPy, Matplotlib, ...), at their versions in conf/constraints.txt, as wheels for
that machine's Python, into one folder to carry there. Run it where pip reaches PyPI:
``nox -s wheels -- --python-version 3.12``.
The README says what to run on the GPU machine.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterable
from pathlib import Path

from packaging.requirements import Requirement

from tensorbook_build.settings import LAYOUT

CONSTRAINTS = LAYOUT.conf / "constraints.txt"
DEFAULT_DEST = LAYOUT.root / ".whl"
PLATFORMS = (
    "manylinux_2_28_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux1_x86_64",
)
# The CUDA builds of torch bring these; the machine already has the right ones.
_TORCH_OWN = re.compile(r"^(nvidia-.*|triton|cuda-.*)$")


def canonical(name: str) -> str:
    """A distribution's name as PyPI compares names: ``Jinja2`` is ``jinja2``.

    >>> canonical("typing_extensions"), canonical("Jinja2")
    ('typing-extensions', 'jinja2')
    """
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    """The canonical name a requirement line asks for.

    Examples
    --------
    >>> requirement_name("Sphinx==9.0.4"), requirement_name("fonttools[woff]>=4.50")
    ('sphinx', 'fonttools')
    """
    return canonical(re.split(r"[\s;<>=!~\[(]", requirement.strip(), maxsplit=1)[0])


def needed(roots: Iterable[str], python_version: str) -> set[str]:
    """The installed distributions that ``roots`` need, them included.

    The installed distributions that ``roots`` need, them included, for CPython
    ``python_version`` on Linux, from the installed packages' metadata.
    """
    environment = {"python_version": python_version, "python_full_version": f"{python_version}.0"}
    found: set[str] = set()
    todo = [Requirement(root) for root in roots]
    while todo:
        requirement = todo.pop()
        name = canonical(requirement.name)
        if name in found:
            continue
        if requirement.marker and not requirement.marker.evaluate({**environment, "extra": ""}):
            continue
        found.add(name)
        try:
            todo.extend(Requirement(r) for r in importlib.metadata.requires(name) or [])
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def project_roots(groups: Iterable[str]) -> list[str]:
    """The project's runtime dependencies and those of the named dependency groups."""
    pyproject = tomllib.loads((LAYOUT.root / "pyproject.toml").read_text(encoding="utf-8"))
    roots = list(pyproject["project"]["dependencies"])
    for group in groups:
        roots += [r for r in pyproject["dependency-groups"][group] if isinstance(r, str)]
    return roots


def offline_requirements(pins: Iterable[str], wanted: set[str], leave_out: set[str]) -> list[str]:
    """The pins of the ``wanted`` distributions that the GPU machine lacks.

    The pins (``name==version`` lines) of the ``wanted`` distributions, but for those
    in ``leave_out`` (torch and its needs) and the project itself.

    >>> pins = ["# pins", "torch==2.13.0", "Sphinx==9.0.4", "ruff==0.17.6", "filelock==3.20.0"]
    >>> offline_requirements(pins, {"torch", "sphinx", "filelock"}, {"torch", "filelock"})
    ['Sphinx==9.0.4']
    """
    kept = []
    for pin in pins:
        line = pin.strip()
        if not line or line.startswith(("#", "-e")) or "==" not in line:
            continue
        name = requirement_name(line)
        if name not in wanted or name in leave_out or _TORCH_OWN.match(name):
            continue
        kept.append(line)
    return kept


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args], check=True)


def gather(requirements: list[str], dest: Path, python_version: str) -> list[Path]:
    """Download a wheel of each requirement for the GPU machine.

    Download a wheel of each requirement for CPython ``python_version`` on x86-64
    Linux; build one where PyPI has only a source archive (pure Python, such as jieba).
    """
    dest.mkdir(parents=True, exist_ok=True)
    platforms = [arg for platform in PLATFORMS for arg in ("--platform", platform)]
    with tempfile.TemporaryDirectory() as scratch:
        # --no-deps lets pip take a source archive where there is no wheel; the pins
        # already name every package needed.
        _pip(
            "download", "--no-deps", "--python-version", python_version, "--implementation",
            "cp", *platforms, "--dest", scratch, *requirements,
        )  # fmt: skip
        for archive in Path(scratch).iterdir():
            if archive.suffix == ".whl":
                shutil.move(archive, dest / archive.name)
            else:
                _pip("wheel", "--no-deps", "--wheel-dir", str(dest), str(archive))
    (dest / "requirements.txt").write_text("\n".join(requirements) + "\n", encoding="utf-8")
    return sorted(dest.glob("*.whl"))


def main(argv: list[str] | None = None) -> int:
    """Gather the wheels and their requirements file into ``--dest``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python-version", default="3.12", help="the GPU machine's (3.12)")
    parser.add_argument("--dest", type=Path, default=DEFAULT_DEST, help="default: .whl/")
    args = parser.parse_args(argv)
    pins = CONSTRAINTS.read_text(encoding="utf-8").splitlines()
    wanted = needed(project_roots(["docs", "test"]), args.python_version)
    leave_out = needed(["torch"], args.python_version)
    requirements = offline_requirements(pins, wanted, leave_out)
    missing = sorted(wanted - leave_out - {requirement_name(p) for p in pins} - {"tensorbook"})
    if missing:
        sys.exit(
            f"tensorbook_build.tools.wheels: not pinned in {CONSTRAINTS}: {', '.join(missing)}"
        )
    wheels = gather(requirements, args.dest, args.python_version)
    size = sum(w.stat().st_size for w in wheels) / 2**20
    print(f"{len(wheels)} wheels ({size:.0f} MiB) for CPython {args.python_version} in {args.dest}")
    print(f"requirements: {args.dest / 'requirements.txt'}; carry the folder to the GPU machine")
    return 0


if __name__ == "__main__":
    sys.exit(main())
