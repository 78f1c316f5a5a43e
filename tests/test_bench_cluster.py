"""The cluster benchmarks at tiny sizes: ``bench writes`` (PostgreSQL next to PostgreSQL, and Citus next to
PostgreSQL), ``bench cluster-vectors`` and ``bench cluster-queue`` on Citus: each prints its lines with a ratio and
leaves nothing behind (its groups deleted, its throw-away schema dropped)."""

from __future__ import annotations

import re
import subprocess
import sys

import psycopg


def _cli(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "loregraph.cli", "bench", *args], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def _left_behind(url: str) -> tuple[int, list[str]]:
    with psycopg.connect(url) as c:
        facts = c.execute("SELECT COUNT(*) FROM facts WHERE group_id LIKE 'bench-w%'").fetchone()[0]
        schemas = [r[0] for r in c.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'lg_cl%'")]
    return facts, schemas


def test_bench_writes_prints_both_backends_and_the_ratio(pg_db, citus_db):
    text = _cli("writes", "--db", citus_db, "--compare-pg", pg_db, "--messages", "10", "--bulk", "30")
    lines = [ln for ln in text.splitlines() if ln.startswith("writes ")]
    assert [re.search(r"backend=(\w+)", ln).group(1) for ln in lines[:2]] == ["baseline", "db"]
    assert all(re.search(r"message_p50_ms=\d.*bulk_facts_per_s=\d", ln) for ln in lines[:2])
    assert re.search(r"db/baseline message_p50=\d+\.\d\dx .*bulk_time=\d+\.\d\dx", lines[2])
    assert _left_behind(pg_db) == (0, []) and _left_behind(citus_db) == (0, [])


def test_bench_cluster_vectors_and_queue(citus_db):
    text = _cli("cluster-vectors", "--db", citus_db, "--small", "3", "--small-rows", "200", "--big", "1",
                "--big-rows", "3000", "--queries", "10")
    got = {(m.group(1), m.group(2)) for m in re.finditer(r"layout=(\S+) group=(\w+)\(.*recall@10=\d\.\d{3}", text)}
    assert got == {("per-group", "small"), ("per-group", "big"), ("per-shard", "small"), ("per-shard", "big")}
    text = _cli("cluster-queue", "--db", citus_db, "--jobs", "60", "--groups", "5", "--cycles", "20")
    assert re.search(r"layout=local .*claims_per_s=\d", text) and re.search(r"layout=distributed .*claims_per_s=\d",
                                                                             text)
    assert re.search(r"distributed/local enqueue=\d+\.\d\dx claim_cycle_p50=\d+\.\d\dx", text)
    with psycopg.connect(citus_db) as c:
        assert c.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'lg_cl%'").fetchall() == []
