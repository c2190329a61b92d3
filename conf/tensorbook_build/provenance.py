"""What a page says about the source it was built from, and where to report a problem.

The commit is the one ``TENSORBOOK_COMMIT`` and ``TENSORBOOK_COMMIT_DATE`` name, else
git's, with its own date and whether the tree had uncommitted changes. Where
``TENSORBOOK_REPOSITORY`` is set, the footer links to a new issue there.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode

COMMIT_VARIABLE = "TENSORBOOK_COMMIT"
COMMIT_DATE_VARIABLE = "TENSORBOOK_COMMIT_DATE"
REPOSITORY_VARIABLE = "TENSORBOOK_REPOSITORY"
SOURCES = ("docs", "conf", "src")
"""The folders whose uncommitted changes a build's pages show."""


@dataclass(frozen=True)
class Commit:
    """The commit a build's source is, as its pages name it."""

    sha: str
    date: str  # the commit's date, YYYY-MM-DD
    modified: bool = False  # the tree had uncommitted changes

    @property
    def short(self) -> str:
        """The first twelve characters of the commit's hash."""
        return self.sha[:12]


def git(root: Path, *arguments: str) -> str | None:
    """What ``git -C root arguments`` printed, stripped; ``None`` where it failed."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *arguments],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def source_commit(
    root: Path, paths: tuple[str, ...] = (), environ: Mapping[str, str] = os.environ
) -> Commit | None:
    """The commit the environment names, else the one ``root`` is checked out at, else ``None``.

    A named commit wins: a copy carried to another machine can hold an older ``.git``
    than its files. A checked-out commit is modified where ``paths`` (relative to
    ``root``; none: the whole tree) have changes.
    """
    named = environ.get(COMMIT_VARIABLE, "").strip()
    if named:
        return Commit(named, environ.get(COMMIT_DATE_VARIABLE, "").strip())
    sha = git(root, "rev-parse", "--verify", "HEAD")
    if sha:
        date = git(root, "log", "-1", "--format=%cs", sha) or ""
        status = git(root, "status", "--porcelain", "--untracked-files=no", "--", *paths)
        return Commit(sha, date, modified=bool(status))
    return None


def report_url(
    repository: str, *, page: str, language: str, commit: Commit | None, device_line: str
) -> str:
    """A new issue in ``repository``, prefilled with the page, language, commit, device line."""
    built_from = "not known" if commit is None else f"{commit.sha} ({commit.date})"
    if commit is not None and commit.modified:
        built_from += " with uncommitted changes"
    body = "\n".join(
        [
            f"Page: {page}",
            f"Language: {language}",
            f"Commit: {built_from}",
            f"Device line: {device_line or 'none on this page'}",
            "",
            "What is wrong:",
        ]
    )
    name = page.rstrip("/").rsplit("/", 1)[-1].removesuffix(".html")
    query = urlencode({"title": f"{name} ({language}): ", "body": body}, quote_via=quote)
    return f"{repository}/issues/new?{query}"


def receipt_url(repository: str, *, chapter: str, language: str, commit: Commit | None) -> str:
    """A new issue in ``repository`` that sends a receipt of ``chapter``, filled in."""
    built_from = "not known" if commit is None else commit.sha
    body = "\n".join([
        f"Chapter: {chapter}", f"Language: {language}", f"Commit: {built_from}", "",
        (f"Attach receipt-{chapter}-<device>.json here (drag it into this box). "
         f"python -m tensorbook.receipt {chapter} writes it; the chapter's notebook ends by "
         "saying how."),
    ])  # fmt: skip
    query = urlencode({"title": f"Receipt: {chapter} ({language})", "body": body}, quote_via=quote)
    return f"{repository}/issues/new?{query}"
