#!/usr/bin/env python3
# /// script
# dependencies = ["nox>=2025.2.9"]
# ///
"""Build the book, run its doctests and tests, lint, and measure the build.

    nox -s docs                      # both editions, executed on the CPU, into build/html
    nox -s docs -- --device cuda     # the same on the GPU; fails at once without one
    nox -s docs -- --language en     # one edition only
    nox -s translate                 # after an English edit: refresh the catalogs
    nox -s doctest -- --device cuda  # the package's doctests on a device
    nox -s tests                     # everything CI runs: every tier below
    nox -s fast                      # unit tests and doctests, no book build (< 2 min)
    nox -s book                      # the tests that build the book, without a browser
    nox -s browser                   # the built site in Chromium
    nox -s lint
    nox -s weights                   # each page's CSS + JS + font bytes and load time
    nox -s lighthouse                # Lighthouse CI on every page; fails below the goal
    nox -s bench                     # build times: cold, no-op, prose edit, src edit
    nox -s wheels -- --python-version 3.12  # wheels to build on an offline GPU machine
    nox -s record -- --device cuda   # record the device-dependent outputs in docs/recorded
    nox -s record -- --import FILE   # a reader's receipt, checked, as a contributed recording
    nox -s kit -- --device cuda --out DIR  # the whole GPU check, offline, into DIR
    TENSORBOOK_TORCH=2.11.0 nox -s compat  # doctests and pages with that torch, recorded

Every session runs the project's own commands (``python -m tensorbook_build``...) in its
environment, where the package is installed; this file imports none of it, since nox's
own Python has only nox. Arguments after ``--`` go to those commands: to the build
(``--device``, ``--language``, then sphinx-build's own) or to pytest (``--device`` too).

Environments are made with pip (virtualenv), not uv: torch is pinned in
conf/constraints.txt, and pip is what finds that build here. To run a session against
another torch, set TENSORBOOK_TORCH to its version (or to "newest"):

    TENSORBOOK_TORCH=2.11.0 nox -s doctest
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import nox
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

nox.needs_version = ">=2025.2.9"  # dependency_groups and load_toml
nox.options.default_venv_backend = "virtualenv"
# nox looks for uv before each session, even with virtualenv chosen, and says so where
# it finds none: a line on every session that means nothing here
logging.getLogger("nox").addFilter(lambda record: record.getMessage() != "uv binary not found.")

PYPROJECT = nox.project.load_toml("pyproject.toml")
CONSTRAINTS = ("-c", "conf/constraints.txt")
# The test tiers, by marker (pyproject.toml lists the markers). The suite is every
# tier but the PDF's, which needs TeX and has its own session (nox -s pdf), and
# Lighthouse's goal, whose scores depend on an idle machine (nox -s lighthouse).
SUITE = "not pdf and not lighthouse"
FAST = "not book and not browser and not slow and not pdf"
BOOK = "book and not browser and not pdf"
BROWSER = "browser and not lighthouse"
# nox -s tests' parallel workers run on one thread each, as the book's build runs its pages
ONE_THREAD = dict.fromkeys(("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"), "1")


# What an environment's installation is made from: when none of it changed, a reused
# environment is not installed into again (pip takes seconds even to do nothing).
INSTALL_INPUTS = (
    "pyproject.toml",
    "conf/constraints.txt",
    "src/tensorbook/__init__.py",
    "conf/pyproject.toml",
)


def _install(session: nox.Session, *groups: str) -> None:
    """Install the project's two distributions (editable) and the named groups, pinned.

    The two are ``tensorbook``, what the book runs (pyproject.toml), and
    ``tensorbook-build``, how it is built (conf/pyproject.toml).

    A reused environment that already has them, from the same pyproject.toml and
    constraints, for this checkout, is left as it is. One copied with another checkout
    (``cp -r``) is installed into again: its editable installs point at that checkout.
    """
    requirements = [r for group in groups for r in nox.project.dependency_groups(PYPROJECT, group)]
    command = [*_constraints(session), "-e", ".", "-e", "./conf", *requirements]
    digest = hashlib.sha256("\0".join([str(Path.cwd().resolve()), *command]).encode())
    digest.update(Path(command[1]).read_bytes())  # the constraints, torch's override included
    for name in INSTALL_INPUTS:
        digest.update(Path(name).read_bytes())
    location = getattr(session.virtualenv, "location", None)
    stamp = Path(location, ".tensorbook-installed") if location else None
    if stamp is not None and stamp.is_file() and stamp.read_text() == digest.hexdigest():
        session.log(f"{location} has what {', '.join(INSTALL_INPUTS[:2])} ask for")
        return
    session.install(*command)
    if stamp is not None:
        stamp.write_text(digest.hexdigest())


TORCH_OVERRIDE = "TENSORBOOK_TORCH"
"""Environment variable: a torch version (``2.11.0``) or ``newest`` to install instead of
the one conf/constraints.txt pins; the compatibility workflow sets it."""
CPU_INDEX = (
    "PIP_INDEX_URL=https://download.pytorch.org/whl/cpu PIP_EXTRA_INDEX_URL=https://pypi.org/simple"
)


def _constraints(session: nox.Session) -> tuple[str, ...]:
    """conf/constraints.txt, or with TENSORBOOK_TORCH set, its pins with torch's replaced.

    pip resolves the wanted torch first (a dry run), so that one pip cannot install here
    stops the session with one message saying why, instead of pip's resolver report. A
    CUDA build is installed even where no NVIDIA driver is (it runs on the CPU, as a
    reader's would), and the session first says how many gigabytes it brings.
    """
    wanted = os.environ.get(TORCH_OVERRIDE, "").strip()
    if not wanted:
        return CONSTRAINTS
    if wanted != "newest":
        try:
            Version(wanted)
        except InvalidVersion:
            session.error(f"{TORCH_OVERRIDE}={wanted!r}: give a torch version (2.11.0) or 'newest'")
    # torch>=2.11: the oldest the package supports, from pyproject.toml
    floor = next(r for r in PYPROJECT["project"]["dependencies"] if re.match(r"torch\b", r))
    pins = Path(CONSTRAINTS[1]).read_text().splitlines()
    pinned = next(line for line in pins if line.startswith("torch=="))
    tmp = Path(session.create_tmp())
    # create_tmp also points TMPDIR there, inside the checkout, for every command after;
    # the tests' temporary folders must be outside any git repository (test_provenance)
    session.env.pop("TMPDIR", None)
    constraints = tmp / "constraints-torch.txt"
    constraints.write_text("\n".join(line for line in pins if line != pinned) + "\n")
    report = tmp / "torch-resolution.json"
    report.unlink(missing_ok=True)
    requested = [floor] if wanted == "newest" else [floor, f"torch=={wanted}"]
    dry_run = ("install", "--dry-run", "--ignore-installed", "--quiet", "--report", str(report))
    output = session.run_install(
        "python", "-m", "pip", *dry_run, "-c", str(constraints), *requested,
        silent=True, success_codes=[0, 1],
    )  # fmt: skip
    if output is None:  # nox -R: the environment is reused and nothing is installed
        return CONSTRAINTS
    if not report.is_file():  # pip found no torch that fits
        session.error(_torch_unavailable(session, wanted, floor, pinned, output))
    report_items = json.loads(report.read_text())["install"]
    resolved = {
        item["metadata"]["name"].lower(): item["metadata"]["version"] for item in report_items
    }
    version = resolved[pinned.partition("==")[0]]
    cuda = sorted(name for name in resolved if name.startswith(("nvidia-", "cuda-")))
    if cuda:
        # A CUDA build of torch runs on the CPU too, as a reader's download shows; it is
        # installed, and the session says how much it brings rather than refusing.
        urls = [item.get("download_info", {}).get("url", "") for item in report_items]
        size = _download_size(urls)
        where = "" if shutil.which("nvidia-smi") else " (no NVIDIA driver here: it runs on the CPU)"
        session.log(
            f"{TORCH_OVERRIDE}={wanted}: torch {version} is a CUDA build{where}; pip installs "
            f"it with {len(cuda)} CUDA packages ({', '.join(cuda[:3])}, ...): {size} to download"
        )
    with constraints.open("a") as file:
        file.write(f"torch=={version}\n")
    session.log(f"{TORCH_OVERRIDE}={wanted}: torch=={version} in place of {pinned}")
    return ("-c", str(constraints))


def _download_size(urls: list[str]) -> str:
    """The total size of the files at ``urls`` (HEAD requests), as "4.9 GB", or "size unknown"."""
    from urllib.request import Request, urlopen

    total = 0
    try:
        for url in filter(None, urls):
            with urlopen(Request(url, method="HEAD"), timeout=20) as response:
                total += int(response.headers.get("Content-Length", 0))
    except (OSError, ValueError):
        return "size unknown"
    return f"{total / 1e9:.1f} GB"


def _torch_unavailable(
    session: nox.Session, wanted: str, floor: str, pinned: str, pip_output: str
) -> str:
    """Why pip cannot install the wanted torch, in one message that says what to do."""
    reasons = []
    if wanted != "newest" and Version(wanted) not in Requirement(floor).specifier:
        reasons.append(f"the package needs {floor} (pyproject.toml)")
    # pip's own configuration (its files, PIP_CONSTRAINT) may add constraint files; one
    # on the build machines caps torch at the releases they hold
    config = session.run("python", "-m", "pip", "config", "list", silent=True) or ""
    files = [f for value in re.findall(r"constraint='([^']*)'", config) for f in value.split()]
    for name in dict.fromkeys(files):
        path = Path(name)
        lines = path.read_text().splitlines() if path.is_file() else []
        for line in lines:
            spec = re.fullmatch(r"torch\s*([<>=!~][^#;]*?)\s*(#.*)?", line.strip())
            if spec and wanted != "newest" and Version(wanted) not in SpecifierSet(spec[1]):
                reasons.append(
                    f"pip's configuration applies {path}, which allows only torch{spec[1]}"
                )
    if not reasons:  # pip's own last word, e.g. that no index has that version
        errors = re.findall(r"^ERROR: (.+)$", pip_output, flags=re.MULTILINE)
        reasons.append(errors[0] if errors else "pip resolved no torch")
    return (
        f"{TORCH_OVERRIDE}={wanted}: pip cannot install torch {wanted} here: "
        f"{'; '.join(reasons)}. Pick a version pip can install here (python -m pip index "
        f"versions torch), point pip at an index that has it ({CPU_INDEX} for the CPU "
        f"builds), or unset {TORCH_OVERRIDE} to use the pinned {pinned}"
    )


CHROMIUM = os.environ.get("TENSORBOOK_CHROMIUM", "/usr/bin/chromium")
"""The browser the suite and Lighthouse drive (tests/support/browser.py reads the same)."""


CJK_FONTS = "fonts-noto-cjk"
"""Debian's Chinese fonts: without one, Chromium draws each Chinese character as a box a
third as wide, and the Chinese edition's widths would be measured on those boxes."""


def _has_chinese_font() -> bool:
    """Whether fontconfig, which Chromium asks, knows a font with Chinese characters."""
    try:
        found = subprocess.run(
            ["fc-list", ":lang=zh", "family"], capture_output=True, text=True, check=False
        )
    except OSError:  # no fontconfig tools: Chromium's own check in the tests decides
        return True
    return bool(found.stdout.strip())


# the books the suite builds at once, beside one another, in the temporary folder: its
# peak was 5.3 GB (sampled with df every 15 s through a whole run)
TESTS_NEED_FREE_GB = 6


def _room_for_the_tests(session: nox.Session) -> None:
    """Stop, saying so, where the temporary folder has no room for the suite's books.

    A full disk fails tests far from the cause (a cache "may need to be cleared").
    """
    scratch = tempfile.gettempdir()
    free = shutil.disk_usage(scratch).free / 1e9
    if free < TESTS_NEED_FREE_GB:
        session.error(
            f"the tests need about {TESTS_NEED_FREE_GB} GB free in {scratch} for the books "
            f"they build, and {free:.1f} GB is free: free some space, or point TMPDIR at a "
            "folder with room"
        )


def _browser_tools(session: nox.Session) -> None:
    """Debian's Chromium and Chinese fonts, and axe-core and Lighthouse CI from npm.

    Chromium and the fonts are installed where they are missing and we may (root, with
    apt-get): Playwright's own browser download cannot work where only registries are
    reachable.
    """
    missing = [
        *(["chromium"] if shutil.which(CHROMIUM) is None else []),
        *([CJK_FONTS] if not _has_chinese_font() else []),
    ]
    if missing:
        if os.geteuid() != 0 or shutil.which("apt-get") is None:
            session.error(
                f"missing: {', '.join(missing)}; install Debian's with 'sudo apt-get install "
                f"{' '.join(missing)}' (or point TENSORBOOK_CHROMIUM at a Chromium)"
            )
        session.run("apt-get", "update", "-qq", external=True)
        session.run("apt-get", "install", "-y", "-qq", *missing, external=True)
    session.run("npm", "ci", "--prefix", "tests/browser", "--no-audit", "--no-fund", external=True)


@nox.session(reuse_venv=True, default=False)
def docs(session: nox.Session) -> None:
    """Build the book into build/html.

    English executes the pages, each translation then reads their outputs. Pass --device
    cuda for a GPU build, --language xx (repeatable) for some editions only; other arguments
    go to sphinx-build.
    """
    _install(session, "docs")
    session.run("python", "-m", "tensorbook_build", *session.posargs)


@nox.session(reuse_venv=True, default=False)
def translate(session: nox.Session) -> None:
    """Refresh the catalogs in docs/locales after an English edit.

    Extract the messages, merge them into every language's catalogs (changed ones marked
    fuzzy, obsolete ones removed), and list what is left to translate (not an error here;
    the tests fail on it).
    """
    _install(session, "docs")
    session.run("python", "-m", "tensorbook_build.translate", "--update", success_codes=[0, 1])


@nox.session(reuse_venv=True, default=False)
def doctest(session: nox.Session) -> None:
    """Run every doctest in src (and any in docs) on --device (default cpu)."""
    _install(session, "test")
    session.run("pytest", "--doctest-glob=*.md", "src/tensorbook", "docs", *session.posargs)


@nox.session(default=True)
def tests(session: nox.Session) -> None:
    """Run the whole suite, every tier but the PDF's, as CI does, on --device (default cpu).

    First the tests marked ``alone``, with nothing beside them: the speed chapter's check
    compares two timings taken on one core, which another process's work would skew. The
    session's book is built among them. Then every other test runs in parallel workers
    (pytest-xdist, one per core) that check that book, on one thread each as the book's
    build runs its pages (but for a reader's first notebook, on a reader's defaults). A
    file whose tests share a fixture it makes once (the browser's views, the reader's
    environment) runs in one worker; other tests go one by one to whichever worker is
    free (tests/support/schedule.py). With arguments, the suite runs in one process.
    """
    _room_for_the_tests(session)
    _install(session, "test", "docs")
    _browser_tools(session)
    # the slowest tests named at the end: where the suite's minutes go (conf/README.md)
    if session.posargs:  # some of the suite, or on a GPU: in one process, in order
        session.run("pytest", "-m", SUITE, "--durations=25", *session.posargs)
        return
    # outside the checkout (not nox's create_tmp): the tests' folders must be outside any
    # git repository (test_provenance)
    with tempfile.TemporaryDirectory(prefix="tensorbook-tests-") as scratch:
        first = Path(scratch, "alone")
        session.run("pytest", "-m", f"({SUITE}) and alone", f"--basetemp={first}", "--durations=5")
        book = first / "book0"  # the session's book (tests/conftest.py), as pytest numbers it
        parallel = ["-n", "auto", "--dist", "loadgroup", f"--built-book={book}"]
        session.run(
            "pytest", "-m", f"({SUITE}) and not alone", *parallel, "--durations=25", env=ONE_THREAD
        )


@nox.session(reuse_venv=True, default=False)
def fast(session: nox.Session) -> None:
    """The fast tier: unit tests and every doctest, without building the book."""
    _install(session, "test", "docs")
    session.run("pytest", "-m", FAST, *session.posargs)


@nox.session(reuse_venv=True, default=False)
def book(session: nox.Session) -> None:
    """The book tier: the tests that build the book and read what it built."""
    _install(session, "test", "docs")
    session.run("pytest", "-m", BOOK, *session.posargs)


@nox.session(reuse_venv=True, default=False)
def browser(session: nox.Session) -> None:
    """The browser tier: every page of both editions in headless Chromium."""
    _install(session, "test", "docs")
    _browser_tools(session)
    session.run("pytest", "-m", BROWSER, *session.posargs)


@nox.session(reuse_venv=True, default=False)
def weights(session: nox.Session) -> None:
    """Print each page's CSS + JS + font bytes and load time.

    Load every page of the built site (nox -s docs first) in headless Chromium and
    print its CSS + JS + font bytes and load time; fails over the 500 kB budget.
    """
    _install(session, "test", "docs")
    _browser_tools(session)
    session.run("python", "-m", "tests.support.browser", *session.posargs)


@nox.session(reuse_venv=True, default=False)
def pdf(session: nox.Session) -> None:
    """Build a PDF of each edition into build/html/<language>/ with XeLaTeX, then test them.

    Debian's TeX, fonts and poppler are installed where missing (as root, with apt-get);
    the site is built first where it is not current, and its pages then link the PDFs.
    """
    _install(session, "test", "docs")
    session.run("python", "-m", "tensorbook_build.pdf", "--install")
    session.run("pytest", "tests/conf/test_pdf.py", "--built-book", "build", *session.posargs)


@nox.session(reuse_venv=True, default=False)
def lighthouse(session: nox.Session) -> None:
    """Lighthouse CI on every page of both editions; fails below the goal.

    Build the book (or take --built-book DIR, a build folder such as build) and run
    Lighthouse CI with tests/browser/lighthouserc.json: Lighthouse (mobile) in Debian's
    Chromium, three loads of every page served gzipped, failing a page whose median
    score in a category is below the goal; every load's report is kept in
    build/lighthouse. Other arguments go to lhci autorun (--collect.numberOfRuns=1).
    """
    _install(session, "docs")
    _browser_tools(session)
    args = list(session.posargs)
    if "--built-book" in args:
        at = args.index("--built-book")
        if at + 1 == len(args):
            session.error("--built-book takes a build folder, such as build")
        site = str(Path(args.pop(at + 1), "html"))
        args.pop(at)
    else:
        session.run("python", "-m", "tensorbook_build")
        site = "build/html"
    session.run(
        "tests/browser/node_modules/.bin/lhci", "autorun",
        "--config=tests/browser/lighthouserc.json", f"--collect.staticDistDir={site}", *args,
        env={"CHROME_PATH": CHROMIUM}, external=True,
    )  # fmt: skip


@nox.session(reuse_venv=True, default=True)
def lint(session: nox.Session) -> None:
    """Lint: ruff (lint and format check), then mypy, strict, on both packages.

    mypy reads the types of what the packages import (torch, Sphinx, MyST-NB,
    Playwright...), so the environment has the project and the docs and test groups.
    """
    _install(session, "lint", "docs", "test")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")  # what and how: [tool.mypy] in pyproject.toml


@nox.session(reuse_venv=True, default=False)
def bench(session: nox.Session) -> None:
    """Print build figures: cold, unchanged, after a prose edit, after a src edit."""
    _install(session, "docs")
    session.install(*CONSTRAINTS, "nox")  # it times nox -s docs end to end
    session.run("python", "-m", "tests.support.bench", *session.posargs)


# The offline GPU machine's platform, x86-64 Linux: pip download matches --platform tags
# exactly (manylinux_2_28 does not admit older ones), so each tag a wheel may carry is listed
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64",
             "manylinux2014_x86_64", "manylinux1_x86_64")  # fmt: skip
# Only a source on PyPI (jieba): pip download takes no source for another Python, so pip
# wheel builds it here; pure Python, its wheel serves any Python.
SOURCE_ONLY = ("jieba",)


# What the GPU kit never imports: Playwright drives the browser tier, which the kit leaves
# out (53 MB of the 160 MB the groups come to, with greenlet, which only it needs); a
# kernel that a build runs never debugs (ipykernel imports debugpy only if it is there)
# nor completes code (nor does IPython jedi and parso): 10 MB more, and the first GPU run
# ran without them.
KIT_NEVER_USES = ("playwright", "greenlet", "debugpy", "jedi", "parso")
# What a CUDA machine image usually has already (the H200 machine of 2026-11-26 had all of
# them): by default these are not downloaded, and the kit uses the machine's own;
# `--leave-out none` fetches them too.
CUDA_IMAGE = ("numpy", "matplotlib", "pillow", "fonttools", "kiwisolver", "contourpy",
              "cycler", "pyparsing", "python-dateutil", "six", "packaging", "pyyaml",
              "pygments", "jinja2", "markupsafe", "pytest", "pluggy", "iniconfig",
              "typing-extensions", "attrs", "certifi", "charset-normalizer", "idna",
              "requests", "urllib3", "psutil", "filelock")  # fmt: skip
# The wheels' size above which the session warns: past it they likely hold what the GPU
# machine has already, which the machine's own copies would serve
KIT_BUDGET = 64 * 2**20


def _distribution(wheel: Path) -> str:
    """A wheel's distribution name, normalised as PEP 503 says (``Jinja2`` -> ``jinja2``)."""
    return re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower()


@nox.session(default=False)
def wheels(session: nox.Session) -> None:
    """Download into .whl/ the wheels an offline GPU machine needs (conf/README.md, "On a GPU").

    The machine keeps its own CUDA torch: these are what else the package and the docs
    and test groups need, at conf/constraints.txt's versions, for CPython on x86-64
    Linux, less what the kit never uses (KIT_NEVER_USES) and what the machine already has:
    by default what a CUDA machine image usually has (CUDA_IMAGE); ``--leave-out A,B``
    names the machine's instead (``cuda-image`` for that list, ``none`` for nothing). The
    other arguments go to pip download; --python-version X.Y is the machine's (3.12).
    """
    has, pip_args, args = None, [], iter(session.posargs)
    for arg in args:
        if arg == "--leave-out" or arg.startswith("--leave-out="):
            given = arg.partition("=")[2] or next(args, "")
            has = set() if has is None else has
            for name in filter(lambda n: n and n != "none", given.split(",")):
                has.update(CUDA_IMAGE if name == "cuda-image" else [name.lower()])
        else:
            pip_args.append(arg)
    leave_out = set(KIT_NEVER_USES) | (set(CUDA_IMAGE) if has is None else has)
    dest = Path(".whl")
    shutil.rmtree(dest, ignore_errors=True)  # one run's wheels: no other pins beside them
    session.run(
        "python", "-m", "pip", "wheel", "--no-deps", "-w", str(dest), *CONSTRAINTS, *SOURCE_ONLY
    )
    # torch is not asked for, so neither it nor the CUDA packages it brings are fetched
    needs = [r for r in PYPROJECT["project"]["dependencies"] if not re.match(r"torch\b", r)]
    needs += nox.project.dependency_groups(PYPROJECT, "docs", "test")
    # a distribution the machine has is not asked for, but for its extras: the machine's
    # fonttools does not bring fonttools[woff]'s brotli (the first kit's fonts failed)
    needs = [
        r for r in needs if Requirement(r).name.lower() not in leave_out or Requirement(r).extras
    ]
    platforms = [arg for platform in PLATFORMS for arg in ("--platform", platform)]
    session.run(
        "python", "-m", "pip", "download", "--only-binary=:all:", "--implementation", "cp",
        *platforms, "--python-version", "3.12", *pip_args,  # the last one given wins
        "--find-links", str(dest), "--dest", str(dest), *CONSTRAINTS, *needs,
    )  # fmt: skip
    for wheel in sorted(dest.glob("*.whl")):
        if _distribution(wheel) in leave_out:  # a dependency of something the kit needs
            wheel.unlink()
    size = sum(wheel.stat().st_size for wheel in dest.glob("*.whl"))
    session.log(f"{dest}: {len(list(dest.glob('*.whl')))} wheels, {size / 2**20:.1f} MiB")
    if size > KIT_BUDGET:
        session.warn(
            f"{dest} holds {size / 2**20:.1f} MiB, more than {KIT_BUDGET / 2**20:.0f} MiB: "
            "leave out what the GPU machine already has (--leave-out NAME,...)"
        )


@nox.session(reuse_venv=True, default=False)
def record(session: nox.Session) -> None:
    """Execute the pages on --device and record their device-dependent outputs.

    Writes docs/recorded/<kind>/<page>.json (and figures) with the run's provenance, then
    fails if a cell differs between two devices' recordings without being tagged
    device-dependent. ``-- --import FILE`` imports a reader's receipt instead
    (tensorbook_build.receipts), executing nothing.
    """
    _install(session, "docs")
    if session.posargs[:1] == ["--import"]:
        session.run("python", "-m", "tensorbook_build.receipts", *session.posargs[1:])
        return
    session.run("python", "-m", "tensorbook_build.record", *session.posargs)


@nox.session(reuse_venv=True, default=False)
def kit(session: nox.Session) -> None:
    """The GPU kit: doctests, tests, book, recording and speed targets into one folder.

    On a GPU machine without network, run ``python -m tests.support.kit`` in its own
    environment instead (conf/README.md, "On a GPU"); here nox installs the pinned torch first.
    """
    _install(session, "test", "docs")
    session.run("python", "-m", "tests.support.kit", *session.posargs)


@nox.session(reuse_venv=True, default=False)
def compat(session: nox.Session) -> None:
    """The doctests and the pages with another torch, recorded for the status page.

    Run it with TENSORBOOK_TORCH=2.11.0 (or newest): it adds the outcome to
    docs/recorded/compat.json, which the status page lists.
    """
    _install(session, "test", "docs")
    session.run("python", "-m", "tests.support.kit", "--compat", *session.posargs)


if __name__ == "__main__":
    nox.main()
