"""ingest_url and analyze_website against a local web site on 127.0.0.1 (allowed through the settings'
allow-list): main content kept and navigation/footers dropped, same-site link following within budgets,
robots.txt honoured, SSRF refusals (private/loopback/metadata addresses, on redirects too), schemes, content types,
and identical concurrent crawls refused. Both backends."""

from __future__ import annotations

import asyncio

import pytest

from docsite import Site
from loregraph.documents.web import CrawlLimits, FetchRefusedError
from loregraph.errors import ConflictError, InvalidInputError
from loregraph.memory import Memory

ALLOW = CrawlLimits(allow_networks=("127.0.0.1/32",))


@pytest.fixture(scope="module")
def site():
    s = Site()
    yield s
    s.close()


@pytest.fixture(params=["sqlite", "postgres"])
async def mem(request, tmp_path, embedder):
    url = request.getfixturevalue("pg_db") if request.param == "postgres" else f"sqlite:///{tmp_path / 'web.db'}"
    m = await Memory.open(url, embedder=embedder)
    m.crawl_limits = ALLOW
    await m.create_collection("alice", "web", "Crawled pages")
    yield m
    await m.close()


async def test_single_page_keeps_main_content_and_drops_navigation(mem, site):
    out = await mem.ingest_url("alice", site.url + "/", "web")
    assert out["pages_crawled"] == 1 and out["pages_ingested"] == 1 and out["total_chunks"] >= 1
    docs = await mem.list_documents("alice", "web")
    assert [d.title for d in docs] == [site.url + "/"]
    assert docs[0].metadata["source_url"] == site.url + "/" and docs[0].metadata["depth"] == 0
    chunks = mem.store.get_chunks("alice", [e.id for e in await mem.get_episodes("alice", last_n=50)])
    text = " ".join(c.content for c in chunks)
    assert "Kubernetes" in text and "Nora Patel" in text
    assert "Copyright ACME" not in text and "Cookie settings" not in text and "ACME site header" not in text
    hits = await mem.search_documents("alice", "How does the Orion team deploy?", "web")
    assert hits and hits[0].source == site.url + "/"
    # the same URL again is a duplicate title: reported, nothing replaced; reingest replaces it
    again = await mem.ingest_url("alice", site.url + "/", "web")
    assert again["pages_ingested"] == 0 and "reingest" in again["errors"][0]["error"]
    re = await mem.ingest_url("alice", site.url + "/", "web", mode="reingest")
    assert re["pages_ingested"] == 1 and len(await mem.list_documents("alice", "web")) == 1


async def test_follow_links_stays_on_site_honours_robots_and_budgets(mem, site):
    site.requests.clear()
    progress = []
    out = await mem.ingest_url("alice", site.url + "/", "web", follow_links=True, max_pages=4,
                               progress=lambda done, total, msg: progress.append((done, total)))
    urls = {d["url"] for d in out["documents"]}
    assert site.url + "/" in urls and site.url + "/docs/a" in urls and len(urls) <= 4
    assert out["pages_crawled"] <= 4
    assert "/private/secret" not in site.requests  # robots.txt forbids it: never fetched
    reasons = " ".join(s["reason"] for s in out["skipped"])
    assert "robots.txt" in reasons
    assert progress and [p[0] for p in progress] == sorted({p[0] for p in progress})  # rising, no repeats
    assert progress[-1][0] == progress[-1][1] == 2 * out["pages_crawled"]  # crawled, then ingested: done
    # depth 0 with follow_links: only the start page
    site.requests.clear()
    await mem.create_collection("alice", "shallow", "Shallow crawl")
    out = await mem.ingest_url("alice", site.url + "/docs/b", "shallow", follow_links=True, max_depth=0)
    assert out["pages_crawled"] == 1 and "/docs/c" not in site.requests
    out = await mem.ingest_url("alice", site.url + "/docs/b", "shallow", follow_links=True, max_depth=1,
                               mode="reingest", max_pages=20)
    assert site.url + "/docs/c" in {d["url"] for d in out["documents"]}
    assert not any("other.invalid" in u for u in site.requests)


async def test_skipped_links_say_why(mem, site):
    await mem.create_collection("alice", "all", "Everything")
    out = await mem.ingest_url("alice", site.url + "/", "all", follow_links=True, max_pages=20, max_depth=1)
    reasons = {s["url"].rsplit("/", 1)[-1]: s["reason"] for s in out["skipped"]}
    assert "10.255.255.1" in reasons["redirect-private"]
    assert "not text" in reasons["image.png"]
    assert "larger than" in reasons["big"]


async def test_ssrf_guard_schemes_and_content_types(mem, site):
    mem.crawl_limits = CrawlLimits()  # no allow-list: the local site itself is refused
    with pytest.raises(FetchRefusedError, match=r"127\.0\.0\.1.*loopback"):
        await mem.ingest_url("alice", site.url + "/", "web")
    with pytest.raises(FetchRefusedError, match="loopback"):
        await mem.ingest_url("alice", f"http://localhost:{site.port}/", "web")
    mem.crawl_limits = ALLOW
    with pytest.raises(FetchRefusedError, match=r"10\.255\.255\.1"):
        await mem.ingest_url("alice", site.url + "/redirect-private", "web")
    with pytest.raises(FetchRefusedError, match=r"169\.254\.169\.254"):
        await mem.ingest_url("alice", site.url + "/redirect-metadata", "web")
    with pytest.raises(FetchRefusedError, match="metadata host"):
        await mem.ingest_url("alice", "http://metadata.google.internal/computeMetadata/v1/", "web")
    for bad in ("file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/", "http:///nohost"):
        with pytest.raises(FetchRefusedError, match="url: "):
            await mem.ingest_url("alice", bad, "web")
    with pytest.raises(FetchRefusedError, match="not text"):
        await mem.ingest_url("alice", site.url + "/image.png", "web")
    with pytest.raises(FetchRefusedError, match=r"robots\.txt"):
        await mem.ingest_url("alice", site.url + "/private/secret", "web")
    with pytest.raises(InvalidInputError, match="max_pages"):
        await mem.ingest_url("alice", site.url + "/", "web", max_pages=0)
    assert await mem.list_documents("alice", "web") == []
    # a redirect within the site is followed; plain text is taken as is
    out = await mem.ingest_url("alice", site.url + "/redirect-home", "web")
    assert out["documents"][0]["url"] == site.url + "/"
    out = await mem.ingest_url("alice", site.url + "/notes.txt", "web")
    assert out["pages_ingested"] == 1


async def test_identical_concurrent_requests_are_refused(mem, site):
    site.slow_gate.clear()  # the slow page answers only when the test says so
    asked = site.requests.count("/slow")
    first = asyncio.create_task(mem.ingest_url("alice", site.url + "/slow", "web"))
    try:
        deadline = asyncio.get_running_loop().time() + 30
        while site.requests.count("/slow") == asked:  # the first request is fetching the page now
            assert not first.done() and asyncio.get_running_loop().time() < deadline, "the page was never asked for"
            await asyncio.sleep(0.01)
        with pytest.raises(ConflictError, match="identical ingest_url request is running"):
            await mem.ingest_url("alice", site.url + "/slow", "web")
    finally:
        site.slow_gate.set()
    assert (await first)["pages_ingested"] == 1
    # once finished, the same request may run again (a duplicate title then, reported)
    assert (await mem.ingest_url("alice", site.url + "/slow", "web"))["errors"]


async def test_analyze_website_reads_the_sitemap(mem, site):
    a = await mem.analyze_website(site.url + "/")
    assert a.total_urls == 5
    assert a.pattern_stats["/docs/*"] == 3 and a.pattern_stats["/blog/*"] == 1
    assert a.robots_disallowed == ["/private/"]
    mem.crawl_limits = CrawlLimits()
    with pytest.raises(FetchRefusedError, match="loopback"):
        await mem.analyze_website(site.url + "/")
