"""``loregraph bench locomo-extract``: what the extractor makes of everyday chat, dumped for a reader to judge.

Every turn of each LoCoMo conversation is ingested as a message (speaker as role, the session's date-time as
timestamp, the ``dia_id`` as message name), as in ``bench locomo``. Written to ``--out`` (JSON lines, outside
the repository): one line per new fact and per new entity with the turn it came from, the fact's ``valid_at``
/ ``invalid_at`` and attributes, so a seeded random sample can be judged by hand. Prints counts and the
ingest rate. The data set (CC BY-NC) is read from ../shared/bench/locomo/ and never copied.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from loregraph.bench.locomo import DEFAULT_DATA, load


def _iso(v: Any) -> str | None:
    return v.isoformat() if v is not None else None


async def run_locomo_extract(*, data: Path | None, out: Path, conversations: int | None, db: str | None,
                             console: Console) -> dict[str, Any]:
    """Ingest the conversations and write every new fact and entity with its source turn to ``out``."""
    from loregraph.memory import Memory, Message

    path = Path(data) if data else DEFAULT_DATA
    if not path.exists():
        console.print(f"LoCoMo data not found at {path} (it lives in ../shared/bench/locomo); skipping.")
        return {}
    samples = load(path)[: conversations or None]
    url = db or f"sqlite:///{Path(tempfile.mkdtemp(prefix='loregraph-locomo-x-')) / 'locomo.db'}"
    m = await Memory.open(url)
    counts: dict[str, float] = {"turns": 0, "facts": 0, "entities": 0}
    seen_entities: set[str] = set()
    seen_facts: set[str] = set()
    t0 = time.perf_counter()
    try:
        with out.open("w", encoding="utf-8") as fh:
            for sample in samples:
                group = f"locomo-{sample.sample_id}"
                for turn in sample.turns:
                    msg = Message(content=turn.text, role_type="user", role=turn.speaker, name=turn.dia_id,
                                  timestamp=turn.when)
                    (res,) = await m.add_messages(group, [msg],
                                                  conversation_id=f"{group}:{turn.dia_id.split(':')[0]}")
                    counts["turns"] += 1
                    ents = {e.id: e for e in res.entities}
                    missing = [x for f in res.facts for x in (f.source_id, f.target_id) if x not in ents]
                    for e in await m.get_entities(group, missing):
                        ents[e.id] = e
                    base = {"conv": group, "dia_id": turn.dia_id, "speaker": turn.speaker,
                            "when": _iso(turn.when), "text": turn.text}
                    for e in res.entities:
                        if e.id in seen_entities or e.attributes.get("is_speaker"):
                            continue
                        seen_entities.add(e.id)
                        counts["entities"] += 1
                        fh.write(json.dumps({"kind": "entity", **base, "name": e.name, "type": e.type,
                                             "entity_attributes": e.attributes}) + "\n")
                    for f in res.facts:
                        if f.id in seen_facts:
                            continue
                        seen_facts.add(f.id)
                        counts["facts"] += 1
                        src, tgt = ents.get(f.source_id), ents.get(f.target_id)
                        fh.write(json.dumps({
                            "kind": "fact", **base, "source": src.name if src else "?",
                            "source_type": src.type if src else "?", "type": f.type,
                            "target": tgt.name if tgt else "?", "target_type": tgt.type if tgt else "?",
                            "fact": f.fact, "valid_at": _iso(f.valid_at), "invalid_at": _iso(f.invalid_at),
                            "attributes": f.attributes}) + "\n")
                    for f in res.invalidated:
                        fh.write(json.dumps({"kind": "ended", **base, "fact": f.fact,
                                             "invalid_at": _iso(f.invalid_at)}) + "\n")
    finally:
        await m.close()
    secs = time.perf_counter() - t0
    counts["seconds"] = round(secs, 1)
    console.print(f"locomo-extract: {counts['turns']} turns, {counts['facts']} facts, {counts['entities']} entities "
                  f"in {secs:.1f}s ({counts['turns'] / max(secs, 1e-9):.1f} turns/s) → {out}")
    return counts
