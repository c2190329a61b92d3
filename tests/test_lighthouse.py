"""Lighthouse's scores for every page of both editions, served gzipped as the hosts serve it.

``nox -s lighthouse`` prints the same table for a person; here the goal is asserted:
performance, accessibility and best practices at least
:data:`tensorbook_build.tools.lighthouse.GOAL` on every page (Lighthouse from the npm
registry, ``tests/browser/package.json``, driving Debian's Chromium). The fast tier
checks how several loads of a page are judged, on made-up results.
"""

from __future__ import annotations

import pytest

from tensorbook_build.site import site_pages
from tensorbook_build.tools import lighthouse
from tensorbook_build.tools.lighthouse import CATEGORIES, GOAL, METRICS, audit_site, judge, table
from tests.support.book import LANGUAGES


def _result(performance: float, fcp_ms: float, blocking: float = 1.0) -> dict:
    """A Lighthouse result as far as the tool reads one."""
    audits = {
        METRICS["fcp"]: {"numericValue": fcp_ms, "score": 0.99},
        METRICS["lcp"]: {"numericValue": fcp_ms + 300, "score": 0.99},
        "total-blocking-time": {"score": blocking, "displayValue": "250 ms"},
        "unused-css-rules": {"score": 0, "details": {"type": "opportunity"}, "id": "unused-css-rules",
                             "displayValue": "Est savings of 11 KiB"},
    }  # fmt: skip
    refs = [{"id": METRICS["fcp"], "weight": 10}, {"id": "total-blocking-time", "weight": 30}]
    categories = {name: {"score": 1.0, "auditRefs": []} for name in CATEGORIES}
    categories["performance"] = {"score": performance, "auditRefs": refs}
    return {"categories": categories, "audits": audits}


def test_a_page_is_judged_by_the_median_of_its_loads():
    report = judge("en/x.html", [_result(0.93, 900, 0.8), _result(0.99, 1300), _result(1.0, 1250)])
    assert (report.scores["performance"], report.runs, report.metrics_ms["fcp"]) == (99, 3, 1300)
    assert report.below_goal() == []
    assert report.lost == []
    slow = judge("en/x.html", [_result(0.93, 900, 0.8), _result(0.95, 950, 0.85)])
    assert slow.below_goal() == ["performance 93 < 98"]
    assert "performance: total-blocking-time 0.80 (250 ms)" in slow.lost
    assert "performance: unused-css-rules: Est savings of 11 KiB" in slow.lost
    assert "en/x.html" in table([report, slow])


def test_only_a_page_below_the_goal_is_loaded_again(monkeypatch):
    loads = {
        "fast": [1.0],
        "slow": [0.95, 0.99, 0.96, 0.97, 1.0, 1.0],
        "unlucky": [0.9, 0.99, 0.99],
    }
    monkeypatch.setattr(
        lighthouse, "audit_once", lambda url, _path: _result(loads[url].pop(0), 1000)
    )
    assert lighthouse.audit_page("", "fast", lighthouse.RUNS).runs == 1
    slow = lighthouse.audit_page("", "slow", lighthouse.RUNS)
    assert (slow.runs, slow.scores["performance"]) == (5, 97)
    unlucky = lighthouse.audit_page("", "unlucky", lighthouse.RUNS)
    assert (unlucky.runs, unlucky.scores["performance"]) == (3, 99)


@pytest.mark.book
@pytest.mark.browser
@pytest.mark.lighthouse
def test_every_page_of_both_editions_meets_the_goal(built_book):
    site = built_book / "html"
    pages = [f"{code}/{name}" for code in LANGUAGES for name in site_pages(site / code)]
    assert len(pages) >= 2 * len(LANGUAGES)
    reports = audit_site(site, pages)
    assert [r.page for r in reports] == pages
    below = {r.page: [*r.below_goal(), *r.lost] for r in reports if r.below_goal()}
    assert below == {}, f"goal {GOAL}\n{table(reports)}"
