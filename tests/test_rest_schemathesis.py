"""Schemathesis against the live service's published OpenAPI schema: whatever it sends, no 5xx.

Bounded: a fixed number of generated requests per operation, against a real server on loopback (scripted
extractor stand-in, an admin key so that every route is reached past authentication)."""

from __future__ import annotations

import json

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error

from rest_support import Server, wait_idle, wait_until

ADMIN = "schemathesis-admin-key-0123"
EXAMPLES = 12


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def live(request, tmp_path_factory):
    """A fuzzed server per backend: the same requests must give no 5xx on either (issue 19)."""
    work = tmp_path_factory.mktemp("rest-fuzz")
    db: str | object = work / "fuzz.db"
    if request.param == "postgres":
        import uuid

        import psycopg

        admin = request.getfixturevalue("pg_url")
        name = "lg_fuzz_" + uuid.uuid4().hex[:10]
        with psycopg.connect(admin, autocommit=True) as c:
            c.execute(f"CREATE DATABASE {name}")
        db = admin.rsplit("/", 1)[0] + "/" + name
    srv = Server(work, db, env={
        "LOREGRAPH_API_KEYS": json.dumps([{"key": ADMIN, "admin": True}]),
        "LOREGRAPH_MAX_REQUEST_BYTES": "65536"}).start()
    yield srv
    srv.stop()
    assert "Traceback" not in srv.log()


@pytest.mark.parametrize("mode", [schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE])
def test_no_server_errors(live, mode):
    """Every operation, valid and invalid inputs, EXAMPLES requests each (schemathesis' pytest plugin is not
    usable with pytest 9, so its strategies are driven through Hypothesis directly)."""
    api = schemathesis.openapi.from_url(f"{live.url}/openapi.json")
    # ingest_url fetches from the network (DNS included): covered on a local site by test_documents_web.py
    operations = [op for op in (r.ok() for r in api.get_all_operations()) if not op.path.endswith("/urls")]
    assert len(operations) >= 20
    auth = {"Authorization": f"Bearer {ADMIN}"}
    tried = 0
    for op in operations:

        @given(case=op.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck),
                  phases=[Phase.explicit, Phase.generate])
        def call(case):
            case.call_and_validate(headers=auth, checks=[not_a_server_error], timeout=30)

        try:
            call()
        except Unsatisfiable:  # nothing of this operation can be made invalid (e.g. no parameters at all)
            assert mode == schemathesis.GenerationMode.NEGATIVE
            continue
        tried += 1
    assert tried >= 15


def test_the_worker_survived_the_fuzzing(live):
    """Whatever was queued by the fuzzer is processed or recorded as failed; the worker is still alive."""
    import httpx

    if str(live.db).startswith("postgres"):
        import psycopg

        def idle() -> bool:
            with psycopg.connect(str(live.db)) as c:
                return not c.execute("SELECT 1 FROM jobs WHERE status IN ('pending', 'running') LIMIT 1").fetchone()

        wait_until(idle, 60, what="the fuzzed jobs to be processed")
    else:
        counts = wait_idle(live.db, timeout=60)
        assert counts["pending"] == 0 and counts["running"] == 0
    assert httpx.get(f"{live.url}/health", timeout=30).json()["worker"] is True
