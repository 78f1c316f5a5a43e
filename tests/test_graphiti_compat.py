"""Graphiti drop-in (issue 20): what clients built from Graphiti's server DTOs (getzep/graphiti
``server/graph_service/dto``) send is accepted, and where Graphiti answers 200 so does loregraph. A real server
on loopback (the fast scripted extractor: "I use <Name>" gives the fact "User uses <Name>").

The request bodies below are written from Graphiti's documented models, every field present as a client that
dumps the model sends it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from loregraph.graph.messages import Message
from rest_support import Server, wait_idle

MAX_BODY = 65536
GROUP = "compat"
PAST = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
FUTURE = datetime.now(UTC) + timedelta(days=3650)
EPISODE_KEYS = {"uuid", "name", "group_id", "labels", "created_at", "source", "source_description", "content",
                "valid_at", "entity_edges", "episode_metadata"}  # graphiti_core.nodes.EpisodicNode
ENTITY_KEYS = {"uuid", "name", "group_id", "labels", "created_at", "name_embedding", "summary",
               "attributes"}  # graphiti_core.nodes.EntityNode


# ---- bodies shaped like Graphiti's DTOs ----------------------------------------------------------------
def g_message(content: str, role_type: str = "user", role: str | None = None, timestamp: datetime = PAST,
              **extra: object) -> dict[str, object]:
    """dto.common.Message, every field (``role`` has no default there: clients always send it)."""
    return {"content": content, "uuid": None, "name": "", "role_type": role_type, "role": role,
            "timestamp": timestamp.isoformat(), "source_description": "", **extra}


def g_add_messages(group_id: str, messages: list[dict[str, object]], **extra: object) -> dict[str, object]:
    """dto.ingest.AddMessagesRequest."""
    return {"group_id": group_id, "messages": messages, **extra}


def g_search(query: str, group_ids: list[str] | None = None, max_facts: int = 10, **extra: object) -> dict[str, object]:
    """dto.retrieve.SearchQuery."""
    return {"group_ids": [GROUP] if group_ids is None else group_ids, "query": query, "max_facts": max_facts, **extra}


def g_get_memory(messages: list[dict[str, object]], max_facts: int = 10, center_node_uuid: str | None = None,
                 **extra: object) -> dict[str, object]:
    """dto.retrieve.GetMemoryRequest (``center_node_uuid`` is required there, null allowed)."""
    return {"group_id": GROUP, "max_facts": max_facts, "center_node_uuid": center_node_uuid, "messages": messages,
            **extra}


def g_entity_node(uuid: str, name: str, group_id: str = GROUP, summary: str = "", **extra: object) -> dict[str, object]:
    """dto.ingest.AddEntityNodeRequest."""
    return {"uuid": uuid, "group_id": group_id, "name": name, "summary": summary, **extra}


# ---- a real server ---------------------------------------------------------------------------------------
ADMIN_KEY = "compat-admin-key-0123456789"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    work = tmp_path_factory.mktemp("graphiti-compat")
    # an admin key, as a Graphiti deployment that clears its graph would have (a keyless server never wipes)
    keys = json.dumps([{"name": "ops", "key": ADMIN_KEY, "admin": True}])
    srv = Server(work, work / "memory.db", env={"LOREGRAPH_MAX_REQUEST_BYTES": str(MAX_BODY),
                                               "LOREGRAPH_API_KEYS": keys}).start()
    yield srv
    srv.stop()
    assert "Traceback" not in srv.log()


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, timeout=30, headers={"X-API-Key": ADMIN_KEY}) as c:
        yield c


@pytest.fixture(scope="module")
def graph(server, client):
    """Group 'compat': two past messages (a fact each) and one dated ten years ahead."""
    body = g_add_messages(GROUP, [g_message("I use Quasar for streaming."),
                                  g_message("I use Pulsar for queues.", timestamp=PAST + timedelta(hours=1)),
                                  g_message("I use Nebula for the future.", timestamp=FUTURE)])
    assert client.post("/messages", json=body).status_code == 202
    assert wait_idle(server.db, GROUP)["done"] == 3
    return {f["fact"]: f for f in client.get(f"/groups/{GROUP}/facts").json()}


def facts_of(response: httpx.Response) -> list[dict[str, object]]:
    assert response.status_code == 200, response.text
    return response.json()["facts"]


# ---- unknown fields ----------------------------------------------------------------------------------------
UNKNOWN = {"client_version": "9.9", "search_type": "user_centered_facts", "nested": {"a": [1, 2]}}


@pytest.mark.parametrize(("path", "body", "status"), [
    ("/messages", g_add_messages("unk", [g_message("I use Zig.")], **UNKNOWN), 202),
    ("/messages", g_add_messages("unk", [g_message("I use Odin.", episode_type="message", **UNKNOWN)]), 202),
    ("/search", g_search("Zig", ["unk"], **UNKNOWN), 200),
    ("/get-memory", g_get_memory([g_message("Zig", **UNKNOWN)], **UNKNOWN), 200),
    ("/entity-node", g_entity_node("aaaaaaaa-0000-4000-8000-000000000001", "Zed", "unk", **UNKNOWN), 201),
], ids=["messages", "message", "search", "get-memory", "entity-node"])
def test_unknown_body_fields_are_ignored_on_graphiti_routes(server, client, path, body, status):
    r = client.post(path, json=body)
    assert r.status_code == status, r.text


def test_messages_with_unknown_fields_are_ingested_like_any_other(server, client):
    body = g_add_messages("unk2", [g_message("I use Crystal daily", **UNKNOWN)], **UNKNOWN)
    assert client.post("/messages", json=body).status_code == 202
    assert wait_idle(server.db, "unk2") == {"pending": 0, "running": 0, "done": 1, "failed": 0}
    (ep,) = client.get("/episodes/unk2").json()
    assert ep["content"] == "(user): I use Crystal daily"
    assert [f["fact"] for f in client.get("/groups/unk2/facts").json()] == ["User uses Crystal"]


def test_body_less_graphiti_routes_ignore_unknown_query_parameters(client, graph):
    fact = next(iter(graph.values()))
    extra = {"client_version": "9.9"}
    assert client.get("/healthcheck", params=extra).status_code == 200
    assert client.get(f"/episodes/{GROUP}", params={"last_n": 2, **extra}).status_code == 200
    assert client.get(f"/entity-edge/{fact['uuid']}", params=extra).status_code == 200


def test_unknown_field_names_are_logged_once_and_never_their_values(server, client):
    secret = "Xylophone-Secret-Value-42"
    for _ in range(2):
        body = g_add_messages("unk3", [g_message("hello", trace_tag_once=secret)], trace_tag_once=secret)
        assert client.post("/messages", json=body).status_code == 202
        assert client.post("/search", json=g_search("hello", ["unk3"], trace_tag_once=secret)).status_code == 200
    server.wait_log(r"unknown field 'trace_tag_once'")
    log = server.log()
    assert log.count("'trace_tag_once'") == 1
    assert secret not in log


def test_loregraphs_own_routes_still_refuse_unknown_fields(client):
    r = client.post(f"/groups/{GROUP}/query-graph", json={"query": "What do I use?", "client_version": "9.9"})
    assert r.status_code == 422
    assert ["body", "client_version"] in [e["loc"] for e in r.json()["detail"]]


def test_oversized_bodies_are_still_413(client):
    body = g_add_messages("big", [g_message("y" * 1000) for _ in range(MAX_BODY // 1000 + 5)], **UNKNOWN)
    assert client.post("/messages", json=body).status_code == 413


# ---- limits answered like Graphiti ---------------------------------------------------------------------
@pytest.mark.parametrize("last_n", [0, -5])
def test_episodes_last_n_zero_or_less_is_an_empty_list(client, graph, last_n):
    r = client.get(f"/episodes/{GROUP}", params={"last_n": last_n})
    assert r.status_code == 200 and r.json() == []


def test_episodes_last_n_above_the_cap_is_clamped(client, graph):
    r = client.get(f"/episodes/{GROUP}", params={"last_n": 10**9})
    assert r.status_code == 200 and r.json()
    assert r.json() == client.get(f"/episodes/{GROUP}", params={"last_n": 1000}).json()


@pytest.mark.parametrize("path", ["/search", "/get-memory"])
@pytest.mark.parametrize("max_facts", [0, -1])
def test_max_facts_zero_or_less_finds_no_facts(client, graph, path, max_facts):
    body = g_search("Quasar", max_facts=max_facts) if path == "/search" else \
        g_get_memory([g_message("Quasar")], max_facts=max_facts)
    assert facts_of(client.post(path, json=body)) == []


@pytest.mark.parametrize("path", ["/search", "/get-memory"])
def test_max_facts_above_the_cap_is_clamped(client, graph, path):
    body = g_search("Quasar", max_facts=10**9) if path == "/search" else \
        g_get_memory([g_message("Quasar")], max_facts=10**9)
    facts = facts_of(client.post(path, json=body))
    assert "User uses Quasar" in [f["fact"] for f in facts]


@pytest.mark.parametrize("query", ["", "   "])
def test_blank_search_query_finds_no_facts(client, graph, query):
    assert facts_of(client.post("/search", json=g_search(query))) == []


def test_long_search_query_is_truncated_not_refused(client, graph):
    facts = facts_of(client.post("/search", json=g_search("Quasar " + "x" * 10_000)))
    assert "User uses Quasar" in [f["fact"] for f in facts]


def test_get_memory_without_messages_finds_no_facts(client, graph):
    assert facts_of(client.post("/get-memory", json=g_get_memory([]))) == []


# ---- what Graphiti returns ---------------------------------------------------------------------------------
def test_episodes_dated_in_the_future_are_not_returned(client, graph):
    eps = client.get(f"/episodes/{GROUP}", params={"last_n": 10}).json()
    assert [e["content"] for e in eps] == ["(user): I use Quasar for streaming.", "(user): I use Pulsar for queues."]
    (last,) = client.get(f"/episodes/{GROUP}", params={"last_n": 1}).json()
    assert last["content"] == "(user): I use Pulsar for queues."  # the latest up to now, not the future one


def test_episodes_carry_every_key_graphiti_sends(client, graph):
    eps = client.get(f"/episodes/{GROUP}").json()
    assert eps and all(set(e) == EPISODE_KEYS and e["episode_metadata"] is None for e in eps)


def test_entity_nodes_carry_every_key_graphiti_sends(client):
    r = client.post("/entity-node", json=g_entity_node("aaaaaaaa-0000-4000-8000-000000000002", "Orion", "nodes"))
    assert r.status_code == 201
    assert set(r.json()) == ENTITY_KEYS and r.json()["name_embedding"] is None


# ---- /get-memory's query ---------------------------------------------------------------------------------
def test_get_memory_query_is_built_like_graphitis():
    from loregraph.api.rest.graphiti import memory_query

    msgs = [Message(content="I use Quasar.", role_type="user", role="Ana"),
            Message(content="Noted.", role_type="assistant")]
    assert memory_query(msgs) == "user(Ana): I use Quasar.\nassistant(): Noted.\n"


def test_get_memory_searches_with_the_speakers_too(client, graph):
    """The role is part of the query: an empty message from a speaker named 'Quasar' finds the Quasar fact."""
    facts = facts_of(client.post("/get-memory", json=g_get_memory([g_message("", role="Quasar")])))
    assert facts and facts[0]["fact"] == "User uses Quasar"


# ---- a documented difference -------------------------------------------------------------------------
def test_delete_episode_also_removes_the_facts_only_it_produced(server, client):
    assert client.post("/messages", json=g_add_messages("delep", [g_message("I use Jenkins for builds.")])) \
        .status_code == 202
    wait_idle(server.db, "delep")
    (ep,) = client.get("/episodes/delep").json()
    assert [f["fact"] for f in client.get("/groups/delep/facts").json()] == ["User uses Jenkins"]
    assert client.delete(f"/episode/{ep['uuid']}").json() == {"message": "Episode deleted", "success": True}
    assert client.get("/groups/delep/facts").json() == []  # Graphiti would keep the fact


def test_clear_ignores_a_body_it_does_not_take(client, graph):
    """Last: it empties the graph."""
    r = client.post("/clear", json=UNKNOWN)
    assert r.status_code == 200 and r.json() == {"message": "Graph cleared", "success": True}
    assert client.get(f"/episodes/{GROUP}").json() == []
