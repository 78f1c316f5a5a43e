"""Schema rules answered exactly: every violation with its record, field, message and id; unknown types; labels;
which cardinality rules make a relation single-valued. Pure and fast (no store, no models)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from loregraph.errors import Violation
from loregraph.graph.types import Entity, Episode, Fact, GraphDelta, Mention
from loregraph.schema import Schema, SchemaError

DOC = {
    "node_properties": {"hint": {"type": "string"}},
    "edge_properties": {"note": {"type": "string"}},
    "node_types": {
        "entity": {"parent": None, "properties": {"score": {"type": "number"}}},
        "person": {"parent": "entity", "properties": {"age": {"type": "integer"}}},
        "team_lead": {"parent": "person", "properties": {"team": {"type": "string", "required": True}}},
        "place": {"parent": "entity"},
    },
    "edge_types": {"RELATED_TO": {"properties": {"weight": {"type": "number"}}}, "KNOWS": {"symmetric": True},
                   "LIVES_IN": {}, "LIKES": {"parent": "RELATED_TO"}},
    "edge_rules": [{"edge": "RELATED_TO", "source": "person", "target": "entity"},
                   {"edge": "KNOWS", "source": "person", "target": "person"},
                   {"edge": "LIVES_IN", "source": "person", "target": "place"}],
    "cardinality": [
        {"edge": "LIVES_IN", "per": "source", "max_current": 1, "source_type": "person"},
        {"edge": "LIKES", "per": "target", "max_current": 1},
        {"edge": "KNOWS", "per": "source", "max_current": 2},
        {"edge": "*", "per": "pair", "max_current": 1},
    ],
}
T = datetime(2025, 1, 1, tzinfo=UTC)


@pytest.fixture
def schema() -> Schema:
    return Schema.from_dict(DOC)


def test_types_ancestors_labels_and_unknown_types(schema):
    assert schema.node_ancestors("team_lead") == ["team_lead", "person", "entity"]
    assert schema.label_chain("team_lead") == ["Entity", "Person", "TeamLead"]
    assert schema.label_chain("nothing") == [] and schema.node_ancestors("nothing") == []
    assert schema.is_a("team_lead", "person") and not schema.is_a("place", "person")
    assert not schema.is_a("nothing", "entity")
    assert schema.is_symmetric("KNOWS") and not schema.is_symmetric("LIKES") and not schema.is_symmetric("NOPE")
    assert set(schema.node_properties("team_lead")) == {"hint", "score", "age", "team"}
    assert set(schema.node_properties("nothing")) == {"hint"}
    assert set(schema.edge_properties("LIKES")) == {"note", "weight"}
    assert set(schema.edge_properties("NOPE")) == {"note"}
    assert schema.edge_allowed("LIKES", "team_lead", "place")  # through the ancestors of all three
    assert not schema.edge_allowed("LIVES_IN", "place", "place")
    for unknown in (("NOPE", "person", "place"), ("LIKES", "nothing", "place"), ("LIKES", "person", "nothing")):
        assert not schema.edge_allowed(*unknown)


def test_only_a_per_source_rule_of_one_makes_a_relation_single_valued(schema):
    assert schema.single_valued("LIVES_IN", "person") and schema.single_valued("LIVES_IN", "team_lead")
    assert not schema.single_valued("LIVES_IN", "place")  # the rule is narrowed to persons
    assert not schema.single_valued("LIKES", "person")  # per target
    assert not schema.single_valued("KNOWS", "person")  # two may be current
    assert not schema.single_valued("RELATED_TO", "person")  # "*" but per pair
    star = Schema.from_dict({**DOC, "cardinality": [{"edge": "*", "per": "source", "max_current": 1}]})
    assert star.single_valued("KNOWS", "place") and star.single_valued("ANY", "person")
    assert len(schema.cardinality_rules()) == 4


def test_property_violations_name_record_field_rule_and_id(schema):
    got = schema.check_node_properties("entities[3]", "e-1", "team_lead",
                                       {"extra": 1, "other": 2, "age": True, "score": False, "hint": 5})
    assert got == [
        Violation("entities[3]", "attributes.extra", "property not defined for type 'team_lead' or its ancestors",
                  "e-1"),
        Violation("entities[3]", "attributes.other", "property not defined for type 'team_lead' or its ancestors",
                  "e-1"),
        Violation("entities[3]", "attributes.age", "must be of type integer", "e-1"),
        Violation("entities[3]", "attributes.score", "must be of type number", "e-1"),
        Violation("entities[3]", "attributes.hint", "must be of type string", "e-1"),
        Violation("entities[3]", "attributes.team", "required property for type 'team_lead' is missing", "e-1"),
    ]
    assert schema.check_node_properties("r", None, "person", {"age": 3, "score": 1.5, "hint": None}) == []
    assert schema.check_node_properties("r", None, "person", {"x": 1}) == [
        Violation("r", "attributes.x", "property not defined for type 'person' or its ancestors", "")]


def test_every_delta_violation_is_listed_exactly(schema):
    ada = Entity(group_id="g", name="Ada", type="person", attributes={"age": 36})
    rome = Entity(group_id="g", name="Rome", type="place")
    bad = [Entity(group_id="other", name="X", type="person"), Entity(group_id="g", name="Y", type="planet"),
           Entity(group_id="g", name="  ", type="place")]
    facts = [Fact(group_id="g", source_id=ada.id, target_id=rome.id, type="LIVES_IN", fact="f", valid_at=T),
             Fact(group_id="other", source_id=ada.id, target_id=rome.id, type="LIKES", fact="f", valid_at=T,
                  attributes={"weight": "heavy"}),
             Fact(group_id="g", source_id=ada.id, target_id=rome.id, type="FLIES_TO", fact="f", valid_at=T),
             Fact(group_id="g", source_id="ghost-1", target_id="ghost-2", type="KNOWS", fact="f", valid_at=T),
             Fact(group_id="g", source_id=rome.id, target_id=ada.id, type="LIVES_IN", fact="f", valid_at=T,
                  invalid_at=datetime(2024, 1, 1, tzinfo=UTC)),
             Fact(group_id="g", source_id=ada.id, target_id=ada.id, type="KNOWS", fact="f", valid_at=T,
                  invalid_at=T, attributes={"colour": "red"})]  # ending the moment it starts is allowed
    bad.append(Entity(group_id="g", name="Z", type="place", attributes={"colour": "red"}))
    ep = Episode(group_id="other", name="e", content="c", valid_at=T)
    mention = Mention(group_id="other", episode_id=ep.id, entity_id=ada.id)
    delta = GraphDelta(group_id="g", entities=[ada, rome, *bad], facts=facts, episodes=[ep], mentions=[mention])
    f = facts
    assert schema.validate_delta(delta) == [
        Violation("entities[2]", "group_id", "must equal the delta's group_id", bad[0].id),
        Violation("entities[3]", "type", "unknown node type 'planet'", bad[1].id),
        Violation("entities[4]", "name", "must not be empty", bad[2].id),
        Violation("entities[5]", "attributes.colour", "property not defined for type 'place' or its ancestors",
                  bad[3].id),
        Violation("facts[1]", "group_id", "must equal the delta's group_id", f[1].id),
        Violation("facts[1]", "attributes.weight", "must be of type number", f[1].id),
        Violation("facts[2]", "type", "unknown edge type 'FLIES_TO'", f[2].id),
        Violation("facts[3]", "source_id", "entity ghost-1 not found in group", f[3].id),
        Violation("facts[3]", "target_id", "entity ghost-2 not found in group", f[3].id),
        Violation("facts[4]", "type", "no edge rule allows place -[LIVES_IN]-> person", f[4].id),
        Violation("facts[4]", "invalid_at", "must not be before valid_at", f[4].id),
        Violation("facts[5]", "attributes.colour", "property not defined for type 'KNOWS' or its ancestors",
                  f[5].id),
        Violation("episodes[0]", "group_id", "must equal the delta's group_id", ep.id),
        Violation("mentions[0]", "group_id", "must equal the delta's group_id", getattr(mention, "id", None)),
    ]
    # endpoints stored earlier are looked up, only for the ids the delta lacks
    asked: list[set[str]] = []

    def stored(ids):
        asked.append(set(ids))
        return {"ghost-1": "person", "ghost-2": "team_lead"}

    only = GraphDelta(group_id="g", entities=[ada], facts=[f[3]])
    assert schema.validate_delta(only, stored) == [] and asked == [{"ghost-1", "ghost-2"}]


def test_entity_type_settings_name_the_position_and_the_rule(schema):
    assert schema.validate_entity_types(["person", "moon", "place", "sun"], ["place", "entity"]) == [
        Violation("entity_types", "[1]", "unknown entity type 'moon'"),
        Violation("entity_types", "[3]", "unknown entity type 'sun'"),
        Violation("excluded_entity_types", "[1]", "'entity' is not one of the entity types in use")]
    assert schema.validate_entity_types(None, ["place", "comet"]) == [
        Violation("excluded_entity_types", "[1]", "'comet' is not one of the entity types in use")]
    assert schema.validate_entity_types(None, None) == []


def test_the_shipped_schemas_load():
    assert {"person", "project", "tool"} <= set(Schema.default().node_types)
    knowledge = Schema.knowledge()
    assert {"universe", "person", "friend"} <= set(knowledge.node_types)
    assert knowledge.label_chain("friend") == ["Entity", "Person", "Friend"]


def test_schema_files_are_read_as_utf8_and_a_missing_one_is_named(tmp_path):
    path = tmp_path / "schema.json"
    doc = {**DOC, "node_types": {**DOC["node_types"], "café": {"parent": "entity"}}}
    path.write_bytes(json.dumps(doc, ensure_ascii=False).encode("utf-8"))
    assert "café" in Schema.load(path).node_types
    with pytest.raises(SchemaError, match=r"^schema file not found: .*nope\.json$"):
        Schema.load(tmp_path / "nope.json")
