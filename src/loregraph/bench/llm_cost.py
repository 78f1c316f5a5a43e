"""``loregraph bench llm-cost``: model calls and prompt tokens per message, loregraph vs graphiti-core.

Both sides ingest the same messages (the dev conversations of ``../shared/bench/extraction/dev.jsonl``,
in order, one graph per user) and both are answered with equally minimal valid responses built from
the gold labels of each message: the entities and relations the message states, and empty answers to
every other question (no duplicates, no contradictions, no dates, no summary updates).

- loregraph: the real ``LLMExtractor`` and ``openai`` client against the scripted OpenAI-compatible
  server on 127.0.0.1, through the full pipeline (real SQLite, real local embeddings). The server
  counts every request.
- graphiti-core (optional ``bench`` extra) with its embedded Kuzu driver and an ``LLMClient`` subclass
  that answers its prompts in-process and counts every ``generate_response`` call. Embeddings come from
  the same local model. If graphiti-core is not importable here, ``--graphiti-python`` (or
  ``LOREGRAPH_GRAPHITI_PYTHON``) names another interpreter that has it; the graphiti half then runs
  there in a subprocess.

Tokens are counted the same way for both sides: characters / 4 (``approx_tokens``) over the text of
every message sent; for loregraph the JSON schema sent as ``response_format`` is counted too (graphiti
puts its schema inside the prompt text, which is counted; the extra copy a structured-output client
would also send for graphiti is not). No BPE tokenizer files can be downloaded here, so tiktoken is not
used; the same rule on both sides keeps the ratio fair.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

try:
    from loregraph.models.llm import approx_tokens
except ImportError:  # the graphiti half, run alone by an interpreter without loregraph's dependencies
    import importlib.util

    _spec = importlib.util.spec_from_file_location(
        "_loregraph_models_llm", Path(__file__).resolve().parents[1] / "models" / "llm.py")
    assert _spec is not None and _spec.loader is not None
    _llm = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_llm)
    approx_tokens = _llm.approx_tokens  # the same counting rule on both sides

REPO_SHARED = Path(__file__).resolve().parents[3].parent / "shared"
DEV_PATH = Path("bench") / "extraction" / "dev.jsonl"


def find_dev(data: Path | None) -> Path | None:
    if data is not None:
        return data if data.exists() else None
    for base in (Path.cwd().parent / "shared", REPO_SHARED):
        p = base / DEV_PATH
        if p.exists():
            return p
    return None


def load_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _first(v: Any) -> str:
    return str(v[0] if isinstance(v, list) else v)


def _gold(row: dict[str, Any]) -> tuple[list[tuple[str, str, list[str]]], list[tuple[str, str, str]]]:
    """(name, type, aliases) entities and (source, TYPE, target) relations; USER stands for the speaker."""
    ents: dict[str, tuple[str, str, list[str]]] = {}
    for e in row.get("entities") or []:
        ents.setdefault(e["name"], (e["name"], e.get("type") or "entity", list(e.get("aliases") or [])))
    rels = []
    for r in row.get("relations") or []:
        src, dst = _first(r["source"]), _first(r["target"])
        for name in (src, dst):
            if name != "USER" and name not in ents:
                ents[name] = (name, "entity", [])
        rels.append((src, _first(r["type"]), dst))
    return list(ents.values()), rels


def loregraph_answer(row: dict[str, Any]) -> dict[str, Any]:
    """The gold extraction in the LLMExtractor's answer format."""
    ents, rels = _gold(row)
    ref = {name: f"n{i}" for i, (name, _, _) in enumerate(ents, 1)}
    speaker = row.get("user_id") or "User"

    def end(name: str) -> str:
        return "SPEAKER" if name == "USER" else ref[name]

    def said(name: str) -> str:
        return speaker if name == "USER" else name

    return {
        "entities": [{"ref": ref[n], "name": n, "type": t, **({"aliases": a} if a else {})} for n, t, a in ents],
        "relations": [{"source": end(s), "type": t, "target": end(d), "fact": f"{said(s)} {t} {said(d)}"}
                      for s, t, d in rels],
        "ended": [],
    }


# ---- loregraph half -------------------------------------------------------------------------------------
async def run_loregraph(rows: list[dict[str, Any]], preprocessing: str | None = None) -> dict[str, Any]:
    from loregraph.bench.scripted_llm import ScriptedLLMServer
    from loregraph.extract.llm import LLMExtractor
    from loregraph.extract.prompts import ExtractionConfig
    from loregraph.memory import Memory, Message
    from loregraph.models.llm import LLMClient, LLMConfig, LLMGovernor

    by_content = {r["content"]: r for r in rows}

    def respond(call: Any) -> dict[str, Any]:
        row = by_content.get(call.current.strip())
        return loregraph_answer(row) if row else {"entities": [], "relations": [], "ended": []}

    usage: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="loregraph-llm-cost-") as tmp, \
            ScriptedLLMServer(responder=respond) as server:
        client = LLMClient(LLMConfig(model="scripted", base_url=server.base_url, api_key="bench"),
                           governor=LLMGovernor(concurrency=4))
        extractor = LLMExtractor(client, ExtractionConfig(preprocessing_prompt=preprocessing))
        m = await Memory.open(f"sqlite:///{Path(tmp) / 'bench.db'}", extractor=extractor)
        facts = 0
        try:
            for row in rows:
                msg = Message(content=row["content"], role_type="user", role=row.get("user_id"),
                              timestamp=row.get("timestamp") or datetime.now().astimezone(),
                              name=row.get("message_id") or "")
                (res,) = await m.add_messages(row["user_id"], [msg], conversation_id=row.get("conversation_id"))
                usage.update(res.usage)
                facts += len(res.facts)
        finally:
            await m.close()
            client.close()
        calls = server.calls
    return {"messages": len(rows), "calls": len(calls), "prompt_tokens": sum(c.prompt_tokens for c in calls),
            "completion_tokens": sum(c.completion_tokens for c in calls), "facts": facts,
            "reported_prompt_tokens": usage.get("prompt_tokens", 0)}


# ---- graphiti half --------------------------------------------------------------------------------------
_PROMPT: contextvars.ContextVar[str] = contextvars.ContextVar("graphiti_prompt_name", default="")


def _minimal(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """The smallest value a JSON schema accepts (required fields only)."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return _minimal(defs[schema["$ref"].split("/")[-1]], defs)
    if "anyOf" in schema:
        options = schema["anyOf"]
        return None if any(o.get("type") == "null" for o in options) else _minimal(options[0], defs)
    if "default" in schema:
        return schema["default"]
    t = schema.get("type")
    if t == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {k: _minimal(props[k], defs) for k in schema.get("required", []) if k in props}
    return {"array": [], "string": "", "integer": -1, "number": 0, "boolean": False, "null": None}.get(str(t))


def graphiti_answer(prompt_name: str, schema: dict[str, Any] | None, row: dict[str, Any]) -> dict[str, Any]:
    ents, rels = _gold(row)
    speaker = row.get("user_id") or "User"

    def name(n: str) -> str:
        return speaker if n == "USER" else n

    entities = [{"name": speaker, "entity_type_id": 0}] + [{"name": n, "entity_type_id": 0} for n, _, _ in ents]
    edges = [{"source_entity_name": name(s), "target_entity_name": name(d), "relation_type": t,
              "fact": f"{name(s)} {t} {name(d)}", "valid_at": None, "invalid_at": None} for s, t, d in rels]
    if prompt_name.startswith("extract_nodes.extract_") and prompt_name.split(".")[1] in (
            "extract_message", "extract_text", "extract_json"):
        return {"extracted_entities": entities}
    if prompt_name == "extract_edges.edge":
        return {"edges": edges}
    if prompt_name == "extract_nodes_and_edges.extract_message":
        return {"extracted_entities": entities, "extracted_facts": edges}
    return _minimal(schema) if schema else {}


async def run_graphiti(rows: list[dict[str, Any]]) -> dict[str, Any]:
    import logging
    import warnings

    os.environ.setdefault("GRAPHITI_TELEMETRY_ENABLED", "false")
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    logging.getLogger("graphiti_core").setLevel(logging.ERROR)
    from graphiti_core import Graphiti
    from graphiti_core.cross_encoder.client import CrossEncoderClient
    from graphiti_core.driver.kuzu_driver import KuzuDriver
    from graphiti_core.embedder.client import EmbedderClient
    from graphiti_core.llm_client.client import LLMClient as GraphitiLLMClient
    from graphiti_core.llm_client.config import LLMConfig as GraphitiLLMConfig
    from graphiti_core.nodes import EpisodeType

    state: dict[str, Any] = {"row": None}
    counts: Counter[str] = Counter()
    by_prompt: Counter[str] = Counter()

    class CountingLLM(GraphitiLLMClient):
        async def generate_response(self, messages, response_model=None, max_tokens=None, model_size=None,
                                    group_id=None, prompt_name=None, **kw):
            _PROMPT.set(prompt_name or "")
            args = {} if model_size is None else {"model_size": model_size}
            return await super().generate_response(messages, response_model, max_tokens, group_id=group_id,
                                                   prompt_name=prompt_name, **args, **kw)

        async def _generate_response(self, messages, response_model=None, max_tokens=0, model_size=None,
                                     **kw):
            name = _PROMPT.get()
            schema = response_model.model_json_schema() if response_model is not None else None
            answer = graphiti_answer(name, schema, state["row"])
            counts["calls"] += 1
            by_prompt[name or "unnamed"] += 1
            counts["prompt_tokens"] += sum(approx_tokens(m.content) for m in messages)
            counts["completion_tokens"] += approx_tokens(json.dumps(answer))
            return answer

    embed = _embedder()

    class LocalEmbedder(EmbedderClient):
        async def create(self, input_data):
            text = input_data if isinstance(input_data, str) else " ".join(map(str, input_data))
            return embed([text])[0]

        async def create_batch(self, input_data_list):
            return embed(list(input_data_list))

    class NoRerank(CrossEncoderClient):
        async def rank(self, query, passages):
            return [(p, 1.0 / (i + 1)) for i, p in enumerate(passages)]

    with tempfile.TemporaryDirectory(prefix="graphiti-llm-cost-") as tmp:
        driver = KuzuDriver(db=str(Path(tmp) / "graph.kuzu"))
        if not hasattr(driver, "_database"):  # graphiti-core 0.31 reads it, the Kuzu driver never sets it
            driver._database = ""
        g = Graphiti(graph_driver=driver, llm_client=CountingLLM(GraphitiLLMConfig(api_key="bench", model="scripted")),
                     embedder=LocalEmbedder(), cross_encoder=NoRerank())
        try:
            # the Kuzu driver's own build_indices_and_constraints is a no-op; its searches need the FTS indexes
            from graphiti_core.driver.driver import GraphProvider
            from graphiti_core.graph_queries import get_fulltext_indices

            await driver.execute_query("LOAD fts;")
            for q in get_fulltext_indices(GraphProvider.KUZU):
                await driver.execute_query(q)
            facts = 0
            for row in rows:
                state["row"] = row
                ts = datetime.fromisoformat(str(row.get("timestamp") or datetime.now().isoformat())
                                            .replace("Z", "+00:00"))
                res = await g.add_episode(name=row.get("message_id") or "message",
                                          episode_body=f"{row.get('user_id') or 'user'}: {row['content']}",
                                          source_description="chat", reference_time=ts, source=EpisodeType.message,
                                          group_id=row["user_id"])
                facts += len(res.edges)
        finally:
            with contextlib.suppress(Exception):
                await g.close()
            client = getattr(driver, "client", None)
            if client is not None and hasattr(client, "close"):
                client.close()  # from this thread, not from a garbage-collected executor thread
    return {"messages": len(rows), "calls": counts["calls"], "prompt_tokens": counts["prompt_tokens"],
            "completion_tokens": counts["completion_tokens"], "facts": facts, "by_prompt": dict(by_prompt)}


def _embedder() -> Any:
    """The local MiniLM model when loregraph's models are importable here, else a hashed bag of words."""
    try:
        from loregraph.models.embedder import get_default_embedder

        model = get_default_embedder()
        return lambda texts: [v.tolist() for v in model.embed(texts)]
    except Exception:
        import hashlib
        import math

        def hashed(texts: list[str]) -> list[list[float]]:
            out = []
            for t in texts:
                v = [0.0] * 256
                for w in t.lower().split():
                    v[int(hashlib.md5(w.encode(), usedforsecurity=False).hexdigest(), 16) % 256] += 1.0
                n = math.sqrt(sum(x * x for x in v)) or 1.0
                out.append([x / n for x in v])
            return out

        return hashed


def graphiti_available() -> bool:
    try:
        import graphiti_core  # noqa: F401
        import kuzu  # noqa: F401
    except ImportError:
        return False
    return True


def run_graphiti_subprocess(python: str, rows_path: Path) -> dict[str, Any]:
    """Run this file as a script under ``python`` (a venv with graphiti-core; loregraph need not be installed
    there: embeddings then fall back to a hashed bag of words)."""
    env = {**os.environ, "GRAPHITI_TELEMETRY_ENABLED": "false"}
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([python, str(Path(__file__).resolve()), "--graphiti", str(rows_path)], env=env,
                          capture_output=True, text=True, timeout=3600, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"graphiti subprocess failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---- the command ----------------------------------------------------------------------------------------
async def run_llm_cost_bench(*, data: Path | None, graphiti_python: str | None, console: Any,
                             preprocessing: str | None = None, limit: int | None = None) -> None:
    path = find_dev(data)
    if path is None:
        console.print(f"skipped: no gold data at {data or '../shared/' + str(DEV_PATH)} "
                      "(the shared folder is absent)")
        print("llm-cost skipped: dev.jsonl not found")
        return
    rows = load_rows(path)[:limit] if limit else load_rows(path)
    console.print(f"{len(rows)} messages from {path}")
    ours = await run_loregraph(rows, preprocessing)
    n = ours["messages"]
    console.print(f"loregraph: {ours['calls']} calls, {ours['prompt_tokens']} prompt tokens, "
                  f"{ours['completion_tokens']} completion tokens, {ours['facts']} facts written")
    graphiti_python = graphiti_python or os.environ.get("LOREGRAPH_GRAPHITI_PYTHON")
    theirs: dict[str, Any] | None = None
    try:
        if graphiti_python:
            with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
                fh.write("\n".join(json.dumps(r) for r in rows))
            theirs = run_graphiti_subprocess(graphiti_python, Path(fh.name))
            os.unlink(fh.name)
        elif graphiti_available():
            theirs = await run_graphiti(rows)
        else:
            console.print("graphiti-core is not installed here: pip install 'loregraph[bench]', or pass "
                          "--graphiti-python with an interpreter that has it")
    except Exception as exc:
        console.print(f"graphiti half failed: {type(exc).__name__}: {exc}")
    line = (f"llm calls_per_message={ours['calls'] / n:.2f} "
            f"prompt_tokens_per_message={ours['prompt_tokens'] / n:.0f}")
    if theirs is not None:
        console.print(f"graphiti-core: {theirs['calls']} calls, {theirs['prompt_tokens']} prompt tokens, "
                      f"{theirs['completion_tokens']} completion tokens, {theirs['facts']} edges")
        by_prompt = sorted(theirs["by_prompt"].items(), key=lambda kv: -kv[1])
        console.print("graphiti calls by prompt: " + ", ".join(f"{k} {v}" for k, v in by_prompt))
        g_calls, g_tokens = theirs["calls"] / n, theirs["prompt_tokens"] / n
        console.print(f"ratio: calls {ours['calls'] / n / g_calls:.2f}x, prompt tokens "
                      f"{ours['prompt_tokens'] / n / g_tokens:.2f}x of graphiti-core's")
        line += f" graphiti_calls_per_message={g_calls:.2f} graphiti_prompt_tokens_per_message={g_tokens:.0f}"
    else:
        line += " graphiti_calls_per_message=n/a graphiti_prompt_tokens_per_message=n/a"
    print(line)


def _main(argv: list[str]) -> int:
    """``python llm_cost.py --graphiti ROWS.jsonl``: the graphiti half alone, JSON on the last line."""
    if len(argv) == 2 and argv[0] == "--graphiti":
        rows = load_rows(Path(argv[1]))
        print(json.dumps(asyncio.run(run_graphiti(rows))))
        return 0
    print("usage: python llm_cost.py --graphiti ROWS.jsonl", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
