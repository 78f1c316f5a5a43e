"""``loregraph bench search --db postgresql://... --compare-sqlite``: one result line per backend in one run, and the
bench's own group is gone from the given database afterwards (small sizes here; the 100k run is a manual one)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid

import psycopg


def test_bench_search_on_postgresql_next_to_sqlite(pg_url, tmp_path):
    name = "lg_bench_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
    url = pg_url.rsplit("/", 1)[0] + "/" + name
    try:
        out = subprocess.run([sys.executable, "-m", "loregraph.cli", "bench", "search", "--facts", "300",
                              "--queries", "10", "--db", url, "--compare-sqlite"],
                             capture_output=True, text=True, timeout=300, cwd=tmp_path,
                             env={**os.environ, "TMPDIR": str(tmp_path)})  # its temporary SQLite file goes here
        assert out.returncode == 0, out.stderr[-3000:]
        lines = [ln for ln in out.stdout.splitlines() if ln.startswith("search ")]
        assert [re.search(r"backend=(\w+)", ln).group(1) for ln in lines] == ["postgresql", "sqlite"]
        assert all("facts=300" in ln and re.search(r"p50_ms=\d", ln) for ln in lines)
        compare = [ln for ln in out.stdout.splitlines() if ln.startswith("search-compare ")]
        assert len(compare) == 1, out.stdout
        assert re.search(r"top10_overlap=[01]\.\d{3} .*pg_over_sqlite_p50=\d+\.\d\d queries=10$", compare[0])
        with psycopg.connect(url) as c:  # the bench's group was deleted, statistics and postings included
            for table in ("facts", "entities", "episodes", "fts_stats", "fts_terms", "fts_postings"):
                assert c.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0, table
    finally:
        with psycopg.connect(pg_url, autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_bench_pg_vectors_small_scale(pg_url):
    """``loregraph bench pg-vectors`` at a tiny scale: every section reports recall and latency, the partial
    per-group index finds the true neighbours, and its throw-away database is dropped."""
    out = subprocess.run([sys.executable, "-m", "loregraph.cli", "bench", "pg-vectors", "--db", pg_url,
                          "--scale", "0.02", "--queries", "10", "--inserts", "20"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout
    for section in ("== 1. exact kNN", "== 2. one global HNSW index", "== 3. partial HNSW index", "== 4."):
        assert section in text, section
    partial = text[text.index("== 3."):text.index("== 2.")]
    recalls = [float(r) for r in re.findall(r"recall@10 ([\d.]+)", partial)]
    assert recalls and min(recalls) >= 0.9, partial
    name = re.search(r"throw-away database: (\w+)", text).group(1)
    with psycopg.connect(pg_url) as c:
        assert c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None


def test_bench_search_reuses_its_groups_and_both_backends_agree(pg_url, tmp_path):
    """``--reuse``: the first run builds and keeps the group (PostgreSQL and the SQLite file in TMPDIR), the second
    searches the same facts without building; the two backends return the same top-10 for every query (fact ids
    follow from their position: both builds, and both runs, have the same ids)."""
    name = "lg_bench_" + uuid.uuid4().hex[:12]
    with psycopg.connect(pg_url, autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
    url = pg_url.rsplit("/", 1)[0] + "/" + name
    try:
        outs = []
        for _ in range(2):
            out = subprocess.run([sys.executable, "-m", "loregraph.cli", "bench", "search", "--facts", "1500",
                                  "--queries", "20", "--db", url, "--compare-sqlite", "--reuse"],
                                 capture_output=True, text=True, timeout=600, cwd=tmp_path,
                                 env={**os.environ, "TMPDIR": str(tmp_path), "COLUMNS": "200"})
            assert out.returncode == 0, out.stderr[-3000:]
            outs.append(out)
        first, second = outs
        assert "building 1500 facts" in first.stderr and "reusing" not in first.stderr
        assert second.stderr.count("reusing the 1500 facts of group bench-reuse-1500-7") == 2, second.stderr
        assert "building" not in second.stderr
        for out in outs:
            compare = [ln for ln in out.stdout.splitlines() if ln.startswith("search-compare ")]
            assert re.search(r"top10_overlap=1\.000 top10_same_order=1\.000 ", compare[0]), compare
        assert (tmp_path / "loregraph-bench-reuse-1500-7.db").exists()
        with psycopg.connect(url) as c:  # kept for the next run
            assert c.execute("SELECT COUNT(*) FROM facts WHERE group_id = 'bench-reuse-1500-7'").fetchone()[0] == 1500
    finally:
        with psycopg.connect(pg_url, autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
