"""The sphinx-build command lines that nox, the tests and the benchmark all use.

A build folder (``build/`` for ``nox -s docs``) holds::

    html/                 the site: index.html (choose a language), one folder per
                          language, 404.html and sitemap.xml (conf/site_files.py)
    doctrees/<language>/  Sphinx's pickled pages, one environment per edition
    jupyter_execute/<language>/  the executed notebooks and their images
    .jupyter_cache/       executed outputs, shared: the second edition reuses them
"""

from __future__ import annotations

import argparse
import ast
import html
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from site_files import language_tag, site_base_url, write_not_found_page, write_sitemap

ROOT = Path(__file__).resolve().parent.parent
LOCALE_DIR = ROOT / "docs" / "locales"
"""The catalogs: ``<language>/LC_MESSAGES/<page>.po``, one per page and translation."""
DEFAULT_OUT = ROOT / "build" / "html"
"""Where ``nox -s docs`` writes the site; the build's working folders sit beside it."""

# Pages execute in two reader processes: the 2-core machines the book is built on run
# one kernel per core, and the kernels are most of a cold build's time.
JOBS = 2


def book_languages(conf: Path = ROOT / "conf") -> tuple[dict[str, str], str]:
    """``LANGUAGES`` and ``SOURCE_LANGUAGE`` from conf.py, read without running it.

    conf.py is the one place that lists the editions; reading its literals keeps
    nox and the tests from importing Sphinx's configuration module.
    """
    values = {}
    for statement in ast.parse((conf / "conf.py").read_text(encoding="utf-8")).body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name) and target.id in {"LANGUAGES", "SOURCE_LANGUAGE"}:
                values[target.id] = ast.literal_eval(statement.value)
    return values["LANGUAGES"], values["SOURCE_LANGUAGE"]


def sphinx_command(
    site: Path = DEFAULT_OUT,
    *,
    language: str = "en",
    docs: Path = ROOT / "docs",
    conf: Path = ROOT / "conf",
    extra: Sequence[str] = (),
    python: str = sys.executable,
) -> list[str]:
    """Build one edition into ``site/<language>``: warnings are errors (-W), nitpicky (-n),
    pages read in parallel, executed outputs cached beside the site for all editions."""
    work = site.parent
    return [
        python,
        "-m",
        "sphinx",
        "-j",
        str(JOBS),
        "-W",
        "-n",
        "--keep-going",
        "-b",
        "html",
        "-c",
        str(conf),
        "-d",
        str(work / "doctrees" / language),
        "-D",
        f"language={language}",
        "-D",
        f"nb_execution_cache_path={work / '.jupyter_cache'}",
        "-D",
        f"tensorbook_output_folder={work / 'jupyter_execute' / language}",
        str(docs),
        str(site / language),
        *extra,
    ]


def gettext_command(
    pot_dir: Path,
    *,
    docs: Path = ROOT / "docs",
    conf: Path = ROOT / "conf",
    python: str = sys.executable,
) -> list[str]:
    """Extract the English messages into ``pot_dir`` (one .pot per page).

    Nothing is executed: outputs are never translated, so the catalogs only need
    the prose, and extraction stays a matter of seconds.
    """
    return [
        python,
        "-m",
        "sphinx",
        "-W",
        "-n",
        "--keep-going",
        "-q",
        "-b",
        "gettext",
        "-c",
        str(conf),
        "-d",
        str(pot_dir.parent / "doctrees" / "gettext"),
        "-D",
        "nb_execution_mode=off",
        # unexecuted cells carry no kernel language, so their lexer is unknown; no matter,
        # since code is not extracted
        "-D",
        "suppress_warnings=myst-nb.lexer",
        str(docs),
        str(pot_dir),
    ]


def catalog_update_command(
    pot_dir: Path, locale_dir: Path, language: str, *, python: str = sys.executable
) -> list[str]:
    """Merge freshly extracted messages into one language's catalogs, with sphinx-intl.

    A changed message keeps its old translation marked fuzzy, a new one arrives empty,
    and a message the English no longer has is removed rather than kept as ``#~``.
    """
    return [
        python,
        "-m",
        "sphinx_intl",
        "update",
        "--pot-dir",
        str(pot_dir),
        "--locale-dir",  # always explicit: sphinx-intl would read it relative to conf/
        str(locale_dir),
        "--language",
        language,
        "--no-obsolete",
        "--line-width",
        "0",  # one line per message, so that a diff shows whole sentences
    ]


def write_language_index(site: Path, languages: dict[str, str], source: str) -> Path:
    """Write ``site/index.html``: a list of the editions, and a script that opens the
    one that best matches the browser's languages (the list works without it)."""
    items = "\n".join(
        f'      <li><a href="{code}/index.html" hreflang="{language_tag(code)}" '
        f'lang="{language_tag(code)}">{html.escape(name)}</a></li>'
        for code, name in languages.items()
    )
    template = (Path(__file__).parent / "language_index.html").read_text(encoding="utf-8")
    page = template.replace("@EDITIONS@", json.dumps(list(languages))).replace(
        "@SOURCE@", json.dumps(source)
    )
    page = page.replace("@LINKS@", items).replace("@SOURCE_DIR@", source)
    site.mkdir(parents=True, exist_ok=True)
    index = site / "index.html"
    index.write_text(page, encoding="utf-8")
    return index


def executed_pages(cache_dir: Path) -> dict[int, str]:
    """The jupyter-cache records under ``cache_dir``: record id to page file name.

    A build that executed a page added a record for it, so the ids that are new
    after a build name the pages it executed.
    """
    if not cache_dir.exists():
        return {}
    from jupyter_cache import get_cache  # not needed by nox itself, which imports this module

    return {r.pk: Path(r.uri).name for r in get_cache(str(cache_dir)).list_cache_records()}


@dataclass(frozen=True)
class EditionBuild:
    """How one edition's sphinx-build ended, and what it printed (when captured)."""

    language: str
    returncode: int
    output: str


def build_site(
    site: Path = DEFAULT_OUT,
    languages: Sequence[str] | None = None,
    *,
    docs: Path = ROOT / "docs",
    conf: Path = ROOT / "conf",
    extra: Sequence[str] = (),
    python: str = sys.executable,
    env: Mapping[str, str] | None = None,
    capture: bool = False,
) -> list[EditionBuild]:
    """Build the editions into ``site/<language>`` and write ``site/index.html``.

    The source edition executes the pages. Each translation is started beside it: it
    loads Sphinx, its catalogs and its search dictionary while the source executes,
    then waits until every output is in the cache, and reads its pages from there.
    Without ``capture`` the source edition prints as it goes and the translations'
    output follows; with it, each edition's output is returned. Stops at the first
    edition that fails, and returns what was built, the failure last.
    """
    all_languages, source = book_languages(conf)
    wanted = list(all_languages) if languages is None else list(languages)
    unknown = [code for code in wanted if code not in all_languages]
    if unknown:
        raise ValueError(
            f"unknown language {unknown[0]!r}; conf.py lists {', '.join(all_languages)}"
        )
    translations = [code for code in all_languages if code in wanted and code != source]
    environment = {**os.environ, **(env or {})}
    results: list[EditionBuild] = []
    with tempfile.TemporaryDirectory(prefix="tensorbook-build-") as scratch:
        ready = Path(scratch) / "outputs-ready"
        waiting = []
        for language in translations:
            wait = ["-D", f"tensorbook_wait_for_outputs={ready}"] if source in wanted else []
            command = sphinx_command(
                site, language=language, docs=docs, conf=conf, extra=[*extra, *wait], python=python
            )
            log = open(Path(scratch) / f"{language}.log", "w+", encoding="utf-8")  # noqa: SIM115
            process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=environment
            )
            waiting.append((language, process, log))
            if source not in wanted:
                process.wait()  # nothing to wait for: one edition at a time
        try:
            if source in wanted:
                signal = ["-D", f"tensorbook_outputs_ready_file={ready}"]
                command = sphinx_command(
                    site,
                    language=source,
                    docs=docs,
                    conf=conf,
                    extra=[*extra, *signal],
                    python=python,
                )
                finished = subprocess.run(
                    command, env=environment, capture_output=capture, text=True, check=False
                )
                output = (finished.stdout + finished.stderr) if capture else ""
                results.append(EditionBuild(source, finished.returncode, output))
                if finished.returncode != 0:
                    return results
                # finished, so every output is cached (it said so itself once it had read
                # every page; this covers a translation that waits for nothing more)
                ready.touch()
            for language, process, log in waiting:
                returncode = process.wait()
                log.seek(0)
                output = log.read()
                if not capture:
                    print(output, end="", flush=True)
                results.append(EditionBuild(language, returncode, output))
                if returncode != 0:
                    return results
        finally:
            for _, process, log in waiting:
                if process.poll() is None:
                    process.kill()
                    process.wait()
                log.close()
    write_language_index(site, all_languages, source)
    base_url = site_base_url(environment)
    write_not_found_page(site, all_languages, source, base_url)
    write_sitemap(site, all_languages, base_url)
    return results


def main(argv: Sequence[str] | None = None) -> int:
    languages, _ = book_languages()
    parser = argparse.ArgumentParser(description="Build the book's editions (nox -s docs).")
    parser.add_argument("--site", type=Path, default=DEFAULT_OUT, help="default: build/html")
    parser.add_argument("--language", action="append", choices=list(languages), dest="languages")
    args, extra = parser.parse_known_args(argv)
    results = build_site(args.site, args.languages, extra=extra)
    failed = [r for r in results if r.returncode != 0]
    if failed:
        print(f"book_build: the {failed[0].language} edition failed", file=sys.stderr)
        return failed[0].returncode
    print(f"book_build: {', '.join(r.language for r in results)} built into {args.site}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
