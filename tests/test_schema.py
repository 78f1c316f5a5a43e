"""Schema: type existence, inheritance of properties, global properties, edge rules through ancestors,
required properties, and cardinality checked on the graph after the write (spec 001)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from loregraph.graph.types import Entity, Fact, GraphDelta
from loregraph.schema import Schema, SchemaError, SchemaViolationError
from loregraph.store.sqlite import SQLiteStore

CUSTOM = {
    "node_properties": {"name_hint": {"type": "string"}},
    "edge_properties": {"confidence_note": {"type": "string", "required": True}},
    "node_types": {
        "entity": {"parent": None, "properties": {"nickname": {"type": "string"}}},
        "person": {"parent": "entity", "properties": {"age": {"type": "integer"}}},
        "friend": {"parent": "person", "properties": {"since": {"type": "string", "required": True}}},
        "place": {"parent": "entity"},
    },
    "edge_types": {"RELATED_TO": {}, "LIVES_IN": {}, "LIKES": {"parent": "RELATED_TO"}},
    "edge_rules": [
        {"edge": "RELATED_TO", "source": "person", "target": "person"},
        {"edge": "LIVES_IN", "source": "person", "target": "place"},
    ],
    "cardinality": [{"edge": "LIVES_IN", "per": "source", "max_current": 1}],
}


@pytest.fixture
def schema() -> Schema:
    return Schema.from_dict(CUSTOM)


def ent(name: str, type_: str, **attrs) -> Entity:
    return Entity(group_id="g1", name=name, type=type_, attributes=attrs)


def fact(s: Entity, t: Entity, type_: str, **attrs) -> Fact:
    attrs.setdefault("confidence_note", "stated")
    return Fact(group_id="g1", source_id=s.id, target_id=t.id, type=type_, fact=f"{s.name} {type_} {t.name}",
                attributes=attrs, valid_at=datetime(2025, 1, 1, tzinfo=UTC))


def test_default_schema_has_the_ontology():
    s = Schema.default()
    for t in ("entity", "person", "project", "tool", "concept", "organization"):
        assert t in s.node_types
    for r in ("USES", "PREFERS", "DECIDED", "WORKS_ON", "WORKS_WITH", "KNOWS", "DEPENDS_ON", "MENTIONED_IN",
              "PART_OF"):
        assert r in s.edge_types
    assert s.is_symmetric("WORKS_WITH") and s.is_symmetric("KNOWS") and not s.is_symmetric("USES")
    assert s.is_a("person", "entity")


def test_unknown_types_are_violations_naming_record_and_field(schema):
    a, b = ent("Ann", "robot"), ent("Bo", "person")
    delta = GraphDelta(group_id="g1", entities=[a, b], facts=[fact(b, b, "HATES")])
    violations = schema.validate_delta(delta)
    fields = {(v.record, v.field) for v in violations}
    assert ("entities[0]", "type") in fields
    assert ("facts[0]", "type") in fields


def test_properties_inherit_through_ancestors_and_globals(schema):
    f = ent("Fay", "friend", since="2020", age=30, nickname="F", name_hint="x")
    assert schema.validate_delta(GraphDelta(group_id="g1", entities=[f])) == []
    # a property of a subtype is not allowed on its parent
    p = ent("Pat", "person", since="2020")
    v = schema.validate_delta(GraphDelta(group_id="g1", entities=[p]))
    assert [(x.record, x.field) for x in v] == [("entities[0]", "attributes.since")]


def test_required_and_typed_properties(schema):
    f = ent("Fay", "friend", age="thirty")
    v = schema.validate_delta(GraphDelta(group_id="g1", entities=[f]))
    msgs = {x.field: x.message for x in v}
    assert "attributes.since" in msgs and "required" in msgs["attributes.since"]
    assert "attributes.age" in msgs and "integer" in msgs["attributes.age"]


def test_global_edge_property_is_required_on_every_edge_type(schema):
    a, b = ent("Ann", "person"), ent("Bo", "person")
    bad = Fact(group_id="g1", source_id=a.id, target_id=b.id, type="LIKES", fact="Ann likes Bo")
    v = schema.validate_delta(GraphDelta(group_id="g1", entities=[a, b], facts=[bad]))
    assert [(x.record, x.field) for x in v] == [("facts[0]", "attributes.confidence_note")]


def test_edge_rules_match_through_ancestors(schema):
    fr, pe, pl = ent("Fay", "friend", since="2020"), ent("Bo", "person"), ent("Oslo", "place")
    ok = GraphDelta(group_id="g1", entities=[fr, pe, pl],
                    facts=[fact(fr, pe, "LIKES"), fact(fr, pl, "LIVES_IN")])  # LIKES inherits RELATED_TO
    assert schema.validate_delta(ok) == []
    bad = GraphDelta(group_id="g1", entities=[fr, pl], facts=[fact(pl, fr, "LIVES_IN")])
    v = schema.validate_delta(bad)
    assert len(v) == 1 and "no edge rule allows place -[LIVES_IN]-> friend" in v[0].message


def test_all_violations_are_returned_not_just_the_first(schema):
    ents = [ent(f"x{i}", "martian") for i in range(5)]
    assert len(schema.validate_delta(GraphDelta(group_id="g1", entities=ents))) == 5


def test_entity_type_settings_are_validated(schema):
    assert schema.validate_entity_types(["person"], ["place"])[0].record == "excluded_entity_types"
    assert schema.validate_entity_types(["alien"], None)[0].record == "entity_types"
    assert schema.validate_entity_types(["person", "place"], ["place"]) == []


def test_invalid_schema_files_are_rejected(tmp_path):
    with pytest.raises(SchemaError, match="parent"):
        Schema.from_dict({"node_types": {"a": {"parent": "missing"}}, "edge_types": {}})
    with pytest.raises(SchemaError, match="cycle"):
        Schema.from_dict({"node_types": {"a": {"parent": "b"}, "b": {"parent": "a"}}, "edge_types": {}})
    p = tmp_path / "s.json"
    p.write_text("{not json")
    with pytest.raises(SchemaError, match="not valid JSON"):
        Schema.load(p)


def test_cardinality_is_checked_against_graph_state_after_the_write(tmp_path, schema):
    store = SQLiteStore(tmp_path / "c.db")
    a, home, away = ent("Ann", "person"), ent("Oslo", "place"), ent("Rome", "place")
    store.apply(GraphDelta(group_id="g1", entities=[a, home, away], facts=[fact(a, home, "LIVES_IN")]), schema)
    # the payload alone is valid; only the stored state makes it a second current LIVES_IN
    second = GraphDelta(group_id="g1", facts=[fact(a, away, "LIVES_IN")])
    assert schema.validate_delta(second, lambda ids: store.entity_types("g1", ids)) == []
    with pytest.raises(SchemaViolationError, match="cardinality"):
        store.apply(second, schema)
    assert store.count("g1")["facts"] == 1  # rolled back
    # ending the first fact in the same delta makes the second one acceptable
    first_id = store.list_facts("g1", __import__("loregraph.store.base", fromlist=["x"]).TimeFilter())[0].id
    from loregraph.graph.types import FactInvalidation

    ok = GraphDelta(group_id="g1", facts=[fact(a, away, "LIVES_IN")],
                    invalidations=[FactInvalidation(fact_id=first_id, invalid_at=datetime(2025, 6, 1, tzinfo=UTC))])
    # invalidations are applied before the cardinality check
    store.apply(ok, schema)
    assert store.count("g1")["facts"] == 2
    store.close()


def test_facts_may_reference_entities_stored_earlier(tmp_path, schema):
    store = SQLiteStore(tmp_path / "e.db")
    a, b = ent("Ann", "person"), ent("Bo", "person")
    store.apply(GraphDelta(group_id="g1", entities=[a, b]), schema)
    store.apply(GraphDelta(group_id="g1", facts=[fact(a, b, "LIKES")]), schema)
    # but not entities of another group
    c = Entity(group_id="g2", name="Cy", type="person")
    store.apply(GraphDelta(group_id="g2", entities=[c]), schema)
    with pytest.raises(SchemaViolationError, match="not found in group"):
        store.apply(GraphDelta(group_id="g1", facts=[fact(a, c, "LIKES")]), schema)
    store.close()
