"""Lighthouse's scores for every page of both editions, served gzipped as the hosts serve it.

``nox -s lighthouse`` prints the same table for a person; here the goal is asserted:
performance, accessibility and best practices at least
:data:`tensorbook_build.tools.lighthouse.GOAL` on every page (Lighthouse from the npm
registry, ``tests/browser/package.json``, driving Debian's Chromium).
"""

from __future__ import annotations

import pytest

from tensorbook_build.site import site_pages
from tensorbook_build.tools.lighthouse import GOAL, audit_site, table
from tensorbook_build.tools.testing import LANGUAGES

pytestmark = [pytest.mark.book, pytest.mark.browser]


def test_every_page_of_both_editions_meets_the_goal(built_book):
    site = built_book / "html"
    pages = [f"{code}/{name}" for code in LANGUAGES for name in site_pages(site / code)]
    assert len(pages) >= 2 * len(LANGUAGES)
    reports = audit_site(site, pages)
    assert [r.page for r in reports] == pages
    below = {r.page: [*r.below_goal(), *r.lost] for r in reports if r.below_goal()}
    assert below == {}, f"goal {GOAL}\n{table(reports)}"
