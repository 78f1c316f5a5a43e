"""``loregraph bench ingest``: messages/s through the full pipeline (local extractor, embeddings,
SQLite writes), with the share of time per stage; baseline in the same run: the extractor alone. CPU time per
message (this process, all its threads) is printed too: on a machine other work shares, it moves far less than the
wall-clock rates do."""

from __future__ import annotations

import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rich.console import Console

from loregraph.bench.synthetic import World


async def run_ingest_bench(*, messages: int, db: str | None, console: Console) -> None:
    from loregraph.extract.base import ExtractionContext
    from loregraph.memory import Memory, Message

    url = db or f"sqlite:///{Path(tempfile.mkdtemp(prefix='loregraph-bench-')) / 'ingest.db'}"
    m = await Memory.open(url)
    world = World(11)
    texts = world.messages(messages + 10)
    base = datetime(2025, 1, 1, tzinfo=UTC)
    try:
        for i, t in enumerate(texts[:10]):  # warm-up: loads spaCy and the embedding model
            warm = Message(content=t, role_type="user", timestamp=base + timedelta(minutes=i))
            await m.add_messages("warmup", [warm])
        ctx = ExtractionContext(group_id="x", reference_time=base, role_type="user")
        t0, cpu0 = time.perf_counter(), time.process_time()
        for t in texts[10:]:
            m.extractor.extract(t, ctx)
        extract_only = messages / (time.perf_counter() - t0)
        extract_cpu_ms = (time.process_time() - cpu0) / messages * 1e3

        stages: dict[str, float] = defaultdict(float)
        t0, cpu0 = time.perf_counter(), time.process_time()
        for i, t in enumerate(texts[10:]):
            (res,) = await m.add_messages(
                "bench", [Message(content=t, role_type="user", timestamp=base + timedelta(minutes=i))])
            for k, v in res.timings_ms.items():
                stages[k] += v
        elapsed = time.perf_counter() - t0
        pipeline_cpu_ms = (time.process_time() - cpu0) / messages * 1e3
        rate = messages / elapsed
        total = sum(stages.values()) or 1.0
        console.print("share of pipeline time per stage: " +
                      ", ".join(f"{k} {v / total:.0%}" for k, v in sorted(stages.items(), key=lambda kv: -kv[1])))
        console.print(f"baseline (extractor alone): {extract_only:.1f} messages/s; "
                      f"pipeline/baseline ratio {rate / extract_only:.2f}")
        console.print(f"cpu per message: extractor alone {extract_cpu_ms:.2f} ms, pipeline {pipeline_cpu_ms:.2f} ms "
                      f"(ratio {pipeline_cpu_ms / extract_cpu_ms:.2f})")
        print(f"ingest messages_per_s={rate:.1f} messages={messages}")
    finally:
        await m.close()
