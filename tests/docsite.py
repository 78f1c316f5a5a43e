"""A small web site served on 127.0.0.1 for the document tests: pages with navigation, headers and footers, links
(same site, another host, a redirect to a private address, an image), a sitemap, a robots.txt that forbids
/private/, and a slow page (it answers once ``slow_gate`` is set; set by default). ``requests`` records every path
asked for."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

NAV = ('<nav><a href="/">Home</a> <a href="/docs/a">Docs A</a> <a href="/docs/b">Docs B</a> '
       '<a href="/private/secret">Private</a> <a href="http://other.invalid/page">Elsewhere</a> '
       '<a href="/redirect-private">Moved</a> <a href="/image.png">Logo</a> <a href="/big">Big</a></nav>')
FOOTER = "<footer><p>Copyright ACME Widgets Footer 2025. Contact sales. Privacy policy. Cookie settings.</p></footer>"


def page(title: str, body: str, extra_links: str = "") -> bytes:
    return (f"<html><head><title>{title}</title></head><body><header><h1>ACME site header</h1>{NAV}</header>"
            f"<main><article><h1>{title}</h1>{body}{extra_links}</article></main>{FOOTER}</body></html>").encode()


ARTICLE_HOME = ("<p>Project Orion is a payments platform built by the ACME engineering team. Orion uses FastAPI for "
                "its public API and PostgreSQL for storage, and it processes card payments for many shops.</p>"
                "<p>Nora Patel leads Project Orion. The team deploys every Tuesday with Kubernetes and Helm, after "
                "the integration tests pass on the staging cluster.</p>")
ARTICLE_A = ("<h2>Installing the Orion client</h2><p>The Orion client library is installed with pip. It needs "
             "Python 3.11 and talks to the payments API over HTTPS with an API token.</p>"
             "<p>Configure the token in an environment variable before the first request.</p>")
ARTICLE_B = ("<h2>Orion webhooks</h2><p>Webhooks notify shops when a payment settles or fails. Each webhook is "
             "signed, and shops verify the signature with their webhook secret before trusting it.</p>")
ARTICLE_C = "<p>Deep page about Orion refunds: refunds are issued within five business days of the request.</p>"
SECRET = "<p>The private launch codes of the Orion project are kept here and must never be crawled.</p>"


class Site:
    def __init__(self) -> None:
        self.requests: list[str] = []
        self.slow_gate = threading.Event()
        self.slow_gate.set()
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                site.requests.append(self.path)
                host = f"http://127.0.0.1:{site.port}"
                routes = {
                    "/": ("text/html", page("Orion overview", ARTICLE_HOME)),
                    "/docs/a": ("text/html", page("Orion client", ARTICLE_A)),
                    "/docs/b": ("text/html", page("Orion webhooks", ARTICLE_B, '<a href="/docs/c">More</a>')),
                    "/docs/c": ("text/html", page("Orion refunds", ARTICLE_C)),
                    "/private/secret": ("text/html", page("Secret", SECRET)),
                    "/notes.txt": ("text/plain", b"Plain text notes about Orion: the API rate limit is 100/s."),
                    "/image.png": ("image/png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 100),
                    "/big": ("text/html", page("Big", "<p>" + "x " * 1_100_000 + "</p>")),
                    "/robots.txt": ("text/plain", f"User-agent: *\nDisallow: /private/\nSitemap: {host}/sitemap.xml\n"
                                    .encode()),
                    "/sitemap.xml": ("application/xml", (
                        '<?xml version="1.0" encoding="UTF-8"?><urlset '
                        'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                        + "".join(f"<url><loc>{host}{p}</loc></url>"
                                  for p in ("/", "/docs/a", "/docs/b", "/docs/c", "/blog/2025/launch"))
                        + "</urlset>").encode()),
                }
                if self.path == "/redirect-private":
                    return self._redirect("http://10.255.255.1/admin")
                if self.path == "/redirect-metadata":
                    return self._redirect("http://169.254.169.254/latest/meta-data/")
                if self.path == "/redirect-home":
                    return self._redirect("/")
                if self.path == "/slow":
                    site.slow_gate.wait(60)
                    return self._send("text/html", page("Slow", "<p>A slow page about Orion latency budgets.</p>"))
                if self.path not in routes:
                    self.send_response(404)
                    self.end_headers()
                    return
                self._send(*routes[self.path])

            def _redirect(self, where: str) -> None:
                self.send_response(302)
                self.send_header("Location", where)
                self.end_headers()

            def _send(self, ctype: str, body: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Type", ctype + ("; charset=utf-8" if ctype.startswith("text") else ""))
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
