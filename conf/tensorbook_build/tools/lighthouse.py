"""Lighthouse over every page of the built site, served compressed as the hosts serve it.

``nox -s lighthouse`` runs this module (``python -m tensorbook_build.tools.lighthouse``):
the site is served gzipped below a sub-path (:func:`tensorbook_build.tools.server.serve`,
as GitHub Pages and Read the Docs serve it), and Lighthouse, from the npm registry
(``tests/browser/package.json``), loads each page of both editions in Debian's Chromium
with its mobile defaults: a phone's screen, a slow 4G network and a CPU four times
slower, simulated from the real load. Chromium is kept off the network (its own
background traffic is turned off) and Lighthouse sends no error reports, so it runs
on a closed machine.

It prints each page's performance, accessibility and best-practices scores with its
first and largest contentful paint, and fails naming each page below :data:`GOAL`,
with the audits that cost it points.

Lighthouse's scores move a little from one load to the next, more on a busy machine.
A page below the goal is loaded again, up to ``--runs`` loads in all (five unless told,
the number Lighthouse's own documentation, docs/variability.md in its repository,
advises: the median of five loads varies about half as much as one load), and judged
by the median of its loads: one slow load does not fail a page that meets the goal on
the others, and a page that misses it on most loads fails.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tests.support.browser import CHROMIUM_ARGS, chromium_path
from tests.support.server import serve

from tensorbook_build.settings import LAYOUT
from tensorbook_build.site import site_pages

LIGHTHOUSE = LAYOUT.root / "tests" / "browser" / "node_modules" / "lighthouse" / "cli" / "index.js"
CATEGORIES = ("performance", "accessibility", "best-practices")
GOAL = {"performance": 98, "accessibility": 100, "best-practices": 100}
"""The lowest score (0-100) each category may have on any page."""
RUNS = 5
"""The most loads of a page below the goal, judged by their median."""
METRICS = {"fcp": "first-contentful-paint", "lcp": "largest-contentful-paint"}


@dataclass
class Report:
    """What Lighthouse made of one page: the median of its loads, and why it lost points."""

    page: str
    scores: dict[str, int] = field(default_factory=dict)
    metrics_ms: dict[str, float] = field(default_factory=dict)
    runs: int = 0
    lost: list[str] = field(default_factory=list)
    benchmark: float = 0.0
    """Lighthouse's measure of this machine's speed during the median load (its
    BenchmarkIndex, higher is faster): the simulated phone is this machine slowed 4x."""

    def below_goal(self) -> list[str]:
        """The categories under :data:`GOAL`, as ``performance 93 < 98``."""
        return [
            f"{name} {self.scores[name]} < {goal}"
            for name, goal in GOAL.items()
            if self.scores[name] < goal
        ]


def lighthouse_command(url: str) -> list[str]:
    """The Lighthouse command line for one page; a clear error where a part is missing."""
    node = shutil.which("node")
    if node is None:
        msg = "no node on PATH: Lighthouse runs on Node.js; install it (apt-get install nodejs)"
        raise FileNotFoundError(msg)
    if not LIGHTHOUSE.is_file():
        msg = (
            f"no Lighthouse at {LIGHTHOUSE}: run 'npm ci --prefix tests/browser' "
            "(nox -s lighthouse does)"
        )
        raise FileNotFoundError(msg)
    chromium_path()  # the same clear error as the browser suite's, where there is none
    return [
        node,
        str(LIGHTHOUSE),
        url,
        "--quiet",
        "--output=json",
        "--output-path=stdout",
        f"--only-categories={','.join(CATEGORIES)}",
        "--no-enable-error-reporting",
        f"--chrome-flags={' '.join(['--headless=new', *CHROMIUM_ARGS])}",
    ]


def _lost_points(result: dict) -> list[str]:
    """The audits that cost a category under the goal its points, worst first."""
    lost = []
    for name in CATEGORIES:
        category = result["categories"][name]
        if round(category["score"] * 100) >= GOAL[name]:
            continue
        for ref in category["auditRefs"]:
            audit = result["audits"][ref["id"]]
            if ref["weight"] > 0 and audit["score"] is not None and audit["score"] < 1:
                value = f" ({audit['displayValue']})" if audit.get("displayValue") else ""
                lost.append(f"{name}: {ref['id']} {audit['score']:.2f}{value}")
        if name == "performance":  # what Lighthouse says would make the metrics better
            lost.extend(
                f"performance: {audit['id']}: {audit.get('displayValue') or audit['title']}"
                for audit in result["audits"].values()
                if audit.get("details", {}).get("type") == "opportunity"
                and audit.get("score") is not None
                and audit["score"] < 1
            )
    return lost


def audit_once(url: str, report_path: Path | None = None) -> dict:
    """Run Lighthouse on ``url``; its JSON result, kept at ``report_path`` if given."""
    env = {**os.environ, "CHROME_PATH": chromium_path()}
    with tempfile.TemporaryDirectory(prefix="lighthouse-") as home:
        # Lighthouse keeps a settings file in the home folder; a throwaway one leaves
        # no trace and works where the home folder cannot be written
        env.update(HOME=home, XDG_CONFIG_HOME=home)
        done = subprocess.run(
            lighthouse_command(url), env=env, capture_output=True, text=True, check=False
        )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        msg = f"Lighthouse failed on {url} (exit {done.returncode}): {last}"
        raise RuntimeError(msg)
    result = json.loads(done.stdout)
    if result.get("runtimeError"):
        msg = f"Lighthouse could not load {url}: {result['runtimeError']['message']}"
        raise RuntimeError(msg)
    if report_path is not None:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.write_text(done.stdout, encoding="utf-8")
    return result


def audit_page(base_url: str, page: str, runs: int, reports: Path | None = None) -> Report:
    """Lighthouse's view of one page: one load, or up to ``runs`` if it misses the goal."""
    results = []
    while True:
        path = None if reports is None else reports / f"{page}.{len(results) + 1}.json"
        results.append(audit_once(base_url + page, path))
        report = judge(page, results)
        if not report.below_goal() or len(results) >= runs:
            return report


def judge(page: str, results: list[dict]) -> Report:
    """One page's report from its loads' results: the median load by performance.

    Each category's score is the median (the lower middle one) of the loads' scores;
    the paints and the reasons for lost points are the median load's.
    """
    by_performance = sorted(results, key=lambda r: r["categories"]["performance"]["score"])
    middle = by_performance[(len(results) - 1) // 2]
    scores = {
        name: round(statistics.median_low(r["categories"][name]["score"] for r in results) * 100)
        for name in CATEGORIES
    }
    metrics = {key: middle["audits"][audit]["numericValue"] for key, audit in METRICS.items()}
    benchmark = middle.get("environment", {}).get("benchmarkIndex", 0.0)
    report = Report(page, scores, metrics, runs=len(results), benchmark=benchmark)
    report.lost = _lost_points(middle) if report.below_goal() else []
    return report


def audit_site(
    site: Path,
    pages: Sequence[str] | None = None,
    *,
    runs: int = RUNS,
    jobs: int = 1,
    reports: Path | None = None,
) -> list[Report]:
    """Lighthouse on every page of the built ``site`` (or those named), served gzipped."""
    names = list(pages) if pages else site_pages(site)
    if not names:
        msg = f"no pages in {site}: build the book first (nox -s docs)"
        raise FileNotFoundError(msg)
    missing = [n for n in names if not (site / n).is_file()]
    if missing:
        msg = (
            f"not pages of the site at {site}: {', '.join(missing)} (give paths like en/index.html)"
        )
        raise FileNotFoundError(msg)
    with serve(site, compress=True) as served, ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(lambda n: audit_page(served.base_url, n, runs, reports), names))


def table(reports: Sequence[Report]) -> str:
    """The reports as a table: page, the three scores, FCP and LCP, and the loads."""
    width = max(len(r.page) for r in reports) + 2
    lines = [
        f"{'page':<{width}}{'perf':>6}{'a11y':>6}{'best':>6}{'FCP':>8}{'LCP':>8}{'loads':>7}{'machine':>9}"
    ]
    lines.extend(
        f"{r.page:<{width}}"
        + "".join(f"{r.scores[name]:>6}" for name in CATEGORIES)
        + "".join(f"{r.metrics_ms[key] / 1000:>7.1f}s" for key in METRICS)
        + f"{r.runs:>7}{r.benchmark:>9.0f}"
        for r in reports
    )
    performance = sorted(r.scores["performance"] for r in reports)
    lines.append(
        f"{len(reports)} pages; performance min {performance[0]}, median "
        f"{statistics.median_low(performance)}; goal: "
        + ", ".join(f"{name} >= {goal}" for name, goal in GOAL.items())
    )
    lines.append(
        "machine: Lighthouse's BenchmarkIndex of this machine during the load (higher is "
        "faster); a busy machine scores lower"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Print every page's scores; 1 if a page is below the goal."""
    parser = argparse.ArgumentParser(
        prog="python -m tensorbook_build.tools.lighthouse",
        description="Lighthouse (mobile) on every page of the built site, served gzipped.",
    )
    parser.add_argument("--site", type=Path, default=LAYOUT.site)
    parser.add_argument(
        "--runs", type=int, default=RUNS, help="loads, at most, of a page below the goal (median)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="pages measured at once")
    parser.add_argument("--reports", type=Path, help="keep each load's JSON report here")
    parser.add_argument("pages", nargs="*", help="only these pages (en/index.html...)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.jobs < 1:
        parser.error("--runs and --jobs take a number of at least 1")
    try:
        reports = audit_site(
            args.site, args.pages, runs=args.runs, jobs=args.jobs, reports=args.reports
        )
    except (FileNotFoundError, RuntimeError) as error:
        print(f"lighthouse: {error}", file=sys.stderr)
        return 1
    print(table(reports))
    failed = [r for r in reports if r.below_goal()]
    for r in failed:
        print(f"{r.page}: {', '.join(r.below_goal())} (median of {r.runs})", file=sys.stderr)
        for reason in r.lost:
            print(f"  {reason}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
