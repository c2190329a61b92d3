"""Serve a built site below a sub-path, the way GitHub Pages serves a project's site.

``serve(site, "/tensorbook/")`` answers ``/tensorbook/<path>`` from ``site/<path>``,
a folder with its ``index.html``, and anything missing with the site's ``404.html``
and status 404. Requests outside the sub-path get a bare 404 and are recorded, so a
test can show that no page reached above the book's folder. The browser suite and
``nox -s weights`` use it; it binds 127.0.0.1 on a free port and lives in a thread.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from socketserver import BaseServer
from typing import BinaryIO
from urllib.parse import unquote, urlsplit

DEFAULT_PREFIX = "/tensorbook/"
COMPRESSED_TYPES = (
    "text/",
    "application/javascript",
    "application/json",
    "application/xml",
    "image/svg+xml",
)
"""Content types sent gzipped with ``compress=True``: text, as the hosts compress it
(images and fonts are compressed already)."""


@dataclass
class ServedSite:
    """A running server: its base address (ending in the prefix) and what it saw."""

    base_url: str
    prefix: str
    compress: bool = False
    outside_prefix: list[str] = field(default_factory=list)
    not_found: list[str] = field(default_factory=list)


_Request = socket.socket | tuple[bytes, socket.socket]  # what a socketserver handles


class _Handler(SimpleHTTPRequestHandler):
    def __init__(
        self,
        request: _Request,
        client_address: tuple[str, int],
        server: BaseServer,
        *,
        site: Path,
        record: ServedSite,
    ) -> None:
        self.site = site
        self.record = record
        super().__init__(request, client_address, server, directory=str(site))

    def send_head(self) -> BinaryIO | None:
        path = unquote(urlsplit(self.path).path)
        if not path.startswith(self.record.prefix) and path != self.record.prefix.rstrip("/"):
            self.record.outside_prefix.append(self.path)
            self.send_error(HTTPStatus.NOT_FOUND, "outside the site's folder")
            return None
        local = Path(self.translate_path(self.path))
        if local.is_dir() and not path.endswith("/"):
            return super().send_head()  # redirect to the folder's address
        if local.is_dir():
            local = local / "index.html"
        if not local.is_file():
            self.record.not_found.append(self.path)
            return self._send_not_found_page()
        content_type = self.guess_type(str(local))
        if self._compressible(content_type):
            return self._send(HTTPStatus.OK, content_type, local.read_bytes())
        return super().send_head()

    def _compressible(self, content_type: str) -> bool:
        return self.record.compress and content_type.startswith(COMPRESSED_TYPES)

    def _send(self, status: HTTPStatus, content_type: str, body: bytes) -> io.BytesIO:
        accepted = self.headers.get("Accept-Encoding", "")
        compressible = self._compressible(content_type)
        gzipped = compressible and "gzip" in {p.split(";")[0].strip() for p in accepted.split(",")}
        if gzipped:
            body = gzip.compress(body, compresslevel=6, mtime=0)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        if compressible:
            # a cache between the host and the reader keeps one copy per encoding
            self.send_header("Vary", "Accept-Encoding")
        if gzipped:
            self.send_header("Content-Encoding", "gzip")
        self.end_headers()
        return io.BytesIO(body)

    def translate_path(self, path: str) -> str:
        inside = unquote(urlsplit(path).path)[len(self.record.prefix) :]
        resolved = (self.site / inside).resolve()
        if self.site.resolve() not in (resolved, *resolved.parents):
            return str(self.site / "__outside__")
        return str(resolved)

    def _send_not_found_page(self) -> io.BytesIO:
        page = self.site / "404.html"
        body = page.read_bytes() if page.is_file() else b"not found"
        return self._send(HTTPStatus.NOT_FOUND, "text/html; charset=utf-8", body)

    def end_headers(self) -> None:
        # every load in a test or a measurement is a first visit
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: _Request, client_address: tuple[str, int]) -> None:
        # A browser that stops a load (a page that replaces itself, Lighthouse ending a
        # run) closes its connection in the middle of an answer: nothing went wrong here.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


@contextlib.contextmanager
def serve(
    site: Path, prefix: str = DEFAULT_PREFIX, *, compress: bool = False
) -> Iterator[ServedSite]:
    """Serve ``site`` at ``http://127.0.0.1:<free port><prefix>`` while in the block.

    With ``compress``, text goes gzipped to a client that accepts it, as the hosts send it.
    """
    if not (prefix.startswith("/") and prefix.endswith("/")):
        msg = f"the prefix must start and end with '/', not {prefix!r}"
        raise ValueError(msg)
    if not (site / "index.html").is_file():
        msg = f"no built site at {site} (no index.html); build it first"
        raise FileNotFoundError(msg)
    record = ServedSite(base_url="", prefix=prefix, compress=compress)
    server = _Server(("127.0.0.1", 0), partial(_Handler, site=site, record=record))
    record.base_url = f"http://127.0.0.1:{server.server_address[1]}{prefix}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield record
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
