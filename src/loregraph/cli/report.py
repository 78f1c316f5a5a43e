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


class _TraceSpy:
    """Wraps the pipeline's extractor to keep each extraction's relation traces (``--explain``)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "extractor")
        self.last: Any = None

    def extract(self, content: str, context: Any) -> Any:
        self.last = self.inner.extract(content, context)
        return self.last

    def traces(self) -> list[dict[str, str]]:
        """Every relation the extractor produced for the last message, with the stage/rule/example behind it."""
        x = self.last
        if x is None:
            return []
        names = {e.ref: e.name for e in x.entities} | {"SPEAKER": "USER"}
        return [{"source": names.get(r.source, r.source), "type": r.type, "target": names.get(r.target, r.target),
                 "trace": getattr(r, "trace", "") or "?"} for r in x.relations]


async def run_extract_report(rows: list[dict[str, Any]], db: str, out: TextIO, explain: bool = False) -> None:
    """Ingest ``rows`` (message records) into ``db`` in order, writing the report to ``out``; with ``explain``,
    each line also lists the stage and rule or example phrase behind every relation."""
    from loregraph.assembly.components import default_extractor
    from loregraph.graph.messages import Message
    from loregraph.memory import Memory

    spy = _TraceSpy(default_extractor()) if explain else None
    m = await Memory.open(db, extractor=spy)
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
            if spy is not None:
                line["explain"] = spy.traces()  # per relation: the stage and rule or example phrase
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
