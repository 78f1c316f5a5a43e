"""The REST service against spec 000 AC 1-8 and 32-39 and the Graphiti-compatible routes: a real server
process on loopback, a real SQLite file, the real LocalExtractor (messages with a test marker go to the
scripted stand-in for a remote model instead, see rest_support)."""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime

import httpx
import pytest

from rest_support import Server, job_counts, rows, wait_idle

ACCEPTED = {"message": "Messages added to processing queue", "success": True}
MAX_BODY = 65536
MAX_CHARS = 2000


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    work = tmp_path_factory.mktemp("rest-api")
    fail_file = work / "model-down"
    srv = Server(work, work / "memory.db", env={
        "LOREGRAPH_TEST_INNER": "local", "LOREGRAPH_TEST_FAIL_FILE": str(fail_file),
        "LOREGRAPH_MAX_REQUEST_BYTES": str(MAX_BODY), "LOREGRAPH_MAX_MESSAGE_CHARS": str(MAX_CHARS),
        # AC 34: loregraph sends no telemetry; a telemetry setup that cannot work must change nothing
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "GRAPHITI_TELEMETRY_ENABLED": "true",
    }).start()
    srv.fail_file = fail_file
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        yield c


def post(client, group, *messages, **body):
    return client.post("/messages", json={"group_id": group, "messages": list(messages), **body})


def msg(content, role_type="user", **kw):
    return {"content": content, "role_type": role_type, **kw}


def jobs_of(server, group):
    return rows(server.db, "SELECT seq, id, status, attempts, episode_id, started_at, finished_at, error "
                           "FROM jobs WHERE group_id = ? ORDER BY seq", (group,))


def episodes(client, group, n=100):
    r = client.get(f"/episodes/{group}", params={"last_n": n})
    assert r.status_code == 200, r.text
    return r.json()


def loc(response):
    return [tuple(e["loc"]) for e in response.json()["detail"]]


# ---- AC 1-8: routing, worker, validation ----------------------------------------------------------
def test_ac1_k_messages_are_accepted_as_exactly_k_jobs(server, client):
    r = post(client, "ac1", msg("I use FastAPI for project Orion."), msg("Nora works on Orion.", "assistant"),
             msg("We moved Orion to PostgreSQL.", role="Ana"))
    assert r.status_code == 202 and r.json() == ACCEPTED
    assert len(jobs_of(server, "ac1")) == 3  # queued before the answer, one per message (no batching)
    assert wait_idle(server.db, "ac1")["done"] == 3
    eps = episodes(client, "ac1")
    assert [e["content"] for e in eps] == ["(user): I use FastAPI for project Orion.",
                                           "(assistant): Nora works on Orion.",
                                           "Ana(user): We moved Orion to PostgreSQL."]
    assert {e["uuid"] for e in eps} == {j[4] for j in jobs_of(server, "ac1")}


def test_ac8_empty_message_list_is_accepted_and_queues_nothing(server, client):
    r = post(client, "ac8")
    assert r.status_code == 202 and r.json() == ACCEPTED
    assert jobs_of(server, "ac8") == []


def test_ac5_missing_group_id_is_a_422_naming_it(server, client):
    before = job_counts(server.db)
    r = client.post("/messages", json={"messages": [msg("hello")]})
    assert r.status_code == 422 and ("body", "group_id") in loc(r)
    assert job_counts(server.db) == before


@pytest.mark.parametrize(("message", "field"), [
    (msg("hi", role_type="robot"), "role_type"),
    ({"role_type": "user"}, "content"),
    (msg(123), "content"),
    (msg("hi", timestamp="yesterday"), "timestamp"),
    (msg("hi", name=["x"]), "name"),
])  # unknown fields are ignored on Graphiti's routes, as by Graphiti (test_graphiti_compat)
def test_ac6_bad_messages_are_422s_naming_the_field_and_nothing_is_queued(server, client, message, field):
    before = job_counts(server.db)
    r = post(client, "ac6", msg("a good message"), message)
    assert r.status_code == 422
    assert ("body", "messages", 1, field) in loc(r)
    assert job_counts(server.db) == before  # the good message of the same request was not queued either


@pytest.mark.parametrize("body", [{"group_id": "g", "messages": "not a list"}, {"group_id": 5, "messages": []},
                                  {"group_id": "has space", "messages": []}, [1, 2]])
def test_wrong_types_are_422(client, body):
    assert client.post("/messages", json=body).status_code == 422


def test_ac7_omitted_timestamp_defaults_to_parse_time(server, client):
    before = datetime.now(UTC)
    assert post(client, "ac7", msg("no timestamp here")).status_code == 202
    after = datetime.now(UTC)
    given = "2024-05-06T07:08:09+02:00"
    assert post(client, "ac7", msg("a timestamp here", timestamp=given)).status_code == 202
    wait_idle(server.db, "ac7")
    eps = {e["content"]: e for e in episodes(client, "ac7")}
    valid = datetime.fromisoformat(eps["(user): no timestamp here"]["valid_at"])
    assert before <= valid <= after
    assert datetime.fromisoformat(eps["(user): a timestamp here"]["valid_at"]) == datetime.fromisoformat(given)


def test_ac3_36_jobs_run_one_at_a_time_in_fifo_order(server, client):
    texts = [f"Message number {i} about project Atlas." for i in range(12)]
    for chunk in (texts[:5], texts[5:6], texts[6:]):  # several requests: still one queue, in order
        assert post(client, "ac3", *[msg(t) for t in chunk]).status_code == 202
    wait_idle(server.db, "ac3")
    jobs = jobs_of(server, "ac3")
    assert [j[2] for j in jobs] == ["done"] * 12
    for prev, nxt in itertools.pairwise(jobs):
        assert prev[6] <= nxt[5]  # the next job started only after the previous one finished
    order = rows(server.db, "SELECT content FROM episodes WHERE group_id = ? ORDER BY seq", ("ac3",))
    assert [c for (c,) in order] == [f"(user): {t}" for t in texts]


def test_ac4_38_pickup_logs_the_remaining_queue_size(server, client):
    assert post(client, "ac4", msg("one"), msg("two"), msg("three")).status_code == 202
    wait_idle(server.db, "ac4")
    log = server.log()
    remaining = []
    for _, job_id, *_ in jobs_of(server, "ac4"):
        m = re.search(rf"job {job_id} picked up: group=ac4 attempt=1 queue_remaining=(\d+)", log)
        assert m, f"no pickup line for job {job_id}"
        remaining.append(int(m.group(1)))
    assert remaining == [2, 1, 0]


def test_ac37_39_completion_logs_duration_counts_and_ids_never_content(server, client):
    secret = "I'm using Terraform for project Contoso with my colleague Quentin."
    assert post(client, "ac37", msg(secret), msg("FAIL! Quixotic Zebra Jamboree")).status_code == 202
    wait_idle(server.db, "ac37")
    (ok, failed) = jobs_of(server, "ac37")
    line = server.wait_log(rf"job {ok[1]} done in ([\d.]+) ms: .*")
    server.wait_log(rf"job {failed[1]} failed after")
    log = server.log()
    assert float(line.group(1)) > 0
    for field in ("episode=", "candidate_entities=", "candidate_relations=", "accepted_facts=",
                  "invalidated_facts=", "retries=0", "fact_ids="):
        assert field in line.group(0)
    assert ok[4] in line.group(0)  # provenance: the episode id
    facts = rows(server.db, "SELECT id FROM facts WHERE group_id = 'ac37'")
    assert facts and all(f in line.group(0) for (f,) in facts)  # and the relation ids
    assert re.search(rf"job {failed[1]} failed after [\d.]+ ms: group=ac37 error=RuntimeError", log)
    for word in ("Terraform", "Contoso", "Quentin", "Quixotic", "Zebra", "Jamboree", "the model failed"):
        assert word not in log


# ---- AC 32-36: errors ---------------------------------------------------------------------------------
def test_ac32_33_a_failing_job_changes_neither_the_answer_nor_later_jobs(server, client):
    r = post(client, "ac33", msg("FAIL! the model breaks on this one"), msg("I use Redis for caching."),
             msg("reprocess", uuid="00000000-0000-4000-8000-000000000000"), msg("I use Kafka for events."))
    assert r.status_code == 202 and r.json() == ACCEPTED
    counts = wait_idle(server.db, "ac33")
    assert counts["done"] == 2 and counts["failed"] == 2
    q = client.get("/groups/ac33/queue").json()
    assert q["failed"] == 2 and q["done"] == 2 and q["pending"] == 0
    errors = sorted(j["error"].split(":")[0] for j in q["failed_jobs"])
    assert errors == ["NotFoundError", "RuntimeError"]
    contents = [e["content"] for e in episodes(client, "ac33")]
    assert contents == ["(user): I use Redis for caching.", "(user): I use Kafka for events."]  # no partial writes


def test_failed_jobs_can_be_retried_once_the_cause_is_fixed(server, client):
    server.fail_file.write_text("down")
    assert post(client, "retry", msg("FAILFILE! I use Elasticsearch for search.")).status_code == 202
    assert wait_idle(server.db, "retry")["failed"] == 1
    assert client.post("/groups/retry/queue/retry").json() == {"group_id": "retry", "retried": 1}
    assert wait_idle(server.db, "retry")["failed"] == 1  # the cause is still there: failed again
    server.fail_file.unlink()
    assert client.post("/groups/retry/queue/retry").json() == {"group_id": "retry", "retried": 1}
    assert wait_idle(server.db, "retry") == {"pending": 0, "running": 0, "done": 1, "failed": 0}
    assert len(episodes(client, "retry")) == 1
    assert client.post("/groups/retry/queue/retry").json()["retried"] == 0


def test_ac35_a_transient_error_is_retried_once_with_backoff(server, client):
    assert post(client, "ac35", msg("FLAKY! I use Celery for jobs.")).status_code == 202
    assert wait_idle(server.db, "ac35")["done"] == 1
    ((_, job_id, status, attempts, *_),) = jobs_of(server, "ac35")
    assert status == "done" and attempts == 2
    server.wait_log(rf"job {job_id} done in .* retries=1")
    assert f"job {job_id}: transient ConnectionError; retrying once" in server.log()


def test_ac36_partial_extraction_entities_without_relations_is_processed(server, client):
    assert post(client, "ac36", msg("PARTIAL! something about a tool")).status_code == 202
    assert wait_idle(server.db, "ac36")["done"] == 1
    ents = client.get("/groups/ac36/entities").json()
    assert [e["name"] for e in ents] == ["Zephyr"]
    assert client.get("/groups/ac36/facts").json() == []


def test_ac34_broken_telemetry_settings_do_not_affect_processing(server, client):
    """The server runs with an unreachable OTLP endpoint and telemetry switched on (loregraph sends none)."""
    assert post(client, "ac34", msg("I use Grafana for dashboards.")).status_code == 202
    assert wait_idle(server.db, "ac34")["done"] == 1
    assert [f["fact"] for f in client.get("/groups/ac34/facts").json()] == ["User uses Grafana"]


# ---- limits -----------------------------------------------------------------------------------------
def test_request_and_content_size_limits(server, client):
    before = job_counts(server.db)
    r = post(client, "limits", msg("x" * (MAX_CHARS + 1)))
    assert r.status_code == 422 and ("body", "messages", 0, "content") in loc(r)
    big = [msg("y" * 1000) for _ in range(MAX_BODY // 1000 + 5)]
    assert post(client, "limits", *big).status_code == 413

    def chunked():  # no Content-Length: the limit still holds while the body streams in
        yield b'{"group_id": "limits", "messages": ['
        for i in range(MAX_BODY // 1000 + 5):
            yield (b"," if i else b"") + b'{"role_type": "user", "content": "' + b"z" * 1000 + b'"}'
        yield b"]}"

    r = client.post("/messages", content=chunked(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert job_counts(server.db) == before
    assert client.get("/health").status_code == 200


def test_bad_path_and_query_parameters_are_422(client):
    assert client.get("/episodes/has space").status_code == 422
    assert client.get("/episodes/ok", params={"last_n": "many"}).status_code == 422
    assert client.post("/search", json={"query": None}).status_code == 422
    assert client.post("/search", json={"query": "x", "max_facts": "all"}).status_code == 422
    assert client.post("/groups/g/query-graph", json={"query": "x", "entity_type": "spaceship"}).status_code == 422
    assert client.get("/groups/g/facts", params={"as_of": "0001-01-01T00:00:00+01:00"}).status_code == 422


# ---- Graphiti-compatible routes and loregraph's own ---------------------------------------------------
@pytest.fixture(scope="module")
def graph(server, client):
    """Group 'gr' with a small graph built by the real local extractor."""
    t0 = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
    texts = ["I'm using FastAPI for project Orion with my colleague Nora.",
             "Nora prefers PostgreSQL for Orion.",
             "I also use Redis for caching in project Atlas."]
    for i, t in enumerate(texts):
        assert post(client, "gr", msg(t, timestamp=t0.replace(hour=9 + i).isoformat())).status_code == 202
    assert wait_idle(server.db, "gr")["done"] == 3
    return {"entities": {e["name"]: e for e in client.get("/groups/gr/entities").json()},
            "facts": client.get("/groups/gr/facts").json()}


def test_healthcheck_health_and_openapi(client):
    assert client.get("/healthcheck").json() == {"status": "healthy"}
    h = client.get("/health")
    assert h.status_code == 200 and h.json()["status"] == "ok" and h.json()["worker"] is True
    paths = client.get("/openapi.json").json()["paths"]
    for p in ("/messages", "/search", "/get-memory", "/episodes/{group_id}", "/entity-node", "/entity-edge/{uuid}",
              "/episode/{uuid}", "/group/{group_id}", "/clear", "/healthcheck", "/health",
              "/groups/{group_id}/queue", "/groups/{group_id}/query-graph", "/groups/{group_id}/explain/{record_id}"):
        assert p in paths


def test_search_returns_graphiti_fact_results(client, graph):
    r = client.post("/search", json={"group_ids": ["gr"], "query": "What does Orion use?", "max_facts": 5})
    assert r.status_code == 200
    facts = r.json()["facts"]
    assert facts and len(facts) <= 5
    assert set(facts[0]) == {"uuid", "name", "fact", "valid_at", "invalid_at", "created_at", "expired_at",
                             "source_node_uuid", "target_node_uuid", "episodes"}
    assert any("FastAPI" in f["fact"] for f in facts)
    everywhere = client.post("/search", json={"query": "What does Orion use?", "max_facts": 50})
    assert everywhere.status_code == 200  # no group_ids: every group the caller may read
    assert {f["uuid"] for f in facts} & {f["uuid"] for f in everywhere.json()["facts"]}


def test_get_memory_honours_the_center_node(client, graph):
    redis = graph["entities"]["Redis"]["uuid"]
    body = {"group_id": "gr", "max_facts": 10, "messages": [msg("Tell me about FastAPI, PostgreSQL and Redis.")]}
    plain = client.post("/get-memory", json=body).json()["facts"]
    centered = client.post("/get-memory", json={**body, "center_node_uuid": redis}).json()["facts"]
    assert plain and centered
    assert redis in (centered[0]["source_node_uuid"], centered[0]["target_node_uuid"])
    touching = [redis in (f["source_node_uuid"], f["target_node_uuid"]) for f in centered]
    assert touching == sorted(touching, reverse=True)  # facts touching the center come first


def test_entity_node_create_and_update(client):
    uid = "11111111-2222-4333-8444-555555555555"
    r = client.post("/entity-node", json={"uuid": uid, "group_id": "nodes", "name": "Orion", "summary": "a project"})
    assert r.status_code == 201 and r.json()["uuid"] == uid and r.json()["summary"] == "a project"
    r = client.post("/entity-node", json={"uuid": uid, "group_id": "nodes", "name": "Orion II", "summary": "renamed"})
    assert r.status_code == 201
    got = client.get(f"/groups/nodes/entities/{uid}").json()
    assert got["name"] == "Orion II" and got["summary"] == "renamed"
    assert len(client.get("/groups/nodes/entities").json()) == 1


def test_entity_edge_get_and_delete(client, graph):
    fact = graph["facts"][0]
    got = client.get(f"/entity-edge/{fact['uuid']}")
    assert got.status_code == 200 and got.json()["fact"] == fact["fact"]
    assert client.delete(f"/entity-edge/{fact['uuid']}").json() == {"message": "Entity Edge deleted", "success": True}
    assert client.get(f"/entity-edge/{fact['uuid']}").status_code == 404
    assert client.delete(f"/entity-edge/{fact['uuid']}").status_code == 404
    assert fact["uuid"] not in {f["uuid"] for f in client.get("/groups/gr/facts").json()}


def test_own_routes_entities_facts_query_graph_explain(client, graph):
    sarah = graph["entities"]["Nora"]
    assert client.get(f"/groups/gr/entities/{sarah['uuid']}").json()["name"] == "Nora"
    assert client.get("/groups/gr/entities/nope").status_code == 404
    people = client.get("/groups/gr/entities", params={"entity_type": "person"}).json()
    assert "Nora" in {e["name"] for e in people}
    fact = client.get("/groups/gr/facts").json()[0]
    assert client.get(f"/groups/gr/facts/{fact['uuid']}").json()["fact"] == fact["fact"]
    ans = client.post("/groups/gr/query-graph", json={"query": "What tools do I use?"}).json()
    assert ans["found"] and ans["relationships"]
    assert all(r["provenance"] for r in ans["relationships"])
    why = client.get(f"/groups/gr/explain/{sarah['uuid']}").json()
    assert why["kind"] == "entity" and why["sources"]
    assert any("Nora" in s["content"] for s in why["sources"])
    assert client.get("/groups/gr/explain/nope").status_code == 404


def test_delete_episode_and_group(server, client):
    assert post(client, "del", msg("I use Jenkins for builds."), msg("I use Vault for secrets.")).status_code == 202
    wait_idle(server.db, "del")
    first, second = episodes(client, "del")
    assert client.delete(f"/episode/{first['uuid']}").json() == {"message": "Episode deleted", "success": True}
    assert [e["uuid"] for e in episodes(client, "del")] == [second["uuid"]]
    assert client.delete(f"/episode/{first['uuid']}").status_code == 404
    # a keyless server never wipes a group (tests/test_rest_hardening.py deletes groups with keys)
    assert client.delete("/group/del").status_code == 403
    assert [e["uuid"] for e in episodes(client, "del")] == [second["uuid"]]


def test_docs_work_offline(client):
    """/docs loads Swagger UI from the service itself (issue 18): no CDN, so it works with no internet."""
    import re

    page = client.get("/docs")
    assert page.status_code == 200 and "swagger" in page.text.lower()
    urls = re.findall(r"""(?:src|href)=["']([^"']+)["']""", page.text) + re.findall(r"url: *'([^']+)'", page.text)
    assert urls and all(u.startswith("/") for u in urls), urls  # nothing from another host
    for u in urls:
        assert client.get(u).status_code == 200, u
    assert client.get("/redoc").status_code == 404  # not offered: ReDoc would need a CDN


def test_the_same_message_posted_twice_is_ingested_once(server, client):
    """Issue 18: a client that retries a request (or re-sends a history) does not duplicate memory."""
    same = msg("I keep the infra in Pulumi.", timestamp="2025-03-03T09:00:00Z", role="Ines")
    assert post(client, "dup", same).status_code == 202
    assert post(client, "dup", same, msg("I moved the infra to Pulumi.", timestamp="2025-03-03T09:00:00Z",
                                         role="Ines")).status_code == 202
    wait_idle(server.db, "dup")
    contents = [e["content"] for e in episodes(client, "dup")]
    assert sorted(contents) == ["Ines(user): I keep the infra in Pulumi.", "Ines(user): I moved the infra to Pulumi."]
    assert client.get("/groups/dup/queue").json()["failed"] == 0


def test_search_history_and_as_of_and_what_ended_a_fact(server, client):
    """Issue 18: REST /search takes as_of and include_ended; explain names the message that ended a fact."""
    assert post(client, "hist", msg("Project Lyra uses Redis for caching.", timestamp="2025-01-05T09:00:00Z",
                                    name="first"),
                msg("We switched Lyra from Redis to Memcached.", timestamp="2025-03-01T09:00:00Z",
                    name="switch")).status_code == 202
    wait_idle(server.db, "hist")
    q = {"query": "What does Lyra use for caching?", "group_ids": ["hist"]}
    now = {f["fact"] for f in client.post("/search", json=q).json()["facts"]}
    hist = client.post("/search", json={**q, "include_ended": True}).json()["facts"]
    then = {f["fact"] for f in client.post("/search", json={**q, "as_of": "2025-02-01T00:00:00Z"}).json()["facts"]}
    ended = [f for f in hist if f["invalid_at"]]
    assert ended and ended[0]["fact"] not in now and ended[0]["fact"] in then
    assert ended[0]["invalid_at"].startswith("2025-03-01")
    why = client.get(f"/groups/hist/explain/{ended[0]['uuid']}").json()
    assert why["ended_by"]["message_name"] == "switch" and [s["message_name"] for s in why["sources"]] == ["first"]
