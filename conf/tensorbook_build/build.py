"""The build driver: ``python -m tensorbook_build`` (what ``nox -s docs`` runs).

Execute, then render: the execute stage (:mod:`tensorbook_build.stage`) runs every page
whose outputs are not cached; then every edition's Sphinx, side by side, reads them from
the shared cache. An edition whose inputs did not change since its last build
(:func:`edition_fingerprint`) is not built, and where none is, nothing executes.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import importlib.metadata
import os
import platform
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tensorbook.device import DeviceUnavailableError
from tensorbook.environment import DEVICE_VARIABLE
from tensorbook_build import launch
from tensorbook_build.provenance import REPOSITORY_VARIABLE, SOURCES, source_commit
from tensorbook_build.settings import (
    EDITIONS,
    JOBS,
    LANGUAGES,
    LAYOUT,
    SOURCE_LANGUAGE,
    Layout,
    pdf_name,
    site_base_url,
)
from tensorbook_build.site import site_files, write_site_files
from tensorbook_build.spec import BuildSpec, resolve_spec


def _sphinx(builder: str, conf: Path, doctrees: Path, **settings: object) -> list[str]:
    """``python -m sphinx`` strict (warnings are errors, nitpicky), ``-D`` each setting."""
    defines = [part for name, value in settings.items() for part in ("-D", f"{name}={value}")]
    strict = ["-m", "sphinx", "-W", "-n", "--keep-going", "-b", builder]
    return [sys.executable, *strict, "-c", str(conf), "-d", str(doctrees), *defines]


def sphinx_command(
    site: Path = LAYOUT.site,
    *,
    language: str = SOURCE_LANGUAGE,
    spec: BuildSpec | None = None,
    docs: Path = LAYOUT.docs,
    conf: Path = LAYOUT.conf,
    extra: Sequence[str] = (),
    builder: str = "html",
) -> list[str]:
    """The sphinx-build command line of one edition, into ``site/<language>``.

    ``spec`` is what its pages executed with, resolved by the driver (without one, the
    edition stops, saying so). Another ``builder`` (``latex``) writes into
    ``<build>/<builder>/<language>``.
    """
    work = site.parent
    out = site / language if builder == "html" else work / builder / language
    doctrees = language if builder == "html" else f"{builder}-{language}"
    given = {"tensorbook_spec": spec.to_json()} if spec is not None else {}
    command = _sphinx(
        builder,
        conf,
        work / "doctrees" / doctrees,
        language=language,
        nb_execution_cache_path=work / ".jupyter_cache",
        **given,
    )
    return [*command, "-j", str(JOBS), str(docs), str(out), *extra]


def gettext_command(
    pot_dir: Path, *, docs: Path = LAYOUT.docs, conf: Path = LAYOUT.conf
) -> list[str]:
    """Extract the English messages into ``pot_dir`` (one .pot per page), executing nothing.

    Unexecuted cells have no lexer and glued figures no value: no matter, for neither is
    extracted.
    """
    spec = resolve_spec("cpu", given_by="the messages' extraction", src=conf.parent / "src")
    command = _sphinx(
        "gettext",
        conf,
        pot_dir.parent / "doctrees" / "gettext",
        tensorbook_spec=spec.to_json(),
        nb_execution_mode="off",
        suppress_warnings="myst-nb.lexer,mystnb.glue_ref",
    )
    return [*command, "-q", str(docs), str(pot_dir)]


def catalog_update_command(pot_dir: Path, locale_dir: Path, language: str) -> list[str]:
    """Merge freshly extracted messages into one language's catalogs, with sphinx-intl.

    A changed message keeps its old translation, fuzzy; one the English no longer has is
    removed, not kept as ``#~``; each is one line, so a diff shows whole sentences.
    """
    # the locale folder given, which sphinx-intl would otherwise read relative to conf/
    update = ["-m", "sphinx_intl", "update", "--no-obsolete", "--line-width", "0"]
    where = ["--pot-dir", str(pot_dir), "--locale-dir", str(locale_dir)]
    return [sys.executable, *update, *where, "--language", language]


INTERRUPTED = "tensorbook_build: interrupted; no process of this build is left"
"""What the driver says on Ctrl-C, whenever it comes."""

EXECUTE = "execute"
"""The execute stage's name among a build's steps."""


def stage_command(spec: BuildSpec, docs: Path, cache: Path) -> list[str]:
    """The execute stage's command line: the pages of ``docs`` into the cache at ``cache``."""
    stage = ["-m", "tensorbook_build.stage", "--spec", spec.to_json()]
    return [sys.executable, *stage, "--docs", str(docs), "--cache", str(cache)]


def executed_pages(cache_dir: Path) -> dict[int, str]:
    """The jupyter-cache records under ``cache_dir``: record id (new ones, new pages) to page."""
    if not cache_dir.exists():
        return {}
    from jupyter_cache import get_cache

    return {r.pk: Path(r.uri).name for r in get_cache(str(cache_dir)).list_cache_records()}


class BuildBusyError(RuntimeError):
    """Another build is writing into the same build folder."""


_HELD: set[Path] = set()  # the folders this process holds: its own lock would not refuse it


def _described(holder: list[str]) -> str:
    """Who a lock file (``pid start``) names: the build, when it started, how long ago."""
    if len(holder) != 2 or not "".join(holder).isdigit():
        return "another build"
    age = max(0, round(time.time() - int(holder[1])))
    at = time.strftime("%H:%M:%S", time.localtime(int(holder[1])))
    ago = f"{age // 60} min {age % 60} s" if age >= 60 else f"{age} s"
    return f"the build with pid {holder[0]}, started at {at} ({ago} ago)"


@contextlib.contextmanager
def build_lock(work: Path) -> Iterator[None]:
    """Hold ``work`` for this build, or raise :class:`BuildBusyError` at once.

    The lock is a POSIX record lock on ``work/.build.lock``, which names its holder's pid
    and start. It ends with its process, and unlike ``flock`` no process forked from the
    build inherits it. A lock file that names a build that is gone (killed before it
    could clear it) is taken over, saying so on stderr.
    """
    work.mkdir(parents=True, exist_ok=True)
    path = work / ".build.lock"
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    holder = os.pread(descriptor, 100, 0).decode(errors="replace").split()
    try:
        if work.resolve() in _HELD:
            raise BlockingIOError
        fcntl.lockf(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(descriptor)
        msg = (
            f"{work} is being built by {_described(holder)}; wait for it to finish, "
            "or build into another folder with --site"
        )
        raise BuildBusyError(msg) from None
    if _described(holder) != "another build" and not Path("/proc", holder[0]).exists():
        gone = f"tensorbook_build: taking over {path} from {_described(holder)}, which is gone"
        print(gone, file=sys.stderr)
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, f"{os.getpid()} {time.time():.0f}\n".encode(), 0)
    _HELD.add(work.resolve())
    try:
        yield
    finally:
        _HELD.discard(work.resolve())
        os.ftruncate(descriptor, 0)
        os.close(descriptor)  # and with it the lock


_NOT_INPUTS = {"__pycache__", ".jupyter_cache", "jupyter_execute", ".ipynb_checkpoints"}
_FORCING = {"-E", "--fresh-env", "-a", "--write-all"}
_QUIETNESS = {"-q", "--quiet", "-Q", "--silent", "-v", "-vv", "-vvv", "--verbose"}


def edition_fingerprint(
    command: Sequence[str], layout: Layout, language: str, environ: Mapping[str, str]
) -> str:
    """A hash of everything an edition is built from.

    The command, ``pyproject.toml``, the files of ``docs/`` (but the catalogs, for the
    source edition), ``conf/`` and ``src/``, the installed versions, the base URL, the
    repository the pages report to and the commit their footers name.
    """
    digest = hashlib.sha256()
    digest.update("\0".join(a for a in command if a not in _QUIETNESS).encode())
    # the reader's wheel, which every page links, is built by pyproject.toml from src/
    digest.update((layout.root / "pyproject.toml").read_bytes())
    for folder in (layout.docs, layout.conf, layout.src):
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(layout.root)
            if (
                not path.is_file()
                or path.suffix == ".mo"  # compiled from the .po by the build itself
                or path in (layout.conf / "README.md", layout.conf / "HISTORY.md")  # for people
                or _NOT_INPUTS.intersection(relative.parts)
                or (language == SOURCE_LANGUAGE and path.is_relative_to(layout.locales))
            ):
                continue
            digest.update(f"\0{relative}\0".encode())
            digest.update(path.read_bytes())
    versions = sorted(
        f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()
    )
    digest.update("\0".join([platform.python_version(), *versions]).encode())
    for variable in ("TENSORBOOK_BASE_URL", "READTHEDOCS_CANONICAL_URL", REPOSITORY_VARIABLE):
        digest.update(f"\0{variable}={environ.get(variable, '')}".encode())
    # every page's footer names the commit, which a commit that touched none of the
    # files above changes all the same
    digest.update(f"\0{source_commit(layout.root, SOURCES, environ)}".encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class Step:
    """How one step of a build ended, and what it printed (when captured).

    A step is the execute stage, or an edition, named by its language.
    """

    name: str
    returncode: int
    output: str

    @property
    def failure(self) -> str:
        """What failed, when it did."""
        if self.name == EXECUTE:
            return "the pages failed to execute"
        return f"the {self.name} edition failed"


def build_site(
    site: Path = LAYOUT.site,
    languages: Sequence[str] | None = None,
    *,
    device: str | None = "cpu",
    layout: Layout = LAYOUT,
    extra: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    capture: bool = False,
    warm_kernels: bool = True,
) -> list[Step]:
    """Execute the pages, build the editions into ``site/<language>``, then the files around.

    ``device`` is resolved once, into the spec every edition and kernel receives (``None``:
    ``$TENSORBOOK_DEVICE``, else ``cpu``); ``warm_kernels=False`` starts each page's kernel
    afresh. With ``capture``, each step's output is returned instead of printed. Returns
    the steps taken (the execute stage first, where one ran), a failed one last.

    Raises
    ------
    ValueError
        For a language the settings do not list, or an unknown device.
    DeviceUnavailableError
        For a device this machine has not.
    """
    wanted = list(LANGUAGES) if languages is None else list(languages)
    unknown = [code for code in wanted if code not in LANGUAGES]
    if unknown:
        msg = (
            f"unknown language {unknown[0]!r}; the book's languages are {', '.join(LANGUAGES)} "
            "(tensorbook_build.settings.EDITIONS)"
        )
        raise ValueError(msg)
    environment = {**os.environ, **(env or {})}
    spec = resolve_spec(
        device, given_by="--device", src=layout.src, work=site.parent, warm_kernels=warm_kernels
    )
    results: list[Step] = []
    editions: list[_Edition] = []
    for code in wanted:
        command = sphinx_command(
            site, language=code, spec=spec, docs=layout.docs, conf=layout.conf, extra=extra
        )
        fingerprint = edition_fingerprint(command, layout, code, environment)
        # the pages link the edition's PDF where one was made
        fingerprint += "+pdf" if (site / code / pdf_name(code)).is_file() else ""
        stamp = site.parent / "fingerprints" / code
        current = stamp.is_file() and stamp.read_text(encoding="utf-8") == fingerprint
        if current and not _FORCING.intersection(extra) and (site / code / "index.html").is_file():
            note = f"tensorbook_build: {code}: nothing changed since its last build\n"
            if not capture:
                print(note, end="", flush=True)
            results.append(Step(code, 0, note))
        else:
            editions.append(_Edition(code, command, stamp, fingerprint))
    if not editions and all((site / name).is_file() for name in site_files()):
        return results  # nothing built, nothing of theirs changed (the fingerprints say)
    started: list[launch.Forked | subprocess.Popen[str]] = []
    with build_lock(site.parent):
        launch.remove_private_folders()  # those of a build killed before it could
        try:
            for edition in editions:
                edition.stamp.unlink(missing_ok=True)  # until this build has succeeded
            if editions:
                # the kernels' variables are the stage's own environment, and so theirs
                kernels = {**environment, **spec.kernel_environment(environment)}
                command = stage_command(spec, layout.docs, site.parent / ".jupyter_cache")
                with launch.uninterrupted():
                    started.append(launch.start(command, kernels, capture=capture))
                launch.warm_up()  # Sphinx's imports, while the pages execute
                results.append(_finish(EXECUTE, started[-1], capture=capture))
                if results[-1].returncode:
                    return results
            # the editions render side by side; the source edition prints as it goes
            for edition in editions:
                piped = capture or edition.language != wanted[0]
                with launch.uninterrupted():
                    started.append(launch.start(edition.command, environment, capture=piped))
            for edition, process in zip(editions, started[1:], strict=True):
                step = _finish(edition.language, process, capture=capture)
                results.append(step)
                edition.record(step)
        finally:
            for process in started:  # each with its process group: the failure may be any
                launch.kill(process)
            launch.remove_private_folders({process.pid for process in started})
        failed = [r for r in results if r.returncode != 0]
        if failed:
            return [r for r in results if r.returncode == 0] + failed[:1]
        write_site_files(
            site,
            site_base_url(environment),
            editions=[e for e in EDITIONS if (site / e.code).is_dir()],
            layout=layout,
        )
    return results


ENVIRONMENT = "environment.pickle"
"""Sphinx's record of the pages it has read, in an edition's doctrees: removed when the
edition fails, so that the next build reads again the pages that made it fail (a warning
that stopped a build would otherwise not be seen again)."""


@dataclass
class _Edition:
    """An edition to build: its command, and the fingerprint to record once it succeeds."""

    language: str
    command: list[str]
    stamp: Path
    fingerprint: str

    def record(self, step: Step) -> None:
        """Record the fingerprint of a success; forget the pages Sphinx read in a failure."""
        if step.returncode == 0:
            self.stamp.parent.mkdir(parents=True, exist_ok=True)
            self.stamp.write_text(self.fingerprint, encoding="utf-8")
        else:  # Sphinx kept the pages it read, and would not read again those that failed
            doctrees = self.stamp.parent.parent / "doctrees" / self.language
            (doctrees / ENVIRONMENT).unlink(missing_ok=True)


def _finish(name: str, process: launch.Forked | subprocess.Popen[str], *, capture: bool) -> Step:
    """Wait for a started step; what it printed, once it has ended, if it was captured."""
    printed, _ = process.communicate()
    if printed is not None and not capture:
        print(printed, end="", flush=True)
    return Step(name, process.wait(), printed or "")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tensorbook_build [--language xx]... [--device d] [--site dir] [sphinx args]``."""
    parser = argparse.ArgumentParser(
        prog="python -m tensorbook_build", description="Build the book's editions (nox -s docs)."
    )
    parser.add_argument("--site", type=Path, default=LAYOUT.site, help="default: build/html")
    parser.add_argument("--language", action="append", choices=list(LANGUAGES), dest="languages")
    parser.add_argument(
        "--device", help=f"auto, cpu, cuda or cuda:N (default: ${DEVICE_VARIABLE}, else cpu)"
    )
    parser.add_argument(
        "--fresh-kernels", action="store_true", help="start each page's kernel afresh, unforked"
    )
    args, extra = parser.parse_known_args(argv)
    try:
        results = build_site(
            args.site,
            args.languages,
            device=args.device,
            extra=extra,
            warm_kernels=not args.fresh_kernels,
        )
    except KeyboardInterrupt:  # every process of the build has been stopped
        print(INTERRUPTED, file=sys.stderr)
        return 130
    except (ValueError, DeviceUnavailableError, BuildBusyError) as error:
        print(f"tensorbook_build: {error}", file=sys.stderr)
        return 3 if isinstance(error, BuildBusyError) else 2
    failed = [r for r in results if r.returncode != 0]
    if failed:
        print(f"tensorbook_build: {failed[0].failure}", file=sys.stderr)
        return failed[0].returncode
    built = ", ".join(r.name for r in results if r.name != EXECUTE)
    print(f"tensorbook_build: {built} built into {args.site}")
    return 0
