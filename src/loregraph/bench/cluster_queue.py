"""``loregraph bench cluster-queue --db <citus-url>``: the job queue's table on a Citus cluster, kept on the
coordinator (what the store does) against distributed by ``group_id`` with group-filtered claims, same run.

In a throw-away schema (``lg_clq_<pid>``, dropped at the end) of the coordinator's database, two copies of the
queue's table (``jobs`` of migration 0001: seq, id, group_id, status, payload, times): ``local`` (a plain
table on the coordinator) and ``distributed`` (``create_distributed_table(.., 'group_id')``). For each:

- enqueue: ``jobs`` jobs over ``groups`` groups, one transaction of ``batch`` jobs per call (as the API does);
- claim cycle, one worker: the statements of ``PostgresJobQueue.claim`` + the done-mark + unlock: groups with
  unfinished jobs oldest first (``GROUP BY group_id ORDER BY MIN(seq)``), the group's advisory lock (taken
  on the coordinator, where it is valid for every session), the group's head job, ``FOR UPDATE SKIP LOCKED``
  on it, → running, the pending count, → done. On the distributed table every statement on one job names its
  group (a multi-shard ``FOR UPDATE`` is refused), the group list and the pending count are multi-shard reads,
  and the times are ``now()`` (Citus refuses ``clock_timestamp()``, volatile, in an UPDATE of a distributed
  table; the queue uses it, so a distributed queue would change that too) — on both tables here, alike.

Printed per layout: enqueue jobs/s, claim-cycle p50/p95 ms and jobs/s; then distributed/local ratios.
"""

from __future__ import annotations

import json
import os
import statistics
import time
import uuid
from typing import Any

import psycopg
from psycopg import sql

from loregraph.bench.search import _pct

LOCK_CLASS = 0x4C51  # advisory lock class of this bench (not the queue's own)


def _cycle(c: psycopg.Connection[Any], t: sql.Composable, grouped: bool) -> bool:
    """One claim + done + unlock; False when nothing is pending."""
    g_cond = sql.SQL(" AND group_id = %s") if grouped else sql.SQL("")
    heads = c.execute(sql.SQL("SELECT group_id FROM {} WHERE status IN ('pending', 'running') GROUP BY group_id "
                              "ORDER BY MIN(seq) LIMIT 64").format(t)).fetchall()
    for (gid,) in heads:
        locked = c.execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", (LOCK_CLASS, gid)).fetchone()
        if not (locked and locked[0]):
            continue
        try:
            with c.transaction():
                head = c.execute(sql.SQL("SELECT seq FROM {} WHERE group_id = %s AND status IN ('pending', "
                                         "'running') ORDER BY seq LIMIT 1").format(t), (gid,)).fetchone()
                if head is None:
                    continue
                extra = [gid] if grouped else []
                row = c.execute(sql.SQL("SELECT seq FROM {} WHERE seq = %s{} AND status IN ('pending', 'running') "
                                        "FOR UPDATE SKIP LOCKED").format(t, g_cond), (head[0], *extra)).fetchone()
                if row is None:
                    continue
                c.execute(sql.SQL("UPDATE {} SET status = 'running', attempts = attempts + 1, "
                                  "started_at = now() WHERE seq = %s{}").format(t, g_cond),
                          (row[0], *extra))
            c.execute(sql.SQL("SELECT COUNT(*) FROM {} WHERE status = 'pending'").format(t)).fetchone()
            with c.transaction():  # the done-mark (in the store it joins the graph write's transaction)
                c.execute(sql.SQL("UPDATE {} SET status = 'done', finished_at = now(), payload = '{{}}' "
                                  "WHERE seq = %s{} AND status = 'running'").format(t, g_cond), (row[0], *extra))
            return True
        finally:
            c.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (LOCK_CLASS, gid))
    return False


def run_cluster_queue_bench(*, db: str, jobs: int, groups: int, batch: int, cycles: int) -> None:
    schema = f"lg_clq_{os.getpid()}"
    c = psycopg.connect(db, autocommit=True)
    rows: dict[str, dict[str, float]] = {}
    try:
        c.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        for layout in ("local", "distributed"):
            t = sql.Identifier(schema, f"jobs_{layout}")
            c.execute(sql.SQL("CREATE TABLE {} (seq BIGSERIAL, id TEXT NOT NULL, group_id TEXT NOT NULL, "
                              "kind TEXT NOT NULL DEFAULT 'message', payload TEXT NOT NULL, status TEXT NOT NULL, "
                              "attempts INTEGER NOT NULL DEFAULT 0, created_at TIMESTAMPTZ NOT NULL, "
                              "started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ, PRIMARY KEY (group_id, seq))"
                              ).format(t))
            c.execute(sql.SQL("CREATE INDEX ON {} (status, group_id, seq)").format(t))
            if layout == "distributed":
                c.execute("SELECT create_distributed_table(%s, 'group_id')", (f"{schema}.jobs_{layout}",))
            payload = json.dumps({"content": "I'm using Kafka for project Aurora with my colleague Dana Novak"})
            names = [f"grp-{i}" for i in range(groups)]
            t0 = time.perf_counter()
            for k in range(0, jobs, batch):
                g = names[(k // batch) % groups]
                with c.transaction(), c.cursor() as cur:
                    cur.executemany(sql.SQL("INSERT INTO {} (id, group_id, payload, status, created_at) VALUES "
                                            "(%s, %s, %s, 'pending', clock_timestamp())").format(t),
                                    [(str(uuid.uuid4()), g, payload) for _ in range(min(batch, jobs - k))])
            enqueue = jobs / (time.perf_counter() - t0)
            c.execute(sql.SQL("ANALYZE {}").format(t))
            lat = []
            t0 = time.perf_counter()
            for _ in range(cycles):
                s = time.perf_counter()
                if not _cycle(c, t, layout == "distributed"):
                    break
                lat.append((time.perf_counter() - s) * 1e3)
            rate = len(lat) / (time.perf_counter() - t0)
            rows[layout] = {"enqueue": enqueue, "p50": statistics.median(lat), "p95": _pct(lat, 0.95), "rate": rate}
            print(f"cluster-queue layout={layout} jobs={jobs} groups={groups} enqueue_jobs_per_s={enqueue:.0f} "
                  f"claim_cycle_p50_ms={rows[layout]['p50']:.2f} claim_cycle_p95_ms={rows[layout]['p95']:.2f} "
                  f"claims_per_s={rate:.1f}", flush=True)
        lo, di = rows["local"], rows["distributed"]
        print(f"cluster-queue distributed/local enqueue={di['enqueue'] / lo['enqueue']:.2f}x "
              f"claim_cycle_p50={di['p50'] / lo['p50']:.2f}x claims_per_s={di['rate'] / lo['rate']:.2f}x",
              flush=True)
    finally:
        c.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
        c.close()


__all__ = ["run_cluster_queue_bench"]
