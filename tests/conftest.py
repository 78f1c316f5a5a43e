from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
PG_FIXTURES = {"pg_url", "pg_db", "citus_url", "citus_db"}


@pytest.fixture(scope="session")
def ex():
    """One offline extractor for the whole run, warmed up: spaCy, the name lists and the phrase library load once.
    The spaCy model is a hard dependency: a missing one must fail, not skip."""
    from datetime import UTC, datetime

    from loregraph.extract.base import ExtractionContext
    from loregraph.extract.local import LocalExtractor

    extractor = LocalExtractor()
    extractor.extract("warm up", ExtractionContext(group_id="warm", reference_time=datetime(2024, 1, 1, tzinfo=UTC),
                                                   role_type="user"))
    return extractor


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


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request, tmp_path):
    """A fresh database on each backend, as a URL: a SQLite file in ``tmp_path``, then a PostgreSQL ``pg_db``."""
    if request.param == "postgres":
        return request.getfixturevalue("pg_db")
    return f"sqlite:///{tmp_path / 'memory.db'}"


CITUS_SETUP = SHARED / "scripts" / "citus-setup.sh"
CITUS_DEFAULT_URL = "postgresql://postgres@127.0.0.1:54340/postgres"


@pytest.fixture(scope="session")
def citus_url():
    """A Citus coordinator with its workers: ``LOREGRAPH_TEST_CITUS_URL``, else the cluster of
    ../shared/scripts/citus-setup.sh (run here if it is not up). Skips only where ../shared is absent."""
    import subprocess

    url = os.environ.get("LOREGRAPH_TEST_CITUS_URL")
    if not url:
        if not CITUS_SETUP.exists():
            pytest.skip("no Citus cluster: ../shared/scripts/citus-setup.sh is absent and LOREGRAPH_TEST_CITUS_URL "
                        "is not set")
        url = CITUS_DEFAULT_URL
        if not _pg_answers(url):
            proc = subprocess.run(["bash", str(CITUS_SETUP)], capture_output=True, text=True, timeout=1200,
                                  env={**os.environ, "PGPORT": "54398"})
            if proc.returncode != 0:
                pytest.fail(f"citus-setup.sh failed ({proc.returncode}): {proc.stderr[-2000:]}")
            url = proc.stdout.strip().splitlines()[-1]
    if not _pg_answers(url):
        pytest.fail(f"no Citus coordinator answers at {url}")
    return url


def citus_nodes(admin_url: str) -> list[tuple[str, int]]:
    """(host, port) of the cluster's workers, as registered with the coordinator's admin database."""
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as c:
        return [(h, p) for h, p in c.execute(
            "SELECT nodename, nodeport FROM pg_dist_node WHERE groupid > 0 AND noderole = 'primary' "
            "ORDER BY nodeport").fetchall()]


def create_citus_database(admin_url: str, name: str) -> str:
    """A new database on the coordinator and every worker (Citus keeps one cluster per database: the extensions
    are created in each and the workers registered with the new database's coordinator). Returns its URL."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    coord = conninfo_to_dict(admin_url)
    host, port = coord.get("host", "127.0.0.1"), int(coord.get("port", 5432))
    workers = citus_nodes(admin_url)
    for h, p in [(host, port), *workers]:
        with psycopg.connect(host=h, port=p, user=coord.get("user", "postgres"), dbname="postgres",
                             autocommit=True) as c:
            c.execute(f"CREATE DATABASE {name}")
        with psycopg.connect(host=h, port=p, user=coord.get("user", "postgres"), dbname=name, autocommit=True) as c:
            c.execute("CREATE EXTENSION IF NOT EXISTS citus; CREATE EXTENSION IF NOT EXISTS vector")
    url = admin_url.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(admin_url, autocommit=True) as c:
        # 4 shards per table instead of 32: a test database is laid out in seconds (still two shards a worker)
        c.execute(f"ALTER DATABASE {name} SET citus.shard_count = 4")
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("SELECT citus_set_coordinator_host(%s, %s)", (host, port))
        for h, p in workers:
            c.execute("SELECT citus_add_node(%s, %s)", (h, p))
    return url


def drop_citus_database(admin_url: str, name: str) -> None:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    coord = conninfo_to_dict(admin_url)
    nodes = [(coord.get("host", "127.0.0.1"), int(coord.get("port", 5432))), *citus_nodes(admin_url)]
    for h, p in nodes:
        try:
            with psycopg.connect(host=h, port=p, user=coord.get("user", "postgres"), dbname="postgres",
                                 autocommit=True, connect_timeout=5) as c:
                c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        except psycopg.Error:
            pass  # a node that is down keeps a stray empty database


@pytest.fixture
def citus_db(citus_url):
    """A fresh database on the Citus cluster (dropped afterwards); yields its URL."""
    import uuid

    name = "lg_citus_" + uuid.uuid4().hex[:12]
    url = create_citus_database(citus_url, name)
    yield url
    drop_citus_database(citus_url, name)


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


@pytest.fixture
def small_disk(tmp_path):
    """A 12 MB tmpfs, to fill the disk under a database (mounting needs root, as CI has)."""
    import subprocess

    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root (CI runs as root)")
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)
