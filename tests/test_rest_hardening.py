"""Hardening of the REST service (issue 19), each case against a real server on loopback and on both backends:
browser attacks on a keyless server (foreign Host, foreign Origin, wipe routes), NUL characters refused at the
boundary, list caps, strict numbers, a stalled body, the store's 503 with Retry-After."""

from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

import httpx
import pytest

from rest_support import Server, wait_until

KEY_ADMIN = "admin-key-0123456789"
KEY_ALPHA = "alpha-key-0123456789"


@pytest.fixture
def keyless(tmp_path, db_url):
    srv = Server(tmp_path / "srv", db_url, env={"LOREGRAPH_REQUEST_READ_TIMEOUT_S": "1"}).start()
    yield srv
    srv.stop()


def _client(url: str, **kw) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=30, **kw)


def test_a_keyless_server_serves_loopback_host_names_only(keyless):
    port = urlsplit(keyless.url).port
    with _client(keyless.url) as c:
        assert c.get("/healthcheck").status_code == 200
        assert c.get("/healthcheck", headers={"Host": f"localhost:{port}"}).status_code == 200
        # DNS rebinding: the attacker's name resolves to 127.0.0.1, the browser sends it as Host
        rebound = c.get("/groups/g/facts", headers={"Host": f"evil.example:{port}"})
        assert rebound.status_code == 400


def test_state_changing_requests_from_a_foreign_origin_are_refused(keyless):
    body = {"group_id": "g", "messages": [{"content": "I use Rust", "role_type": "user"}]}
    with _client(keyless.url) as c:
        foreign = c.post("/messages", json=body, headers={"Origin": "https://evil.example"})
        assert foreign.status_code == 403 and "cross-origin" in foreign.json()["detail"]
        assert c.post("/messages", json=body, headers={"Origin": "null"}).status_code == 403
        assert c.post("/messages", json=body, headers={"Origin": keyless.url}).status_code == 202  # its own page
        assert c.post("/messages", json=body).status_code == 202  # not a browser: no Origin
        # reads are not state-changing: a foreign origin may not read the answer anyway (no CORS headers)
        assert c.get("/groups/g/facts", headers={"Origin": "https://evil.example"}).status_code == 200


def test_a_keyless_server_refuses_to_wipe(keyless):
    with _client(keyless.url) as c:
        for method, path in (("POST", "/clear"), ("DELETE", "/group/g")):
            r = c.request(method, path)
            assert r.status_code == 403 and "admin API key" in r.json()["detail"]


def test_wipe_routes_work_with_keys(tmp_path, db_url):
    keys = json.dumps([{"name": "ops", "key": KEY_ADMIN, "admin": True},
                       {"name": "alpha", "key": KEY_ALPHA, "groups": ["alpha"]}])
    srv = Server(tmp_path / "srv", db_url, env={"LOREGRAPH_API_KEYS": keys}).start()
    try:
        with _client(srv.url, headers={"X-API-Key": KEY_ALPHA}) as alpha:
            assert alpha.post("/messages", json={"group_id": "alpha", "messages": [
                {"content": "I use Rust", "role_type": "user"}]}).status_code == 202
            wait_until(lambda: (lambda q: q["pending"] == q["running"] == 0)(alpha.get("/groups/alpha/queue").json()),
                       60, what="alpha's queue to drain")
            assert alpha.delete("/group/alpha").json()["success"] is True
            assert alpha.post("/clear").status_code == 403
        with _client(srv.url, headers={"X-API-Key": KEY_ADMIN}) as admin:
            assert admin.post("/clear").json()["success"] is True
    finally:
        srv.stop()


@pytest.mark.parametrize("where, body, why", [
    ("content", {"group_id": "g", "messages": [{"content": "a\u0000b", "role_type": "user"}]}, "NUL"),
    ("role", {"group_id": "g", "messages": [{"content": "hi", "role_type": "user", "role": "An\u0000a"}]}, "NUL"),
    ("name", {"group_id": "g", "messages": [{"content": "hi", "role_type": "user", "name": "m\u00001"}]}, "NUL"),
    ("content", {"group_id": "g", "messages": [{"content": "  ", "role_type": "user"}]}, "empty"),  # issue 18
])
def test_bad_text_is_refused_at_the_boundary(keyless, where, body, why):
    with _client(keyless.url) as c:
        r = c.post("/messages", json=body)
        assert r.status_code == 422
        (err,) = r.json()["detail"]
        assert err["loc"][-1] == where and why in err["msg"]
        s = c.post("/search", json={"query": "a\u0000b"})
        assert s.status_code == 422 and s.json()["detail"][0]["loc"][-1] == "query"
        assert c.get("/groups/g/queue").json()["pending"] == 0  # nothing was queued


def test_lists_and_numbers_are_bounded_and_strict(keyless):
    with _client(keyless.url) as c:
        many = c.post("/search", json={"query": "rust", "group_ids": [f"g{i}" for i in range(300)]})
        assert many.status_code == 422 and many.json()["detail"][0]["loc"][-1] == "group_ids"
        boolean = c.post("/search", json={"query": "rust", "max_facts": True})
        assert boolean.status_code == 422 and boolean.json()["detail"][0]["loc"][-1] == "max_facts"
        long = c.post("/groups/g/query-graph", json={"query": "x" * 5000})
        assert long.status_code == 422 and "at most 4096 characters" in long.json()["detail"][0]["msg"]


def test_a_stalled_body_is_cut_off(keyless):
    parts = urlsplit(keyless.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as s:
        s.sendall(b"POST /messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n{")
        answer = s.recv(4096).decode("latin-1")  # the server's answer, not the client's 30 s patience running out
    assert answer.startswith("HTTP/1.1 408"), answer[:200]


BAD_CORPUS: list[tuple[str, str, object]] = [
    ("POST", "/messages", {"group_id": "d", "messages": [{"content": "nul \u0000 inside", "role_type": "user"}]}),
    ("POST", "/messages", {"group_id": "d\u0000x", "messages": []}),
    ("POST", "/messages", {"group_id": "d", "messages": [{"content": "ok", "role_type": "user",
                                                          "uuid": "id\u0000"}]}),
    ("POST", "/messages", {"group_id": "d", "messages": [{"content": "w" * 3000 + " and more", "role_type": "user",
                                                          "timestamp": "2025-01-01T00:00:00Z"}]}),
    ("POST", "/messages", {"group_id": "d", "messages": [{"content": "I use Rust.", "role_type": "user",
                                                          "timestamp": "2025-01-02T00:00:00Z"}]}),
    ("POST", "/messages", {"group_id": "d", "messages": [{"content": "\U0001F600 fine emoji", "role_type": "user",
                                                          "timestamp": "2025-01-03T00:00:00Z"}]}),
    ("POST", "/search", {"query": "rust \u0000", "group_ids": ["d"]}),
    ("POST", "/search", {"query": "x" * 3000, "group_ids": ["d"]}),
    ("POST", "/search", {"query": "rust", "group_ids": ["d"], "max_facts": 10**30}),
    ("GET", "/groups/d/entities/abc%00def", None),
    ("GET", "/groups/d/entities?entity_type=to%00ol", None),
    ("DELETE", "/entity-edge/ab%00c", None),
    ("GET", "/groups/d/facts?as_of=2025-13-01", None),
    ("GET", "/episodes/d%00?last_n=5", None),
    ("POST", "/groups/d/query-graph", {"query": "\u0000"}),
    ("GET", "/groups/d/explain/" + "z" * 500, None),
]


@pytest.fixture(scope="module")
def both_backends(tmp_path_factory, pg_url):
    import uuid

    import psycopg

    name = "lg_diff_" + uuid.uuid4().hex[:8]
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
    work = tmp_path_factory.mktemp("diff")
    servers = [Server(work / "sqlite", work / "m.db").start(),
               Server(work / "pg", pg_url.rsplit("/", 1)[0] + "/" + name).start()]
    yield servers
    for s in servers:
        s.stop()
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_the_same_bad_inputs_get_the_same_answers_and_store_the_same_on_both_backends(both_backends):
    """Issue 19 item 3: PostgreSQL behaves like SQLite on bad text — same status codes, no 500, same stored data."""
    answers, stored = [], []
    for srv in both_backends:
        with _client(srv.url) as c:
            codes = []
            for method, path, body in BAD_CORPUS:
                r = c.request(method, path, json=body) if body is not None else c.request(method, path)
                codes.append(r.status_code)
            wait_until(lambda c=c: (lambda q: q["pending"] == q["running"] == 0)(c.get("/groups/d/queue").json()),
                       120, what="the accepted messages to be processed")
            queue = c.get("/groups/d/queue").json()
            episodes = sorted(e["content"] for e in c.get("/episodes/d", params={"last_n": 50}).json())
            found = [f["fact"] for f in c.post("/search", json={"query": "Rust", "group_ids": ["d"]}).json()["facts"]]
        answers.append(codes)
        stored.append((queue["failed"], episodes, found))
    assert 500 not in answers[0] + answers[1]
    assert answers[0] == answers[1], list(zip(BAD_CORPUS, *answers, strict=True))
    assert stored[0] == stored[1]
    assert stored[0][0] == 0 and len(stored[0][1]) == 3  # the long word, Rust and the emoji were stored
