"""Fetching web pages for documents, guarded: http(s) only, text only, robots.txt honoured, same-site link
following within page/byte/time budgets, identical concurrent crawls refused, and an SSRF guard that checks every
address a connection is about to use (after DNS resolution, so on every redirect too): loopback, private,
link-local, reserved and cloud-metadata addresses are refused unless ``CrawlLimits.allow_networks`` names them.

httpx fetches (its connection pool gets a network backend that vets each address before connecting);
trafilatura keeps a page's main content and drops navigation, headers and footers."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import time
import typing
import urllib.robotparser
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urljoin, urlsplit

from loregraph.errors import ConflictError, InvalidInputError, LoregraphError
from loregraph.graph.types import utcnow

log = logging.getLogger("loregraph.documents.web")

USER_AGENT = "loregraph-fetcher/0.1 (+https://github.com/loregraph)"
TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "text/markdown")
MAX_REDIRECTS = 5
METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "instance-data"})
Progress = Callable[[int, int, str], Awaitable[None] | None]


class FetchRefusedError(InvalidInputError):
    """A URL or address the fetcher will not touch (scheme, SSRF guard, robots.txt, content type)."""


@dataclass(frozen=True)
class CrawlLimits:
    """Budgets and the SSRF allow-list of one crawl (settings: ``crawl_*``)."""

    max_pages: int = 20
    max_page_bytes: int = 2_000_000
    max_total_bytes: int = 20_000_000
    max_seconds: float = 120.0
    request_timeout_s: float = 15.0
    allow_networks: tuple[str, ...] = ()

    def allowed(self, ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
        return any(ip in ipaddress.ip_network(n, strict=False) for n in self.allow_networks)


@dataclass
class Page:
    url: str
    depth: int
    text: str
    content_type: str
    fetched_at: str
    links: list[str] = field(default_factory=list)


@dataclass
class CrawlResult:
    root: str
    pages: list[Page]
    skipped: list[dict[str, str]]


@dataclass
class SiteAnalysis:
    url: str
    sitemap_urls: list[str]
    total_urls: int
    pattern_stats: dict[str, int]
    sample_urls: list[str]
    robots_disallowed: list[str]
    notes: list[str] = field(default_factory=list)


def _public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not (ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_reserved
                or ip.is_unspecified or not ip.is_global)


def check_address(ip_text: str, limits: CrawlLimits, host: str) -> None:
    ip = ipaddress.ip_address(ip_text.split("%", 1)[0])
    if not _public(ip) and not limits.allowed(ip):
        raise FetchRefusedError(f"url: {host} resolves to {ip}, a loopback/private/link-local/metadata address "
                                "(refused; allow it with the crawl_allow_networks setting)")


def check_url(url: str) -> tuple[str, str, int]:
    """Scheme http(s) and a host; returns (scheme, host, port)."""
    if not isinstance(url, str) or len(url) > 2048:
        raise FetchRefusedError("url: must be an http(s) URL of at most 2048 characters")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise FetchRefusedError(f"url: only http and https URLs are fetched (got scheme {parts.scheme!r})")
    if not parts.hostname:
        raise FetchRefusedError("url: has no host")
    if parts.username or parts.password:
        raise FetchRefusedError("url: credentials in URLs are refused")
    if parts.hostname.lower().rstrip(".") in METADATA_HOSTS:
        raise FetchRefusedError(f"url: {parts.hostname} is a cloud metadata host (refused)")
    return parts.scheme, parts.hostname.lower(), parts.port or (443 if parts.scheme == "https" else 80)


async def resolve_checked(host: str, port: int, limits: CrawlLimits) -> list[str]:
    """Every address ``host`` resolves to, each checked by the SSRF guard."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchRefusedError(f"url: cannot resolve host {host} ({exc.strerror})") from exc
    addrs = list(dict.fromkeys(str(i[4][0]) for i in infos))
    for a in addrs:
        check_address(a, limits, host)
    return addrs


def _guarded_transport(limits: CrawlLimits) -> typing.Any:
    """An httpx transport whose connections go only to addresses the guard accepts (checked when connecting, so
    redirects and DNS changes between check and use cannot slip past)."""
    import httpcore
    import httpx

    class GuardedBackend(httpcore.AsyncNetworkBackend):
        def __init__(self) -> None:
            self._inner = httpcore.AnyIOBackend()

        async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                              local_address: str | None = None,
                              socket_options: typing.Iterable[typing.Any] | None = None) -> httpcore.AsyncNetworkStream:
            addrs = await resolve_checked(host, port, limits)
            return await self._inner.connect_tcp(addrs[0], port, timeout=timeout, local_address=local_address,
                                                 socket_options=socket_options)

        async def sleep(self, seconds: float) -> None:
            await self._inner.sleep(seconds)

    transport = httpx.AsyncHTTPTransport(retries=0)
    transport._pool._network_backend = GuardedBackend()  # httpx exposes no parameter for the network backend
    return transport


def main_text(html: str, url: str) -> str:
    """The page's main content as Markdown (headings kept for chunking), navigation/footers dropped."""
    import trafilatura

    return trafilatura.extract(html, url=url, output_format="markdown", include_comments=False,
                               include_tables=True, include_links=False, favor_precision=True) or ""


def page_links(html: str, url: str) -> list[str]:
    import lxml.html

    try:
        doc = lxml.html.fromstring(html)
    except Exception:  # unparsable markup has no links to follow
        return []
    out = []
    for el, attr, link, _ in doc.iterlinks():
        if el.tag == "a" and attr == "href":
            out.append(urldefrag(urljoin(url, link))[0])
    return list(dict.fromkeys(out))


_RUNNING: set[tuple[str, ...]] = set()


class WebFetcher:
    def __init__(self, limits: CrawlLimits):
        self.limits = limits
        self._robots: dict[str, urllib.robotparser.RobotFileParser] = {}
        self.bytes_total = 0

    def _client(self) -> typing.Any:
        import httpx

        return httpx.AsyncClient(transport=_guarded_transport(self.limits), follow_redirects=False, trust_env=False,
                                 timeout=self.limits.request_timeout_s, headers={"User-Agent": USER_AGENT})

    async def _get(self, client: typing.Any, url: str, *, text_only: bool = True) -> tuple[str, str, str]:
        """GET with redirects followed one by one (each hop checked); returns (final url, content type, text)."""
        for _ in range(MAX_REDIRECTS + 1):
            check_url(url)
            async with client.stream("GET", url) as resp:
                if resp.status_code in (301, 302, 303, 307, 308) and "location" in resp.headers:
                    url = urldefrag(urljoin(url, resp.headers["location"]))[0]
                    continue
                if resp.status_code >= 400:
                    raise FetchRefusedError(f"url: {url} answered HTTP {resp.status_code}")
                ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
                if text_only and ctype not in TEXT_TYPES:
                    raise FetchRefusedError(f"url: {url} is {ctype or 'of unknown type'}, not text (refused)")
                chunks, size = [], 0
                async for part in resp.aiter_bytes():
                    size += len(part)
                    if size > self.limits.max_page_bytes:
                        raise FetchRefusedError(f"url: {url} is larger than {self.limits.max_page_bytes} bytes")
                    chunks.append(part)
                self.bytes_total += size
                body = b"".join(chunks).decode(resp.encoding or "utf-8", errors="replace")
                return url, ctype, body
        raise FetchRefusedError(f"url: more than {MAX_REDIRECTS} redirects")

    async def _robots_for(self, client: typing.Any, url: str) -> urllib.robotparser.RobotFileParser:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self._robots:
            rp = urllib.robotparser.RobotFileParser()
            try:
                _, _, text = await self._get(client, origin + "/robots.txt", text_only=False)
                rp.parse(text.splitlines())
            except FetchRefusedError as exc:
                if "HTTP 4" not in str(exc):  # no robots.txt: everything allowed; an unsafe host stays refused
                    raise
                rp.parse([])
            self._robots[origin] = rp
        return self._robots[origin]

    async def crawl(self, url: str, *, follow_links: bool = False, max_pages: int = 20, max_depth: int | None = None,
                    key: tuple[str, ...] = (), progress: Progress | None = None) -> CrawlResult:
        """Breadth-first from ``url`` over same-host links (with ``follow_links``), at most ``max_pages`` pages."""
        _, host, port = check_url(url)
        if not 1 <= max_pages <= self.limits.max_pages:
            raise InvalidInputError(f"max_pages: must be 1-{self.limits.max_pages} (got {max_pages})")
        if max_depth is not None and not 0 <= max_depth <= 10:
            raise InvalidInputError(f"max_depth: must be 0-10 (got {max_depth})")
        await resolve_checked(host, port, self.limits)  # a clear refusal before anything is sent
        run_key = (*key, urldefrag(url)[0], str(follow_links), str(max_pages), str(max_depth))
        if run_key in _RUNNING:
            raise ConflictError("url: an identical ingest_url request is running; wait for it to finish")
        _RUNNING.add(run_key)
        try:
            return await self._crawl(url, host, follow_links, max_pages, max_depth, progress)
        finally:
            _RUNNING.discard(run_key)

    async def _crawl(self, url: str, host: str, follow_links: bool, max_pages: int, max_depth: int | None,
                     progress: Progress | None) -> CrawlResult:
        deadline = time.monotonic() + self.limits.max_seconds
        depth_cap = (max_depth if max_depth is not None else 3) if follow_links else 0
        queue: deque[tuple[str, int]] = deque([(urldefrag(url)[0], 0)])
        seen = {queue[0][0]}
        pages: list[Page] = []
        skipped: list[dict[str, str]] = []
        t0 = time.perf_counter()
        async with self._client() as client:
            while queue and len(pages) < max_pages:
                if time.monotonic() > deadline:
                    skipped.append({"url": queue[0][0], "reason": f"time budget of {self.limits.max_seconds:g} s"})
                    break
                if self.bytes_total > self.limits.max_total_bytes:
                    skipped.append({"url": queue[0][0], "reason": "byte budget"})
                    break
                cur, depth = queue.popleft()
                try:
                    robots = await self._robots_for(client, cur)
                    if not robots.can_fetch(USER_AGENT, cur):
                        raise FetchRefusedError(f"url: {cur} is disallowed by robots.txt")
                    final, ctype, body = await self._get(client, cur)
                except FetchRefusedError as exc:
                    if not pages and depth == 0:
                        raise  # the URL asked for itself: the caller hears why
                    skipped.append({"url": cur, "reason": str(exc)})
                    continue
                except LoregraphError:
                    raise
                except Exception as exc:  # network errors on a followed link are reported, not fatal
                    if not pages and depth == 0:
                        raise FetchRefusedError(f"url: cannot fetch {cur} ({type(exc).__name__})") from exc
                    skipped.append({"url": cur, "reason": type(exc).__name__})
                    continue
                is_html = ctype in ("text/html", "application/xhtml+xml")
                text = main_text(body, final) if is_html else body
                links = page_links(body, final) if is_html and depth < depth_cap else []
                if text.strip():
                    pages.append(Page(final, depth, text, ctype, utcnow().isoformat(), links))
                    if progress is not None:  # only when the count rises (MCP progress must increase)
                        out = progress(len(pages), max_pages, f"fetched {len(pages)} page(s)")
                        if asyncio.iscoroutine(out):
                            await out
                else:
                    skipped.append({"url": final, "reason": "no main content"})
                for link in links:
                    parts = urlsplit(link)
                    if parts.scheme in ("http", "https") and (parts.hostname or "").lower() == host \
                            and link not in seen:
                        seen.add(link)
                        queue.append((link, depth + 1))
        log.info("crawl of host %s: pages=%d skipped=%d bytes=%d in %.0f ms", host, len(pages), len(skipped),
                 self.bytes_total, (time.perf_counter() - t0) * 1e3)
        return CrawlResult(url, pages, skipped)

    async def analyze(self, url: str, max_urls: int = 5000) -> SiteAnalysis:
        """sitemap.xml (and sitemaps robots.txt names, one index level deep): URL count and path patterns."""
        import lxml.etree

        _, host, port = check_url(url)
        await resolve_checked(host, port, self.limits)
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        notes: list[str] = []
        async with self._client() as client:
            robots = await self._robots_for(client, url)
            sitemaps = list(robots.site_maps() or []) or [origin + "/sitemap.xml"]
            disallowed = [ln.split(":", 1)[1].strip() for ln in str(robots).splitlines()
                          if ln.lower().startswith("disallow:") and ln.split(":", 1)[1].strip()]
            found: list[str] = []
            todo, done = list(sitemaps), 0
            while todo and done < 10 and len(found) < max_urls:
                sm = todo.pop(0)
                done += 1
                if (urlsplit(sm).hostname or "").lower() != host:
                    notes.append(f"sitemap {sm} is on another host (not read)")
                    continue
                try:
                    _, _, body = await self._get(client, sm, text_only=False)
                    root = lxml.etree.fromstring(body.encode(), parser=lxml.etree.XMLParser(resolve_entities=False,
                                                                                           no_network=True))
                except FetchRefusedError as exc:
                    notes.append(str(exc))
                    continue
                except lxml.etree.XMLSyntaxError:
                    notes.append(f"sitemap {sm} is not valid XML")
                    continue
                locs = [el.text.strip() for el in root.iter("{*}loc") if el.text]
                if root.tag.endswith("sitemapindex"):
                    todo += locs
                else:
                    found += locs[:max_urls - len(found)]
        if not found:
            notes.append("no sitemap URLs found; crawl with follow_links to discover pages")
        patterns: Counter[str] = Counter()
        for u in found:
            segs = [s for s in urlsplit(u).path.split("/") if s]
            patterns["/" + segs[0] + "/*" if len(segs) > 1 else "/" + (segs[0] if segs else "")] += 1
        return SiteAnalysis(url, sitemaps, len(found), dict(patterns.most_common(30)), found[:20], disallowed, notes)


__all__ = ["CrawlLimits", "CrawlResult", "FetchRefusedError", "Page", "SiteAnalysis", "WebFetcher", "check_url"]
