"""The built site as its readers get it, in Debian's Chromium, served below a sub-path.

The whole site is served at ``http://127.0.0.1:<port>/tensorbook/`` (tests/support/server.py),
so every check here also shows that nothing depends on the domain's root. Every request
to another host fails inside Chromium and is reported (tests/support/browser.py), so the
site is seen as it works with the network cut off. axe-core comes from the npm registry
(``tests/browser/package.json``; ``nox -s tests`` runs ``npm ci``) and is injected into
each page.
"""

from __future__ import annotations

import functools
import io
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest
from tests.support.book import CHAPTERS, LANGUAGES, ROOT, SOURCE_LANGUAGE
from tests.support.browser import NO_OTHER_HOSTS, PAGE_BUDGET, Visit, launch, visit
from tests.support.server import serve

from tensorbook_build.execute import read_page
from tensorbook_build.ledger import TAG, align, cell_keys, page_recordings
from tensorbook_build.settings import edition

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = [pytest.mark.book, pytest.mark.browser]

AXE = ROOT / "tests" / "browser" / "node_modules" / "axe-core" / "axe.min.js"
PAGES = [*CHAPTERS, "terminology", "status", "genindex", "search"]
"""Every page of an edition; test_every_page_is_checked keeps this list whole."""
MATH_PAGES = {"warmup_numpy", "tensors_by_hand", "autograd", "nn_optim", "speed"}
SEARCHES = {
    "en": [("autograd", "autograd"), ("from_numpy", "numpy_bridge"), ("CUDA", "cuda")],
    "zh_CN": [("张量", "tensors"), ("自动求导", "autograd"), ("反向传播", "tensors_by_hand")],
}
RAW_TEX = re.compile(r"\\(?:frac|sum|partial|mathrm|hat|begin|left|cdot)\b|\$\$|\\\(")

FAVICON_CHECK = """async () => {
  const link = document.querySelector('link[rel~="icon"]');
  if (!link) return 'no <link rel="icon">';
  const response = await fetch(link.href);
  const type = response.headers.get('content-type') || '';
  return response.ok && type.startsWith('image/') ? '' : `${response.status} ${type} ${link.href}`;
}"""
BROKEN_IMAGES = """async () => {
  const broken = [];
  for (const image of document.images) {
    image.loading = 'eager';
    try { await image.decode(); } catch (error) { broken.push(image.currentSrc || image.src); continue; }
    if (!image.naturalWidth) broken.push(image.currentSrc || image.src);
  }
  return broken;
}"""
VISIBLE_PROSE = """() => {
  const copy = document.querySelector('article').cloneNode(true);
  copy.querySelectorAll('pre, code, script, style').forEach(e => e.remove());
  return copy.textContent;
}"""
MATH_LAYOUT = """() => Array.from(document.querySelectorAll('article math')).map(m => {
  const box = m.getBoundingClientRect();
  return {display: getComputedStyle(m).display, width: box.width, height: box.height};
})"""
RUN_AXE = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations
    .filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => `${v.impact} ${v.id}: ${v.help} — ` +
              v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | '));
}"""


@pytest.fixture(scope="session")
def site(built_book) -> Path:
    return built_book / "html"


@pytest.fixture(scope="session")
def served(site):
    with serve(site) as running:
        yield running


CHINESE_WIDTH = """() => {
  const line = Object.assign(document.createElement('span'), {textContent: '张量'.repeat(5)});
  line.style.font = '16px sans-serif';
  document.body.append(line);
  return line.getBoundingClientRect().width;
}"""


@pytest.fixture(scope="session")
def browser():
    """Chromium, once it is known to draw Chinese in a Chinese font.

    Without one it draws each character as a box about a third as wide (58 px for ten
    at 16 px, not 160), and every width the zh_CN edition is checked for would be wrong.
    """
    with launch() as running:
        page = running.new_page()
        width = page.evaluate(CHINESE_WIDTH)
        page.close()
        if width < 10 * 16 * 0.9:
            pytest.fail(
                f"ten Chinese characters at 16 px are {width:.0f} px wide, not about 160: no "
                "Chinese font; install Debian's fonts-noto-cjk (nox -s tests does, as root)"
            )
        yield running


@pytest.fixture
def context(browser):
    opened = browser.new_context()
    yield opened
    opened.close()


@functools.cache
def _axe_source() -> str:
    if not AXE.is_file():
        msg = f"no axe-core at {AXE}: run 'npm ci --prefix tests/browser' (nox -s tests does)"
        raise FileNotFoundError(msg)
    return AXE.read_text(encoding="utf-8")


def _open(context, served, path: str):
    """A new page at ``path`` (relative to the site); the page and what loading did."""
    page = context.new_page()
    return page, _visit(page, served, path)


def _visit(page, served, path: str) -> Visit:
    """Load ``path`` (relative to the site) in ``page``; what loading did."""
    outside_before = len(served.outside_prefix)
    record = visit(page, served.base_url + path, served.base_url)
    assert served.outside_prefix[outside_before:] == [], (
        f"{path} asked for addresses outside the site's folder"
    )
    return record


PARSED = "document.querySelectorAll('#main-content :is(section, h1, h2, h3, pre, table)').length"
"""What the main content's parser has made: nothing that the page's scripts add."""
FIRST_FRAME = f"requestAnimationFrame(() => {{ window.tbFirstFrame = {PARSED}; }});"
"""Run in every view before the page's own scripts: what its first frame showed."""
NEW_SESSION = "if (location.protocol.startsWith('http')) sessionStorage.clear();"
"""Run in a kept tab before the page's own scripts: its session storage as a new tab's."""


@dataclass(frozen=True)
class View:
    """One page as one reader's screen shows it: edition, page, viewport, colour scheme."""

    language: str
    name: str
    width: int = 1280  # a plain context's viewport (Playwright's default) and scheme
    height: int = 720
    mode: str = "light"

    def __str__(self) -> str:
        return f"{self.language}/{self.name}.html at {self.width}x{self.height}, {self.mode}"

    @property
    def screen(self) -> tuple[int, int, str]:
        """Its viewport and colour scheme: what the views that share a kept tab share."""
        return (self.width, self.height, self.mode)


Check = Callable[["Page", Visit], Any]
CHECKS: dict[str, tuple[Check, bool, bool]] = {}
"""What each check reads from a loaded page, by name; whether reading it changes the page
(injects a script, loads the lazy images, opens folds); whether it reads a first visit."""


def reads(
    name: str, *, changes_the_page: bool = False, first_visit: bool = False
) -> Callable[[Check], Check]:
    """Register a check: a function of the loaded page and its :class:`Visit`.

    ``first_visit``: it reads what only a reader's first visit shows (what the load
    fetched, the first frame), so its views load with a cold cache.
    """

    def register(function: Check) -> Check:
        CHECKS[name] = (function, changes_the_page, first_visit)
        return function

    return register


class Views:
    """Every view of every page loaded once, and read by all the checks that look at it.

    A page loads with the view's viewport and colour scheme: in a tab of a fresh context
    (a cold cache, as a reader's first visit) where a check reads a first visit, else in
    the one tab kept for that screen, whose cache has the site's styles and scripts. A
    kept tab starts each page's document with its session storage empty, as a new tab
    would (what the theme stores there, the sidebar's scroll, would follow the reader
    from page to page), and is emptied (``about:blank``) after it; what the theme keeps
    in local storage, the colour mode, is the screen's, as no check toggles it. The
    checks the plan (:func:`_plan`) names for that view read it then, those that only
    read first, in the order they are registered, and then those that change the page.
    The tests assert on what each check read, so each test still names its page and
    what it checks, and fails alone; a check that raised raises again in each test that
    asks for it, a load that failed in every one.
    """

    def __init__(self, browser: Browser, served) -> None:
        self.browser, self.served = browser, served
        self.plan = _plan()
        self.loaded: dict[View, dict[str, tuple[Any, Exception | None]]] = {}
        self.tabs: dict[tuple[int, int, str], Page] = {}

    def __call__(self, view: View, check: str) -> Any:
        if check not in self.plan.get(view, ()):
            msg = f"{view}: not planned for the check {check!r} (add it to _plan)"
            raise LookupError(msg)
        if view not in self.loaded:
            self.loaded[view] = self._load(view)
        seen, error = self.loaded[view][check]
        if error is not None:
            msg = f"{view}: the check {check!r} could not read the page"
            raise RuntimeError(msg) from error
        return seen

    def _tab(self, view: View, *, kept: bool) -> Page:
        """A tab with ``view``'s screen: the one kept for it, or one in a fresh context."""
        if kept and view.screen in self.tabs:
            return self.tabs[view.screen]
        context = self.browser.new_context(
            viewport={"width": view.width, "height": view.height}, color_scheme=view.mode
        )
        context.add_init_script(FIRST_FRAME)
        if kept:
            context.add_init_script(NEW_SESSION)
            self.tabs[view.screen] = context.new_page()
            return self.tabs[view.screen]
        return context.new_page()

    def _load(self, view: View) -> dict[str, tuple[Any, Exception | None]]:
        planned = self.plan[view]
        order = sorted(
            (name for name in CHECKS if name in planned), key=lambda name: CHECKS[name][1]
        )  # stable: the registration's order, the checks that change the page last
        seen: dict[str, tuple[Any, Exception | None]] = {}
        kept = not any(CHECKS[name][2] for name in order)  # a first visit: a fresh context
        page = self._tab(view, kept=kept)
        try:
            record = _visit(page, self.served, f"{view.language}/{view.name}.html")
        except Exception as error:  # noqa: BLE001 - each test that needs the view raises it
            page.context.close()  # with what the failed load left in it: a later view
            if kept:  # of this screen gets a new tab
                del self.tabs[view.screen]
            return dict.fromkeys(planned, (None, error))
        try:
            for name in order:
                try:
                    seen[name] = (CHECKS[name][0](page, record), None)
                except Exception as error:  # noqa: BLE001 - raised in the test that reads it
                    seen[name] = (None, error)
        finally:
            record.stop_watching()
            if kept:  # no request of this page's may outlive it in the tab
                page.goto("about:blank")
            else:
                page.context.close()
        return seen

    def close(self) -> None:
        """Close the contexts of the tabs kept for each screen."""
        for page in self.tabs.values():
            page.context.close()


@pytest.fixture(scope="session")
def views(browser, served) -> Iterator[Views]:
    loaded = Views(browser, served)
    yield loaded
    loaded.close()


MODES = ["light", "dark"]
WIDTHS = [320, 412, 1280]
"""A small phone, a common phone and a desk, as the reader's screen."""
PHONE_WIDTHS = [320, 360, 412]
SCREEN_HEIGHT = 823
"""The viewport's height at each of those widths: Lighthouse's phone's (412 x 823)."""


def _plan() -> dict[View, set[str]]:
    """The checks that read each view. Every check's test asks for its views from the
    same lists, and a view or a check missing here fails that test (LookupError)."""
    plan: dict[View, set[str]] = defaultdict(set)
    for language in LANGUAGES:
        for name in PAGES:
            plan[View(language, name)] |= {"clean", "images"}
            for mode in MODES:
                plan[View(language, name, mode=mode)].add("accessibility")
        for name in MATH_PAGES:
            plan[View(language, name)].add("math")
        plan[View(language, "status")].add("compatibility table")
        for name in PICTURE_PAGES:
            for mode in MODES:
                plan[View(language, name, 412, SCREEN_HEIGHT, mode)].add("pictures")
        for name in PAGES:
            plan[View(language, name, 412, SCREEN_HEIGHT)].add("first frame")
        for width in PHONE_WIDTHS:
            for name in [*CHAPTERS, "terminology"]:
                plan[View(language, name, width, SCREEN_HEIGHT)].add("width")
        for width in WIDTHS:
            for mode in MODES:
                for name in PICTURE_PAGES:
                    plan[View(language, name, width, SCREEN_HEIGHT, mode)].add("words")
                for name in [*CHAPTERS, "status"]:
                    plan[View(language, name, width, SCREEN_HEIGHT, mode)] |= {
                        "outputs",
                        "recorded outputs",
                    }
                for name in CHAPTERS:
                    plan[View(language, name, width, SCREEN_HEIGHT, mode)].add("device line")
    plan[View(SOURCE_LANGUAGE, "speed")].add("results tables")
    return plan


def test_every_page_is_checked(site):
    for language in LANGUAGES:
        built = {p.stem for p in (site / language).glob("*.html") if p.name != "404.html"}
        assert built == set(PAGES), f"{language}: the suite's page list is out of date"


ICONS = """() => Array.from(document.querySelectorAll('.fa-solid'))
    .filter(i => i.offsetParent !== null)
    .map(i => [i.className, getComputedStyle(i, '::before').content,
               document.fonts.check('900 16px "Font Awesome 7 Free"',
                                    getComputedStyle(i, '::before').content.replace(/"/g, ''))])"""


@reads("clean", first_visit=True)
def _clean(page: Page, record: Visit) -> dict[str, Any]:
    return {
        "status": record.status,
        "problems": record.problems(),  # what the load itself did, before anything else
        "counted bytes": record.counted_bytes,
        "bytes by kind": dict(record.bytes_by_kind),
        "favicon": page.evaluate(FAVICON_CHECK),
        "lang": page.evaluate("document.documentElement.lang"),
        "icons": page.evaluate(ICONS),
    }


@reads("images", changes_the_page=True)  # it loads the images the page would load lazily
def _images(page: Page, _record: Visit) -> list[str]:
    return page.evaluate(BROKEN_IMAGES)


@pytest.mark.parametrize("name", PAGES)
@pytest.mark.parametrize("language", list(LANGUAGES))
def test_page_loads_clean(views, language, name):
    seen = views(View(language, name), "clean")
    assert seen["status"] == 200
    assert seen["problems"] == []
    assert seen["favicon"] == ""
    assert views(View(language, name), "images") == []
    assert seen["lang"] == edition(language).tag
    assert seen["counted bytes"] <= PAGE_BUDGET, (
        f"{name}: {seen['counted bytes']} bytes of CSS, JS and fonts: {seen['bytes by kind']}"
    )
    icons = seen["icons"]
    assert icons, "no visible icon on the page"
    for classes, glyph, font_has_it in icons:
        assert glyph not in ("none", "normal", '""'), f"icon {classes} has no glyph"
        assert font_has_it, f"icon {classes}: the icon font lacks its glyph"


@reads("math")
def _math(page: Page, _record: Visit) -> tuple[list[dict[str, Any]], str]:
    return page.evaluate(MATH_LAYOUT), page.evaluate(VISIBLE_PROSE)


@pytest.mark.parametrize("name", sorted(MATH_PAGES))
@pytest.mark.parametrize("language", list(LANGUAGES))
def test_math_renders(views, language, name):
    layout, prose = views(View(language, name), "math")
    assert layout, "no rendered math on a page that has formulas"
    for box in layout:
        assert box["display"] in {"math", "block math", "inline math"}, box
        assert box["width"] > 0, box
        assert box["height"] > 0, box
    assert RAW_TEX.findall(prose) == []


@reads("accessibility", changes_the_page=True)  # axe is injected into the page
def _accessibility(page: Page, _record: Visit) -> tuple[str, list[str]]:
    theme = page.evaluate("document.documentElement.dataset.theme")
    page.add_script_tag(content=_axe_source())
    return theme, page.evaluate(RUN_AXE)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", PAGES)
@pytest.mark.parametrize("language", list(LANGUAGES))
def test_accessibility(views, language, name, mode):
    theme, violations = views(View(language, name, mode=mode), "accessibility")
    assert theme == mode
    assert violations == []


@pytest.mark.parametrize(
    ("language", "query", "expected"),
    [(lang, q, e) for lang, searches in SEARCHES.items() for q, e in searches],
)
def test_search_finds_the_page(context, served, language, query, expected):
    page, record = _open(context, served, f"{language}/search.html?q={query}")
    page.wait_for_selector("#search-results ul.search li", timeout=15_000)
    found = page.eval_on_selector_all(
        "#search-results ul.search li a", "links => links.map(a => a.getAttribute('href'))"
    )
    assert any(urlsplit(href).path.endswith(f"{expected}.html") for href in found), found
    assert record.problems() == []


def test_copy_button_copies_the_source_only(context, served):
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    page, _ = _open(context, served, f"{SOURCE_LANGUAGE}/tensors.html")
    cell = page.locator("div.cell:has(.cell_input):has(.cell_output)").first
    source = cell.locator(".cell_input pre").inner_text()
    printed = cell.locator(".cell_output").inner_text().strip()
    assert printed, "the cell printed nothing, so this test would prove nothing"
    cell.locator(".cell_input").hover()
    cell.locator(".cell_input button.copybtn").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.strip() == source.strip()
    assert printed not in copied
    assert cell.locator(".cell_output button.copybtn").count() == 0


def _theme(page) -> tuple[str, str]:
    return page.evaluate(
        "[document.documentElement.dataset.theme, getComputedStyle(document.body).backgroundColor]"
    )


def _luminance(css_colour: str) -> float:
    red, green, blue = (int(v) for v in re.findall(r"\d+", css_colour)[:3])
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


def test_dark_mode_toggle_is_remembered_across_pages(context, served):
    page, _ = _open(context, served, f"{SOURCE_LANGUAGE}/tensors.html")
    theme, background = _theme(page)
    assert theme == "light"
    assert _luminance(background) > 0.5
    page.locator(".article-header-buttons .theme-switch-button").click()
    page.locator(".article-header-buttons .theme-change-button[data-mode='dark']").click()
    theme, background = _theme(page)
    assert theme == "dark"
    assert _luminance(background) < 0.3
    page.locator("a.right-next").click()
    page.wait_for_load_state("load")
    assert page.url.endswith("/numpy_bridge.html")
    theme, background = _theme(page)
    assert theme == "dark"
    assert _luminance(background) < 0.3
    assert page.evaluate("localStorage.getItem('mode')") == "dark"


@pytest.mark.parametrize("name", [*CHAPTERS, "terminology", "status"])
def test_language_switcher_lands_on_the_same_page(context, served, name):
    page, _ = _open(context, served, f"{SOURCE_LANGUAGE}/{name}.html")
    for language in [*(lang for lang in LANGUAGES if lang != SOURCE_LANGUAGE), SOURCE_LANGUAGE]:
        page.locator(f".tb-language-switcher a[hreflang='{edition(language).tag}']").click()
        page.wait_for_load_state("load")
        assert urlsplit(page.url).path == f"{urlsplit(served.base_url).path}{language}/{name}.html"
        assert page.evaluate("document.documentElement.lang") == edition(language).tag


@pytest.mark.parametrize("missing", ["en/no-such-page.html", "zh_CN/a/b/c.html", "nothing-here"])
def test_missing_page_gets_the_404_page_with_working_links(context, served, missing):
    page, record = _open(context, served, missing)
    assert record.status == 404
    # the browser reports the page's own status; nothing else may go wrong
    assert record.console_errors == [
        "Failed to load resource: the server responded with a status of 404 (Not Found)"
    ]
    assert record.failed_requests == record.other_hosts == []
    assert page.evaluate(FAVICON_CHECK) == ""
    assert page.locator("h1").inner_text().startswith("Page not found")
    for language in LANGUAGES:
        link = page.locator(f"a.edition[data-edition='{language}']")
        assert urlsplit(link.get_attribute("href")).path == (
            f"{urlsplit(served.base_url).path}{language}/index.html"
        )
    page.locator(f"a.edition[data-edition='{SOURCE_LANGUAGE}']").click()
    page.wait_for_load_state("load")
    assert page.url == f"{served.base_url}{SOURCE_LANGUAGE}/index.html"


def test_a_request_for_another_host_is_recorded_and_fails_in_chromium(browser, tmp_path):
    """The suite sees the site as it works with the network cut off: a page's requests for
    other hosts, by name or by address, are recorded and fail inside Chromium
    (NO_OTHER_HOSTS), and the local server's are served (with the cache on)."""
    (tmp_path / "index.html").write_text(
        '<!doctype html><html lang="en"><title>t</title><link rel="icon" href="data:,">'
        '<link rel="stylesheet" href="a.css">'
        '<img src="https://example.org/a.png" alt=""><img src="http://192.0.2.1/b.png" alt="">',
        encoding="utf-8",
    )
    (tmp_path / "a.css").write_text("body { color: black; }", encoding="utf-8")
    elsewhere = ["https://example.org/a.png", "http://192.0.2.1/b.png"]
    with serve(tmp_path) as served:
        context = browser.new_context()
        try:
            page = context.new_page()
            failed: dict[str, str | None] = {}  # address: Chromium's reason
            page.on("requestfailed", lambda request: failed.update({request.url: request.failure}))
            record = _visit(page, served, "index.html")
        finally:
            context.close()
    assert sorted(record.other_hosts) == sorted(elsewhere)
    assert record.failed_requests == []
    assert record.bytes_by_kind.get("css") == len("body { color: black; }")
    at_the_proxy = [url for url, reason in failed.items() if "PROXY" in (reason or "")]
    assert sorted(at_the_proxy) == sorted(elsewhere), (NO_OTHER_HOSTS, failed)


@pytest.mark.parametrize(
    ("locale", "edition"),
    [("zh-CN", "zh_CN"), ("zh-TW", "zh_CN"), ("en-GB", "en"), ("fr-FR", SOURCE_LANGUAGE)],
)
def test_front_door_opens_the_readers_edition(browser, served, locale, edition):
    context = browser.new_context(locale=locale)
    try:
        page, record = _open(context, served, "")
        page.wait_for_url(f"{served.base_url}{edition}/index.html")
        # the front door replaces itself while it loads, by design, and Chromium may then
        # report its own document as aborted; anything else is a problem
        itself = f"{served.base_url}: failed request: net::ERR_ABORTED {served.base_url}"
        assert [p for p in record.problems() if p != itself] == []
    finally:
        context.close()


FIGURE_PAGE = "tensors_by_hand"
FIGURE = "article .cell_output svg.tb-picture:has(title[data-w=loss_title])"
"""The page's loss curves: a figure with a grid, lines in colour and words in ink."""
PAGE_BACKGROUND = "() => getComputedStyle(document.body).backgroundColor"


def _rgb_luminance(rgb: tuple[int, ...]) -> float:
    """WCAG's relative luminance of an sRGB colour."""
    channels = [c / 255 for c in rgb[:3]]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _contrast(first: float, second: float) -> float:
    """WCAG's contrast ratio of two luminances."""
    return (max(first, second) + 0.05) / (min(first, second) + 0.05)


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_a_figure_reads_in_either_mode(browser, served, mode):
    """A figure's ink stands out from its background, and its background is the page's
    own tone: no pale card glaring from a dark page (the theme's default for outputs)."""
    from PIL import Image

    context = browser.new_context(color_scheme=mode)
    try:
        page, _ = _open(context, served, f"{SOURCE_LANGUAGE}/{FIGURE_PAGE}.html")
        assert page.evaluate("document.documentElement.dataset.theme") == mode
        figure = page.locator(FIGURE).first
        figure.scroll_into_view_if_needed()
        shot = Image.open(io.BytesIO(figure.screenshot())).convert("RGB")
        background = re.findall(r"\d+", page.evaluate(PAGE_BACKGROUND))
    finally:
        context.close()
    raw = shot.tobytes()  # RGB, three bytes a pixel
    luminances = sorted(_rgb_luminance(tuple(raw[i : i + 3])) for i in range(0, len(raw), 3))
    # the figure's own background is what most of it is; its ink, the pixels farthest
    # from that, on whichever side (dark ink on light, or light on dark)
    own = statistics.median(luminances)
    tail = len(luminances) // 200
    ink = max(luminances[tail], luminances[-1 - tail], key=lambda lum: _contrast(lum, own))
    page_luminance = _rgb_luminance(tuple(int(c) for c in background[:3]))
    assert _contrast(ink, own) >= 4.5, (mode, ink, own)
    assert _contrast(own, page_luminance) <= 1.5, (mode, own, page_luminance)


PICTURE_PAGES = {
    "warmup_numpy": 1,  # the loss curve
    "tensors": 4,
    "autograd": 4,  # the graph before and after backward()
    "autograd_network": 1,  # the graph
    "nn_optim": 1,  # the autograd and nn runs' loss curves
    "tensors_by_hand": 4,  # the network, two of loss curves, the float32 grid (in a deeper fold)
    "classification": 3,
    "speed": 2,
}
"""The pages with pictures drawn by tensorbook.draw, and how many each has."""
DEEPER_OPENED = """measure => {
  const closed = Array.from(document.querySelectorAll('article details.deeper:not([open])'));
  closed.forEach(fold => { fold.open = true; });
  try { return measure(); } finally { closed.forEach(fold => { fold.open = false; }); }
}"""
"""A measurement taken with the deeper folds open, as a reader who opens them sees their
pictures (a closed fold lays out nothing), and closed again after, so that the page is
as it was for the checks that read it next."""
PICTURES = (
    "() => ("
    + DEEPER_OPENED
    + """)(() => Array.from(document.querySelectorAll('article .cell_output svg.tb-picture')).map(svg => {
  const box = svg.getBoundingClientRect();
  const ink = getComputedStyle(svg).color;
  const title = svg.querySelector('title');
  return {width: box.width, height: box.height, right: box.right,
          column: svg.closest('.cell_output').getBoundingClientRect().right,
          role: svg.getAttribute('role'), name: title ? title.textContent.trim() : '',
          desc: (svg.querySelector('desc') || {}).textContent || '', ink,
          words: Array.from(svg.querySelectorAll('[data-w]')).map(e => e.textContent)};
}))"""
)


@reads("pictures")
def _pictures(page: Page, _record: Visit) -> tuple[list[dict[str, Any]], str, int]:
    return page.evaluate(PICTURES), page.evaluate(PAGE_BACKGROUND), page.evaluate("innerWidth")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(PICTURE_PAGES))
@pytest.mark.parametrize("language", list(LANGUAGES))
def test_pictures_fit_a_phone_and_read_in_either_mode(views, language, name, mode):
    """Each picture is shown, within the column of a 412 px phone, named, and inked in
    the page's own text colour, which contrasts with the page in either mode."""
    pictures, background, viewport = views(
        View(language, name, 412, SCREEN_HEIGHT, mode), "pictures"
    )
    assert len(pictures) == PICTURE_PAGES[name]
    page_luminance = _rgb_luminance(tuple(int(c) for c in re.findall(r"\d+", background)[:3]))
    for picture in pictures:
        assert picture["width"] > 100, picture
        assert picture["height"] > 50, picture
        assert picture["right"] <= min(picture["column"], viewport) + 0.5, picture
        assert picture["role"] == "img", picture
        assert picture["name"], picture
        assert picture["desc"], picture
        ink = _rgb_luminance(tuple(int(c) for c in re.findall(r"\d+", picture["ink"])[:3]))
        assert _contrast(ink, page_luminance) >= 4.5, (mode, picture["ink"], background)
        if language.startswith("zh"):
            assert re.search(r"[\u4e00-\u9fff]", picture["name"]), picture["name"]


VISIBLE = """selector => Array.from(document.querySelectorAll(selector)).filter(e => {
  const box = e.getBoundingClientRect();
  return box.width > 0 && box.height > 0 && getComputedStyle(e).visibility !== 'hidden';
}).length"""
HEADER_OFF_SCREEN = """() => Array.from(document.querySelectorAll(
    '.bd-header-article a, .bd-header-article button')).filter(e => {
  const box = e.getBoundingClientRect();
  return box.width > 0 && (box.left < -0.5 || box.right > innerWidth + 0.5);
}).map(e => e.className || e.textContent.trim())"""


LANDED = """id => [Math.round(document.getElementById(id).getBoundingClientRect().top),
  parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop),
  Math.round(document.querySelector('.bd-header-article').getBoundingClientRect().bottom)]"""
LINK_INSIDE = """id => {
  const link = Object.assign(document.createElement('a'), {href: '#' + id, textContent: id});
  link.style.position = 'fixed';  // a link of the page's own, which moves nothing
  document.querySelector('.bd-article').append(link);
  link.click();
}"""
AT_THE_TOP = "document.elementFromPoint(innerWidth / 2, 300).textContent.slice(0, 40)"
DEEP_PLACES = ["memory-layout-strides", "exercises"]
"""Sections of the tensors chapter far down the page, with long parts above them."""


@reads("width")
def _width(page: Page, _record: Visit) -> tuple[int, list[str]]:
    return page.evaluate("document.documentElement.scrollWidth"), page.evaluate(HEADER_OFF_SCREEN)


@pytest.mark.parametrize("width", PHONE_WIDTHS)
@pytest.mark.parametrize("language", list(LANGUAGES))
def test_no_page_is_wider_than_a_phone(views, language, width):
    """At phone widths nothing scrolls sideways, and the header's links and buttons
    (downloads, languages, colour, search, contents) all stay on the screen."""
    wide = {}
    for name in [*CHAPTERS, "terminology"]:
        scroll_width, off_screen = views(View(language, name, width, SCREEN_HEIGHT), "width")
        if scroll_width > width or off_screen:
            wide[name] = (scroll_width, off_screen)
    assert not wide, wide


HEADER_ROW = """() => {
  const header = document.querySelector('.bd-header-article').getBoundingClientRect();
  const below = Array.from(document.querySelectorAll(
      '.bd-header-article a, .bd-header-article button, .tb-language-current'))
    .map(e => e.getBoundingClientRect())
    .filter(box => box.width > 0 && box.top >= header.bottom - 0.5);
  return [document.documentElement.scrollWidth, Math.round(header.bottom),
    parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop), below.length];
}"""
HEADER_WIDTHS = sorted({*range(320, 1440, 24), 359, 360, 576, 577, 580, 639, 640, 959, 960})
"""Every 24 px from a small phone to a desktop, and each side of the breakpoints (the
book's at 360 and 640 px, the theme's at 576 and 960 px; 577 to 581 px overflowed)."""


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_the_header_is_one_row_at_every_width(browser, served, language):
    """From 320 px up, the article's header keeps every link and button on the screen
    in one row of the theme's height, which the page's scroll padding clears: a
    section a link lands on is below the header, not behind it."""
    context = browser.new_context(viewport={"width": 320, "height": 800})
    try:
        page, _ = _open(context, served, f"{language}/tensors.html")
        # the theme slides the header over as the sidebar comes in (0.2 s): judge where
        # things end up, not where they are on the way
        page.add_style_tag(content="* { transition: none !important; }")
        wrong = {}
        for width in HEADER_WIDTHS:
            page.set_viewport_size({"width": width, "height": 800})
            page_width, bottom, padding, below = page.evaluate(HEADER_ROW)
            off_screen = page.evaluate(HEADER_OFF_SCREEN)
            if page_width > width or bottom > padding or off_screen or below:
                wrong[width] = (page_width, bottom, padding, off_screen, below)
    finally:
        context.close()
    assert not wrong, (
        "(page width, header bottom, scroll padding, controls off screen, controls"
        f" below the header) by viewport width: {wrong}"
    )


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_a_link_to_a_section_lands_on_it_on_a_phone(browser, served, language):
    """Far down a long chapter, a link to a section from outside, a jump inside the
    page, the back button (after leaving or after a jump) and a reload land on the
    place itself. Anything that lays a chapter out in parts, on estimated heights
    (content-visibility: auto did, conf/HISTORY.md "Lighthouse and the first frame"),
    must keep this."""
    context = browser.new_context(viewport={"width": 412, "height": 900})
    chapter = f"{language}/tensors.html"
    try:
        landed = {}
        for place in DEEP_PLACES:
            page, _ = _open(context, served, f"{chapter}#{place}")
            landed[f"link to #{place}"] = page.evaluate(LANDED, place)
            page.close()
            page, _ = _open(context, served, chapter)
            page.evaluate(LINK_INSIDE, place)
            page.wait_for_timeout(500)
            landed[f"jump to #{place}"] = page.evaluate(LANDED, place)
            page.close()
        wrong = {
            how: (top, padding, header)
            for how, (top, padding, header) in landed.items()
            if top != padding or header > top
        }
        assert not wrong, (
            f"(top of the section, where it should be, bottom of the sticky header) in px: {wrong}"
        )

        came_back = {}
        for way in ("back", "reload", "jump and back"):
            page, _ = _open(context, served, chapter)
            page.evaluate("window.scrollTo(0, 9000)")
            page.wait_for_timeout(500)
            before = page.evaluate(AT_THE_TOP)
            if way == "back":
                page.goto(served.base_url + f"{language}/numpy_bridge.html", wait_until="load")
                page.go_back(wait_until="load")
            elif way == "reload":
                page.reload(wait_until="load")
            else:
                page.evaluate(LINK_INSIDE, DEEP_PLACES[-1])
                page.wait_for_timeout(500)
                page.go_back()
            page.wait_for_timeout(500)
            came_back[way] = (before, page.evaluate(AT_THE_TOP))
            page.close()
        assert all(a == b for a, b in came_back.values()), came_back
    finally:
        context.close()


@reads("first frame", first_visit=True)
def _first_frame(page: Page, _record: Visit) -> list[int]:
    return page.evaluate(f"[window.tbFirstFrame, {PARSED}]")


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_the_first_frame_has_the_main_content(views, language):
    """No page is rendered before its main content is parsed: the first frame is the
    page, not an empty one followed by a long layout of the rest (the layout's
    rel=expect link; conf/README.md "Lighthouse")."""
    partial = {}
    for name in PAGES:
        first, at_load = views(View(language, name, 412, SCREEN_HEIGHT), "first frame")
        if first != at_load:
            partial[name] = (first, at_load)
    assert not partial, (
        f"(sections, headings, code and tables in the first frame, at load): {partial}"
    )


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_one_search_field_at_desktop_width_and_ctrl_k_opens_it(browser, served, language):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page, _ = _open(context, served, f"{language}/tensors.html")
        fields = page.evaluate(VISIBLE, ".search-button-field, form.bd-search")
        page.keyboard.press("Control+k")
        page.wait_for_function("document.activeElement && document.activeElement.name === 'q'")
    finally:
        context.close()
    assert fields == 1


SMALLEST_WORD = (
    "where => ("
    + DEEPER_OPENED
    + """)(() => Array.from(document.querySelectorAll(`article ${where} svg.tb-picture`))
  .map(svg => {
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const sizes = Array.from(svg.querySelectorAll('text'))
    .map(t => parseFloat(getComputedStyle(t).fontSize) * scale);
  const box = svg.getBoundingClientRect();
  return {name: svg.querySelector('title').textContent, smallest: Math.min(...sizes),
          right: box.right, column: svg.closest(where).getBoundingClientRect().right};
}))"""
)
OWN = ".cell_output"  # this build's outputs; another device's are in folds (RECORDED_FOLD)
RECORDED_FOLD = "details.tb-recorded"
BITMAPS = """() => Array.from(document.querySelectorAll('article .cell_output img')).map(img => [
  img.getAttribute('src'), Math.round(img.getBoundingClientRect().width), img.naturalWidth])"""
"""The figures a page's own outputs show as images (another device's recorded outputs,
in their folds outside the cell's output, are that device's to redraw)."""


@reads("words")
def _words(page: Page, _record: Visit) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    return page.evaluate(SMALLEST_WORD, OWN), page.evaluate(BITMAPS)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("language", list(LANGUAGES))
def test_pictures_keep_their_words_readable(views, language, width, mode):
    """Every word of every picture is at least 11 CSS px on a 412 px phone and at a desk
    (the speed-up chart's were 5 to 6 px at 412 px), and a picture fits the column at
    every width. A figure is a picture, its words text the browser measures: an image's
    words cannot be measured, and the column shrinks them with it (the loss curves'
    Matplotlib PNGs, 10 pt words 651 px wide, showed them at 8 px on a 412 px phone)."""
    small, wide, bitmaps = {}, {}, {}
    for name in sorted(PICTURE_PAGES):
        pictures, images = views(View(language, name, width, SCREEN_HEIGHT, mode), "words")
        for picture in pictures:
            if width >= 412 and picture["smallest"] < 11 - 0.01:
                small[f"{name}: {picture['name']}"] = round(picture["smallest"], 2)
            if picture["right"] > picture["column"] + 0.5:
                wide[f"{name}: {picture['name']}"] = (picture["right"], picture["column"])
        for source, shown, natural in images:
            bitmaps[f"{name}: {source}"] = (shown, natural)
    assert not small, f"smallest word in CSS px: {small}"
    assert not wide, f"(right edge, column's right edge): {wide}"
    assert not bitmaps, f"figures drawn as images, (width shown, natural width): {bitmaps}"


OVERFLOWING = """selector => Array.from(document.querySelectorAll(selector))
  .filter(e => e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1)
  .map(e => [e.scrollWidth, e.clientWidth, e.textContent.trim().slice(0, 60)])"""
OUTPUTS = "article .cell_output .output pre"
RECORDED = "article details.tb-recorded pre"  # another device's outputs, their folds opened
OPEN_RECORDED = (
    "document.querySelectorAll('article details.tb-recorded').forEach(d => d.open = true)"
)
RESULTS = "article .cell_output .output:has(> table.tb-results)"
STATUS_TABLES = "article .pst-scrollable-table-container:has(> table.tb-status)"
CUT_HEADERS = """() => Array.from(document.querySelectorAll('article table :is(th, td)'))
  .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent.trim())"""
BROKEN_DATES = """() => Array.from(document.querySelectorAll('article .tb-date'))
  .filter(e => e.getClientRects().length > 1).map(e => e.textContent)"""


@reads("outputs")
def _outputs(page: Page, _record: Visit) -> dict[str, list[Any]]:
    return {
        "cut": page.evaluate(CUT_HEADERS) + page.evaluate(BROKEN_DATES),
        "results": page.evaluate(OVERFLOWING, RESULTS) + page.evaluate(OVERFLOWING, STATUS_TABLES),
    }


@reads("recorded outputs", changes_the_page=True)  # it opens the folds
def _recorded_outputs(page: Page, _record: Visit) -> dict[str, list[Any]]:
    page.evaluate(OPEN_RECORDED)
    return {
        "overflowing": page.evaluate(OVERFLOWING, OUTPUTS) + page.evaluate(OVERFLOWING, RECORDED),
        "pictures": page.evaluate(SMALLEST_WORD, RECORDED_FOLD),
    }


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("language", list(LANGUAGES))
def test_outputs_fit_the_article(views, language, width, mode):
    """At a desk no output hides its end, this build's or another device's (the speed
    chapter's table hid its "vs NumPy" column; taught errors ran to 3,000 px; the H200's
    recorded tables and errors scrolled in their folds), and at 412 px the tables of results and the
    status page's tables fit whole, no header cut and no date broken. On a phone a
    printed tensor may scroll, like code, and on a 320 px one a table too, in its own
    box: the page itself never scrolls sideways (test_no_page_is_wider_than_a_phone)."""
    hidden = {}
    for name in [*CHAPTERS, "status"]:
        view = View(language, name, width, SCREEN_HEIGHT, mode)
        seen = views(view, "outputs")
        found = list(seen["cut"])
        if width >= 412:
            found += seen["results"]
        if width >= 640:
            found += views(view, "recorded outputs")["overflowing"]
        if found:
            hidden[name] = found
    assert not hidden, f"(content width, box width, text) by page: {hidden}"


def _recorded_pictures(page: str) -> int:
    """How many pictures the page's folds show: every device's recorded SVG outputs of
    the cells a reader sees tagged device-dependent (the build is the CPU's: none of its
    own), each cell lined up with its recording as the ledger lines them up, but for a
    cell whose code changed since, whose old outputs a fold does not show."""
    cells = read_page((ROOT / "docs" / f"{page}.md").read_text("utf-8")).cells
    keys = cell_keys({c.index: c.source for c in cells if c.kind == "code"}, ROOT / "src")
    shown = {c.index for c in cells if "remove-cell" not in c.tags and c.index in keys}
    current = {index: keys[index][0] for index in sorted(shown)}
    tagged = {c.index for c in cells if TAG in c.tags} & shown
    return sum(
        1
        for recording in page_recordings(ROOT / "docs" / "recorded", page)
        if recording.kind != "cpu"
        for index, cell in align(recording.cells, current).items()
        if index in tagged and cell.source == current[index]
        for output in cell.outputs
        if output.get("image", "").endswith(".svg")
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("language", list(LANGUAGES))
def test_recorded_pictures_fit_their_fold_and_keep_their_words_readable(
    views, language, width, mode
):
    """Another device's recorded picture, its fold opened, is drawn (each one the
    recordings hold), fits the fold at every width, and its words are at least 11 CSS px
    on a 412 px phone and at a desk, as the build's own pictures are."""
    small, wide, counts = {}, {}, {}
    for name in CHAPTERS:
        pictures = views(View(language, name, width, SCREEN_HEIGHT, mode), "recorded outputs")[
            "pictures"
        ]
        counts[name] = (len(pictures), _recorded_pictures(name))
        for picture in pictures:
            if width >= 412 and picture["smallest"] < 11 - 0.01:
                small[f"{name}: {picture['name']}"] = round(picture["smallest"], 2)
            if picture["right"] > picture["column"] + 0.5:
                wide[f"{name}: {picture['name']}"] = (picture["right"], picture["column"])
    assert all(shown == recorded for shown, recorded in counts.values()), counts
    assert sum(recorded for _, recorded in counts.values()) > 0  # the check saw some
    assert not small, f"smallest word in CSS px: {small}"
    assert not wide, f"(right edge, fold's right edge): {wide}"


RESULTS_TABLES = """() => Array.from(document.querySelectorAll('article table.tb-results')).map(t => [
  Array.from(t.querySelectorAll('thead th[scope=col]')).map(th => th.textContent),
  t.querySelectorAll('tbody th[scope=rowgroup]').length])"""


@reads("results tables")
def _results_tables(page: Page, _record: Visit) -> list[list[Any]]:
    return page.evaluate(RESULTS_TABLES)


def test_the_speed_chapter_shows_its_results_as_tables(views):
    """The sweep's results are a table (header cells, a group of rows for each size),
    not text in a box that scrolls."""
    tables = views(View(SOURCE_LANGUAGE, "speed"), "results tables")
    assert len(tables) >= 2, tables
    header, groups = tables[0]
    assert header[0] == "run"
    assert header[-1] == "vs NumPy"
    assert groups >= 3  # the CPU's sweep has three sizes


DEVICE_LINE_BOX = """() => {
  const pre = document.querySelector('article .tb-device-line pre');
  return [pre.scrollWidth, pre.clientWidth, pre.scrollHeight, pre.clientHeight,
          pre.textContent.trim()];
}"""


@reads("device line")
def _device_line(page: Page, _record: Visit) -> list[Any]:
    return page.evaluate(DEVICE_LINE_BOX)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("language", list(LANGUAGES))
def test_the_device_line_is_read_in_full(views, language, width, mode):
    """The line that says what a page ran on wraps: all of it shows, down to NumPy's
    version, at every width (it was one line in a scroll box, cut after the torch
    version at 412 px)."""
    cut = {}
    for name in CHAPTERS:
        seen = views(View(language, name, width, SCREEN_HEIGHT, mode), "device line")
        wide, box, tall, box_height, text = seen
        if wide > box + 1 or tall > box_height + 1 or "NumPy" not in text:
            cut[name] = (wide, box, tall, box_height, text)
    assert not cut, cut


SEARCH_FIELDS = """() => Array.from(document.querySelectorAll(
    'input[name=q], .search-button-field, .search-button')).filter(e => {
  const box = e.getBoundingClientRect();
  return box.width > 0 && box.height > 0 && getComputedStyle(e).visibility !== 'hidden';
}).map(e => e.className || e.name)"""
MAGNIFIER = """() => {
  const form = document.querySelector('.bd-search-container form.bd-search');
  const icon = form.querySelector('.fa-magnifying-glass').getBoundingClientRect();
  const input = form.querySelector('input');
  const text = input.getBoundingClientRect().left + parseFloat(getComputedStyle(input).paddingLeft);
  return [icon.right, text];
}"""
SNIPPETS = """async () => {
  const normal = s => s.replace(/\\s+/g, ' ').trim();
  const found = [];
  for (const item of document.querySelectorAll('#search-results ul.search li')) {
    const context = item.querySelector('p.context');
    if (!context) continue;
    const href = item.querySelector('a').href;
    const page = new DOMParser().parseFromString(await (await fetch(href)).text(), 'text/html');
    page.querySelectorAll('.headerlink, script, style').forEach(e => e.remove());
    const article = normal(page.querySelector('article.bd-article').textContent);
    const snippet = normal(context.textContent).replace(/^\\.\\.\\./, '').replace(/\\.\\.\\.$/, '');
    found.push([href, snippet, article.includes(normal(snippet))]);
  }
  return found;
}"""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("language", list(LANGUAGES))
def test_the_search_page_has_one_field_and_the_articles_words(
    browser, served, language, width, mode
):
    """The search page shows one search field (the sidebar's, which opens a second, is
    left out there), its magnifier beside the query, not over its first letter, and each
    result's snippet is the article's own text, not the theme's menu ("System Settings
    Light Dark") or the contents list."""
    query = SEARCHES[language][0][0]
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=mode)
    try:
        page, record = _open(context, served, f"{language}/search.html?q={query}")
        page.wait_for_selector("#search-results ul.search li p.context", timeout=15_000)
        page.wait_for_function(
            "document.querySelector('#search-results p.search-summary')"
        )  # the search has finished
        fields = page.evaluate(SEARCH_FIELDS)
        icon_right, text_left = page.evaluate(MAGNIFIER)
        snippets = page.evaluate(SNIPPETS)
        problems = record.problems()
    finally:
        context.close()
    assert fields == ["form-control"], fields
    assert icon_right <= text_left, (icon_right, text_left)
    assert snippets, "no result has a snippet"
    assert [s for s in snippets if not s[2]] == []
    assert problems == []


COMPAT_ROWS = """() => {
  const tables = document.querySelectorAll('article table.tb-status');
  return Array.from(tables[tables.length - 1].querySelectorAll('tr'))
    .map(row => Array.from(row.children).map(cell => cell.textContent.trim()));
}"""
DEVICE_WORD = {"en": "Device", "zh_CN": "设备"}


@reads("compatibility table")
def _compatibility_table(page: Page, _record: Visit) -> list[list[str]]:
    return page.evaluate(COMPAT_ROWS)


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_the_compatibility_table_names_each_runs_device(views, language):
    """Each run against another torch says what it ran on (a CUDA build of torch, on a
    machine without a GPU, runs on the CPU)."""
    header, *runs = views(View(language, "status"), "compatibility table")
    assert DEVICE_WORD[language] in header, header
    column = header.index(DEVICE_WORD[language])
    assert runs
    assert all(run[column] for run in runs), runs
