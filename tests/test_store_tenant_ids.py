"""Ids are scoped by group (issue 19 item 1), end to end on both backends: one group can neither block another's
ingestion by taking the id its speaker will get, nor learn which ids another group holds — through ``Memory``
and through the real REST server. Extraction is the scripted stand-in of rest_support ("I use X")."""

from __future__ import annotations

import json
import time
import uuid

import httpx
import pytest
from fastapi import HTTPException

from loregraph.api.rest.auth import Principal
from loregraph.api.rest.deps import readable_group_of
from loregraph.assembly.service import Service
from loregraph.graph.names import normalize_name
from loregraph.ingest.resolve import _SPEAKER_NS
from loregraph.memory import Memory
from rest_support import Server, make_extractor

KEY_A = "key-for-alpha-0123456789"
KEY_B = "key-for-beta-0123456789"
ADMIN = "admin-key-0123456789abcdef"
KEYS = [{"name": "alpha-app", "key": KEY_A, "groups": ["alpha"]},
        {"name": "beta-app", "key": KEY_B, "groups": ["beta"]},
        {"name": "ops", "key": ADMIN, "admin": True}]


def speaker_id(group_id: str, name: str = "User") -> str:
    """The id the ingest pipeline gives a group's speaker (ingest/pipeline.py ``_speaker``)."""
    return str(uuid.uuid5(_SPEAKER_NS, f"{group_id}\x00{normalize_name(name)}"))


async def test_a_group_taking_another_groups_speaker_id_blocks_nothing(db_url, embedder):
    m = await Memory.open(db_url, embedder=embedder, extractor=make_extractor())
    try:
        sid = speaker_id("beta")
        squatter = await m.add_entity("alpha", "Squatter", entity_id=sid)  # alpha guesses beta's speaker id
        assert squatter.id == sid
        await m.add_messages("beta", [{"content": "I use Postgres", "role_type": "user"}])
        speaker = await m.get_entity("beta", sid)
        assert speaker.name == "User" and speaker.attributes.get("is_speaker")
        facts = await m.list_facts("beta")
        assert [(f.source_id, f.fact) for f in facts] == [(sid, "User uses Postgres")]
        assert (await m.get_entity("alpha", sid)).name == "Squatter"
        assert [e.name for e in await m.list_entities("alpha")] == ["Squatter"]
        assert sorted(e.name for e in await m.list_entities("beta")) == ["Postgres", "User"]
        # a second message of beta goes through as well (the speaker is found, not re-created)
        await m.add_messages("beta", [{"content": "I use Grafana", "role_type": "user"}])
        assert len(await m.list_facts("beta")) == 2
        assert (await m.get_entity("alpha", sid)).name == "Squatter"

        # routes naming a record only by id: 404 outside the caller's groups (same text as a missing id), 409
        # when the id is in several of the caller's groups
        svc = Service(memory=m, queue=None, worker=None, settings=None)  # type: ignore[arg-type]
        alpha = Principal("alpha-app", False, frozenset({"alpha"}))
        both = Principal("both", False, frozenset({"alpha", "beta"}))
        admin = Principal("ops", True, frozenset())
        fact_id = facts[0].id
        assert await readable_group_of(svc, alpha, "entity", sid) == "alpha"
        with pytest.raises(HTTPException) as hidden:
            await readable_group_of(svc, alpha, "fact", fact_id)
        with pytest.raises(HTTPException) as missing:
            await readable_group_of(svc, alpha, "fact", "no-such-fact")
        assert hidden.value.status_code == missing.value.status_code == 404
        assert hidden.value.detail == f"fact {fact_id} not found"
        assert missing.value.detail == "fact no-such-fact not found"
        for who in (both, admin):
            with pytest.raises(HTTPException) as ambiguous:
                await readable_group_of(svc, who, "entity", sid)
            assert ambiguous.value.status_code == 409 and "alpha, beta" in ambiguous.value.detail
        assert await readable_group_of(svc, both, "fact", fact_id) == "beta"
    finally:
        await m.close()


def _wait_done(client: httpx.Client, group: str, n: int, timeout: float = 90) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        q = client.get(f"/groups/{group}/queue").json()
        if q["done"] + q["failed"] >= n and q["pending"] == q["running"] == 0:
            return q
        assert time.monotonic() < deadline, f"queue of {group} not drained: {q}"
        time.sleep(0.1)


def test_on_a_real_server_one_group_can_neither_block_nor_probe_another(db_url, tmp_path):
    db = db_url if db_url.startswith("postgresql") else db_url[len("sqlite:///"):]
    srv = Server(tmp_path / "srv", db, env={"LOREGRAPH_API_KEYS": json.dumps(KEYS)}).start()
    try:
        with httpx.Client(base_url=srv.url, timeout=30, headers={"Authorization": f"Bearer {KEY_A}"}) as a, \
                httpx.Client(base_url=srv.url, timeout=30, headers={"Authorization": f"Bearer {KEY_B}"}) as b:
            sid = speaker_id("beta")
            r = a.post("/entity-node", json={"uuid": sid, "group_id": "alpha", "name": "Squatter"})
            assert r.status_code == 201, r.text
            assert r.json()["uuid"] == sid and r.json()["group_id"] == "alpha"
            r = b.post("/messages", json={"group_id": "beta", "messages": [
                {"content": "I use Postgres for billing.", "role_type": "user"}]})
            assert r.status_code == 202
            q = _wait_done(b, "beta", 1)
            assert (q["done"], q["failed"]) == (1, 0), q
            ents = {e["uuid"]: e["name"] for e in b.get("/groups/beta/entities").json()}
            assert ents.get(sid) == "User" and "Postgres" in ents.values()
            (fact,) = b.get("/groups/beta/facts").json()
            (episode,) = b.get("/episodes/beta").json()

            # alpha learns nothing of beta's ids: creating one of them succeeds in alpha like any new id ...
            r = a.post("/entity-node", json={"uuid": fact["uuid"], "group_id": "alpha", "name": "Probe"})
            assert r.status_code == 201 and "beta" not in r.text and "another group" not in r.text
            # ... and routes naming a record by id answer 404 exactly as for an id nobody has
            for path in (f"/entity-edge/{fact['uuid']}", f"/episode/{episode['uuid']}"):
                hidden = a.request("GET" if "edge" in path else "DELETE", path)
                missing = a.request("GET" if "edge" in path else "DELETE", path.rsplit("/", 1)[0] + "/no-such-id")
                assert hidden.status_code == missing.status_code == 404, (path, hidden.text)
                assert hidden.json()["detail"].replace(path.rsplit("/", 1)[1], "X") == \
                    missing.json()["detail"].replace("no-such-id", "X")
            assert a.get(f"/groups/alpha/entities/{sid}").json()["name"] == "Squatter"
            assert b.get(f"/groups/beta/entities/{sid}").json()["name"] == "User"
            assert b.get(f"/entity-edge/{fact['uuid']}").json()["fact"] == "User uses Postgres"
            # beta keeps ingesting
            b.post("/messages", json={"group_id": "beta", "messages": [
                {"content": "I use Grafana for dashboards.", "role_type": "user"}]}).raise_for_status()
            assert _wait_done(b, "beta", 2)["failed"] == 0
            assert len(b.get("/groups/beta/facts").json()) == 2
    finally:
        srv.stop()


@pytest.mark.parametrize("bad", ["beta\n", "beta\r\n", "\nbeta", "be ta", ""])
async def test_a_group_id_with_a_trailing_newline_is_refused_and_nothing_is_stored(db_url, embedder, bad):
    """Issue 19 item 9: the group id rule is a full match ("$" alone also matched before a final newline)."""
    from pydantic import ValidationError

    from loregraph.graph.types import Entity, validate_group_id

    with pytest.raises(ValueError, match="group_id: must be 1-128 characters"):
        validate_group_id(bad)
    with pytest.raises(ValidationError, match="group_id"):
        Entity(group_id=bad, name="x")
    m = await Memory.open(db_url, embedder=embedder, extractor=make_extractor())
    try:
        with pytest.raises(ValueError, match="group_id"):
            await m.add_messages(bad, [{"content": "I use Postgres", "role_type": "user"}])
        with pytest.raises(ValueError, match="group_id"):
            await m.add_entity(bad, "Squatter")
        assert m.store.groups() == []
    finally:
        await m.close()
