"""``loregraph bench cluster-vectors --db <citus-url>``: group-filtered kNN on a Citus cluster, the two index layouts
the store could use, measured through the coordinator in the same run.

In a throw-away schema (``lg_clvec_<pid>``, dropped at the end) of the coordinator's database, one table shaped
like ``facts`` (``group_id, id, embedding vector(384)``, btree on ``group_id``), distributed by ``group_id`` (the
cluster's shard count), holding ``small`` groups of ``small_rows`` vectors and ``big`` groups of ``big_rows``
(vectors composed like ``bench search``, rows of the groups interleaved). Layouts:

- *per group* (what the store does): exact kNN for groups below ``HNSW_MIN_ROWS``, a partial HNSW index
  (``WHERE group_id = g``) for each group above it;
- *per shard*: one HNSW index on the table — Citus builds one per shard, so a group's query walks the graph of
  its shard, shared with the other groups placed there, filtered by the group (pgvector's iterative scan,
  relaxed order).

Both with the store's settings (``SET LOCAL hnsw.ef_search = 100``, iterative scan relaxed, in a transaction so
Citus propagates them to the worker). Printed per layout and group size: p50/p95 latency and recall@10 against
the exact top 10 of the group.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from loregraph.bench.pg_vector_index import Composer, K, copy_rows, pct, recall, vec_text

EF_SEARCH = 100  # the store's (PostgresStore HNSW_EF_SEARCH)


def _queries(conn: psycopg.Connection[Any], table: sql.Composable, group: str, qtexts: Sequence[str],
             settings: Sequence[str]) -> tuple[list[list[str]], list[float]]:
    """The store's query shape, each in a transaction with ``settings`` (SET LOCAL ...); ids and latencies."""
    stmt = sql.SQL("SELECT id FROM {} WHERE group_id = %s ORDER BY embedding <=> %s::vector LIMIT {}").format(
        table, sql.Literal(K))
    ids, lat = [], []
    for i, q in enumerate([*qtexts[:5], *qtexts]):
        t = time.perf_counter()
        with conn.transaction():
            for s in settings:
                conn.execute(s)
            rows = conn.execute(stmt, (group, q), prepare=False).fetchall()
        if i >= 5:  # the first five warm up
            lat.append((time.perf_counter() - t) * 1e3)
            ids.append([r[0] for r in rows])
    return ids, lat


def run_cluster_vectors_bench(*, db: str, small: int, small_rows: int, big: int, big_rows: int,
                              queries: int) -> None:
    schema = f"lg_clvec_{os.getpid()}"
    table = sql.Identifier(schema, "vecs")
    conn = psycopg.connect(db, autocommit=True)
    conn.execute("SET citus.propagate_set_commands = 'local'")
    comp = Composer()
    qtexts = [vec_text(v) for v in comp.vectors(queries, 999_999)]
    sizes = {f"s{i:03d}": small_rows for i in range(small)} | {f"b{i}": big_rows for i in range(big)}
    try:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        conn.execute(sql.SQL("SET search_path = {}, public").format(sql.Identifier(schema)))
        conn.execute(sql.SQL("CREATE TABLE {} (group_id text NOT NULL, id text NOT NULL, embedding vector(384), "
                             "PRIMARY KEY (group_id, id))").format(table))
        conn.execute("SELECT create_distributed_table(%s, 'group_id')", (f"{schema}.vecs",))
        shards = conn.execute("SELECT COUNT(*) FROM pg_dist_shard WHERE logicalrelid = %s::regclass",
                              (f"{schema}.vecs",)).fetchone()
        t = time.perf_counter()
        vecs, groups = [], []
        for j, (g, n) in enumerate(sizes.items()):
            vecs.append(comp.vectors(n, 7000 + j))
            groups += [g] * n
        order = np.random.default_rng(7).permutation(len(groups))
        copy_rows(conn, "vecs", [groups[i] for i in order], np.concatenate(vecs)[order], "v")
        conn.execute(sql.SQL("CREATE INDEX ON {} (group_id)").format(table))
        conn.execute(sql.SQL("ANALYZE {}").format(table))
        print(f"cluster-vectors rows={len(groups)} groups={small}x{small_rows}+{big}x{big_rows} "
              f"shards={shards[0] if shards else '?'} loaded in {time.perf_counter() - t:.0f} s", flush=True)
        cases = [("small", "s001"), ("big", "b0")]
        truth = {g: _queries(conn, table, g, qtexts, ["SET LOCAL enable_indexscan = off"])[0] for _, g in cases}
        store = [f"SET LOCAL hnsw.ef_search = {EF_SEARCH}", "SET LOCAL hnsw.iterative_scan = relaxed_order"]
        conn.execute("SET maintenance_work_mem = '512MB'")

        def report(layout: str, build_s: float) -> None:
            for label, g in cases:
                ids, lat = _queries(conn, table, g, qtexts, store)
                print(f"cluster-vectors layout={layout} group={label}({sizes[g]} rows) "
                      f"p50_ms={statistics.median(lat):.2f} p95_ms={pct(lat, 0.95):.2f} "
                      f"recall@10={recall(ids, truth[g]):.3f} index_build_s={build_s:.1f}", flush=True)

        t = time.perf_counter()
        for g, n in sizes.items():
            if n >= 3000:  # the store's HNSW_MIN_ROWS
                conn.execute(sql.SQL("CREATE INDEX {} ON {} USING hnsw (embedding vector_cosine_ops) WITH (m = 16, "
                                     "ef_construction = 64) WHERE group_id = {}").format(
                    sql.Identifier(f"vecs_hnsw_{g}"), table, sql.Literal(g)))
        report("per-group", time.perf_counter() - t)
        for g, n in sizes.items():
            if n >= 3000:
                conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(schema, f"vecs_hnsw_{g}")))
        t = time.perf_counter()
        conn.execute(sql.SQL("CREATE INDEX vecs_hnsw ON {} USING hnsw (embedding vector_cosine_ops) "
                             "WITH (m = 16, ef_construction = 64)").format(table))
        report("per-shard", time.perf_counter() - t)
    finally:
        conn.execute("RESET search_path")
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
        conn.close()


__all__ = ["run_cluster_vectors_bench"]
