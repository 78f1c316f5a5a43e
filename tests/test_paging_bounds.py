"""Paging bounds: an offset or limit out of range (a huge integer SQLite cannot hold, a negative one) is a clear
error naming the field — REST 422, an MCP tool error, ``InvalidInputError`` in process — never a 500 or a
server-side failure. Every list route that pages is covered, over real servers on loopback / stdio."""

from __future__ import annotations

import sys

import httpx
import pytest

from loregraph.errors import InvalidInputError
from loregraph.search.explore import MAX_OFFSET
from rest_support import Server
from test_documents_mcp import _env

HUGE = 10**20  # beyond SQLite's 64-bit integers


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    work = tmp_path_factory.mktemp("paging")
    srv = Server(work / "srv", work / "memory.db", args=("--no-worker",)).start()
    with httpx.Client(base_url=srv.url, timeout=60) as c:
        assert c.post("/groups/g/collections", json={"name": "eng", "description": "d"}).status_code in (200, 201)
    yield srv
    srv.stop()


LIST_ROUTES = ["/groups/g/collections/eng/documents", "/groups/g/communities", "/groups/g/explore/graph"]


@pytest.mark.parametrize("path", LIST_ROUTES)
@pytest.mark.parametrize(("field", "value"), [("offset", HUGE), ("offset", -1), ("offset", MAX_OFFSET + 1),
                                              ("limit", HUGE), ("limit", 0)])
def test_rest_list_routes_refuse_an_out_of_range_page_naming_the_field(server, path, field, value):
    with httpx.Client(base_url=server.url, timeout=60) as c:
        r = c.get(path, params={field: value})
        assert r.status_code == 422, (r.status_code, r.text)
        assert [e["loc"] for e in r.json()["detail"]] == [["query", field]], r.text
        assert c.get(path, params={field: 1 if field == "limit" else MAX_OFFSET}).status_code == 200


async def test_documents_listed_in_process_refuse_a_huge_offset_naming_it(open_memory):
    from scripted import ScriptedExtractor

    m = await open_memory(extractor=ScriptedExtractor())
    await m.create_collection("g", "eng", "d")
    with pytest.raises(InvalidInputError, match=r"^offset: "):
        await m.list_documents("g", "eng", offset=HUGE)
    assert await m.list_documents("g", "eng", offset=MAX_OFFSET) == []


async def test_the_mcp_list_documents_tool_refuses_a_huge_offset_naming_it(tmp_path):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "loregraph.cli", "mcp", "--db",
                                                                 str(tmp_path / "m.db"), "-g", "g"],
                                   cwd=tmp_path, env=_env({}))
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            made = await client.call_tool("create_collection", {"group_id": "g", "name": "eng", "description": "d"})
            assert not made.is_error, made.content[0].text
            res = await client.call_tool("list_documents", {"group_id": "g", "collection": "eng", "offset": HUGE})
            assert res.is_error and "offset" in res.content[0].text, res.content[0].text
            assert "failed on the server" not in res.content[0].text
            ok = await client.call_tool("list_documents", {"group_id": "g", "collection": "eng",
                                                           "offset": MAX_OFFSET})
            assert not ok.is_error, ok.content[0].text


def test_graphiti_compatible_counts_are_clamped_not_overflowed(server):
    """Graphiti's routes clamp their counts (its contract): a huge one is the largest page, not a 500."""
    with httpx.Client(base_url=server.url, timeout=60) as c:
        for last_n in (HUGE, -HUGE):
            r = c.get("/episodes/g", params={"last_n": last_n})
            assert r.status_code == 200 and r.json() == [], r.text
        r = c.post("/search", json={"group_ids": ["g"], "query": "anything", "max_facts": HUGE})
        assert r.status_code == 200, r.text
