"""`loregraph bench grpc` runs end to end at a tiny scale and prints its machine-readable line."""

from __future__ import annotations

import io
import re

from rich.console import Console

from loregraph.bench.grpc import run_grpc_bench


async def test_bench_grpc_small(capsys):
    out = io.StringIO()
    await run_grpc_bench(entities=120, batch=30, queries=10, db=None, console=Console(file=out))
    line = capsys.readouterr().out
    m = re.search(r"grpc entities=120 upsert_records_per_s=(\d+) inproc_records_per_s=(\d+) "
                  r"find_p50_ms=([\d.]+) inproc_find_p50_ms=([\d.]+)", line)
    assert m and all(float(x) > 0 for x in m.groups()), line
    assert "ratio" in out.getvalue()
