"""A PDF of each edition: ``python -m tensorbook_build.pdf`` (what ``nox -s pdf`` runs).

Sphinx's LaTeX builder and XeLaTeX (``latexmk``) make each edition's PDF from the
outputs the site's build cached, executing nothing, in the fonts of ``latex_elements``
(``conf/conf.py``); a character with no glyph in them is a failure. Each PDF goes into
its edition's folder of the site, which is built again to link it.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tensorbook_build import launch
from tensorbook_build.build import BuildBusyError, build_lock, build_site, sphinx_command
from tensorbook_build.provenance import SOURCES, git, source_commit
from tensorbook_build.settings import LANGUAGES, LAYOUT, pdf_name
from tensorbook_build.spec import resolve_spec

DEBIAN_PACKAGES = (
    "texlive-xetex",
    "texlive-latex-recommended",
    "texlive-latex-extra",
    "texlive-fonts-recommended",
    "texlive-lang-chinese",
    "latexmk",
    "fonts-freefont-otf",
    "fonts-noto-cjk",
    "tex-gyre",
    "poppler-utils",
)
"""What XeLaTeX, the fonts and the tests' PDF tools come from (Debian's packages)."""
_TOOLS = ("xelatex", "latexmk", "pdftotext", "pdffonts")
_MISSING = re.compile(r"Missing character: There is no (.+?) in font (\S+?)[/!]")


class PdfError(RuntimeError):
    """A PDF could not be made; the message says why and where the log is."""


def missing_glyphs(log: str) -> list[tuple[str, str]]:
    """The characters XeLaTeX's ``log`` says no font had, each with the font it tried.

    Examples
    --------
    >>> missing_glyphs("Missing character: There is no 张 (U+5F20) in font FreeSerif/OT:x!")
    [('张 (U+5F20)', 'FreeSerif')]
    """
    return sorted(set(_MISSING.findall(log)))


def _commit_environment() -> dict[str, str]:
    """The commit's time as the PDF's own (XeTeX reads SOURCE_DATE_EPOCH): not the clock."""
    commit = source_commit(LAYOUT.root, SOURCES)
    if commit is None:
        return {}
    stamp = git(LAYOUT.root, "log", "-1", "--format=%ct", commit.sha) or ""
    return {"SOURCE_DATE_EPOCH": stamp, "FORCE_SOURCE_DATE": "1"} if stamp.isdigit() else {}


def build_pdf(site: Path, language: str) -> Path:
    """Build ``language``'s PDF from the executed outputs beside ``site``; its path.

    Raises :class:`PdfError` when Sphinx or XeLaTeX fails, a page would have had to
    execute, or a character has no glyph in the fonts.
    """
    work = site.parent
    cache = work / ".jupyter_cache"
    if not cache.is_dir():
        msg = f"no executed outputs in {cache}: build the site first (nox -s docs)"
        raise PdfError(msg)
    # the site's spec (its device, cpu): its pages' cache keys (a page not in the cache
    # stops Sphinx, saying so: the PDF executes nothing)
    spec = resolve_spec("cpu", given_by="the PDF's build", work=work, warm_kernels=False)
    command = sphinx_command(site, language=language, spec=spec, builder="latex", extra=["-q"])
    environment = {**os.environ, **_commit_environment()}
    folder = work / "latex" / language
    log = folder / "tensorbook.log"
    latexmk = ["latexmk", "-cd", "-xelatex", "-interaction=nonstopmode", "-halt-on-error"]
    with build_lock(work):  # as a build's steps: the lock, process groups, parent death
        status, printed = _step(command, environment)
        if status != 0:
            msg = f"the {language} edition's LaTeX failed:\n{printed[-2000:]}"
            raise PdfError(msg)
        status, _ = _step([*latexmk, str(folder / "tensorbook.tex")], environment)
    text = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
    if status != 0:
        first = next((line for line in text.splitlines() if line.startswith("!")), "")
        msg = f"XeLaTeX failed on the {language} edition: {first or 'see the log'} (log: {log})"
        raise PdfError(msg)
    missing = missing_glyphs(text)
    if missing:
        shown = ", ".join(f"{char} in {font}" for char, font in missing[:5])
        msg = (
            f"the {language} PDF lacks glyphs for {len(missing)} characters ({shown}...): "
            f"give latex_elements['fontpkg'] in conf/conf.py a font that has them (log: {log})"
        )
        raise PdfError(msg)
    target = site / language / pdf_name(language)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(folder / "tensorbook.pdf", target)
    return target


def _step(command: Sequence[str], environment: dict[str, str]) -> tuple[int, str]:
    """Run ``command`` as a build runs a step (:func:`tensorbook_build.launch.start`)."""
    process = launch.start(command, environment, capture=True)
    try:
        printed, _ = process.communicate()
        return process.wait(), printed or ""
    finally:
        launch.kill(process)  # its group: what it started, on an error or Ctrl-C too


def _build_site(site: Path, languages: Sequence[str]) -> None:
    """Build the site's editions as ``nox -s docs`` does."""
    failed = [r for r in build_site(site, languages, capture=True) if r.returncode]
    if failed:
        msg = f"{failed[0].failure}:\n{failed[0].output[-3000:]}"
        raise PdfError(msg)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tensorbook_build.pdf [--site dir] [--language xx]... [--install]``."""
    parser = argparse.ArgumentParser(
        prog="python -m tensorbook_build.pdf", description="A PDF of each edition (nox -s pdf)."
    )
    parser.add_argument("--site", type=Path, default=LAYOUT.site, help="default: build/html")
    parser.add_argument("--language", action="append", choices=list(LANGUAGES), dest="languages")
    parser.add_argument("--install", action="store_true", help="apt-get TeX where missing")
    args = parser.parse_args(argv)
    missing = [tool for tool in _TOOLS if shutil.which(tool) is None]
    if missing and args.install and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends"]
        subprocess.run([*install, *DEBIAN_PACKAGES], check=True)
        missing = [tool for tool in _TOOLS if shutil.which(tool) is None]
    if missing:
        print(
            f"tensorbook_build.pdf: no {', '.join(missing)} here; install Debian's packages "
            f"(--install does, as root): apt-get install {' '.join(DEBIAN_PACKAGES)}",
            file=sys.stderr,
        )
        return 1
    languages = args.languages or list(LANGUAGES)
    try:
        _build_site(args.site, languages)
        for language in languages:
            print(f"tensorbook_build.pdf: {build_pdf(args.site, language)}", flush=True)
        _build_site(args.site, languages)
    except (PdfError, BuildBusyError) as error:
        print(f"tensorbook_build.pdf: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
