"""Knowledge-interface graph deltas (spec 001): universes, entities, blocks and edges from another service, checked
against the knowledge schema and written through the one write path (``Store.apply``) in one transaction.

A request is translated into a ``GraphDelta``: universes and entities become entities (type from ``node.<type>``,
the full label chain in ``attributes.labels``), every entity gets an ``IS_PART_OF`` edge to its universe (the Real
World universe when it names none), blocks become blocks (level and root entity resolved from their
``DESCRIBED_BY`` / ``SUMMARIZES`` parent chain, in the request or already in the graph), edges become facts. Every
violation of the request — ids, visibility, user ids, types, properties, edge rules — is collected before anything
is written and raised at once as a ``SchemaViolationError`` naming record, field and rule; cardinality is checked by
the store on the graph after the write, inside the same transaction.
"""

from __future__ import annotations

import logging
import math
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from loregraph.errors import SchemaViolationError, Violation
from loregraph.graph.types import BLOCK_TYPE, Block, Entity, Fact, GraphDelta, utcnow
from loregraph.models.embedder import Embedder
from loregraph.schema import Schema
from loregraph.store import Store, TimeFilter
from loregraph.store.projection import BlockPoint, BlockProjection

log = logging.getLogger("loregraph.knowledge")

REAL_WORLD_UNIVERSE_ID = "9d7f0fa5-78c1-4805-9efb-3f8f16090d7f"
REAL_WORLD_UNIVERSE_NAME = "Real World"
UNIVERSE_TYPE = "universe"
PART_OF_EDGE = "IS_PART_OF"
DESCRIBED_BY = "DESCRIBED_BY"
SUMMARIZES = "SUMMARIZES"
_NS = uuid.UUID("6f1c2b7e-2d0c-4c55-9a43-5a1f3b1de7a1")  # namespace of the ids the service derives
VISIBILITIES = ("PRIVATE", "SHARED")
Visibility = Literal["PRIVATE", "SHARED"]
RESERVED_PROPERTIES = ("user_id", "visibility", "labels")


@dataclass
class UniverseRecord:
    id: str
    name: str
    user_id: str = ""
    visibility: str = "SHARED"


@dataclass
class EntityRecord:
    id: str
    type_id: str
    properties: dict[str, Any] = field(default_factory=dict)
    universe_id: str = ""
    user_id: str = ""
    visibility: str = ""


@dataclass
class BlockRecord:
    id: str
    type_id: str = "node.block"
    properties: dict[str, Any] = field(default_factory=dict)
    user_id: str = ""
    visibility: str = ""


@dataclass
class EdgeRecord:
    source_id: str
    target_id: str
    edge_type: str
    properties: dict[str, Any] = field(default_factory=dict)
    id: str = ""
    user_id: str = ""
    visibility: str = ""


@dataclass
class KnowledgeDelta:
    """What ``UpsertGraphDelta`` carries (no request-level user or visibility: each record has its own)."""

    universes: list[UniverseRecord] = field(default_factory=list)
    entities: list[EntityRecord] = field(default_factory=list)
    blocks: list[BlockRecord] = field(default_factory=list)
    edges: list[EdgeRecord] = field(default_factory=list)


@dataclass
class UpsertResult:
    universes: int = 0
    entities: int = 0
    blocks: int = 0
    edges: int = 0
    block_ids: list[str] = field(default_factory=list)


def is_uuid(value: str) -> bool:
    """An RFC 4122 UUID string (canonical 8-4-4-4-12 form, RFC 4122 variant)."""
    try:
        u = uuid.UUID(value)
    except (ValueError, TypeError, AttributeError):
        return False
    return str(u) == value.lower() and u.variant == uuid.RFC_4122


def derived_id(*parts: str) -> str:
    return str(uuid.uuid5(_NS, "|".join(parts)))


def _unstorable(value: Any) -> str | None:
    """Why a value cannot be stored as JSON text on every backend (NUL characters, NaN/infinity), or None."""
    if isinstance(value, str):
        return "must not contain NUL characters" if "\x00" in value else None
    if isinstance(value, float):
        return None if math.isfinite(value) else "numbers must be finite"
    if isinstance(value, dict):
        return next((p for k, v in value.items() if (p := _unstorable(k) or _unstorable(v))), None)
    if isinstance(value, list | tuple):
        return next((p for v in value if (p := _unstorable(v))), None)
    return None


def _plain(value: Any) -> Any:
    """JSON-ish values with integral floats as ints (protobuf Struct numbers are all doubles)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


class KnowledgeWriter:
    """Validates and applies knowledge deltas for one store and schema (blocks embedded with ``embedder``)."""

    def __init__(self, store: Store, schema: Schema, embedder: Embedder, projection: BlockProjection | None = None):
        self.store = store
        self.schema = schema
        self.embedder = embedder
        self.projection = projection
        # test hooks: called inside the transaction after the graph write / after the projection upsert
        self.fail_after_graph_write: Callable[[], None] | None = None
        self.fail_after_projection: Callable[[], None] | None = None

    # ---- type ids -------------------------------------------------------------------------------
    def node_type(self, type_id: str) -> str | None:
        """``node.person`` → ``person`` when the schema knows it."""
        if not type_id.startswith("node."):
            return None
        t = type_id[5:]
        return t if t in self.schema.doc.node_types else None

    def edge_type(self, name: str) -> str | None:
        """``RELATED_TO`` or ``edge.related_to`` → ``RELATED_TO`` when the schema knows it."""
        t = name[5:].upper() if name.startswith("edge.") else name
        return t if t in self.schema.doc.edge_types else None

    @staticmethod
    def type_id_of(node_type: str) -> str:
        return f"node.{node_type}"

    # ---- translation + payload rules ------------------------------------------------------------
    def _scope(self, rec: str, rid: str, user_id: str, visibility: str, out: list[Violation]) -> None:
        if not user_id or not user_id.strip():
            out.append(Violation(rec, "user_id", "required (every record carries its owner)", rid))
        elif _unstorable(user_id):
            out.append(Violation(rec, "user_id", _unstorable(user_id) or "", rid))
        if visibility not in VISIBILITIES:
            out.append(Violation(rec, "visibility", f"must be PRIVATE or SHARED (got {visibility!r})", rid))

    def _props(self, rec: str, rid: str, props: dict[str, Any], out: list[Violation]) -> dict[str, Any]:
        plain = {}
        for k, v in props.items():
            if k in RESERVED_PROPERTIES:
                out.append(Violation(rec, f"properties.{k}", "reserved: set by the service from the record", rid))
                continue
            problem = _unstorable(v) or _unstorable(k)
            if problem:
                out.append(Violation(rec, f"properties.{k}", problem, rid))
                continue
            plain[k] = _plain(v)
        return plain

    def build(self, group_id: str, req: KnowledgeDelta) -> tuple[GraphDelta, list[Violation]]:
        """The GraphDelta for ``req`` and every payload violation (records named as in the request)."""
        out: list[Violation] = []
        now = utcnow()
        delta = GraphDelta(group_id=group_id)
        seen: dict[str, str] = {}

        def check_id(rec: str, rid: str, fld: str = "id") -> bool:
            if not is_uuid(rid):
                out.append(Violation(rec, fld, f"must be an RFC 4122 UUID string (got {rid!r})", rid or None))
                return False
            if fld == "id":
                if rid in seen:
                    out.append(Violation(rec, "id", f"duplicate id (also {seen[rid]})", rid))
                    return False
                seen[rid] = rec
            return True

        universe_ids = {REAL_WORLD_UNIVERSE_ID}
        for i, u in enumerate(req.universes):
            rec = f"universes[{i}]"
            ok = check_id(rec, u.id)
            if not u.name.strip() or _unstorable(u.name):
                out.append(Violation(rec, "name", _unstorable(u.name) or "must not be empty", u.id))
            self._scope(rec, u.id, u.user_id, u.visibility, out)
            if ok:
                universe_ids.add(u.id)
                delta.entities.append(self._universe(group_id, u.id, u.name, u.user_id, u.visibility, now))

        needs_real_world = False
        entity_map: dict[int, int] = {}  # request entity index → delta fact index of its IS_PART_OF edge
        for i, e in enumerate(req.entities):
            rec = f"entities[{i}]"
            ok = check_id(rec, e.id)
            self._scope(rec, e.id, e.user_id, e.visibility, out)
            tid = self.node_type(e.type_id)
            if tid is None or not self.schema.is_a(tid, "entity"):
                out.append(Violation(rec, "type_id", f"unknown entity type {e.type_id!r} (expected node.<type> of "
                                                     "the knowledge schema deriving from node.entity)", e.id))
                continue
            props = self._props(rec, e.id, e.properties, out)
            out += [Violation(v.record, v.field.replace("attributes.", "properties."), v.message, v.record_id)
                    for v in self.schema.check_node_properties(rec, e.id, tid, props)]
            universe = e.universe_id or REAL_WORLD_UNIVERSE_ID
            if e.universe_id and not check_id(rec, e.universe_id, "universe_id"):
                continue
            if not ok:
                continue
            raw_name = props.get("name")
            name = raw_name if isinstance(raw_name, str) else ""
            if isinstance(raw_name, str) and not name.strip():
                out.append(Violation(rec, "properties.name", "must not be empty", e.id))
            aliases = [a for a in props.get("aliases", []) if isinstance(a, str)] if isinstance(
                props.get("aliases"), list) else []
            attrs = {**props, "user_id": e.user_id, "visibility": e.visibility,
                     "labels": self.schema.label_chain(tid)}
            attrs.pop("aliases", None)
            delta.entities.append(Entity(id=e.id, group_id=group_id, name=name or " ", type=tid, aliases=aliases,
                                         summary=str(props.get("description", "")), attributes=attrs,
                                         created_at=now, updated_at=now))
            if universe == REAL_WORLD_UNIVERSE_ID:
                needs_real_world = True
            entity_map[i] = len(delta.facts)
            delta.facts.append(Fact(
                id=derived_id(group_id, e.id, PART_OF_EDGE), group_id=group_id, source_id=e.id, target_id=universe,
                type=PART_OF_EDGE, fact="", created_at=now,
                attributes={"confidence": 1.0, "status": "active", "context": "universe membership",
                            "user_id": e.user_id, "visibility": e.visibility}))
        if needs_real_world and REAL_WORLD_UNIVERSE_ID not in {u.id for u in req.universes}:
            delta.entities.append(self._universe(group_id, REAL_WORLD_UNIVERSE_ID, REAL_WORLD_UNIVERSE_NAME,
                                                 "system", "SHARED", now))

        block_recs: dict[str, tuple[int, BlockRecord, dict[str, Any]]] = {}
        for i, b in enumerate(req.blocks):
            rec = f"blocks[{i}]"
            ok = check_id(rec, b.id)
            self._scope(rec, b.id, b.user_id, b.visibility, out)
            if (b.type_id or "node.block") != f"node.{BLOCK_TYPE}":
                out.append(Violation(rec, "type_id", f"must be node.block (got {b.type_id!r})", b.id))
                continue
            props = self._props(rec, b.id, b.properties, out)
            out += [Violation(v.record, v.field.replace("attributes.", "properties."), v.message, v.record_id)
                    for v in self.schema.check_node_properties(rec, b.id, BLOCK_TYPE, props)]
            if ok and isinstance(props.get("text"), str):
                block_recs[b.id] = (i, b, props)

        edge_facts: list[tuple[int, Fact]] = []
        parents: dict[str, list[tuple[str, str, int]]] = {}  # block id → (edge type, source id, edge index)
        for i, ed in enumerate(req.edges):
            rec = f"edges[{i}]"
            etype = self.edge_type(ed.edge_type)
            ok = True
            if ed.id:
                ok = check_id(rec, ed.id)
            ok = check_id(rec, ed.source_id, "source_id") and ok
            ok = check_id(rec, ed.target_id, "target_id") and ok
            self._scope(rec, ed.id, ed.user_id, ed.visibility, out)
            if etype is None:
                out.append(Violation(rec, "edge_type", f"unknown edge type {ed.edge_type!r}", ed.id or None))
                continue
            if etype == PART_OF_EDGE:
                out.append(Violation(rec, "edge_type", "IS_PART_OF is written from the entity's universe_id",
                                     ed.id or None))
                continue
            props = self._props(rec, ed.id, ed.properties, out)
            if not ok:
                continue
            fid = ed.id or derived_id(group_id, ed.source_id, etype, ed.target_id)
            fact = Fact(id=fid, group_id=group_id, source_id=ed.source_id, target_id=ed.target_id, type=etype,
                        fact=str(props.get("context", "")), created_at=now,
                        confidence=min(max(float(props["confidence"]), 0.0), 1.0)
                        if isinstance(props.get("confidence"), int | float)
                        and not isinstance(props.get("confidence"), bool) else 1.0,
                        attributes={**props, "user_id": ed.user_id, "visibility": ed.visibility})
            edge_facts.append((i, fact))
            if etype in (DESCRIBED_BY, SUMMARIZES):
                parents.setdefault(ed.target_id, []).append((etype, ed.source_id, i))
            if isinstance(props.get("confidence"), int | float) and not 0 <= props["confidence"] <= 1:
                out.append(Violation(rec, "properties.confidence", "must be between 0 and 1", fid))

        # nodes of the request against the graph: an id names one kind of node; a new type keeps its edges legal
        node_index = {u.id: f"universes[{i}]" for i, u in enumerate(req.universes)}
        node_index.update({e.id: f"entities[{i}]" for i, e in enumerate(req.entities)})
        new_types = {e.id: e.type for e in delta.entities}
        stored_types = self.store.node_types(group_id, [*new_types, *block_recs])
        for nid, t in stored_types.items():
            if nid in block_recs and t != BLOCK_TYPE:
                out.append(Violation(f"blocks[{block_recs[nid][0]}]", "id", f"id names a {t} node in the graph", nid))
            elif nid in new_types and t == BLOCK_TYPE:
                out.append(Violation(node_index.get(nid, "entities"), "id", "id names a block in the graph", nid))
        changed = [nid for nid, t in new_types.items() if stored_types.get(nid, t) not in (t, BLOCK_TYPE)]
        if changed:
            delta_fact_ids = {f.id for f in delta.facts} | {f.id for _, f in edge_facts}
            held = [f for f in self.store.facts_of_entities(group_id, changed, TimeFilter(), limit=100000)
                    if f.id not in delta_fact_ids]
            ends = {x for f in held for x in (f.source_id, f.target_id)} - set(new_types)
            types = {**self.store.node_types(group_id, list(ends)), **new_types}
            for f in held:
                st, tt = types.get(f.source_id), types.get(f.target_id)
                if st and tt and not self.schema.edge_allowed(f.type, st, tt):
                    nid = f.source_id if f.source_id in changed else f.target_id
                    rec = node_index.get(nid, "entities")
                    out.append(Violation(rec, "type_id", f"the new type breaks edge {f.id} in the graph: no edge rule "
                                                         f"allows {st} -[{f.type}]-> {tt}", nid))

        # a block has exactly one parent edge, counting those already in the graph
        new_ids = {f.id for _, f in edge_facts}
        if parents:
            held = self.store.facts_of_entities(group_id, list(parents), TimeFilter(), types=[DESCRIBED_BY, SUMMARIZES])
            for f in held:
                if f.target_id in parents and f.id not in new_ids:
                    for _, _, i in parents[f.target_id]:
                        out.append(Violation(f"edges[{i}]", "target_id", f"block already has a parent edge "
                                             f"({f.type} {f.id}); a block has exactly one parent", f.id))
            for bid, lst in parents.items():
                for _, _, i in lst[1:]:
                    out.append(Violation(f"edges[{i}]", "target_id", "a block has exactly one parent edge (another "
                                         "DESCRIBED_BY/SUMMARIZES edge of this request targets it)", bid))

        # blocks: root entity and level from the parent chain (request first, then the graph)
        stored = {b.id: b for b in self.store.get_blocks(group_id, list(block_recs) + [
            s for lst in parents.values() for _, s, _ in lst])}
        resolved: dict[str, tuple[str, str | None, int]] = {}  # block id → (root entity, parent block, level)

        def resolve(bid: str, trail: tuple[str, ...]) -> tuple[str, str | None, int] | None:
            if bid in resolved:
                return resolved[bid]
            if bid in trail:
                return None
            for etype, src, _ in parents.get(bid, []):
                if etype == DESCRIBED_BY:
                    resolved[bid] = (src, None, 0)
                    return resolved[bid]
            for etype, src, _ in parents.get(bid, []):
                if etype == SUMMARIZES:
                    up = resolve(src, (*trail, bid)) if src in block_recs else (
                        (stored[src].entity_id, stored[src].parent_id, stored[src].level) if src in stored else None)
                    if up is not None:
                        resolved[bid] = (up[0], src, up[2] + 1)
                        return resolved[bid]
            if bid in stored and bid not in parents:
                b = stored[bid]
                resolved[bid] = (b.entity_id, b.parent_id, b.level)
                return resolved[bid]
            return None

        new_blocks: list[Block] = []
        for bid, (i, b, props) in block_recs.items():
            got = resolve(bid, ())
            if got is None:
                out.append(Violation(f"blocks[{i}]", "parent", "no DESCRIBED_BY edge from an entity or SUMMARIZES "
                                                               "edge from a parent block, in the request or the "
                                                               "graph, roots this block", bid))
                continue
            root, parent, level = got
            attrs = {k: v for k, v in props.items() if k != "text"}
            attrs.update(user_id=b.user_id, visibility=b.visibility)
            new_blocks.append(Block(id=bid, group_id=group_id, entity_id=root, parent_id=parent, text=props["text"],
                                    level=level, attributes=attrs, created_at=now, updated_at=now))
        delta.blocks = new_blocks
        delta.facts += [f for _, f in edge_facts]

        # the schema's payload rules on the translated delta, named back to the request's records
        part_of = {fi: ei for ei, fi in entity_map.items()}
        edge_at = {len(delta.facts) - len(edge_facts) + k: i for k, (i, _) in enumerate(edge_facts)}
        for v in self.schema.validate_delta(delta, lambda ids: self.store.node_types(group_id, ids)):
            if v.record.startswith("facts["):
                fi = int(v.record[6:-1])
                if fi in part_of:
                    if v.field in ("target_id", "type"):
                        out.append(Violation(f"entities[{part_of[fi]}]", "universe_id",
                                             "universe not found in the request or the graph",
                                             req.entities[part_of[fi]].id))
                    continue
                fld = v.field.replace("attributes.", "properties.")
                out.append(Violation(f"edges[{edge_at.get(fi, fi)}]", fld, v.message, v.record_id))
            elif not v.record.startswith("entities["):  # entities' rules were checked on the request's records
                out.append(v)
        return delta, out

    @staticmethod
    def _universe(group_id: str, uid: str, name: str, user_id: str, visibility: str, now: Any) -> Entity:
        return Entity(id=uid, group_id=group_id, name=name or " ", type=UNIVERSE_TYPE, created_at=now, updated_at=now,
                      attributes={"name": name, "user_id": user_id, "visibility": visibility,
                                  "labels": ["Universe"]})

    # ---- writes ---------------------------------------------------------------------------------
    def upsert(self, group_id: str, req: KnowledgeDelta) -> UpsertResult:
        """Validate ``req`` completely, then write it in one transaction (with the block projection, if any)."""
        t0 = time.perf_counter()
        delta, violations = self.build(group_id, req)
        if violations:
            log.info("graph delta rejected: group=%s violations=%d", group_id, len(violations))
            raise SchemaViolationError(violations)
        if delta.blocks:  # embedded once the request is known to be valid
            vecs = self.embedder.embed([b.text for b in delta.blocks])
            for blk, vec in zip(delta.blocks, vecs, strict=True):
                blk.embedding = [float(x) for x in vec]
        try:
            self._apply(delta)
        except SchemaViolationError as exc:  # graph-state rules: name the request's records
            where = {fid: f"edges[{i}]" for i, fid in self._edge_index(group_id, req).items()}
            raise SchemaViolationError([Violation(where.get(v.record_id or "", v.record), v.field, v.message,
                                                  v.record_id) for v in exc.violations]) from None
        res = UpsertResult(universes=sum(1 for e in delta.entities if e.type == UNIVERSE_TYPE),
                           entities=sum(1 for e in delta.entities if e.type != UNIVERSE_TYPE),
                           blocks=len(delta.blocks), edges=len(req.edges), block_ids=[b.id for b in delta.blocks])
        log.info("graph delta applied: group=%s entities=%d blocks=%d edges=%d in %.1f ms", group_id, res.entities,
                 res.blocks, res.edges, (time.perf_counter() - t0) * 1e3)
        return res

    def _edge_index(self, group_id: str, req: KnowledgeDelta) -> dict[int, str]:
        """Request edge index → the id of the fact it became (as ``build`` derives it)."""
        return {i: ed.id or derived_id(group_id, ed.source_id, self.edge_type(ed.edge_type) or ed.edge_type,
                                       ed.target_id) for i, ed in enumerate(req.edges)}

    def _apply(self, delta: GraphDelta) -> None:
        """Graph transaction open → delta written → points upserted → commit. A failure before the commit rolls
        the graph back and undoes the points; a failed commit does too (old points restored, new ones deleted)."""
        proj = self.projection
        points = []
        if proj is not None and delta.blocks:
            universes = {f.source_id: f.target_id for f in delta.facts if f.type == PART_OF_EDGE}
            roots = [b.entity_id for b in delta.blocks if b.entity_id not in universes]
            if roots:
                universes.update({f.source_id: f.target_id for f in self.store.facts_of_entities(
                    delta.group_id, roots, TimeFilter(), types=[PART_OF_EDGE]) if f.source_id in roots})
            points = [self._point(b, universes.get(b.entity_id, "")) for b in delta.blocks]
        before: dict[str, BlockPoint | None] = {}
        written = False

        def in_tx(_conn: Any) -> None:
            nonlocal written, before
            if self.fail_after_graph_write is not None:
                self.fail_after_graph_write()
            if proj is not None and points:
                before = proj.snapshot(delta.group_id, [p.id for p in points])
                written = True
                proj.upsert(delta.group_id, points)
            if self.fail_after_projection is not None:
                self.fail_after_projection()

        try:
            with self.store.apply_hook(in_tx):
                self.store.apply(delta, self.schema)
        except BaseException:
            if proj is not None and written:
                proj.restore(delta.group_id, before)
                log.info("projection compensated: group=%s points=%d", delta.group_id, len(before))
            raise

    @staticmethod
    def _point(b: Block, universe_id: str) -> BlockPoint:
        return BlockPoint(id=b.id, vector=list(b.embedding or []), payload={
            "block_id": b.id, "universe_id": universe_id, "root_entity_id": b.entity_id,
            "user_id": b.attributes.get("user_id", ""), "visibility": b.attributes.get("visibility", ""),
            "text": b.text, "block_level": b.level})

    def initialize_user(self, group_id: str, user_id: str, name: str, person_id: str | None = None) -> tuple[str, bool]:
        """Create the user's person node in the Real World universe unless it exists; (person id, created)."""
        pid = person_id or derived_id(group_id, "user", user_id)
        if self.store.get_entities(group_id, [pid]):
            return pid, False
        self.upsert(group_id, KnowledgeDelta(entities=[EntityRecord(
            id=pid, type_id="node.person", properties={"name": name or user_id}, user_id=user_id,
            visibility="PRIVATE")]))
        return pid, True


__all__ = ["REAL_WORLD_UNIVERSE_ID", "BlockRecord", "EdgeRecord", "EntityRecord", "KnowledgeDelta", "KnowledgeWriter",
           "UniverseRecord", "UpsertResult", "derived_id", "is_uuid"]
