"""``loregraph bench ingest`` (a short run): the rate line, the extractor-alone baseline, and CPU time per message of
both (what stays comparable when other work shares the machine)."""

from __future__ import annotations

import os
import re
import subprocess
import sys


def test_bench_ingest_reports_rate_baseline_and_cpu_per_message(tmp_path):
    out = subprocess.run([sys.executable, "-m", "loregraph.cli", "bench", "ingest", "--messages", "12"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path,
                         env={**os.environ, "TMPDIR": str(tmp_path), "COLUMNS": "200"})
    assert out.returncode == 0, out.stderr[-3000:]
    assert re.search(r"^ingest messages_per_s=[\d.]+ messages=12$", out.stdout, re.M), out.stdout
    assert re.search(r"baseline \(extractor alone\): [\d.]+ messages/s; pipeline/baseline ratio [\d.]+", out.stderr)
    m = re.search(r"cpu per message: extractor alone ([\d.]+) ms, pipeline ([\d.]+) ms \(ratio ([\d.]+)\)", out.stderr)
    assert m, out.stderr[-2000:]
    assert float(m[1]) > 0 and float(m[2]) > 0
