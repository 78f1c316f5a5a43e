"""``loregraph bench search`` on SQLite: the result line carries the recall@20 of the fact vector stage against an
exact scan, and the memory the in-memory vectors of the bench's group hold (small size here; 100k is a manual run)."""

from __future__ import annotations

import os
import re
import subprocess
import sys


def test_bench_search_reports_vector_recall_and_memory(tmp_path):
    out = subprocess.run([sys.executable, "-m", "loregraph.cli", "bench", "search", "--facts", "1500",
                          "--queries", "10"], capture_output=True, text=True, timeout=600, cwd=tmp_path,
                         env={**os.environ, "TMPDIR": str(tmp_path)})
    assert out.returncode == 0, out.stderr[-3000:]
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("search "))
    m = re.fullmatch(r"search backend=sqlite p50_ms=[\d.]+ p95_ms=[\d.]+ baseline_p50_ms=[\d.]+ facts=1500 "
                     r"vector_recall_at_20=([\d.]+) vector_memory_mb=([\d.]+)", line)
    assert m, line
    assert float(m[1]) >= 0.98  # 1,500 facts: past sqlite-vec's exact path, an exact scan in memory
    assert float(m[2]) > 0  # the group's fact vectors are held in memory
