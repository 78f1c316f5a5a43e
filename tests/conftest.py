from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
PG_FIXTURES = {"pg_url", "pg_db"}


def pytest_collection_modifyitems(config, items):
    """Mark every test that needs the PostgreSQL server (``-m "not postgres"`` runs the rest without one)."""
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        on_postgres = any(str(v).startswith("postg") for v in params.values())
        if PG_FIXTURES & set(getattr(item, "fixturenames", ())) or on_postgres:
            item.add_marker(pytest.mark.postgres)


@pytest.fixture(scope="session")
def embedder():
    """The real local embedding model, loaded once per test session."""
    from loregraph.models.embedder import get_default_embedder

    return get_default_embedder()


@pytest.fixture(scope="session")
def pg_url():
    """A PostgreSQL 15 + pgvector server for the backend contract tests: ``LOREGRAPH_TEST_PG_URL``, else the
    throw-away cluster of scripts/pg-setup.sh (run here if it is not up). Fails, never skips, without one."""
    import subprocess

    url = os.environ.get("LOREGRAPH_TEST_PG_URL") or "postgresql://postgres@127.0.0.1:54329/postgres"
    if not os.environ.get("LOREGRAPH_TEST_PG_URL") and not _pg_answers(url):
        script = Path(__file__).resolve().parents[1] / "scripts" / "pg-setup.sh"
        proc = subprocess.run([str(script)], capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            pytest.fail(f"scripts/pg-setup.sh failed ({proc.returncode}): {proc.stderr[-2000:]}")
        url = proc.stdout.strip().splitlines()[-1]
    if not _pg_answers(url):
        pytest.fail(f"no PostgreSQL server answers at {url} (run scripts/pg-setup.sh or set LOREGRAPH_TEST_PG_URL)")
    return url


@pytest.fixture
def pg_db(pg_url):
    """A fresh, empty database on the test server (dropped afterwards); yields its URL."""
    import uuid

    import psycopg

    name = "lg_test_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
    yield pg_url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _pg_answers(url: str) -> bool:
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=3) as c:
            c.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


@pytest.fixture
def open_memory(tmp_path, embedder):
    """Factory: a Memory on a real SQLite file in tmp_path (closed at teardown)."""
    from loregraph.memory import Memory

    opened = []

    async def factory(name: str = "memory.db", **kwargs):
        kwargs.setdefault("embedder", embedder)
        m = await Memory.open(f"sqlite:///{tmp_path / name}", **kwargs)
        opened.append(m)
        return m

    yield factory
    import asyncio

    for m in opened:
        if not m._closed:
            asyncio.run(m.close()) if not _loop_running() else None


def _loop_running() -> bool:
    import asyncio

    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        return False
