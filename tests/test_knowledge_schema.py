"""The knowledge schema file (spec 001) and the schema machinery it extends: label chains, node property checks of
non-entity nodes, blocks as nodes for edge rules."""

from __future__ import annotations

from loregraph.graph.types import Block, Entity, Fact, GraphDelta
from loregraph.schema import Schema

K = Schema.knowledge()
EP = {"confidence": 0.5, "status": "active", "context": "c"}


def test_the_file_ships_and_loads_with_spec_types():
    assert {"entity", "person", "universe", "block"} <= set(K.node_types)
    assert {"RELATED_TO", "IS_PART_OF", "DESCRIBED_BY", "SUMMARIZES"} <= set(K.edge_types)
    assert {k for k, p in K.edge_properties("RELATED_TO").items() if p.required} == {"confidence", "status", "context"}
    assert {k for k, p in K.edge_properties("LOCATED_AT").items() if p.required} == {"confidence", "status", "context"}


def test_label_chain_follows_inheritance():
    assert K.label_chain("friend") == ["Entity", "Person", "Friend"]
    assert K.label_chain("company") == ["Entity", "Organization", "Company"]
    assert K.label_chain("nope") == []


def test_node_properties_of_a_type_its_ancestors_and_the_globals():
    assert K.check_node_properties("entities[0]", "x", "friend", {"name": "A", "birth_date": "1815",
                                                                  "description": "d", "user_id": "u"}) == []
    got = {(v.field, v.message.split(" ")[0]) for v in K.check_node_properties("blocks[0]", "b", "block", {"x": 1})}
    assert got == {("attributes.x", "property"), ("attributes.text", "required")}


def test_blocks_of_the_delta_are_nodes_for_edge_rules():
    e = Entity(id="e", group_id="g", name="A", type="person", attributes={"name": "A"})
    b = Block(id="b", group_id="g", entity_id="e", text="t")
    ok = GraphDelta(group_id="g", entities=[e], blocks=[b],
                    facts=[Fact(id="f", group_id="g", source_id="e", target_id="b", type="DESCRIBED_BY", fact="",
                                attributes=EP)])
    assert K.validate_delta(ok) == []
    bad = ok.model_copy(update={"facts": [Fact(id="f", group_id="g", source_id="b", target_id="e",
                                               type="DESCRIBED_BY", fact="", attributes=EP)]})
    assert [v.field for v in K.validate_delta(bad)] == ["type"]
    # the default schema has no block node type: blocks stay out of its edge rules
    assert "block" not in Schema.default().node_types
