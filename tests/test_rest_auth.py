"""API keys scoped to groups, on a real server: missing or wrong key → 401; another group → 403 (or 404 for
routes that name a record only by id) and nothing read or written; admin routes need an admin key; with no
keys the server binds to loopback only. Extraction is the fast scripted stand-in (the data is not the point)."""

from __future__ import annotations

import json

import httpx
import pytest

from rest_support import Server, job_counts, rows, wait_idle

KEY_A = "key-for-alpha-0123456789"
KEY_B = "key-for-beta-0123456789"
ADMIN = "admin-key-0123456789abcdef"
KEYS = [{"name": "alpha-app", "key": KEY_A, "groups": ["alpha"]},
        {"name": "beta-app", "key": KEY_B, "groups": ["beta"]},
        {"name": "ops", "key": ADMIN, "admin": True}]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    work = tmp_path_factory.mktemp("rest-auth")
    srv = Server(work, work / "memory.db", env={"LOREGRAPH_API_KEYS": json.dumps(KEYS)}).start()
    yield srv
    srv.stop()


def client_for(server, key=None, header="bearer"):
    headers = {}
    if key is not None:
        headers = {"Authorization": f"Bearer {key}"} if header == "bearer" else {"X-API-Key": key}
    return httpx.Client(base_url=server.url, timeout=30, headers=headers)


@pytest.fixture(scope="module")
def a(server):
    with client_for(server, KEY_A) as c:
        yield c


@pytest.fixture(scope="module")
def b(server):
    with client_for(server, KEY_B, header="x-api-key") as c:
        yield c


@pytest.fixture(scope="module")
def beta(server, b):
    """Group beta's data, written with beta's key."""
    r = b.post("/messages", json={"group_id": "beta", "messages": [
        {"content": "I use Postgres for billing.", "role_type": "user"},
        {"content": "I use Grafana for dashboards.", "role_type": "user"}]})
    assert r.status_code == 202
    assert wait_idle(server.db, "beta")["done"] == 2
    ents = b.get("/groups/beta/entities").json()
    facts = b.get("/groups/beta/facts").json()
    eps = b.get("/episodes/beta").json()
    assert ents and facts and len(eps) == 2
    return {"entity": ents[0]["uuid"], "fact": facts[0]["uuid"], "episode": eps[0]["uuid"]}


def snapshot(server):
    return {t: rows(server.db, f"SELECT COUNT(*) FROM {t} WHERE group_id = 'beta'")[0][0]
            for t in ("episodes", "entities", "facts", "jobs")} | {
        "names": rows(server.db, "SELECT name, summary FROM entities WHERE group_id = 'beta' ORDER BY seq")}


def every_route(beta):
    """One request per route, aimed at group beta (method, path, json body)."""
    m = [{"content": "I use Redis", "role_type": "user"}]
    return [
        ("POST", "/messages", {"group_id": "beta", "messages": m}),
        ("POST", "/search", {"group_ids": ["beta"], "query": "what do I use?"}),
        ("POST", "/search", {"group_ids": ["alpha", "beta"], "query": "what do I use?"}),
        ("POST", "/get-memory", {"group_id": "beta", "messages": m}),
        ("GET", "/episodes/beta", None),
        ("POST", "/entity-node", {"uuid": "new-node", "group_id": "beta", "name": "Intruder"}),
        ("POST", "/entity-node", {"uuid": beta["entity"], "group_id": "alpha", "name": "Hijacked"}),
        ("GET", f"/entity-edge/{beta['fact']}", None),
        ("DELETE", f"/entity-edge/{beta['fact']}", None),
        ("DELETE", f"/episode/{beta['episode']}", None),
        ("DELETE", "/group/beta", None),
        ("POST", "/clear", None),
        ("GET", "/groups/beta/entities", None),
        ("GET", f"/groups/beta/entities/{beta['entity']}", None),
        ("GET", "/groups/beta/facts", None),
        ("GET", f"/groups/beta/facts/{beta['fact']}", None),
        ("POST", "/groups/beta/query-graph", {"query": "what do I use?"}),
        ("GET", f"/groups/beta/explain/{beta['entity']}", None),
        ("GET", "/groups/beta/queue", None),
        ("POST", "/groups/beta/queue/retry", None),
        ("POST", "/groups/beta/collections", {"name": "stolen", "description": "d"}),
        ("GET", "/groups/beta/collections", None),
        ("DELETE", "/groups/beta/collections/eng", None),
        ("POST", "/groups/beta/collections/eng/documents", {"content": "I use Redis", "title": "t"}),
        ("GET", "/groups/beta/collections/eng/documents", None),
        ("POST", "/groups/beta/collections/eng/urls", {"url": "http://127.0.0.1:1/"}),
        ("POST", "/groups/beta/collections/eng/search", {"query": "what do I use?"}),
        ("POST", "/groups/beta/collections/eng/relationships", {"query": "what do I use?"}),
        ("POST", "/groups/beta/collections/eng/timeline", {"query": "what do I use?"}),
        ("DELETE", "/groups/beta/documents/some-document", None),
        ("GET", "/groups/beta/communities", None),
        ("POST", "/groups/beta/communities/build", None),
        ("GET", "/groups/beta/explore/graph", None),
        ("GET", f"/groups/beta/explore/neighbourhood?entity_id={beta['entity']}", None),
        ("GET", "/groups/beta/explore/search?q=Postgres", None),
        ("GET", f"/groups/beta/explore/facts?entity_id={beta['entity']}", None),
        ("GET", f"/groups/beta/explore/entities/{beta['entity']}/timeline", None),
        # beta's records through alpha's own routes: not found there
        ("GET", f"/groups/alpha/entities/{beta['entity']}", None),
        ("GET", f"/groups/alpha/facts/{beta['fact']}", None),
        ("GET", f"/groups/alpha/explain/{beta['fact']}", None),
    ]


OPEN = {"/healthcheck", "/health"}


def test_the_route_table_covers_every_route(server, beta):
    with client_for(server) as anon:
        spec = anon.get("/openapi.json").json()
    covered = {(method, _template(path)) for method, path, _ in every_route(beta)}
    for path, ops in spec["paths"].items():
        for method in ops:
            if path not in OPEN:
                assert (method.upper(), path) in covered, f"{method.upper()} {path} has no scope test"


def _template(path: str) -> str:
    parts = path.split("?")[0].strip("/").split("/")
    names = {"episodes": "{group_id}", "group": "{group_id}", "groups": "{group_id}", "entity-edge": "{uuid}",
             "episode": "{uuid}", "entities": "{entity_id}", "facts": "{fact_id}", "explain": "{record_id}",
             "collections": "{name}", "documents": "{document_id}"}
    out = []
    for i, p in enumerate(parts):
        prev = parts[i - 1] if i else None
        out.append(names.get(prev, p) if prev else p)
    return "/" + "/".join(out)


@pytest.mark.parametrize("key", [None, "wrong-key-0123456789xyz"])
def test_missing_or_wrong_key_is_401_on_every_route(server, beta, key):
    before = snapshot(server)
    with client_for(server, key) as c:
        for method, path, body in every_route(beta):
            r = c.request(method, path, json=body)
            assert r.status_code == 401, (method, path, r.status_code)
            assert r.headers.get("www-authenticate") == "Bearer"
        assert c.get("/healthcheck").status_code == 200 and c.get("/health").status_code == 200
    assert snapshot(server) == before


def test_a_key_for_alpha_can_neither_read_nor_write_beta(server, a, beta):
    before = snapshot(server)
    for method, path, body in every_route(beta):
        r = a.request(method, path, json=body)
        expected = {404, 422} if path.startswith(("/entity-edge", "/episode/", "/groups/alpha")) else {403}
        if (path == "/entity-node" and body["group_id"] == "alpha") or path.startswith("/groups/alpha/entities/"):
            # ids are per group: alpha creates (then reads) its own entity under that uuid; beta's is untouched
            expected = {201, 200}
            assert r.json()["name"] == "Hijacked" and r.json()["group_id"] == "alpha"
        assert r.status_code in expected, (method, path, r.status_code, r.text)
        assert "Postgres" not in r.text and "Grafana" not in r.text
    assert snapshot(server) == before


def test_a_key_works_within_its_groups_and_search_defaults_to_them(server, a):
    r = a.post("/messages", json={"group_id": "alpha", "messages": [{"content": "I use Redis", "role_type": "user"}]})
    assert r.status_code == 202
    assert wait_idle(server.db, "alpha")["done"] == 1
    facts = a.post("/search", json={"query": "what do I use? Postgres Grafana Redis", "max_facts": 50}).json()["facts"]
    assert facts and all("Redis" in f["fact"] for f in facts)  # nothing of beta
    assert a.get("/groups/alpha/queue").json()["done"] == 1
    assert [e["name"] for e in a.get("/groups/alpha/entities").json() if e["name"] == "Redis"] == ["Redis"]


def test_admin_reads_every_group_and_only_admin_may_clear(server, b, beta):
    with client_for(server, ADMIN) as admin:
        assert admin.get("/groups/beta/entities").status_code == 200
        assert admin.get(f"/entity-edge/{beta['fact']}").status_code == 200
        assert b.post("/clear").status_code == 403
        assert snapshot(server)["facts"] > 0
        assert admin.post("/clear").json() == {"message": "Graph cleared", "success": True}
    assert rows(server.db, "SELECT COUNT(*) FROM facts")[0][0] == 0
    assert job_counts(server.db)["pending"] == 0


def test_without_keys_the_server_binds_to_loopback_and_says_so(tmp_path):
    srv = Server(tmp_path, tmp_path / "open.db", args=("--host", "0.0.0.0")).start()
    try:
        assert srv.url.startswith("http://127.0.0.1:")
        assert "no API keys configured, so the service binds to 127.0.0.1 only" in srv.log()
        with httpx.Client(base_url=srv.url, timeout=30) as c:
            assert c.get("/groups/anyone/entities").status_code == 200
    finally:
        srv.stop()
    assert "loregraph stopped" in srv.log()  # a graceful shutdown
