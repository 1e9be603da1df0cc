"""A small shop website on 127.0.0.1 for the live-web and tool tests: a home page with a search
form, a results list, product detail pages, a page whose controls navigate late, a page that
never finishes loading, a page that answers HTTP 500, a photo, and a SearXNG instance at `/searx`
(its JSON API). `PRODUCTS` is what a correct agent finds; the `site` fixture serves it."""

from __future__ import annotations

import html
import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

PRODUCTS = {1: ("Blue Widget", "$19.99"), 2: ("Green Gizmo", "$29.99"), 3: ("Blue Gadget", "$9.50")}


def _photo() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (0, 0, 255)).save(buf, format="PNG")
    return buf.getvalue()


PHOTO = _photo()  # /photo.png: what `visit` of an image URL fetches


def _page(title: str, body: str) -> bytes:
    return f"<!doctype html><html><head><title>{html.escape(title)}</title></head><body>{body}</body></html>".encode()


class LiveSite:
    """Use as a context manager; `url(path)` gives an address on it."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self.hits: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                url = urlparse(self.path)
                site.hits.append(url.path)
                if url.path == "/slow":  # never answers while the test runs: a page-load timeout
                    site._stop.wait(120)
                    return
                status, body = site.render(url.path, parse_qs(url.query))
                kind = "text/html; charset=utf-8"
                if url.path == "/searx/search":  # a SearXNG instance (at /searx) answering format=json
                    status, kind, body = 200, "application/json", site.searxng((parse_qs(url.query).get("q") or [""])[0])
                elif url.path == "/photo.png":
                    status, kind, body = 200, "image/png", PHOTO
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def searxng(self, query: str) -> bytes:
        """SearXNG's `format=json` answer: {"query", "results": [{"url", "title", "content"}]}."""
        words = query.lower().split()
        results = [{"url": self.url(f"/item/{n}"), "title": name, "content": f"{name}, in stock at the shop.", "engine": "fake"}
                   for n, (name, _) in PRODUCTS.items() if any(w in name.lower() for w in words)]
        return json.dumps({"query": query, "number_of_results": len(results), "results": results}).encode()

    def render(self, path: str, query: dict) -> tuple[int, bytes]:
        if path == "/":
            return 200, _page("Shop", (
                '<h1>Shop</h1><form action="/search" method="get">'
                '<input name="q" placeholder="Search products"> <button type="submit">Search</button></form>'
                f'<p><a href="/about">About us</a> <a href="http://localhost:{self.server.server_address[1]}/">Mirror</a></p>'))
        if path == "/search":
            q = (query.get("q") or [""])[0].strip().lower()
            hits = [f'<li><a href="/item/{n}">{html.escape(name)}</a></li>' for n, (name, _) in PRODUCTS.items() if q and q in name.lower()]
            return 200, _page(f"Results for {q}", f"<h1>Results for {html.escape(q)}</h1><ul>{''.join(hits) or '<li>No results</li>'}</ul>")
        if path.startswith("/item/") and path[6:].isdigit() and int(path[6:]) in PRODUCTS:
            name, price = PRODUCTS[int(path[6:])]
            return 200, _page(name, f'<h1>{html.escape(name)}</h1><p>Price: {price}</p><div style="height:3000px">Details below.</div><p>End.</p>')
        if path == "/late":  # controls that navigate a little after the click returns, and one that never does
            return 200, _page("Late", (
                '<form action="/search" method="get" onsubmit="event.preventDefault(); setTimeout(() => this.submit(), 150)">'
                '<input name="q" placeholder="Search products"> <button type="submit">Search</button></form>'
                '<button id="about" onclick="setTimeout(() => { location.href = \'/about\'; }, 150)">About</button>'
                '<button id="stay" onclick="this.textContent = \'Pressed\'">Stay</button>'))
        if path == "/broken":
            return 500, _page("Server error", "<h1>500 Internal Server Error</h1>")
        if path == "/about":
            return 200, _page("About", "<h1>About</h1><p>A test shop.</p>")
        return 404, _page("Not found", "<h1>404</h1>")

    def __enter__(self) -> "LiveSite":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def site():
    """The shop, served for one test module (import this name into the module to use it)."""
    with LiveSite() as running:
        yield running
