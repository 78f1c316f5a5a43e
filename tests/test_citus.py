"""Citus (issue 17): the layout derived from the schema, every query of a group single-shard (proved with
``citus.multi_task_query_log_level = 'error'``, which makes any multi-shard query fail), memory moved in and out,
and a worker node stopped and restarted mid-run. Runs on the cluster of ../shared/scripts/citus-setup.sh (or
``LOREGRAPH_TEST_CITUS_URL``); skips only where neither exists."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from conftest import citus_nodes
from loregraph.graph.documents import Chunk, Collection, Document
from loregraph.graph.types import GraphDelta
from loregraph.store import TimeFilter, open_store
from loregraph.store.base import Store
from loregraph.store.postgres import PostgresStore
from loregraph.transfer import export_lines, import_lines
from test_isolation import NOT_GROUP_READS, PROBED, World, _calls
from test_store import DIM, SCHEMA, small_graph, vec
from test_transfer import build_world, records

SINGLE_SHARD_ONLY = "options=-c%20citus.multi_task_query_log_level%3Derror"


def strict(url: str) -> str:
    """The URL with every multi-shard query turned into an error."""
    return url + ("&" if "?" in url else "?") + SINGLE_SHARD_ONLY


def test_layout_is_derived_from_the_schema(citus_db):
    s = open_store(citus_db)
    assert isinstance(s, PostgresStore) and s.citus
    with psycopg.connect(citus_db, autocommit=True) as c:
        # a table a later migration might add: with group_id it is distributed, without it a reference table
        c.execute("CREATE TABLE future_notes (group_id TEXT NOT NULL, id TEXT NOT NULL, body TEXT, "
                  "PRIMARY KEY (group_id, id))")
        c.execute("CREATE TABLE future_settings (key TEXT PRIMARY KEY, value TEXT)")
    s.close()
    s = open_store(citus_db)
    with psycopg.connect(citus_db, autocommit=True) as c:
        layout = dict(c.execute("SELECT c.relname, p.partmethod::text || ':' || p.colocationid "
                                "FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid").fetchall())
        grouped = {r[0] for r in c.execute("SELECT table_name FROM information_schema.columns WHERE "
                                           "table_schema = 'public' AND column_name = 'group_id'")}
        dist_cols = {r[0]: r[1] for r in c.execute(
            "SELECT logicalrelid::regclass::text, column_to_column_name(logicalrelid, partkey) "
            "FROM pg_dist_partition WHERE partmethod = 'h'")}
    distributed = {t for t, v in layout.items() if v.startswith("h")}
    assert distributed == grouped - {"jobs"}
    assert "future_notes" in distributed and layout["future_settings"].startswith("n")
    assert {"meta", "schema_migrations"} <= {t for t, v in layout.items() if v.startswith("n")}
    assert len({layout[t] for t in distributed}) == 1  # one co-location group: a group's rows on one worker
    assert set(dist_cols.values()) == {"group_id"}
    assert "jobs" not in layout  # the queue stays on the coordinator
    s.close()


def test_every_query_of_a_group_is_single_shard(citus_db):
    first = open_store(citus_db)
    first.ensure_embedder("test-model", DIM)
    w = World(first)
    s = open_store(strict(citus_db))
    with s._read() as c, pytest.raises(psycopg.Error, match="multi-task"):  # in force: multi-shard fails
        c.execute("SELECT COUNT(*) FROM facts").fetchall()
    probed = 0
    for name in sorted(n for n in dir(Store) if not n.startswith("_") and callable(getattr(Store, n))):
        if name in NOT_GROUP_READS:
            continue
        for kwargs in _calls(w, name):
            if name == "groups_of" and kwargs.get("within") is None:
                continue  # an admin's lookup over every group: multi-shard by design
            getattr(s, name)(**kwargs)  # raises if any query it issues touches more than one shard
            probed += 1
    assert probed > 40
    # writes of one group: a delta, documents, deletes, one transaction around several
    s.apply(small_graph(PROBED, "gneiss", seed=70), SCHEMA)
    col = Collection(group_id=PROBED, name="more", description="d")
    s.create_collection(col)
    doc = Document(group_id=PROBED, collection_id=col.id, title="T")
    s.put_document(doc, [Chunk(group_id=PROBED, collection_id=col.id, document_id=doc.id, ordinal=0,
                               content="gneiss chunk", embedding=vec(77))])
    with s.transaction(PROBED):
        s.apply(small_graph(PROBED, "schist", seed=80), SCHEMA)
        s.delete_document(PROBED, doc.id)
    s.delete_fact(PROBED, w.deltas[PROBED].facts[0].id)
    s.delete_episode(PROBED, w.deltas[PROBED].episodes[0].id)
    s.delete_collection(PROBED, col.id)
    assert s.vector("fact", [PROBED], np.asarray(vec(73)), 3)
    assert s.fulltext("fact", [PROBED], "schist tool", 3)
    s.delete_group(PROBED)
    assert s.count(PROBED)["facts"] == 0 and w.store.count("ga")["facts"] > 0
    s.close()
    w.store.close()


def test_memory_moves_in_and_out_of_citus(citus_db, tmp_path):
    src = open_store(f"sqlite:///{tmp_path / 'a.db'}")
    src.ensure_embedder("test-model", DIM)
    build_world(src)
    first = list(export_lines(src))
    cluster = open_store(citus_db)  # (its closing checkpoint() looks at every group: multi-shard by design)
    import_lines(cluster, first, schema=SCHEMA, batch_size=9)
    import_lines(cluster, first, schema=SCHEMA, batch_size=9)  # again: nothing doubles
    exported = [*export_lines(open_store(citus_db))]
    assert records(exported) == records(first)
    back = open_store(f"sqlite:///{tmp_path / 'b.db'}")
    import_lines(back, exported, schema=SCHEMA)
    assert records(export_lines(back)) == records(first)
    fact_ids = [f.id for f in src.list_facts("ga", TimeFilter(), 10)]
    assert sorted(f.id for f in cluster.list_facts("ga", TimeFilter(), 10)) == sorted(fact_ids)
    for s in (src, cluster, back):
        s.close()


# ---- a worker stopped and restarted mid-run ------------------------------------------------------------------
_DATA_DIRS: dict[int, Path] = {}


def _pg_ctl(port: int, action: str) -> None:
    """Stop or start the worker on ``port``: its data directory asked from the server itself while it runs (the
    cluster lives where citus-setup.sh was told, CITUS_DIR), its socket and log next to it."""
    if port not in _DATA_DIRS:
        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres", autocommit=True) as c:
            _DATA_DIRS[port] = Path(c.execute("SHOW data_directory").fetchone()[0])
    data = _DATA_DIRS[port]
    if not data.exists():
        pytest.skip(f"the worker on port {port} runs elsewhere ({data} is not on this machine)")
    opts = (f"-c listen_addresses=127.0.0.1 -p {port} -k {data.parent} -c shared_preload_libraries=citus "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
    cmd = ["/usr/lib/postgresql/15/bin/pg_ctl", "-D", str(data), "-w", "-m", "fast", action]
    if action == "start":
        cmd += ["-l", f"{data.parent}/n{port}.log", "-o", opts]
    subprocess.run(["runuser", "-u", "postgres", "--", *cmd], check=True, capture_output=True, timeout=120)


def _worker_of(url: str, group: str) -> int:
    with psycopg.connect(url, autocommit=True) as c:
        return c.execute("SELECT p.nodeport FROM pg_dist_placement pl JOIN pg_dist_node p ON p.groupid = pl.groupid "
                         "WHERE pl.shardid = get_shard_id_for_distribution_column('facts', %s::text)",
                         (group,)).fetchone()[0]


def test_a_worker_down_and_back_other_groups_keep_working_nothing_accepted_is_lost(citus_db, citus_url):
    workers = [p for _, p in citus_nodes(citus_url)]
    if len(workers) < 2:
        pytest.skip("needs two workers")
    s = open_store(citus_db)
    s.ensure_embedder("test-model", DIM)
    on: dict[int, list[str]] = {p: [] for p in workers}
    k = 0
    while min(len(v) for v in on.values()) < 2:
        g = f"tenant{k}"
        on[_worker_of(citus_db, g)].append(g)
        k += 1
    up, down = workers[0], workers[1]
    accepted: dict[str, list[str]] = {}  # group -> fact ids whose write returned

    def write(group: str, i: int) -> bool:
        delta: GraphDelta = small_graph(group, f"w{i}", seed=i)
        try:
            s.apply(delta, SCHEMA)
        except Exception:
            return False
        accepted.setdefault(group, []).append(delta.facts[0].id)
        return True

    i = 0
    for g in on[up] + on[down]:
        i += 1
        assert write(g, i)
    _pg_ctl(down, "stop")
    try:
        for _ in range(3):
            for g in on[up]:
                i += 1
                assert write(g, i)  # the other worker's groups keep working
                assert s.count(g)["facts"] == len(accepted[g])
                assert s.fulltext("fact", [g], "tool", 50)
        failed = [write(g, i + n) for n, g in enumerate(on[down], 1)]
        i += len(failed)
        assert not any(failed)  # refused with an error, not accepted
    finally:
        _pg_ctl(down, "start")
    for g in on[down]:  # back: writes work again
        i += 1
        assert write(g, i)
    for g, ids in accepted.items():
        got = {f.id for f in s.list_facts(g, TimeFilter(), 1000)}
        assert got == set(ids), g
    s.close()


def test_memory_open_and_search_on_the_coordinator(citus_db, embedder):
    import asyncio

    from loregraph.memory import Memory
    from scripted import ScriptedExtractor

    async def go() -> Any:
        async with await Memory.open(citus_db, embedder=embedder, extractor=ScriptedExtractor()) as m:
            await m.add_episode(group_id="ana", content="Ana uses Postgres for the billing service.",
                                role_type="user", role="Ana")
            return await m.search("what does Ana use?", group_ids=["ana"])

    res = asyncio.run(go())
    assert not res.is_empty() and "Postgres" in res.episodes[0].episode.content
