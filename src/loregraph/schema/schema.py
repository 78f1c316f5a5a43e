"""Canonical schema: node and edge types with inheritance, property rules, edge rules, cardinality.

Validation has two halves (spec 001): *payload rules* check the records of a delta (types exist,
properties exist on the type or an ancestor or globally, required properties present, edge endpoints
match a rule through ancestors); *graph-state rules* (cardinality) are checked by the store against
the graph after the write, inside the same transaction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from loregraph.errors import SchemaError, Violation
from loregraph.graph.types import BLOCK_TYPE, GraphDelta

PropertyKind = Literal["string", "number", "integer", "boolean", "array", "object", "any"]
_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
}


class PropertyDef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: PropertyKind = "any"
    required: bool = False
    description: str = ""


ENDING_PROPERTIES = {
    "end_reason": PropertyDef(type="string", description="Why the fact ended (the store records it)."),
    "ended_by": PropertyDef(type="string", description="The episode that ended the fact (the store records it)."),
}
"""Properties a fact may carry whatever its schema declares (validation accepts them): the store writes them when
it ends a fact, so a memory moved to another database (export, import) keeps them."""


class NodeTypeDef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    parent: str | None = None
    description: str = ""
    properties: dict[str, PropertyDef] = Field(default_factory=dict)


class EdgeTypeDef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    parent: str | None = None
    description: str = ""
    symmetric: bool = False
    properties: dict[str, PropertyDef] = Field(default_factory=dict)


class EdgeRule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    edge: str
    source: str
    target: str


class CardinalityRule(BaseModel):
    """At most ``max_current`` current facts of type ``edge`` ("*" = each type) per source, target or pair.

    ``source_type``/``target_type`` narrow the rule to endpoints of that type (or a subtype).
    """

    model_config = ConfigDict(extra="forbid")
    edge: str
    per: Literal["source", "target", "pair"] = "source"
    max_current: int = Field(ge=1)
    source_type: str | None = None
    target_type: str | None = None
    description: str = ""


class SchemaDocument(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: int = 1
    name: str = "custom"
    description: str = ""
    node_properties: dict[str, PropertyDef] = Field(default_factory=dict)
    edge_properties: dict[str, PropertyDef] = Field(default_factory=dict)
    node_types: dict[str, NodeTypeDef]
    edge_types: dict[str, EdgeTypeDef]
    edge_rules: list[EdgeRule] = Field(default_factory=list)
    cardinality: list[CardinalityRule] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references(self) -> SchemaDocument:
        problems: list[str] = []
        for kind, types in (("node_types", self.node_types), ("edge_types", self.edge_types)):
            for tid, tdef in types.items():
                if tdef.parent is not None and tdef.parent not in types:
                    problems.append(f"{kind}.{tid}.parent: unknown type {tdef.parent!r}")
            for tid in types:  # cycles
                seen: set[str] = set()
                cur: str | None = tid
                while cur is not None:
                    if cur in seen:
                        problems.append(f"{kind}.{tid}.parent: inheritance cycle")
                        break
                    seen.add(cur)
                    cur = types[cur].parent if cur in types else None
        for i, rule in enumerate(self.edge_rules):
            if rule.edge not in self.edge_types:
                problems.append(f"edge_rules[{i}].edge: unknown edge type {rule.edge!r}")
            for end in ("source", "target"):
                if getattr(rule, end) not in self.node_types:
                    problems.append(f"edge_rules[{i}].{end}: unknown node type {getattr(rule, end)!r}")
        for i, card in enumerate(self.cardinality):
            if card.edge != "*" and card.edge not in self.edge_types:
                problems.append(f"cardinality[{i}].edge: unknown edge type {card.edge!r}")
            for end in ("source_type", "target_type"):
                value = getattr(card, end)
                if value is not None and value not in self.node_types:
                    problems.append(f"cardinality[{i}].{end}: unknown node type {value!r}")
        if problems:
            raise ValueError("; ".join(problems))
        return self


@dataclass
class Schema:
    """A loaded, indexed schema document."""

    doc: SchemaDocument
    _node_ancestors: dict[str, list[str]] = field(default_factory=dict)
    _edge_ancestors: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._node_ancestors = {t: self._chain(self.doc.node_types, t) for t in self.doc.node_types}
        self._edge_ancestors = {t: self._chain(self.doc.edge_types, t) for t in self.doc.edge_types}

    # ---- loading -------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Schema:
        try:
            return cls(SchemaDocument.model_validate(data))
        except ValidationError as exc:
            raise SchemaError(f"invalid schema: {exc}") from exc

    @classmethod
    def load(cls, path: str | Path) -> Schema:
        p = Path(path)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError as exc:
            raise SchemaError(f"schema file not found: {p}") from exc
        except json.JSONDecodeError as exc:
            raise SchemaError(f"schema file {p} is not valid JSON: {exc}") from exc
        return cls.from_dict(data)

    @classmethod
    def default(cls) -> Schema:
        text = resources.files("loregraph.schema").joinpath("default_schema.json").read_text("utf-8")
        return cls.from_dict(json.loads(text))

    @classmethod
    def knowledge(cls) -> Schema:
        """The knowledge-interface schema shipped with loregraph (spec 001: universes, blocks, edge properties)."""
        text = resources.files("loregraph.schema").joinpath("knowledge_schema.json").read_text("utf-8")
        return cls.from_dict(json.loads(text))

    @staticmethod
    def _chain(types: dict[str, Any], tid: str) -> list[str]:
        out, cur = [], tid
        while cur is not None:
            out.append(cur)
            cur = types[cur].parent
        return out

    # ---- queries -------------------------------------------------------------------------------
    @property
    def node_types(self) -> list[str]:
        return list(self.doc.node_types)

    @property
    def edge_types(self) -> list[str]:
        return list(self.doc.edge_types)

    def node_ancestors(self, tid: str) -> list[str]:
        return self._node_ancestors.get(tid, [])

    def label_chain(self, tid: str) -> list[str]:
        """Labels from the root type down to ``tid`` (``friend`` → ``["Entity", "Person", "Friend"]``)."""
        return ["".join(p.capitalize() for p in t.split("_")) for t in reversed(self._node_ancestors.get(tid, []))]

    def check_node_properties(self, record: str, rid: str | None, tid: str, values: dict[str, Any]) -> list[Violation]:
        """Payload rules for one node's properties (type, ancestors, global node properties, required ones)."""
        out: list[Violation] = []
        self._check_props(record, rid or "", values, self.node_properties(tid), tid, out)
        return out

    def is_a(self, node_type: str, ancestor: str) -> bool:
        return ancestor in self._node_ancestors.get(node_type, ())

    def is_symmetric(self, edge_type: str) -> bool:
        return any(self.doc.edge_types[t].symmetric for t in self._edge_ancestors.get(edge_type, ()))

    def node_properties(self, tid: str) -> dict[str, PropertyDef]:
        props = dict(self.doc.node_properties)
        for t in reversed(self._node_ancestors.get(tid, [])):
            props.update(self.doc.node_types[t].properties)
        return props

    def edge_properties(self, tid: str) -> dict[str, PropertyDef]:
        props = dict(self.doc.edge_properties)
        for t in reversed(self._edge_ancestors.get(tid, [])):
            props.update(self.doc.edge_types[t].properties)
        return props

    def edge_allowed(self, edge_type: str, source_type: str, target_type: str) -> bool:
        edges = set(self._edge_ancestors.get(edge_type, ()))
        sources = set(self._node_ancestors.get(source_type, ()))
        targets = set(self._node_ancestors.get(target_type, ()))
        return any(r.edge in edges and r.source in sources and r.target in targets
                   for r in self.doc.edge_rules)

    def cardinality_rules(self) -> list[CardinalityRule]:
        return list(self.doc.cardinality)

    def single_valued(self, edge_type: str, source_type: str) -> bool:
        """True when at most one current fact of ``edge_type`` may leave a source of this type."""
        return any(
            r.per == "source" and r.max_current == 1 and r.edge in (edge_type, "*")
            and (r.source_type is None or self.is_a(source_type, r.source_type))
            for r in self.doc.cardinality
        )

    # ---- payload validation --------------------------------------------------------------------
    def _check_props(self, record: str, rid: str, values: dict[str, Any], allowed: dict[str, PropertyDef],
                     type_id: str, out: list[Violation]) -> None:
        for key, value in values.items():
            pdef = allowed.get(key)
            if pdef is None:
                out.append(Violation(record, f"attributes.{key}",
                                     f"property not defined for type {type_id!r} or its ancestors", rid))
                continue
            kinds = _PY_TYPES.get(pdef.type)
            bad_bool = pdef.type in ("number", "integer") and isinstance(value, bool)
            if value is not None and kinds is not None and (not isinstance(value, kinds) or bad_bool):
                out.append(Violation(record, f"attributes.{key}", f"must be of type {pdef.type}", rid))
        for key, pdef in allowed.items():
            if pdef.required and values.get(key) is None:
                out.append(Violation(record, f"attributes.{key}",
                                     f"required property for type {type_id!r} is missing", rid))

    def validate_delta(self, delta: GraphDelta,
                       existing_types: Callable[[Iterable[str]], dict[str, str]] | None = None) -> list[Violation]:
        """Check every record of ``delta`` against the payload rules; return all violations.

        ``existing_types`` maps entity ids not in the delta to their stored types (used for edge rules);
        an endpoint found neither in the delta nor in the store is a violation.
        """
        out: list[Violation] = []
        types: dict[str, str] = {}
        for i, ent in enumerate(delta.entities):
            rec = f"entities[{i}]"
            if ent.group_id != delta.group_id:
                out.append(Violation(rec, "group_id", "must equal the delta's group_id", ent.id))
            if ent.type not in self.doc.node_types:
                out.append(Violation(rec, "type", f"unknown node type {ent.type!r}", ent.id))
                continue
            types[ent.id] = ent.type
            self._check_props(rec, ent.id, ent.attributes, self.node_properties(ent.type), ent.type, out)
            if not ent.name.strip():
                out.append(Violation(rec, "name", "must not be empty", ent.id))

        if BLOCK_TYPE in self.doc.node_types:  # blocks are nodes too where the schema declares them (edge rules)
            types.update({b.id: BLOCK_TYPE for b in delta.blocks})
        missing = {x for f in delta.facts for x in (f.source_id, f.target_id) if x not in types}
        if missing and existing_types is not None:
            types.update(existing_types(missing))

        for i, fact in enumerate(delta.facts):
            rec = f"facts[{i}]"
            if fact.group_id != delta.group_id:
                out.append(Violation(rec, "group_id", "must equal the delta's group_id", fact.id))
            if fact.type not in self.doc.edge_types:
                out.append(Violation(rec, "type", f"unknown edge type {fact.type!r}", fact.id))
                continue
            self._check_props(rec, fact.id, fact.attributes, {**ENDING_PROPERTIES, **self.edge_properties(fact.type)},
                              fact.type, out)
            st, tt = types.get(fact.source_id), types.get(fact.target_id)
            if st is None:
                out.append(Violation(rec, "source_id", f"entity {fact.source_id} not found in group", fact.id))
            if tt is None:
                out.append(Violation(rec, "target_id", f"entity {fact.target_id} not found in group", fact.id))
            if st and tt and not self.edge_allowed(fact.type, st, tt):
                out.append(Violation(rec, "type",
                                     f"no edge rule allows {st} -[{fact.type}]-> {tt}", fact.id))
            if fact.invalid_at and fact.valid_at and fact.invalid_at < fact.valid_at:
                out.append(Violation(rec, "invalid_at", "must not be before valid_at", fact.id))

        for name in ("episodes", "mentions", "duplicates", "blocks", "communities"):
            for i, rec_obj in enumerate(getattr(delta, name)):
                if rec_obj.group_id != delta.group_id:
                    out.append(Violation(f"{name}[{i}]", "group_id", "must equal the delta's group_id",
                                         getattr(rec_obj, "id", None)))
        return out

    def validate_entity_types(self, entity_types: Iterable[str] | None,
                              excluded: Iterable[str] | None) -> list[Violation]:
        """Spec 000 step 10: requested entity types must exist; exclusions must name known types."""
        out: list[Violation] = []
        known = set(self.doc.node_types)
        for i, t in enumerate(entity_types or ()):
            if t not in known:
                out.append(Violation("entity_types", f"[{i}]", f"unknown entity type {t!r}"))
        allowed = set(entity_types) if entity_types else known
        for i, t in enumerate(excluded or ()):
            if t not in allowed:
                out.append(Violation("excluded_entity_types", f"[{i}]",
                                     f"{t!r} is not one of the entity types in use"))
        return out
