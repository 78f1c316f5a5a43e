"""The extraction report of ``loregraph extract`` (format of the shared extraction gold set's GUIDELINES).

One JSON line per message: the entities and relationships extracted from it after resolution, the
speaking user written as ``USER``; then one line with every user's active and inactive relationships
and entity counts.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from loregraph.graph.types import Entity, Fact


def _name(ent: Entity | None) -> str:
    if ent is None:
        return "?"
    return "USER" if ent.attributes.get("is_speaker") else ent.name


def _rel(fact: Fact, names: dict[str, Entity]) -> dict[str, str]:
    return {"source": _name(names.get(fact.source_id)), "type": fact.type, "target": _name(names.get(fact.target_id))}


async def run_extract_report(rows: list[dict[str, Any]], db: str, out: TextIO) -> None:
    """Ingest ``rows`` (message records) into ``db`` in order, writing the report to ``out``."""
    from loregraph.graph.messages import Message
    from loregraph.memory import Memory

    m = await Memory.open(db)
    groups: list[str] = []
    try:
        for n, obj in enumerate(rows, 1):
            try:
                group, msg = Message.from_record(obj)
            except Exception as exc:
                raise ValueError(f"message {n}: {exc}") from exc
            if group not in groups:
                groups.append(group)
            (res,) = await m.add_messages(group, [msg], conversation_id=obj.get("conversation_id"))
            ents = {e.id: e for e in res.entities}
            missing = [x for f in res.facts for x in (f.source_id, f.target_id) if x not in ents]
            for e in await m.get_entities(group, missing):
                ents[e.id] = e
            line = {
                "message_id": obj.get("message_id") or msg.name or str(n),
                "entities": [{"name": e.name, "type": e.type} for e in res.entities
                             if not e.attributes.get("is_speaker")],
                "relations": [_rel(f, ents) for f in res.facts],
                "invalidated": [_rel(f, ents) for f in res.invalidated],
            }
            out.write(json.dumps(line) + "\n")
            out.flush()
        final: dict[str, Any] = {}
        counts: dict[str, int] = {}
        for group in groups:
            every = await m.list_facts(group, current=False)
            ids = list({x for f in every for x in (f.source_id, f.target_id)})
            names = {e.id: e for e in await m.get_entities(group, ids)}
            final[group] = {
                "active": [_rel(f, names) for f in every if f.is_current()],
                "inactive": [_rel(f, names) for f in every if not f.is_current()],
            }
            counts[group] = sum(1 for e in await m.list_entities(group) if not e.attributes.get("is_speaker"))
        out.write(json.dumps({"final_state": final, "entity_count": counts}) + "\n")
    finally:
        await m.close()
