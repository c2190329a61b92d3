"""Open the built site in Debian's Chromium, the way a reader's browser would.

Playwright drives ``/usr/bin/chromium`` (nox's browser sessions install it with apt-get
where they may): its own browser download cannot work where only package registries
are reachable. Every request to a host other than the local server fails inside
Chromium and is recorded, so a page that would load something from the internet fails
where it is checked, naming the page and the address, and the site is seen exactly as
it works with the network cut off.

The browser suite (``tests/book/test_browser.py``) uses :func:`launch` and :func:`visit`;
``nox -s weights`` runs this module (``python -m tests.support.browser``) for each
page's CSS + JS + font bytes and its load time, against the budget.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from tensorbook_build.settings import LAYOUT, site_pages
from tests.support.server import serve

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Page, Request

CHROMIUM = os.environ.get("TENSORBOOK_CHROMIUM", "/usr/bin/chromium")
# Chromium's own background traffic (updates, sync, Google lookups) would be refused
# on a closed network, many times a start; none of it is the site's. Lighthouse CI
# starts Chromium with the same (tests/browser/lighthouserc.json, checked).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
NO_OTHER_HOSTS = "--proxy-server=127.0.0.1:9"
"""Chromium's requests for any host but this machine go to a proxy on a port where nothing
listens (the discard port), and fail there: loopback addresses, the local server's,
bypass a proxy. Playwright's request interception (``page.route``) would also stop them,
but it turns the HTTP cache off and hands every request to this process: with it, a view
in a reused tab cost 0.65 CPU-seconds instead of 0.39."""
PAGE_BUDGET = 500 * 1000
"""Bytes of CSS, JavaScript and fonts one page may load (HTML and images not counted)."""
COUNTED_TYPES = {"stylesheet": "css", "script": "js", "font": "font"}
INLINE_CSS_BYTES = """() => Array.from(document.querySelectorAll('style'))
  .reduce((total, style) => total + new TextEncoder().encode(style.textContent).length, 0)"""


def chromium_path() -> str:
    """The Chromium to drive; a clear error, with the fix, where there is none."""
    if shutil.which(CHROMIUM) is None:
        msg = (
            f"no Chromium at {CHROMIUM}: install Debian's with "
            "'apt-get update && apt-get install -y chromium' (nox -s browser does), "
            "or point TENSORBOOK_CHROMIUM at one"
        )
        raise FileNotFoundError(msg)
    return CHROMIUM


@contextlib.contextmanager
def launch() -> Iterator[Browser]:
    """A headless Chromium (a Playwright ``Browser``) for the duration of the block."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), args=[*CHROMIUM_ARGS, NO_OTHER_HOSTS]
        )
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Visit:
    """What loading one page did."""

    url: str
    status: int | None = None
    load_seconds: float = 0.0
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    other_hosts: list[str] = field(default_factory=list)
    bytes_by_kind: dict[str, int] = field(default_factory=dict)
    in_flight: int = 0  # requests sent and not yet finished or failed
    stop_watching: Callable[[], None] = field(default=lambda: None, repr=False, compare=False)
    """Stop recording (:func:`watch`), where the page lives on for another visit."""

    @property
    def counted_bytes(self) -> int:
        """CSS + JS + fonts, the bytes the budget counts."""
        return sum(self.bytes_by_kind.get(kind, 0) for kind in COUNTED_TYPES.values())

    def problems(self) -> list[str]:
        """Every way the load went wrong, each naming this page."""
        return (
            [f"{self.url}: console error: {e}" for e in self.console_errors]
            + [f"{self.url}: failed request: {r}" for r in self.failed_requests]
            + [f"{self.url}: request to another host: {r}" for r in self.other_hosts]
        )


def watch(page: Page, base_url: str) -> Visit:
    """Record a Playwright ``Page``'s errors and requests into a :class:`Visit`, until
    its :meth:`Visit.stop_watching` is called.

    A request to any host but ``base_url``'s is recorded as it is sent; Chromium fails it
    (:data:`NO_OTHER_HOSTS`).
    """
    visit = Visit(url="")
    local = urlsplit(base_url).netloc

    def sent(request: Request) -> None:
        address = urlsplit(request.url)
        if address.scheme not in {"data", "blob", "about"} and address.netloc != local:
            visit.other_hosts.append(request.url)
        visit.in_flight += 1

    def finished(request: Request) -> None:
        visit.in_flight -= 1
        response = request.response()
        if response is not None and response.status >= 400 and request.resource_type != "document":
            visit.failed_requests.append(f"{response.status} {request.url}")
            return
        kind = COUNTED_TYPES.get(request.resource_type, request.resource_type)
        size = request.sizes()["responseBodySize"]
        visit.bytes_by_kind[kind] = visit.bytes_by_kind.get(kind, 0) + size

    def failed(request: Request) -> None:
        visit.in_flight -= 1
        if urlsplit(request.url).netloc == local:
            visit.failed_requests.append(f"{request.failure} {request.url}")

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            visit.console_errors.append(message.text)

    def uncaught(error: Exception) -> None:
        visit.console_errors.append(f"uncaught: {error}")

    listeners = {
        "console": console,
        "pageerror": uncaught,
        "request": sent,
        "requestfinished": finished,
        "requestfailed": failed,
    }
    for event, listener in listeners.items():
        page.on(event, listener)

    def stop() -> None:
        for event, listener in listeners.items():
            page.remove_listener(event, listener)

    visit.stop_watching = stop
    return visit


QUIET_SECONDS = 0.1
"""How long no request may be in flight before a loaded page counts as settled."""


def settle(page: Page, record: Visit, limit: float = 15.0) -> None:
    """Wait until none of the page's requests has been in flight for ``QUIET_SECONDS``.

    Playwright's ``networkidle`` waits for 500 ms without a request on every load; a page
    here asks for nothing more once its last request has finished, and the suite loads
    pages hundreds of times.
    """
    deadline = time.perf_counter() + limit
    quiet_since = time.perf_counter()
    while time.perf_counter() < deadline:
        page.wait_for_timeout(20)  # Playwright delivers the page's events meanwhile
        if record.in_flight > 0:
            quiet_since = time.perf_counter()
        elif time.perf_counter() - quiet_since >= QUIET_SECONDS:
            return
    msg = f"{record.url}: {record.in_flight} requests still in flight after {limit} s"
    raise TimeoutError(msg)


def visit(page: Page, url: str, base_url: str) -> Visit:
    """Load ``url`` in ``page`` and wait until the network is quiet."""
    record = watch(page, base_url)
    record.url = url
    start = time.perf_counter()
    response = page.goto(url, wait_until="load")
    record.load_seconds = time.perf_counter() - start
    settle(page, record)
    record.status = response.status if response is not None else None
    # a page carries its stylesheets inside it (tensorbook_build.inline_css): they are CSS
    # the budget counts, though no request of their own brought them
    inline = page.evaluate(INLINE_CSS_BYTES)
    record.bytes_by_kind["css"] = record.bytes_by_kind.get("css", 0) + inline
    return record


def measure(site: Path, prefix: str = "/tensorbook/") -> list[Visit]:
    """Load every page of the built site once, in a fresh browser context each."""
    pages = site_pages(site)
    visits = []
    with serve(site, prefix) as served, launch() as browser:
        for name in pages:
            context = browser.new_context()
            page = context.new_page()
            visits.append(visit(page, served.base_url + name, served.base_url))
            context.close()
    return visits


def main(argv: list[str] | None = None) -> int:
    """Print every page's weight and load time; 1 if one is over budget or has a problem."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.browser",
        description="Each page's CSS + JS + font bytes and load time in headless Chromium.",
    )
    parser.add_argument("--site", type=Path, default=LAYOUT.site)
    args = parser.parse_args(argv)
    visits = measure(args.site)
    base = len(urlsplit(visits[0].url).path) - len(Path(urlsplit(visits[0].url).path).name)
    print(f"{'page':<28}{'css':>9}{'js':>9}{'fonts':>8}{'total':>9}{'load':>9}")
    over = []
    for v in visits:
        kinds = v.bytes_by_kind
        print(
            f"{urlsplit(v.url).path[base:]:<28}{kinds.get('css', 0) / 1000:>8.1f}k"
            f"{kinds.get('js', 0) / 1000:>8.1f}k{kinds.get('font', 0) / 1000:>7.1f}k"
            f"{v.counted_bytes / 1000:>8.1f}k{v.load_seconds * 1000:>7.0f}ms"
        )
        if v.counted_bytes > PAGE_BUDGET or v.problems():
            over.append(v)
    largest = max(visits, key=lambda v: v.counted_bytes)
    print(
        f"{len(visits)} pages; largest {largest.counted_bytes / 1000:.1f} kB "
        f"({urlsplit(largest.url).path[base:]}); budget {PAGE_BUDGET / 1000:.0f} kB"
    )
    for v in over:
        for problem in v.problems() or [f"{v.url}: {v.counted_bytes} bytes, over budget"]:
            print(problem, file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
