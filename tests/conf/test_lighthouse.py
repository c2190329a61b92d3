"""Lighthouse's goal for every page of both editions, served gzipped as the hosts serve it.

The goal is ``tests/browser/lighthouserc.json``, which Lighthouse CI (``lhci autorun``,
from the npm registry with ``tests/browser/package.json``) runs: Lighthouse 12.8 with its
mobile defaults, in Debian's Chromium, three loads of every page its static server
finds, each category judged by their median. Lighthouse CI groups loads by the address
a page ends at, so the front door, which sends the reader on to an edition, is judged
with the English home page. ``nox -s lighthouse`` runs the same for a person. The fast
tier checks that the file asks for what the README promises.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from tests.support.book import LANGUAGES, ROOT
from tests.support.browser import CHROMIUM_ARGS, chromium_path

from tensorbook_build.site import site_pages

RC = ROOT / "tests" / "browser" / "lighthouserc.json"
LHCI = ROOT / "tests" / "browser" / "node_modules" / ".bin" / "lhci"
GOAL = {"performance": 0.98, "accessibility": 1, "best-practices": 1}
"""The lowest median score of each category on any page (the README's 98 / 100 / 100)."""


def test_the_rc_file_asserts_the_goal_on_every_page():
    ci = json.loads(RC.read_text(encoding="utf-8"))["ci"]
    collect = ci["collect"]
    assert collect["settings"]["onlyCategories"] == list(GOAL)
    assert ci["assert"]["assertions"] == {
        f"categories:{name}": ["error", {"minScore": score, "aggregationMethod": "median"}]
        for name, score in GOAL.items()
    }
    # no list to keep up to date: every HTML file the static server finds is measured
    assert collect["maxAutodiscoverUrls"] == 0
    assert "url" not in collect
    assert collect["numberOfRuns"] >= 3
    assert collect["numberOfRuns"] % 2 == 1  # a median that is one load's score
    assert collect["settings"]["chromeFlags"].split() == CHROMIUM_ARGS


@pytest.mark.book
@pytest.mark.browser
@pytest.mark.lighthouse
def test_every_page_of_both_editions_meets_the_goal(built_book, tmp_path):
    site = built_book / "html"
    if not LHCI.is_file():
        pytest.fail(f"no Lighthouse CI at {LHCI}: run 'npm ci --prefix tests/browser'")
    reports = tmp_path / "reports"
    done = subprocess.run(
        [str(LHCI), "autorun", f"--config={RC}", f"--collect.staticDistDir={site}",
         f"--upload.outputDir={reports}"],
        cwd=tmp_path, env={**os.environ, "CHROME_PATH": chromium_path()},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    runs = json.loads((reports / "manifest.json").read_text(encoding="utf-8"))
    measured = {urlsplit(run["url"]).path.lstrip("/") for run in runs}
    assert measured == set(site_pages(site))
    assert {page.split("/")[0] for page in measured} >= set(LANGUAGES)
    for run in runs:  # each page came gzipped, as the hosts send it
        result = json.loads(Path(run["jsonPath"]).read_text(encoding="utf-8"))
        document = result["audits"]["network-requests"]["details"]["items"][0]
        assert document["transferSize"] < document["resourceSize"], run["url"]
