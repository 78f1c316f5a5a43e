"""The MCP server through the SDK's own client: over stdio (``loregraph mcp`` as a subprocess) and over streamable
HTTP (``loregraph serve`` on loopback, /mcp, the REST API keys). Every tool, errors included; a client limited to
one group can neither read nor write another through any tool. Both backends."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from docsite import Site
from loregraph.api.mcp.server import TOOL_NAMES
from rest_support import Server

SRC = Path(__file__).resolve().parents[1] / "src"
TESTS = Path(__file__).resolve().parent
ALICE_KEY = "alice-key-0123456789abcdef"
BOB_KEY = "bob-key-0123456789abcdef"
KEYS = json.dumps([{"name": "alice-app", "key": ALICE_KEY, "groups": ["alice"]},
                   {"name": "bob-app", "key": BOB_KEY, "groups": ["bob"]}])
DOC = ("# Project Orion\n\nProject Orion uses FastAPI for its API. Nora Patel leads Project Orion.\n\n"
       "## Deployment\n\nThe Orion team deploys with Kubernetes every Tuesday. Rollbacks use Helm.")
MINIMAL_ARGS: dict[str, dict[str, Any]] = {
    "add_messages": {"messages": [{"content": "I use Rust.", "role_type": "user"}]},
    "search_memory": {"query": "Rust"}, "query_graph": {"query": "What do I use?"}, "explain": {"record_id": "x"},
    "get_episodes": {}, "delete_episode": {"episode_id": "x"},
    "create_collection": {"name": "stolen", "description": "d"}, "list_collections": {},
    "ingest_text": {"content": "Text.", "collection": "eng", "title": "T"},
    "ingest_url": {"url": "http://127.0.0.1:1/", "collection": "eng"}, "analyze_website": {"url": "http://127.0.0.1:1/"},
    "search_documents": {"query": "Orion", "collection": "eng"},
    "query_relationships": {"query": "Orion", "collection": "eng"},
    "query_temporal": {"query": "Orion", "collection": "eng"}, "list_documents": {"collection": "eng"},
    "delete_document": {"document_id": "x"},
}


@pytest.fixture(scope="module")
def site():
    s = Site()
    yield s
    s.close()


async def ok(client: Any, name: str, args: dict[str, Any], **kw: Any) -> dict[str, Any]:
    res = await client.call_tool(name, args, **kw)
    assert not res.is_error, f"{name}: {res.content[0].text}"
    return res.structured_content


async def fails(client: Any, name: str, args: dict[str, Any]) -> str:
    res = await client.call_tool(name, args)
    assert res.is_error, f"{name} should have failed: {res.structured_content}"
    return res.content[0].text


async def exercise(client: Any, group: str, site_url: str) -> None:
    """Every tool once on the happy path, and its errors."""
    g = {"group_id": group}
    names = sorted(t.name for t in (await client.list_tools()).tools)
    assert names == sorted(TOOL_NAMES)
    made = await ok(client, "create_collection", {**g, "name": "eng", "description": "Engineering docs",
                                                  "metadata_schema": {"custom": {"team": "string"}, "system": []}})
    assert made["name"] == "eng"
    assert "conflict: name: a collection named 'eng' exists" in await fails(
        client, "create_collection", {**g, "name": "eng", "description": "again"})
    assert "invalid input: description: is required" in await fails(
        client, "create_collection", {**g, "name": "x", "description": " "})
    assert "metadata_schema" in await fails(client, "create_collection",
                                            {**g, "name": "y", "description": "d", "metadata_schema": {"a": 1}})
    cols = await ok(client, "list_collections", g)
    assert [c["name"] for c in cols["collections"]] == ["eng"]
    progress: list[float] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(done)

    doc = await ok(client, "ingest_text", {**g, "content": DOC, "collection": "eng", "title": "Orion",
                                           "metadata": {"team": "payments"}}, progress_callback=on_progress)
    assert doc["num_chunks"] >= 1 and doc["facts_extracted"] >= 1
    assert progress, "no progress notification arrived"
    assert "reingest" in await fails(client, "ingest_text", {**g, "content": DOC, "collection": "eng",
                                                             "title": "Orion"})
    assert "metadata.team: must be of type string" in await fails(
        client, "ingest_text", {**g, "content": DOC, "collection": "eng", "title": "Other", "metadata": {"team": 1}})
    assert "not found: collection" in await fails(client, "ingest_text", {**g, "content": DOC, "collection": "nope",
                                                                         "title": "T"})
    hits = await ok(client, "search_documents", {**g, "query": "How does the Orion team deploy?", "collection": "eng"})
    assert hits["results"][0]["title"] == "Orion" and hits["results"][0]["metadata"] == {"team": "payments"}
    assert "less than or equal to 50" in await fails(client, "search_documents",
                                                    {**g, "query": "x", "collection": "eng", "limit": 500})
    rels = await ok(client, "query_relationships", {**g, "query": "What does Project Orion use?", "collection": "eng",
                                                    "threshold": 0.0})
    assert rels["relationships"] and rels["relationships"][0]["documents"] == ["Orion"]
    timeline = await ok(client, "query_temporal", {**g, "query": "Project Orion", "collection": "eng"})
    assert timeline["timeline"] and timeline["timeline"][0]["status"] == "current"
    why = await ok(client, "explain", {**g, "record_id": rels["relationships"][0]["fact_id"]})
    assert why["kind"] == "fact" and why["sources"][0]["name"] == "Orion"
    assert "not found" in await fails(client, "explain", {**g, "record_id": "no-such-id"})
    docs = await ok(client, "list_documents", {**g, "collection": "eng"})
    assert [d["title"] for d in docs["documents"]] == ["Orion"]
    page = await ok(client, "ingest_url", {**g, "url": site_url + "/docs/a", "collection": "eng"})
    assert page["pages_ingested"] == 1
    assert "scheme" in await fails(client, "ingest_url", {**g, "url": "file:///etc/passwd", "collection": "eng"})
    assert "10.255.255.1" in await fails(client, "ingest_url", {**g, "url": site_url + "/redirect-private",
                                                                "collection": "eng"})
    site = await ok(client, "analyze_website", {**g, "url": site_url + "/"})
    assert site["total_urls"] == 5 and site["robots_disallowed"] == ["/private/"]
    added = await ok(client, "add_messages", {**g, "messages": [
        {"content": "I use Rust for Project Vega.", "role_type": "user", "role": "Alice"}]})
    episode_id = added["episodes"][0]["episode_id"]
    assert "role_type" in await fails(client, "add_messages", {**g, "messages": [{"content": "x"}]})
    found = await ok(client, "search_memory", {**g, "query": "Rust Vega"})
    assert any("Rust" in e["content"] for e in found["episodes"])
    graph = await ok(client, "query_graph", {**g, "query": "What does Project Orion use?"})
    assert "relationships" in graph
    eps = await ok(client, "get_episodes", {**g, "last_n": 50})
    assert episode_id in [e["id"] for e in eps["episodes"]] and len(eps["episodes"]) <= 50
    assert (await ok(client, "delete_episode", {**g, "episode_id": episode_id}))["deleted"]["episodes"] == 1
    assert "not found" in await fails(client, "delete_episode", {**g, "episode_id": episode_id})
    gone = await ok(client, "delete_document", {**g, "document_id": doc["document_id"]})
    assert gone["deleted"]["documents"] == 1
    assert "not found" in await fails(client, "delete_document", {**g, "document_id": doc["document_id"]})


async def refused_everywhere(client: Any, group: str) -> None:
    for name in TOOL_NAMES:
        text = await fails(client, name, {"group_id": group, **MINIMAL_ARGS[name]})
        assert f"may not access group '{group}'" in text, (name, text)


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOREGRAPH_") or k == "LOREGRAPH_CACHE_DIR"}
    env.update({"PYTHONPATH": os.pathsep.join([str(SRC), str(TESTS)]), "HF_HUB_OFFLINE": "1",
                "TOKENIZERS_PARALLELISM": "false", **extra})
    return env


async def test_stdio_every_tool_and_group_scope(db_url, site, tmp_path):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "loregraph.cli", "mcp", "--db", db_url, "-g", "alice"], cwd=tmp_path,
        env=_env({"LOREGRAPH_CRAWL_ALLOW_NETWORKS": '["127.0.0.1/32"]'}))
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            await exercise(client, "alice", site.url)
            await refused_everywhere(client, "bob")
    log = (tmp_path / "stderr.log").read_text()
    assert "loregraph MCP server on stdio" in log
    assert "Nora Patel" not in log  # logs carry ids and counts, never document text


def test_stdio_start_up_fails_fast(tmp_path):
    import subprocess

    no_db = subprocess.run([sys.executable, "-m", "loregraph.cli", "mcp"], cwd=tmp_path, env=_env({}),
                           capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert no_db.returncode == 1 and "no configuration" in no_db.stderr
    bad = subprocess.run([sys.executable, "-m", "loregraph.cli", "mcp", "--db", "postgresql://nobody@127.0.0.1:1/x"],
                         cwd=tmp_path, env=_env({}), capture_output=True, text=True, timeout=120,
                         stdin=subprocess.DEVNULL)
    assert bad.returncode == 1 and "cannot open the store" in bad.stderr
    bad_setting = subprocess.run([sys.executable, "-m", "loregraph.cli", "mcp", "--db", "x.db"], cwd=tmp_path,
                                 env=_env({"LOREGRAPH_CRAWL_ALLOW_NETWORKS": '["not-an-ip"]'}),
                                 capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert bad_setting.returncode == 1 and "crawl_allow_networks" in bad_setting.stderr


async def test_http_every_tool_with_group_scoped_keys(db_url, site, tmp_path):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    srv = Server(tmp_path, db_url, env={"LOREGRAPH_API_KEYS": KEYS, "LOREGRAPH_TEST_INNER": "local",
                                        "LOREGRAPH_CRAWL_ALLOW_NETWORKS": '["127.0.0.1/32"]'}).start()
    try:
        url = srv.url + "/mcp"
        # no key / an unknown key: 401 before any MCP message is read
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        assert httpx.post(url, json=init).status_code == 401
        assert httpx.post(url, json=init, headers={"Authorization": "Bearer wrong-key-0123456789"}).status_code == 401

        def client(key: str) -> Any:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=120)
            return Client(streamable_http_client(url, http_client=http))

        async with client(ALICE_KEY) as alice:
            await exercise(alice, "alice", site.url)
            await ok(alice, "ingest_text", {"group_id": "alice", "content": DOC, "collection": "eng",
                                            "title": "Kept"})
            await refused_everywhere(alice, "bob")
        async with client(BOB_KEY) as bob:
            await refused_everywhere(bob, "alice")
            # bob's own group has nothing of alice's, even under the same collection name
            await ok(bob, "create_collection", {"group_id": "bob", "name": "eng", "description": "Bob"})
            hits = await ok(bob, "search_documents", {"group_id": "bob", "query": "Orion deploy", "collection": "eng",
                                                      "threshold": 0.0})
            assert hits["results"] == []
            assert (await ok(bob, "get_episodes", {"group_id": "bob"}))["episodes"] == []
        # REST: the same facade, errors mapped once (409, 422, 404), and the same scoping
        alice = {"Authorization": f"Bearer {ALICE_KEY}"}
        base = srv.url + "/groups/alice/collections"
        made = httpx.post(base + "/eng/documents", headers=alice, json={"content": DOC, "title": "Via REST"},
                          timeout=120)
        assert made.status_code == 201 and made.json()["num_chunks"] >= 1
        again = httpx.post(base + "/eng/documents", headers=alice, json={"content": DOC, "title": "Via REST"},
                           timeout=120)
        assert again.status_code == 409 and "reingest" in again.json()["detail"]
        bad = httpx.post(base, headers=alice, json={"name": "z", "description": "d", "metadata_schema": {"x": 1}})
        assert bad.status_code == 422 and "metadata_schema" in bad.json()["detail"]
        assert httpx.post(base + "/nope/search", headers=alice, json={"query": "x"}).status_code == 404
        found = httpx.post(base + "/eng/search", headers=alice, json={"query": "How does Orion deploy?"}).json()
        assert found and found[0]["title"] in ("Via REST", "Kept")
        head = {"Authorization": f"Bearer {BOB_KEY}"}
        assert httpx.get(srv.url + "/groups/alice/collections", headers=head).status_code == 403
        mine = httpx.get(srv.url + "/groups/bob/collections", headers=head).json()
        assert [c["name"] for c in mine] == ["eng"]
        assert "Nora Patel" not in srv.log()
    finally:
        srv.stop()
