"""Build the book, run its doctests and tests, lint, and measure the build.

    nox -s docs                      # both editions, executed on the CPU, into build/html
    nox -s docs -- --device cuda     # the same on the GPU; fails at once without one
    nox -s docs -- --language en     # one edition only
    nox -s translate                 # after an English edit: refresh the catalogs
    nox -s doctest -- --device cuda  # the package's doctests on a device
    nox -s tests                     # everything CI runs, the book's build included
    nox -s lint
    nox -s weights                   # each page's CSS + JS + font bytes and load time
    nox -s bench                     # build times: cold, no-op, prose edit, src edit
    nox -s wheels -- --python-version 3.12  # wheels to build on an offline GPU machine

Environments are made with pip (virtualenv), not uv: torch is pinned in
conf/constraints.txt, and pip is what finds that build here.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "conf"))
from book_build import (
    DEFAULT_OUT,
    LOCALE_DIR,
    book_languages,
    catalog_update_command,
    gettext_command,
)
from site_browser import CHROMIUM  # /usr/bin/chromium, or TENSORBOOK_CHROMIUM

nox.options.default_venv_backend = "virtualenv"
nox.options.sessions = ["lint", "tests"]

PYPROJECT = nox.project.load_toml("pyproject.toml")
CONSTRAINTS = ("-c", "conf/constraints.txt")
LANGUAGES, SOURCE_LANGUAGE = book_languages()  # listed once, in conf/conf.py
POT_DIR = ROOT / "build" / "gettext"


def _install(session: nox.Session, *groups: str) -> None:
    """The package (editable) and the named dependency groups, under the pinned constraints."""
    requirements = [r for group in groups for r in nox.project.dependency_groups(PYPROJECT, group)]
    session.install(*CONSTRAINTS, "-e", ".", *requirements)


def _require_device(session: nox.Session, device: str) -> None:
    """Stop before any work if the device cannot be had, saying why; never fall back."""
    if device != "cpu":
        session.run("python", "-m", "tensorbook.device", device)


def _split_device(session: nox.Session) -> tuple[str, list[str]]:
    """Take ``--device X`` out of the posargs; return it and the rest, untouched."""
    parser = argparse.ArgumentParser(prog=f"nox -s {session.name} --", add_help=False)
    parser.add_argument("--device", default="cpu")
    known, rest = parser.parse_known_args(session.posargs)
    return known.device, rest


@nox.session(reuse_venv=True)
def docs(session: nox.Session) -> None:
    """Build the book into build/html: English, and beside it each translation, which
    reuses the executed outputs. Pass --device cuda for a GPU build, --language xx
    (repeatable) for some editions only; other arguments go to sphinx-build."""
    device, rest = _split_device(session)
    _install(session, "docs")
    _require_device(session, device)
    session.run("python", "conf/book_build.py", *rest, env={"TENSORBOOK_DEVICE": device})
    session.log(f"The book ({device}) is in {DEFAULT_OUT}; open {DEFAULT_OUT / 'index.html'}")


@nox.session(reuse_venv=True)
def translate(session: nox.Session) -> None:
    """Refresh the catalogs in docs/locales after an English edit: extract the messages,
    merge them into every language's catalogs (changed ones marked fuzzy, obsolete ones
    removed), and list what is left to translate."""
    _install(session, "docs")
    session.run(*gettext_command(POT_DIR, python="python"))
    for language in LANGUAGES:
        if language != SOURCE_LANGUAGE:
            session.run(*catalog_update_command(POT_DIR, LOCALE_DIR, language, python="python"))
    # what is left to translate; not an error here, the tests fail on it
    session.run(
        "python", "conf/translation_gate.py", "--pot-dir", str(POT_DIR), success_codes=[0, 1]
    )


@nox.session(reuse_venv=True)
def doctest(session: nox.Session) -> None:
    """Run every doctest in src (and any in docs) on --device (default cpu)."""
    device, rest = _split_device(session)
    _install(session, "test")
    _require_device(session, device)
    session.run(
        "pytest",
        "--doctest-glob=*.md",
        "src/tensorbook",
        "docs",
        *rest,
        env={"TENSORBOOK_DEVICE": device},
    )


def _browser_tools(session: nox.Session) -> None:
    """Debian's Chromium (installed here when missing and we may: root with apt-get) and
    axe-core from the npm registry, which the browser suite injects into pages."""
    if shutil.which(CHROMIUM) is None:
        if os.geteuid() != 0 or shutil.which("apt-get") is None:
            session.error(
                f"no Chromium at {CHROMIUM}: install it with 'sudo apt-get install chromium' "
                "(Debian's; Playwright's own browser download is not used), or point "
                "TENSORBOOK_CHROMIUM at one"
            )
        session.run("apt-get", "update", "-qq", external=True)
        session.run("apt-get", "install", "-y", "-qq", "chromium", external=True)
    session.run("npm", "ci", "--prefix", "tests/browser", "--no-audit", "--no-fund", external=True)


@nox.session
def tests(session: nox.Session) -> None:
    """Run the whole suite, the book's build and the browser checks included, on
    --device (default cpu)."""
    device, rest = _split_device(session)
    _install(session, "test", "docs")
    _require_device(session, device)
    _browser_tools(session)
    session.run("pytest", *rest, env={"TENSORBOOK_DEVICE": device})


@nox.session(reuse_venv=True)
def weights(session: nox.Session) -> None:
    """Load every page of the built site (nox -s docs first) in headless Chromium and
    print its CSS + JS + font bytes and load time; fails over the 500 kB budget."""
    _install(session, "test")
    _browser_tools(session)
    session.run("python", "conf/site_browser.py", "--site", str(DEFAULT_OUT), *session.posargs)


@nox.session(reuse_venv=True)
def lint(session: nox.Session) -> None:
    """ruff: lint and format check."""
    session.install(*CONSTRAINTS, *nox.project.dependency_groups(PYPROJECT, "lint"))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(reuse_venv=True)
def bench(session: nox.Session) -> None:
    """Print build figures: cold, unchanged, after a prose edit, after a src edit."""
    device, rest = _split_device(session)
    _install(session, "docs")
    _require_device(session, device)
    session.run("python", "conf/bench_build.py", *rest, env={"TENSORBOOK_DEVICE": device})


@nox.session
def wheels(session: nox.Session) -> None:
    """Gather, into .whl/, the wheels that an offline GPU machine with its own CUDA torch
    needs to build and test the book (see the README); pass --python-version X.Y for
    that machine's Python (default 3.12)."""
    _install(session, "docs", "test")
    session.run("python", "conf/offline_wheels.py", *session.posargs)
