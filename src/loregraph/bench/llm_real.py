"""``loregraph bench llm-real``: the LLM extractor against a real OpenAI-compatible endpoint.

The dev sets of ``../shared/bench/extraction/`` (``dev.jsonl`` and ``dev2.jsonl``, each in order, one graph
per user, a fresh SQLite database per set) go through the full pipeline with an :class:`LLMExtractor`
talking to ``--base-url`` / ``--model``. Printed: model calls and prompt tokens per message (the server's
``usage``), latency of the extraction step p50/p95, the share of messages whose answer validated (no
degraded step) and the share that did so in one call, and entity/relation precision and recall from the
shared scorer (``score_extraction.py``, run as a script; ``n/a`` when it is absent). The structured-output
mode is negotiated as in production (or forced with ``--structured-output``).

Nothing is copied from the shared folder into the repository; the per-message report is written to a
temporary directory (or ``--report``). Logs carry counts and durations, never message text.
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Literal

REPO_SHARED = Path(__file__).resolve().parents[3].parent / "shared"
EXTRACTION = Path("bench") / "extraction"
DEV_SETS = ("dev.jsonl", "dev2.jsonl")
SCORER = "score_extraction.py"


def find_dev_sets(data: list[Path] | None) -> list[Path]:
    """The given files that exist, else the shared dev sets next to the working directory or the repository."""
    if data:
        return [p for p in data if p.exists()]
    for base in (Path.cwd().parent / "shared", REPO_SHARED):
        found = [base / EXTRACTION / name for name in DEV_SETS if (base / EXTRACTION / name).exists()]
        if found:
            return found
    return []


def load_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    s = sorted(values)
    k = max(0, min(len(s) - 1, math.ceil(q / 100.0 * len(s)) - 1))
    return s[k]


def _speaker_name(ent: Any) -> str:
    return "USER" if ent.attributes.get("is_speaker") else ent.name


async def run_set(rows: list[dict[str, Any]], config: Any, report: Any, console: Any) -> list[dict[str, Any]]:
    """One dev set through a fresh memory; writes one report line per message, returns per-message stats."""
    from loregraph.extract.llm import LLMExtractor
    from loregraph.memory import Memory, Message
    from loregraph.models.llm import LLMClient

    stats: list[dict[str, Any]] = []
    client = LLMClient(config)
    with tempfile.TemporaryDirectory(prefix="loregraph-llm-real-") as tmp:
        m = await Memory.open(f"sqlite:///{Path(tmp) / 'bench.db'}", extractor=LLMExtractor(client))
        try:
            for n, row in enumerate(rows, 1):
                role: Literal["user", "assistant", "system"] = \
                    row["role"] if row.get("role") in ("user", "assistant", "system") else "user"
                fields: dict[str, Any] = {"timestamp": row["timestamp"]} if row.get("timestamp") else {}
                msg = Message(content=row["content"], role_type=role, role=row.get("speaker") or row.get("user_id"),
                              name=row.get("message_id") or str(n), **fields)
                (res,) = await m.add_messages(row["user_id"], [msg], conversation_id=row.get("conversation_id"))
                notes = res.extraction_notes
                usage = notes.get("usage") or {}
                stats.append({"calls": int(usage.get("calls", 0)), "prompt_tokens": int(usage.get("prompt_tokens", 0)),
                              "completion_tokens": int(usage.get("completion_tokens", 0)),
                              "ms": float(notes.get("llm_ms", 0.0)), "degraded": notes.get("degraded"),
                              "fallbacks": int(usage.get("fallbacks", 0)), "mode": notes.get("mode"),
                              "dropped": int(notes.get("dropped_items", 0))})
                ents = {e.id: e for e in res.entities}
                missing = [x for f in res.facts for x in (f.source_id, f.target_id) if x not in ents]
                for e in await m.get_entities(row["user_id"], missing):
                    ents[e.id] = e

                def name(eid: str, ents: dict[str, Any] = ents) -> str:
                    e = ents.get(eid)
                    return _speaker_name(e) if e is not None else "?"

                report.write(json.dumps({
                    "message_id": row.get("message_id") or str(n),
                    "entities": [{"name": e.name, "type": e.type} for e in res.entities
                                 if not e.attributes.get("is_speaker")],
                    "relations": [{"source": name(f.source_id), "type": f.type, "target": name(f.target_id)}
                                  for f in res.facts]}) + "\n")
                if n % 10 == 0:
                    console.print(f"  {n}/{len(rows)} messages")
        finally:
            await m.close()
            client.close()
    return stats


def score(gold: Path, report: Path, scorer: Path | None) -> dict[str, Any] | None:
    """Entity/relation P/R from the shared scorer, run as a script; None when it is absent or fails."""
    if scorer is None or not scorer.exists():
        return None
    proc = subprocess.run([sys.executable, str(scorer), str(gold), str(report), "--json"], capture_output=True,
                          text=True, timeout=300, check=False)
    if proc.returncode != 0:
        return None
    try:
        result: dict[str, Any] = json.loads(proc.stdout)
    except ValueError:
        return None
    return result


def probe(config: Any) -> str | None:
    """None when the endpoint answers ``GET /models``, else a one-line reason."""
    import openai

    c = openai.OpenAI(base_url=config.base_url, api_key=config.api_key or "not-needed", timeout=60.0, max_retries=0)
    try:
        c.models.list()
    except openai.APITimeoutError:
        return None  # listening but busy (a local server answers one request at a time)
    except openai.APIConnectionError:
        return f"cannot connect to {config.base_url}"
    except openai.APIStatusError:
        return None  # reachable; some servers have no /models
    finally:
        c.close()
    return None


async def run_llm_real_bench(*, base_url: str, model: str, console: Any, data: list[Path] | None = None,
                             api_key: str | None = None, structured_output: str = "auto", max_tokens: int = 1024,
                             timeout: float = 120.0, limit: int | None = None,
                             report: Path | None = None) -> dict[str, Any] | None:
    """Run the dev sets through the endpoint; prints a summary and the machine-readable last line."""
    from loregraph.models.llm import LLMConfig

    paths = find_dev_sets(data)
    if not paths:
        console.print(f"skipped: no dev sets at {[str(p) for p in data] if data else '../shared/' + str(EXTRACTION)} "
                      "(the shared folder is absent)")
        print("llm_real skipped: dev sets not found")
        return None
    config = LLMConfig(model=model, base_url=base_url, api_key=api_key, max_tokens=max_tokens, timeout=timeout,
                       structured_output=structured_output)  # type: ignore[arg-type]
    reason = probe(config)
    if reason:
        console.print(f"error: {reason}")
        print(f"llm_real failed: {reason}")
        return None
    out_dir = Path(tempfile.mkdtemp(prefix="loregraph-llm-real-")) if report is None else report
    out_dir.mkdir(parents=True, exist_ok=True)
    all_stats: list[dict[str, Any]] = []
    gold_all, report_all = out_dir / "gold.all.jsonl", out_dir / "report.all.jsonl"
    with gold_all.open("w", encoding="utf-8") as gold_fh, report_all.open("w", encoding="utf-8") as rep_all:
        for path in paths:
            rows = load_rows(path)[:limit] if limit else load_rows(path)
            console.print(f"{path.name}: {len(rows)} messages -> {model} at {base_url}")
            rep_path = out_dir / f"report.{path.stem}.jsonl"
            t0 = time.perf_counter()
            with rep_path.open("w", encoding="utf-8") as rep:
                stats = await run_set(rows, config, rep, console)
            all_stats += stats
            for r in rows:
                gold_fh.write(json.dumps(r) + "\n")
            rep_all.write(rep_path.read_text(encoding="utf-8"))
            ok = sum(1 for s in stats if not s["degraded"])
            console.print(f"{path.name}: {ok}/{len(stats)} validated in {time.perf_counter() - t0:.0f} s")
            part = out_dir / f"gold.{path.stem}.jsonl"
            part.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
            s = score(part, rep_path, path.parent / SCORER)
            if s is not None:
                console.print(f"  entity P {s['entity']['precision']:.3f} R {s['entity']['recall']:.3f}   "
                              f"relation P {s['relation']['precision']:.3f} R {s['relation']['recall']:.3f}")
    n = len(all_stats)
    total = score(gold_all, report_all, paths[0].parent / SCORER)
    validated = sum(1 for s in all_stats if not s["degraded"])
    one_call = sum(1 for s in all_stats if not s["degraded"] and s["calls"] == 1)
    ms = [s["ms"] for s in all_stats]
    reasons = Counter(str(s["degraded"]) for s in all_stats if s["degraded"])
    modes = Counter(str(s["mode"]) for s in all_stats if s["mode"])
    summary: dict[str, Any] = {
        "messages": n,
        "calls_per_message": sum(s["calls"] for s in all_stats) / n,
        "prompt_tokens_per_message": sum(s["prompt_tokens"] for s in all_stats) / n,
        "completion_tokens_per_message": sum(s["completion_tokens"] for s in all_stats) / n,
        "latency_p50_ms": percentile(ms, 50), "latency_p95_ms": percentile(ms, 95),
        "validated_share": validated / n, "one_call_share": one_call / n,
        "entity_p": total["entity"]["precision"] if total else None,
        "entity_r": total["entity"]["recall"] if total else None,
        "relation_p": total["relation"]["precision"] if total else None,
        "relation_r": total["relation"]["recall"] if total else None,
    }
    console.print(f"modes used: {dict(modes)}; degraded: {dict(reasons) or 'none'}; dropped items: "
                  f"{sum(s['dropped'] for s in all_stats)}; report in {out_dir}")
    console.print(f"latency mean {statistics.fmean(ms):.0f} ms" if ms else "no latency")

    def fmt(v: float | None, digits: int = 3) -> str:
        return "n/a" if v is None else f"{v:.{digits}f}"

    print(f"llm_real messages={n} calls_per_message={summary['calls_per_message']:.2f} "
          f"prompt_tokens_per_message={summary['prompt_tokens_per_message']:.0f} "
          f"latency_p50_ms={summary['latency_p50_ms']:.0f} latency_p95_ms={summary['latency_p95_ms']:.0f} "
          f"validated_share={summary['validated_share']:.3f} one_call_share={summary['one_call_share']:.3f} "
          f"entity_p={fmt(summary['entity_p'])} entity_r={fmt(summary['entity_r'])} "
          f"relation_p={fmt(summary['relation_p'])} relation_r={fmt(summary['relation_r'])}")
    return summary
