"""Pages that paint at once (tensorbook_build.inline_css), and the gzip the hosts serve with.

The fast tier rewrites a small made-up edition; ``test_lighthouse.py`` measures the
real site in a browser.
"""

from __future__ import annotations

import gzip
import re
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from tests.support.server import serve

from tensorbook_build.assets import site_words
from tensorbook_build.inline_css import inline_stylesheets, stylesheet_text

HEAD = """<!DOCTYPE html>
<html><head>
<script data-cfasync="false">document.documentElement.dataset.mode = "auto";</script>
<link href="{up}_static/styles/theme.css?digest=1" rel="stylesheet" />
<link rel="stylesheet" type="text/css" href="{up}_static/page.css?v=2" />
<link rel="icon" href="{up}_static/favicon.svg"/>
<script src="{up}_static/documentation_options.js?v=3"></script>
<script>DOCUMENTATION_OPTIONS.pagename = 'x';</script>
<script type="application/json">{{"a": 1}}</script>
<script src="{up}_static/searchtools.js"></script>
<script src="{up}_static/language_data.js"></script>
<script src="{up}searchindex.js"></script>
</head><body><div class="used">text</div>
<script defer src="{up}_static/late.js"></script></body></html>
"""


@pytest.fixture
def edition(tmp_path: Path) -> Path:
    static = tmp_path / "_static"
    (static / "styles").mkdir(parents=True)
    (static / "fonts").mkdir()
    (static / "styles" / "theme.css").write_text('@import "../basic.css";\n')
    (static / "basic.css").write_text(
        ".used{color:red}.unused{color:blue}"
        '@font-face{font-family:x;src:url("fonts/x.woff2")}'
        ".dynamic{background:url(data:image/png;base64,AA==)}"
    )
    (static / "page.css").write_text(".used>.inner{margin:0}html[data-theme=dark]{color:#fff}")
    (static / "documentation_options.js").write_text("const DOCUMENTATION_OPTIONS = {};")
    (static / "late.js").write_text("el.classList.add('dynamic');")
    for name in ("searchtools.js", "language_data.js", "favicon.svg"):
        (static / name).write_text("")
    (tmp_path / "searchindex.js").write_text("")
    (tmp_path / "page.html").write_text(HEAD.format(up=""))
    (tmp_path / "search.html").write_text(HEAD.format(up=""))
    (tmp_path / "part").mkdir()
    (tmp_path / "part" / "deep.html").write_text(HEAD.format(up="../"))
    return tmp_path


def _head(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    return text[text.index("<head>") : text.index("</head>")]


def test_stylesheets_come_inline_with_only_the_rules_the_page_can_use(edition):
    assert inline_stylesheets(edition) == 3
    head = _head(edition / "page.html")
    assert 'rel="stylesheet"' not in head
    styles = re.findall(r'<style data-inlined="([^"]*)">(.*?)</style>', head)
    assert [address for address, _ in styles] == [
        "_static/styles/theme.css?digest=1",
        "_static/page.css?v=2",
    ]
    theme, page = (css for _, css in styles)
    assert ".used{color:red}" in theme  # from the @import
    assert ".unused" not in theme  # no such class on the page or in its scripts
    assert ".dynamic{" in theme  # a script adds it
    assert 'url("_static/fonts/x.woff2")' in theme  # from the page's folder, not the sheet's
    assert "url(data:image/png;base64,AA==)" in theme
    assert "html[data-theme=dark]{color:#fff}" in page
    assert ".used>.inner" not in page
    assert '<link rel="icon" href="_static/favicon.svg"/>' in head


def test_a_page_in_a_folder_gets_addresses_from_its_own_folder(edition):
    inline_stylesheets(edition)
    head = _head(edition / "part" / "deep.html")
    assert 'url("../_static/fonts/x.woff2")' in head
    assert '<style data-inlined="../_static/page.css?v=2">' in head


def test_scripts_are_deferred_in_their_order_and_the_search_is_on_its_page_only(edition):
    inline_stylesheets(edition)
    head = _head(edition / "page.html")
    assert '<script data-cfasync="false">document' in head  # the colour mode, before paint
    assert '<script defer src="_static/documentation_options.js?v=3"></script>' in head
    assert "<script type=\"module\">DOCUMENTATION_OPTIONS.pagename = 'x';</script>" in head
    assert '<script type="application/json">{"a": 1}</script>' in head
    assert "searchtools.js" not in head
    assert "searchindex.js" not in head
    assert "language_data.js" not in head
    search = _head(edition / "search.html")
    for name in ("_static/searchtools.js", "_static/language_data.js", "searchindex.js"):
        assert f'<script defer src="{name}"></script>' in search
    body = (edition / "page.html").read_text(encoding="utf-8").split("</head>")[1]
    assert '<script defer src="_static/late.js"></script>' in body


def test_rewriting_again_changes_nothing_and_follows_a_changed_stylesheet(edition):
    inline_stylesheets(edition)
    painted = (edition / "page.html").read_text(encoding="utf-8")
    assert inline_stylesheets(edition) == 0
    assert (edition / "page.html").read_text(encoding="utf-8") == painted
    assert site_words([edition / "page.html"]).isdisjoint({"unused", "inner"})
    (edition / "_static" / "page.css").write_text(".used{padding:1px}")
    assert inline_stylesheets(edition) == 3
    assert ".used{padding:1px}" in _head(edition / "page.html")


def test_a_stylesheet_from_another_host_is_refused(edition):
    page = edition / "page.html"
    page.write_text(page.read_text().replace("_static/page.css?v=2", "https://example.org/x.css"))
    with pytest.raises(ValueError, match="a stylesheet from elsewhere"):
        inline_stylesheets(edition)


def test_a_stylesheet_that_imports_itself_is_refused(tmp_path):
    (tmp_path / "a.css").write_text('@import "b.css";')
    (tmp_path / "b.css").write_text('@import "a.css";')
    with pytest.raises(ValueError, match="imports itself"):
        stylesheet_text(tmp_path / "a.css", tmp_path)


def _get(url: str, encoding: str | None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers={"Accept-Encoding": encoding} if encoding else {})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_the_server_gzips_text_as_the_hosts_do(edition):
    (edition / "index.html").write_text("<!DOCTYPE html><title>x</title>" + "text " * 200)
    (edition / "404.html").write_text("<!DOCTYPE html><title>missing</title>")
    (edition / "image.png").write_bytes(b"\x89PNG" + bytes(100))
    page = (edition / "page.html").read_bytes()
    with serve(edition, compress=True) as served:
        status, headers, body = _get(served.base_url + "page.html", "gzip, deflate, br")
        assert (status, headers["Content-Encoding"], headers["Vary"]) == (
            200,
            "gzip",
            "Accept-Encoding",
        )
        assert gzip.decompress(body) == page
        assert int(headers["Content-Length"]) == len(body) < len(page)
        status, headers, body = _get(served.base_url + "page.html", None)
        assert (status, body, headers["Vary"]) == (200, page, "Accept-Encoding")
        assert "Content-Encoding" not in headers
        status, headers, body = _get(served.base_url + "image.png", "gzip")
        assert (status, body[:4]) == (200, b"\x89PNG")
        assert "Content-Encoding" not in headers
        status, headers, body = _get(served.base_url + "nowhere.html", "gzip")
        assert (status, headers["Content-Encoding"]) == (404, "gzip")
        assert b"missing" in gzip.decompress(body)
    with serve(edition) as served:  # as python -m http.server serves it
        status, headers, body = _get(served.base_url + "page.html", "gzip")
        assert (status, body) == (200, page)
        assert "Content-Encoding" not in headers


def test_another_edition_reads_the_cuts_the_first_one_kept(edition, tmp_path_factory, monkeypatch):
    """The editions share one cache folder: the second makes no cut of its own, and its
    pages come out the same."""
    from tensorbook_build import inline_css

    work = tmp_path_factory.mktemp("work")
    cache, other = work / "inline-css", work / "other"
    shutil.copytree(edition, other)
    inline_stylesheets(edition, cache=cache)
    cuts = []
    monkeypatch.setattr(inline_css, "purge_css", lambda css, _keep: cuts.append(css) or css)
    inline_stylesheets(other, cache=cache)
    assert cuts == []
    assert _head(other / "page.html") == _head(edition / "page.html")
    (other / "_static" / "page.css").write_text(".used{padding:2px}")  # a new stylesheet
    inline_stylesheets(other, cache=cache)
    assert len(cuts) == 1


def test_a_page_s_prose_keeps_no_rule_but_its_markup_and_scripts_do(edition):
    page = edition / "page.html"
    page.write_text(HEAD.format(up="").replace(">text<", ">unused, as a word<"))
    words = site_words([page])
    assert "used" in words  # class="used"
    assert "unused" not in words
    assert "pagename" in words  # an inline script's
