"""The chapters' notebooks published where Colab opens them: a branch of the book's repository.

As QuantEcon publishes its lectures' notebooks, the publishing workflow (``pages.yml``)
commits each edition's notebooks, ``<language>/tensorbook-<page>.ipynb``, to the branch
:data:`BRANCH` (:func:`publish`), and each chapter links to Colab's page for its own
(:func:`colab_url`). A notebook's first cell installs the book's package from the
published site, so the link is shown only where the site has an address of its own and
the repository is on GitHub: a local build shows none, and no link leads nowhere.

``python -m tensorbook_build.notebooks --site build/html --remote URL`` publishes.

Examples
--------
>>> colab_url("https://github.com/ann/tensorbook", "https://ann.github.io/tensorbook/", "en", "speed")
'https://colab.research.google.com/github/ann/tensorbook/blob/notebooks/en/tensorbook-speed.ipynb'
>>> colab_url("https://github.com/ann/tensorbook", "http://localhost:8000/", "en", "speed") is None
True
>>> colab_url("https://gitlab.com/ann/tensorbook", "https://ann.org/", "en", "speed") is None
True
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from tensorbook_build.downloads import FOLDER, download_name
from tensorbook_build.settings import EDITIONS

BRANCH = "notebooks"
"""The branch of the book's repository that holds the published notebooks."""
COLAB = "https://colab.research.google.com/github"
_GITHUB = re.compile(r"https://github\.com/(?P<owner>[\w.-]+)/(?P<name>[\w.-]+?)(?:\.git)?/?")
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1"}


def colab_url(repository: str, base_url: str, language: str, docname: str) -> str | None:
    """Colab's address for a chapter's published notebook; ``None`` where none is published.

    ``repository`` is the book's (``TENSORBOOK_REPOSITORY``), ``base_url`` the site's.
    """
    github = _GITHUB.fullmatch(repository.strip())
    if github is None or urlsplit(base_url).hostname in LOCAL_HOSTS | {None}:
        return None
    path = f"{language}/{download_name(docname)}.ipynb"
    return f"{COLAB}/{github['owner']}/{github['name']}/blob/{BRANCH}/{path}"


def published_files(site: Path) -> dict[str, Path]:
    """What the branch holds, by its path there: each edition's notebooks, from ``site``."""
    return {
        f"{edition.code}/{notebook.name}": notebook
        for edition in EDITIONS
        for notebook in sorted((site / edition.code / FOLDER).glob("*.ipynb"))
    }


def _git(folder: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(folder), *arguments], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        msg = f"git {' '.join(arguments[:2])} failed: {done.stderr.strip().splitlines()[-1:]}"
        raise RuntimeError(msg)
    return done.stdout.strip()


def publish(site: Path, remote: str, message: str, branch: str = BRANCH) -> str:
    """Commit ``site``'s notebooks to ``branch`` of ``remote``, on its last commit; the new one.

    The branch holds exactly the notebooks of this build: one a chapter lost goes.
    """
    files = published_files(site)
    if not files:
        msg = f"no notebooks in {site}/<language>/{FOLDER}: build the book first (nox -s docs)"
        raise RuntimeError(msg)
    with tempfile.TemporaryDirectory(prefix="tensorbook-notebooks-") as folder:
        work = Path(folder)
        _git(work, "init", "--quiet")
        _git(work, "remote", "add", "origin", remote)
        if _git(work, "ls-remote", "--heads", "origin", branch):
            _git(work, "fetch", "--quiet", "--depth=1", "origin", branch)
            _git(work, "checkout", "--quiet", "-b", branch, "FETCH_HEAD")
            _git(work, "rm", "-r", "--quiet", "--ignore-unmatch", ".")
        else:
            _git(work, "checkout", "--quiet", "--orphan", branch)
        for path, source in files.items():
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, work / path)
        _git(work, "add", "--all")
        identity = [
            "-c",
            "user.name=tensorbook",
            "-c",
            "user.email=tensorbook@users.noreply.github.com",
        ]
        _git(work, *identity, "commit", "--quiet", "--allow-empty", "-m", message)
        _git(work, "push", "--quiet", "origin", f"HEAD:refs/heads/{branch}")
        return _git(work, "rev-parse", "HEAD")


def main(argv: list[str] | None = None) -> int:
    """``python -m tensorbook_build.notebooks --site build/html --remote URL``."""
    parser = argparse.ArgumentParser(
        prog="python -m tensorbook_build.notebooks",
        description=f"Publish the chapters' notebooks to the repository's {BRANCH} branch.",
    )
    parser.add_argument("--site", type=Path, default=Path("build/html"))
    parser.add_argument("--remote", required=True, help="the repository to push to")
    parser.add_argument("--message", default="The chapters' notebooks, as the site publishes them")
    args = parser.parse_args(argv)
    try:
        commit = publish(args.site, args.remote, args.message)
    except RuntimeError as error:
        print(f"tensorbook_build.notebooks: {error}", file=sys.stderr)
        return 1
    print(f"tensorbook_build.notebooks: {BRANCH} is now {commit[:12]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
