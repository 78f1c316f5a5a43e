"""Group-filtered vector kNN on PostgreSQL + pgvector: exact scan vs HNSW (global or partial per group).

Measures, in a throwaway database (``lg_vecbench_<pid>``, dropped at the end), on tables shaped like the real
``facts`` (``seq bigserial, group_id text, id text, embedding vector(384)``, btree on ``group_id``):

1. exact kNN within one group (``WHERE group_id = $g ORDER BY embedding <=> $q LIMIT 10``) at group sizes
   1k .. 100k: p50/p95 latency with the server defaults (JIT on), with ``jit = off`` and prepared;
2. one global HNSW index (``vector_cosine_ops``, m=16, ef_construction=64) queried with the group filter,
   for (a) one 100k group alone, (b) a 10k group among 10 in 100k rows, (c) a 1k group among 100 in 100k
   rows: ef_search 40/100/200/400 and pgvector 0.8 iterative scans (relaxed/strict order), with the plan
   the planner picks (EXPLAIN); the HNSW path with the btree hidden; exact forced by ``ORDER BY (d) + 0``;
3. a partial HNSW index per large group (``WHERE group_id = 'g'``): whether the planner uses it with the
   group as a literal, as a bind parameter (unnamed statement), as a prepared statement (psycopg's
   default ``prepare_threshold`` = 5, as the store uses, where PostgreSQL may switch to a generic plan),
   and with ``plan_cache_mode = force_custom_plan`` (runs before 2, while the tables have no global index);
4. single-row insert rate (autocommit, one transaction per row) with and without an HNSW index.

Every variant runs on a fresh connection; unless "prepared (store mode)" it is never prepared, so each
execution is planned with the actual group and the printed EXPLAIN is the executed plan. Latencies are
client-side wall-clock times; the section headers show the load average, as the machine may be shared.

Recall@10 is against the exact top 10 of the group (same query with index scans disabled). Vectors are
composed like ``bench search``: real MiniLM embeddings of subject + object + relation wording plus
N(0, 0.05) noise, normalised; queries are 200 such vectors for other triples (fresh noise).

Run: ``python -m loregraph.bench.pg_vector_index --db postgresql://postgres@127.0.0.1:54329/postgres``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from loregraph.bench.synthetic import TEMPLATES, World

DIM = 384
BENCH_DB_PREFIX = "lg_vecbench"
K = 10
BUILD_MEM = "1GB"  # maintenance_work_mem for index builds (session only; the 100k graph must fit)


# ---------------------------------------------------------------------------------------------- vectors


class Composer:
    """Fact vectors composed as in ``bench search``: emb(subject) + emb(object) + emb(relation) + noise."""

    def __init__(self) -> None:
        from loregraph.models.embedder import get_default_embedder

        emb = get_default_embedder()
        world = World(0)
        names = world.people + world.projects + world.orgs + world.tools
        self.vec_of = dict(zip(names, emb.embed(names), strict=True))
        self.rel_vecs = {rt: emb.embed_one(t.format(s="", o="", p="")) for rt, t in TEMPLATES}

    def vectors(self, n: int, seed: int) -> np.ndarray:
        """``n`` unit vectors for ``n`` distinct (subject, relation, object) triples of ``World(seed)``."""
        world = World(seed)
        rng = np.random.default_rng(seed)
        seen: set[tuple[str, str, str]] = set()
        out = np.empty((n, DIM), dtype=np.float32)
        done = 0
        while done < n:
            s, _, rtype, o, _, _ = world.fact()
            if (s, rtype, o) in seen or s == o:
                continue
            seen.add((s, rtype, o))
            out[done] = self.vec_of[s] + self.vec_of[o] + self.rel_vecs[rtype]
            done += 1
        out += rng.normal(0, 0.05, out.shape).astype(np.float32)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


def vec_text(v: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in v.tolist()) + "]"


# ---------------------------------------------------------------------------------------------- database


def connect(url: str, prepare_threshold: int | None = 5) -> psycopg.Connection[Any]:
    """psycopg's default prepare_threshold (5) is what the store gets; ``None`` never prepares."""
    conn = psycopg.connect(url, autocommit=True)
    conn.prepare_threshold = prepare_threshold
    return conn


def create_table(conn: psycopg.Connection[Any], table: str) -> None:
    conn.execute(sql.SQL("CREATE TABLE {} (seq bigserial PRIMARY KEY, group_id text NOT NULL, id text NOT NULL, "
                         "embedding vector({}))").format(sql.Identifier(table), sql.Literal(DIM)))


def copy_rows(conn: psycopg.Connection[Any], table: str, groups: Sequence[str], vectors: np.ndarray,
              id_prefix: str) -> None:
    """Binary COPY of (group_id, id, embedding) rows."""
    head = struct.pack("!hh", DIM, 0)
    be = vectors.astype(">f4")
    chunk: list[bytes] = []
    stmt = sql.SQL("COPY {} (group_id, id, embedding) FROM STDIN (FORMAT BINARY)").format(sql.Identifier(table))
    with conn.cursor() as cur, cur.copy(stmt) as cp:
        cp.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0))
        for i, g in enumerate(groups):
            gb, ib, vb = g.encode(), f"{id_prefix}{i}".encode(), head + be[i].tobytes()
            chunk.append(struct.pack("!hi", 3, len(gb)) + gb + struct.pack("!i", len(ib)) + ib +
                         struct.pack("!i", len(vb)) + vb)
            if len(chunk) >= 2000:
                cp.write(b"".join(chunk))
                chunk = []
        chunk.append(struct.pack("!h", -1))
        cp.write(b"".join(chunk))


def build_table(conn: psycopg.Connection[Any], comp: Composer, table: str, sizes: dict[str, int],
                seed: int) -> None:
    """One table holding ``sizes`` rows per group, rows of the groups interleaved (writes arrive over time)."""
    create_table(conn, table)
    vecs, groups = [], []
    for j, (g, n) in enumerate(sizes.items()):
        vecs.append(comp.vectors(n, seed * 1000 + j))
        groups += [g] * n
    order = np.random.default_rng(seed).permutation(len(groups))
    copy_rows(conn, table, [groups[i] for i in order], np.concatenate(vecs)[order], f"{table}-")
    conn.execute(sql.SQL("CREATE INDEX ON {} (group_id)").format(sql.Identifier(table)))
    conn.execute(sql.SQL("VACUUM ANALYZE {}").format(sql.Identifier(table)))


def build_hnsw(conn: psycopg.Connection[Any], table: str, name: str, group: str | None = None) -> float:
    """Create an HNSW index (partial on ``group`` if given); returns the build time in seconds."""
    conn.execute(sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(BUILD_MEM)))
    where = sql.SQL(" WHERE group_id = {}").format(sql.Literal(group)) if group else sql.SQL("")
    t = time.perf_counter()
    conn.execute(sql.SQL("CREATE INDEX {} ON {} USING hnsw (embedding vector_cosine_ops) "
                         "WITH (m = 16, ef_construction = 64){}").format(
        sql.Identifier(name), sql.Identifier(table), where))
    dt = time.perf_counter() - t
    conn.execute("RESET maintenance_work_mem")
    conn.execute(sql.SQL("ANALYZE {}").format(sql.Identifier(table)))
    return dt


def knn_sql(table: str, literal_group: str | None = None, force_exact: bool = False) -> sql.Composed:
    """The store's query shape; the group as ``%s`` (bind parameter) unless ``literal_group`` is given.
    ``force_exact``: ``ORDER BY (embedding <=> q) + 0``, which no vector index can serve (exact scan)."""
    g = sql.Literal(literal_group) if literal_group is not None else sql.SQL("%s")
    order = sql.SQL("(embedding <=> %s::vector) + 0" if force_exact else "embedding <=> %s::vector")
    return sql.SQL("SELECT id FROM {} WHERE group_id = {} ORDER BY {} LIMIT {}").format(
        sql.Identifier(table), g, order, sql.Literal(K))


# ---------------------------------------------------------------------------------------------- measuring


@dataclass
class Run:
    label: str
    plan: str
    p50: float
    p95: float
    recall: float | None = None
    returned: float | None = None
    note: str = ""


def _plan_nodes(node: dict[str, Any]) -> Iterator[str]:
    name = node["Node Type"]
    if "Index Name" in node:
        name += f"({node['Index Name']})"
    if node.get("Workers Planned"):
        name += f"[{node['Workers Planned']}w]"
    yield name
    for child in node.get("Plans", []):
        yield from _plan_nodes(child)


def explain(conn: psycopg.Connection[Any], query: sql.Composable, params: Sequence[Any]) -> str:
    """Compact plan: node types top-down, index names in parentheses (custom plan for these values)."""
    row = conn.execute(sql.SQL("EXPLAIN (FORMAT JSON) ") + query, params, prepare=False).fetchone()
    assert row is not None
    plan = row[0] if isinstance(row[0], list) else json.loads(row[0])
    return " > ".join(n for n in _plan_nodes(plan[0]["Plan"]) if n != "Limit")


def run_queries(conn: psycopg.Connection[Any], query: sql.Composed, qtexts: Sequence[str],
                group: str | None, warmup: int = 10) -> tuple[list[list[str]], list[float]]:
    """Run every query (after ``warmup`` untimed ones); returns the ids per query and latencies in ms."""
    def params(q: str) -> tuple[Any, ...]:
        return (group, q) if group is not None else (q,)

    for q in qtexts[:warmup]:
        conn.execute(query, params(q)).fetchall()
    ids, lat = [], []
    for q in qtexts:
        t = time.perf_counter()
        rows = conn.execute(query, params(q)).fetchall()
        lat.append((time.perf_counter() - t) * 1e3)
        ids.append([r[0] for r in rows])
    return ids, lat


def pct(values: Sequence[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def recall(ids: Sequence[Sequence[str]], truth: Sequence[Sequence[str]]) -> float:
    return statistics.fmean(len(set(a) & set(b)) / K for a, b in zip(ids, truth, strict=True))


def apply(conn: psycopg.Connection[Any], settings: dict[str, str]) -> None:
    conn.execute("RESET ALL")
    for k, v in settings.items():
        conn.execute(sql.SQL("SET {} = {}").format(sql.SQL(k), sql.Literal(v)))


def measure(url: str, label: str, table: str, group: str, qtexts: Sequence[str],
            truth: Sequence[Sequence[str]] | None, settings: dict[str, str] | None = None, *,
            literal: bool = False, store_mode: bool = False, force_exact: bool = False,
            conn: psycopg.Connection[Any] | None = None) -> Run:
    """One variant on a fresh connection (or ``conn``). Default: never prepared, so every execution is planned
    with the actual group and the EXPLAIN shows the executed plan. ``store_mode``: psycopg's default
    prepare_threshold=5 like the store, so PostgreSQL's plan cache may switch to a generic plan; the plan
    column is then the plan of a 7th execution of an SQL-level PREPARE and the server's generic/custom counts."""
    own = conn is None
    c = conn if conn is not None else connect(url, 5 if store_mode else None)
    try:
        apply(c, settings or {})
        query = knn_sql(table, group if literal else None, force_exact)
        if store_mode:
            plan = "after 5 execs: " + sql_prepare_plans(c, table, group, qtexts[0])[1]
        else:
            plan = explain(c, query, (qtexts[0],) if literal else (group, qtexts[0]))
        ids, lat = run_queries(c, query, qtexts, None if literal else group)
        note = prepared_plan_counts(c) if store_mode else ""
        if not own:
            c.execute("RESET ALL")
    finally:
        if own:
            c.close()
    run = Run(label, plan, statistics.median(lat), pct(lat, 0.95),
              recall(ids, truth) if truth is not None else None, statistics.fmean(len(x) for x in ids), note)
    print_run(run)
    return run


def exact_truth(url: str, table: str, group: str, qtexts: Sequence[str]) -> list[list[str]]:
    """Exact top K of the group: index scans off (HNSW cannot serve a bitmap scan, so this is a full scan)."""
    with connect(url, None) as conn:
        apply(conn, {"enable_indexscan": "off"})
        ids, _ = run_queries(conn, knn_sql(table), qtexts, group, warmup=0)
    return ids


def prepared_plan_counts(conn: psycopg.Connection[Any]) -> str:
    rows = conn.execute("SELECT generic_plans, custom_plans FROM pg_prepared_statements "
                        "WHERE statement LIKE %s", ("%ORDER BY embedding%",)).fetchall()
    return ", ".join(f"generic={g} custom={c}" for g, c in rows) or "not prepared"


def sql_prepare_plans(conn: psycopg.Connection[Any], table: str, group: str, q: str) -> tuple[str, str]:
    """PREPARE at SQL level and EXPLAIN EXECUTE: plan of the 1st execution and of the 7th (generic if chosen)."""
    conn.execute(sql.SQL("PREPARE lg_p(text, vector) AS SELECT id FROM {} WHERE group_id = $1 "
                         "ORDER BY embedding <=> $2 LIMIT {}").format(sql.Identifier(table), sql.Literal(K)),
                 prepare=False)
    plans = []
    for i in range(7):
        # EXECUTE takes no bind parameters: literal arguments; the plan cache still sees $1/$2
        row = conn.execute(sql.SQL("EXPLAIN (FORMAT JSON) EXECUTE lg_p({}, {})").format(
            sql.Literal(group), sql.Literal(q)), prepare=False).fetchone()
        assert row is not None
        plan = row[0] if isinstance(row[0], list) else json.loads(row[0])
        if i in (0, 6):
            plans.append(" > ".join(n for n in _plan_nodes(plan[0]["Plan"]) if n != "Limit"))
    conn.execute("DEALLOCATE lg_p")
    return plans[0], plans[1]


def section(title: str) -> None:
    """Section header with the machine's load average (the latencies are wall-clock times)."""
    print(f"\n== {title}  [load average {os.getloadavg()[0]:.1f}]", flush=True)


def print_run(r: Run) -> None:
    rec = "" if r.recall is None else f"{r.recall:.3f}"
    ret = "" if r.returned is None else f"{r.returned:.1f}"
    print(f"  {r.label:<48} p50 {r.p50:8.2f} ms  p95 {r.p95:8.2f} ms  recall@10 {rec:>5}  rows {ret:>4}  "
          f"plan: {r.plan}{'  ' + r.note if r.note else ''}", flush=True)


def insert_rate(conn: psycopg.Connection[Any], table: str, group: str, vectors: np.ndarray, label: str) -> str:
    """Single-row INSERTs, one transaction each (autocommit), like messages landing one at a time."""
    texts = [vec_text(v) for v in vectors]
    stmt = sql.SQL("INSERT INTO {} (group_id, id, embedding) VALUES (%s, %s, %s::vector)").format(
        sql.Identifier(table))
    lat = []
    t0 = time.perf_counter()
    for i, v in enumerate(texts):
        t = time.perf_counter()
        conn.execute(stmt, (group, f"ins-{label}-{i}", v))
        lat.append((time.perf_counter() - t) * 1e3)
    total = time.perf_counter() - t0
    line = (f"  {label:<48} {len(texts) / total:7.0f} rows/s  p50 {statistics.median(lat):6.2f} ms  "
            f"p95 {pct(lat, 0.95):6.2f} ms")
    print(line, flush=True)
    return line


# ---------------------------------------------------------------------------------------------- main


def bench(url: str, n_queries: int, scale: float, inserts: int) -> None:
    def n(x: int) -> int:
        return max(100, round(x * scale))

    t_start = time.perf_counter()
    comp = Composer()
    qvecs = comp.vectors(n_queries, 999_999)
    qtexts = [vec_text(v) for v in qvecs]
    conn = connect(url)
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    ver = conn.execute("SHOW server_version").fetchone()
    settings = conn.execute("SELECT string_agg(name || '=' || setting, ' ') FROM pg_settings WHERE name IN "
                            "('shared_buffers', 'work_mem', 'jit', 'max_parallel_workers_per_gather', "
                            "'synchronous_commit', 'random_page_cost')").fetchone()
    print(f"PostgreSQL {ver[0] if ver else '?'}, pgvector {row[0] if row else '?'}; {settings[0] if settings else ''}")
    print(f"{n_queries} queries, k={K}, dim={DIM}, scale={scale}, index builds with maintenance_work_mem={BUILD_MEM}")

    # tables: mix = 1k/2k/3k/5k/10k/30k groups + 49 filler groups of 1k; a = one 100k group; b = 10 x 10k;
    # c = 100 x 1k
    t = time.perf_counter()
    mix = {"m1k": n(1000), "m2k": n(2000), "m3k": n(3000), "m5k": n(5000), "m10k": n(10_000), "m30k": n(30_000)}
    mix |= {f"f{i:02d}": n(1000) for i in range(49)}
    build_table(conn, comp, "t_mix", mix, 1)
    build_table(conn, comp, "t_a", {"a": n(100_000)}, 2)
    build_table(conn, comp, "t_b", {f"b{i}": n(10_000) for i in range(10)}, 3)
    build_table(conn, comp, "t_c", {f"c{i:03d}": n(1000) for i in range(100)}, 4)
    print(f"loaded 4 tables of {n(100_000)} rows each in {time.perf_counter() - t:.1f} s")

    section("1. exact kNN within a group (btree on group_id, no vector index)")
    truth: dict[tuple[str, str], list[list[str]]] = {}
    cases = [("t_mix", "m1k", "1k group in 100k mixed table"), ("t_c", "c042", "1k group, 100 groups x 1k"),
             ("t_mix", "m2k", "2k group in 100k mixed table"), ("t_mix", "m3k", "3k group in 100k mixed table"),
             ("t_mix", "m5k", "5k group in 100k mixed table"), ("t_mix", "m10k", "10k group in 100k mixed table"),
             ("t_b", "b3", "10k group, 10 groups x 10k"), ("t_mix", "m30k", "30k group in 100k mixed table"),
             ("t_a", "a", "100k group alone")]
    for table, group, label in cases:
        truth[(table, group)] = exact_truth(url, table, group, qtexts)
        measure(url, f"{label} [{table}/{group}]", table, group, qtexts, truth[(table, group)])
        measure(url, "  same, jit=off", table, group, qtexts, truth[(table, group)], {"jit": "off"})
        measure(url, "  same, prepared (store mode)", table, group, qtexts, truth[(table, group)], store_mode=True)

    section("3. partial HNSW index per group (no global index on the table); ef_search=40 unless said")
    for table, group in (("t_b", "b3"), ("t_mix", "m30k")):
        name = f"{table}_{group}_hnsw"
        dt = build_hnsw(conn, table, name, group)
        size = conn.execute("SELECT pg_size_pretty(pg_relation_size(%s))", (name,)).fetchone()
        print(f" partial index on {table}/{group} ({mix.get(group, n(10_000))} rows): build {dt:.1f} s, "
              f"size {size[0] if size else '?'}")
        tr = truth[(table, group)]
        measure(url, "group as literal", table, group, qtexts, tr, literal=True)
        measure(url, "group as literal, ef_search=100", table, group, qtexts, tr, {"hnsw.ef_search": "100"},
                literal=True)
        measure(url, "bind param, never prepared", table, group, qtexts, tr)
        measure(url, "bind param, prepared (store mode)", table, group, qtexts, tr, store_mode=True)
        measure(url, "  same + plan_cache_mode=force_custom_plan", table, group, qtexts, tr,
                {"plan_cache_mode": "force_custom_plan"}, store_mode=True)
        conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))

    variants: list[tuple[str, dict[str, str]]] = [
        ("ef_search=40 (default)", {}),
        ("ef_search=100", {"hnsw.ef_search": "100"}),
        ("ef_search=200", {"hnsw.ef_search": "200"}),
        ("ef_search=400", {"hnsw.ef_search": "400"}),
        ("iterative relaxed_order, ef=40", {"hnsw.iterative_scan": "relaxed_order"}),
        ("iterative relaxed_order, ef=100", {"hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": "100"}),
        ("iterative strict_order, ef=40", {"hnsw.iterative_scan": "strict_order"}),
        ("iterative strict_order, ef=100", {"hnsw.iterative_scan": "strict_order", "hnsw.ef_search": "100"}),
    ]
    section("2. one global HNSW index (m=16, ef_construction=64), queried with the group filter")
    for table, group, label in (("t_a", "a", "(a) 100k group alone"), ("t_b", "b3", "(b) 10k group of 10, 100k rows"),
                                ("t_c", "c042", "(c) 1k group of 100, 100k rows")):
        name = f"{table}_hnsw"
        dt = build_hnsw(conn, table, name)
        size = conn.execute("SELECT pg_size_pretty(pg_relation_size(%s))", (name,)).fetchone()
        print(f" {label}: build {dt:.1f} s, size {size[0] if size else '?'}")
        tr = truth[(table, group)]
        for vlabel, s in variants:
            measure(url, vlabel, table, group, qtexts, tr, s)
        for vlabel, s in (variants[0], variants[4]):
            measure(url, f"{vlabel}, prepared (store mode)", table, group, qtexts, tr, s, store_mode=True)
        if table != "t_a":
            measure(url, "exact forced: ORDER BY (embedding <=> q) + 0", table, group, qtexts, tr, force_exact=True)
            # the HNSW path when the planner cannot take the btree: drop it inside a transaction, roll back
            with connect(url, None) as c2:
                for vlabel, s in (variants[0], variants[2], variants[4], variants[6]):
                    with c2.transaction():
                        c2.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(f"{table}_group_id_idx")))
                        measure(url, f"btree hidden: {vlabel}", table, group, qtexts, tr,
                                {**s, "enable_seqscan": "off"}, conn=c2)
                        raise psycopg.Rollback()

    if inserts:
        section(f"4. insert rate: {inserts} single-row INSERTs, one transaction each")
        ivecs = comp.vectors(inserts, 424_242)
        with connect(url) as c2:
            rows = f"{n(100_000) // 1000}k rows"
            insert_rate(c2, "t_b", "b3", ivecs, f"t_b ({rows}, btree + global HNSW)")
            insert_rate(c2, "t_c", "c042", ivecs, f"t_c ({rows}, btree + global HNSW)")
            c2.execute("DROP INDEX t_c_hnsw")
            insert_rate(c2, "t_c", "c042", ivecs, f"t_c ({rows}, btree only)")
            build_hnsw(c2, "t_mix", "t_mix_m30k_hnsw", "m30k")
            insert_rate(c2, "t_mix", "m30k", ivecs, "t_mix, into group with partial HNSW")
            insert_rate(c2, "t_mix", "f07", ivecs, "t_mix, into group without it")
    conn.close()
    print(f"\ntotal {time.perf_counter() - t_start:.0f} s")


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--db", required=True, help="URL of a database to connect to (to create/drop lg_vecbench_<pid>)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every group size (quick runs: 0.05)")
    ap.add_argument("--inserts", type=int, default=2000)
    args = ap.parse_args(argv)
    name = f"{BENCH_DB_PREFIX}_{os.getpid()}"  # one per run: two runs on one server do not meet
    print(f"throw-away database: {name}")
    admin = psycopg.connect(args.db, autocommit=True)
    admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
    admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        bench(make_conninfo(args.db, dbname=name), args.queries, args.scale, args.inserts)
    finally:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        admin.close()


if __name__ == "__main__":
    main()
