"""`loregraph bench soak` runs bounded against a real server and reports what the closing notes quote."""

from __future__ import annotations

import re
import subprocess
import sys

from loregraph.bench.soak import slope


def test_slope_is_least_squares():
    assert slope([(0, 10.0), (10_000, 12.0), (20_000, 14.0)]) * 10_000 == 2.0
    assert slope([(0, 5.0), (1, 5.0)]) == 0.0 and slope([(0, 1.0)]) == 0.0


def test_a_short_soak_reports_throughput_latency_and_memory_slope(tmp_path):
    out = subprocess.run([sys.executable, "-m", "loregraph.cli", "bench", "soak", "--minutes", "0.2",
                          "--max-requests", "300", "--clients", "4", "--sample-s", "0.5"],
                         capture_output=True, text=True, timeout=600, check=True, cwd=tmp_path)
    last = out.stdout.strip().splitlines()[-1]
    m = re.fullmatch(r"soak requests=(\d+) per_s=([\d.]+) ingest_p95_ms=([\d.]+) search_p95_ms=([\d.]+) "
                     r"rss_mb_per_10k=(-?[\d.]+) errors_5xx=(\d+)", last)
    assert m, last
    assert 0 < int(m[1]) <= 300 + 4 and float(m[2]) > 0 and int(m[6]) == 0
    assert "baseline (same run): GET /healthcheck" in " ".join(out.stderr.split())
