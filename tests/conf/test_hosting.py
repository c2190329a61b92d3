"""Where the site is published, and what it tells browsers and search engines.

The GitHub Actions workflow and the Read the Docs configuration are checked against
their published schemas (check-jsonschema's copies, so offline), and for what they must
do: build with the README's command and publish ``build/html``. The built site is
checked for its sitemap, its social-card metadata, and links that lead somewhere.
"""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from tests.support.book import CHAPTERS, LANGUAGES, ROOT, readme_command

from tensorbook_build.links import broken_links
from tensorbook_build.settings import LOCAL_BASE_URL, edition

WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"
READTHEDOCS = ROOT / ".readthedocs.yaml"
SCHEMAS = {WORKFLOW: "vendor.github-workflows", READTHEDOCS: "vendor.readthedocs"}


def _validate(path: Path, schema: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("path", list(SCHEMAS), ids=lambda p: p.name)
def test_hosting_config_matches_its_schema(path):
    checked = _validate(path, SCHEMAS[path])
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("path", list(SCHEMAS), ids=lambda p: p.name)
def test_schema_check_catches_a_broken_config(path, tmp_path):
    broken = yaml.safe_load(path.read_text())
    if path == WORKFLOW:
        del broken["jobs"]["build"]["runs-on"]
    else:
        broken["build"]["os"] = "windows-95"
    copy = tmp_path / path.name
    copy.write_text(yaml.safe_dump(broken))
    assert _validate(copy, SCHEMAS[path]).returncode != 0


def test_workflow_builds_with_the_readme_command_and_deploys_build_html():
    workflow = yaml.safe_load(WORKFLOW.read_text())
    build = workflow["jobs"]["build"]
    runs = [step.get("run", "") for step in build["steps"]]
    assert readme_command("docs") in runs
    build_step = next(s for s in build["steps"] if s.get("run") == readme_command("docs"))
    assert "steps.pages.outputs.base_url" in build_step["env"]["TENSORBOOK_BASE_URL"]
    assert "github.repository" in build_step["env"]["TENSORBOOK_REPOSITORY"]
    upload = next(s for s in build["steps"] if "upload-pages-artifact" in s.get("uses", ""))
    assert upload["with"]["path"] == "build/html"
    deploy = workflow["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert any("deploy-pages" in s.get("uses", "") for s in deploy["steps"])
    # the CPU build of torch, never PyPI's CUDA one
    assert build["env"]["PIP_INDEX_URL"].endswith("/whl/cpu")


def test_readthedocs_builds_with_the_readme_command_and_publishes_build_html():
    config = yaml.safe_load(READTHEDOCS.read_text())
    commands = " ".join(config["build"]["commands"])
    assert readme_command("docs") in commands
    assert "whl/cpu" in commands
    assert 'cp -r build/html "$READTHEDOCS_OUTPUT/html"' in commands


@pytest.mark.book
def test_no_link_in_the_site_leads_nowhere(built_book):
    broken = [str(link) for link in broken_links(built_book / "html")]
    # The 404 page is served at any address, so its links start at the base URL's path
    # until its script finds the book's folder; test_browser follows them below a sub-path.
    assert [link for link in broken if not link.startswith("404.html -> ")] == []


@pytest.mark.book
def test_sitemap_lists_every_page_of_every_edition_with_its_translations(built_book):
    site = built_book / "html"
    tree = ET.parse(site / "sitemap.xml")
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9", "x": "http://www.w3.org/1999/xhtml"}
    urls = {u.findtext("s:loc", namespaces=ns): u for u in tree.getroot()}
    for language in LANGUAGES:
        for page in [*CHAPTERS, "terminology", "status"]:
            loc = f"{LOCAL_BASE_URL}{language}/{page}.html"
            assert loc in urls, loc
            alternates = {a.get("hreflang"): a.get("href") for a in urls[loc].findall("x:link", ns)}
            assert alternates == {
                edition(other).tag: f"{LOCAL_BASE_URL}{other}/{page}.html" for other in LANGUAGES
            }
    assert not [u for u in urls if re.search(r"/(search|genindex)\.html$", u)]


@pytest.mark.book
@pytest.mark.parametrize("language", list(LANGUAGES))
def test_pages_carry_social_card_metadata(built_book, language):
    site = built_book / "html"
    assert (site / language / "_static" / "social-card.png").is_file()
    for page in CHAPTERS:
        html = (site / language / f"{page}.html").read_text(encoding="utf-8")
        meta = dict(re.findall(r'<meta (?:property|name)="([^"]+)" content="([^"]*)"', html))
        assert meta["og:url"] == f"{LOCAL_BASE_URL}{language}/{page}.html"
        assert meta["og:image"] == f"{LOCAL_BASE_URL}{language}/_static/social-card.png"
        assert meta["twitter:card"] == "summary_large_image"
        assert meta["og:title"]
        assert meta["og:description"] == meta["description"]
        if language != "en":  # the description is the page's own first paragraph, translated
            assert re.search(r"[\u4e00-\u9fff]", meta["og:description"]), meta["og:description"]
        assert f'<link rel="canonical" href="{meta["og:url"]}"' in html
        assert '<link rel="icon" href="_static/favicon.svg"' in html
