"""Knowledge deltas (spec 001, ``KnowledgeWriter``): what a request becomes in the graph, record by record, and
every violation named. Pins the translation that mutation testing showed no test noticed (issue 23); each test
was checked failing with the planted change named in /work/notes/tests3.md."""

from __future__ import annotations

import uuid

import pytest

from loregraph.errors import SchemaViolationError
from loregraph.ingest.knowledge import (
    REAL_WORLD_UNIVERSE_ID,
    BlockRecord,
    EdgeRecord,
    EntityRecord,
    KnowledgeDelta,
    UniverseRecord,
    derived_id,
)


def uid(n: int) -> str:
    return str(uuid.UUID(int=0x5EED0000_0000_4000_8000_000000000000 + n))


ADA, BOB, UNI, B1, B2 = uid(1), uid(2), uid(3), uid(4), uid(5)
EDGE = {"confidence": 0.9, "status": "active", "context": "notes"}  # the edge properties the schema requires


@pytest.fixture
async def writer(open_memory):
    m = await open_memory()
    return m.knowledge_writer()


def violations(writer, req: KnowledgeDelta, group: str = "g") -> list[tuple[str, str, str, str | None]]:
    _, out = writer.build(group, req)
    return [(v.record, v.field, v.message, v.record_id) for v in out]


async def test_an_entity_becomes_a_typed_node_with_its_labels_owner_and_universe_edge(writer):
    req = KnowledgeDelta(entities=[EntityRecord(
        ADA, "node.person", {"name": "Ada", "aliases": ["Countess", 7], "description": "Mathematician",
                             "birth_date": "1815-12-10"}, user_id="u1", visibility="PRIVATE")])
    delta, out = writer.build("g", req)
    assert out == []
    ada, world = delta.entities
    assert (ada.id, ada.group_id, ada.name, ada.type, ada.aliases, ada.summary) == (
        ADA, "g", "Ada", "person", ["Countess"], "Mathematician")
    assert ada.attributes == {"name": "Ada", "description": "Mathematician", "birth_date": "1815-12-10",
                              "user_id": "u1", "visibility": "PRIVATE", "labels": ["Entity", "Person"]}
    assert ada.created_at == ada.updated_at
    assert (world.id, world.name, world.type) == (REAL_WORLD_UNIVERSE_ID, "Real World", "universe")
    assert world.attributes == {"name": "Real World", "user_id": "system", "visibility": "SHARED",
                                "labels": ["Universe"]}
    [edge] = delta.facts
    assert (edge.id, edge.source_id, edge.target_id, edge.type, edge.fact) == (
        derived_id("g", ADA, "IS_PART_OF"), ADA, REAL_WORLD_UNIVERSE_ID, "IS_PART_OF", "")
    assert edge.attributes == {"confidence": 1.0, "status": "active", "context": "universe membership",
                               "user_id": "u1", "visibility": "PRIVATE"}
    assert edge.created_at == ada.created_at


async def test_an_entity_in_a_universe_of_the_request_adds_no_real_world(writer):
    req = KnowledgeDelta(universes=[UniverseRecord(UNI, "Middle Earth", "u1", "PRIVATE")],
                         entities=[EntityRecord(ADA, "node.person", {"name": "Ada"}, UNI, "u1", "SHARED")])
    delta, out = writer.build("g", req)
    assert out == []
    assert [(e.id, e.type, e.name) for e in delta.entities] == [(UNI, "universe", "Middle Earth"),
                                                                (ADA, "person", "Ada")]
    assert delta.entities[0].attributes == {"name": "Middle Earth", "user_id": "u1", "visibility": "PRIVATE",
                                            "labels": ["Universe"]}
    assert [(f.source_id, f.target_id) for f in delta.facts] == [(ADA, UNI)]
    # the Real World named in the request is not added twice
    both = KnowledgeDelta(universes=[UniverseRecord(REAL_WORLD_UNIVERSE_ID, "Real World", "u1")],
                          entities=[EntityRecord(ADA, "node.person", {"name": "Ada"}, "", "u1", "SHARED")])
    delta, out = writer.build("g", both)
    assert out == [] and [e.id for e in delta.entities] == [REAL_WORLD_UNIVERSE_ID, ADA]


async def test_edges_become_facts_with_their_context_confidence_and_owner(writer):
    people = [EntityRecord(ADA, "node.person", {"name": "Ada"}, "", "u1", "SHARED"),
              EntityRecord(BOB, "node.person", {"name": "Bob"}, "", "u1", "SHARED")]
    req = KnowledgeDelta(entities=people, edges=[
        EdgeRecord(ADA, BOB, "edge.knows", {"context": "met in London", "confidence": 0.25, "status": "active"},
                   "", "u1", "SHARED"),
        EdgeRecord(BOB, ADA, "RELATED_TO", {"confidence": 1, "status": "old", "context": ""}, uid(9), "u2",
                   "PRIVATE")])
    delta, out = writer.build("g", req)
    assert out == []
    assert delta.entities[1].summary == ""  # no description: no summary
    knows, related = delta.facts[2:]
    assert (knows.id, knows.type, knows.fact, knows.confidence) == (derived_id("g", ADA, "KNOWS", BOB), "KNOWS",
                                                                    "met in London", 0.25)
    assert knows.attributes == {"context": "met in London", "confidence": 0.25, "status": "active", "user_id": "u1",
                                "visibility": "SHARED"}
    assert (related.id, related.type, related.fact, related.confidence) == (uid(9), "RELATED_TO", "", 1.0)
    assert related.attributes == {"confidence": 1, "status": "old", "context": "", "user_id": "u2",
                                  "visibility": "PRIVATE"}
    assert knows.created_at == delta.entities[0].created_at


async def test_blocks_take_their_root_and_level_from_the_parent_chain_and_upsert_counts_them(writer):
    req = KnowledgeDelta(
        entities=[EntityRecord(ADA, "node.person", {"name": "Ada"}, "", "u1", "SHARED")],
        blocks=[BlockRecord(B2, properties={"text": "A summary of the notes", "description": "math"}, user_id="u1",
                            visibility="SHARED"),
                BlockRecord(B1, properties={"text": "Notes on the engine"}, user_id="u1", visibility="PRIVATE")],
        edges=[EdgeRecord(ADA, B1, "DESCRIBED_BY", EDGE, "", "u1", "SHARED"),
               EdgeRecord(B1, B2, "SUMMARIZES", EDGE, "", "u1", "SHARED")])
    delta, out = writer.build("g", req)
    assert out == []
    blocks = {b.id: b for b in delta.blocks}
    assert (blocks[B1].entity_id, blocks[B1].parent_id, blocks[B1].level) == (ADA, None, 0)
    assert (blocks[B2].entity_id, blocks[B2].parent_id, blocks[B2].level) == (ADA, B1, 1)
    assert blocks[B2].attributes == {"description": "math", "user_id": "u1", "visibility": "SHARED"}
    assert blocks[B1].attributes == {"user_id": "u1", "visibility": "PRIVATE"}
    res = writer.upsert("g", req)
    assert (res.universes, res.entities, res.blocks, res.edges) == (1, 1, 2, 2)
    assert sorted(res.block_ids) == sorted([B1, B2])
    # a later request may hang a block under one already in the graph
    more = KnowledgeDelta(blocks=[BlockRecord(uid(6), properties={"text": "Deeper"}, user_id="u1",
                                              visibility="SHARED")],
                          edges=[EdgeRecord(B2, uid(6), "SUMMARIZES", EDGE, "", "u1", "SHARED")])
    delta, out = writer.build("g", more)
    assert out == [] and [(b.entity_id, b.parent_id, b.level) for b in delta.blocks] == [(ADA, B2, 2)]
    again = writer.upsert("g", KnowledgeDelta(universes=[UniverseRecord(UNI, "Narnia", "u1")]))
    assert (again.universes, again.entities, again.blocks, again.edges, again.block_ids) == (1, 0, 0, 0, [])


async def test_every_violation_of_a_request_is_named_and_nothing_is_written(writer):
    req = KnowledgeDelta(
        universes=[UniverseRecord(UNI, "  ", "u1"), UniverseRecord(UNI, "Copy", "u1")],
        entities=[EntityRecord("not-a-uuid", "node.person", {"name": "Ada"}, "", "u1", "SHARED"),
                  EntityRecord(ADA, "node.spaceship", {"name": "X"}, "", "u1", "SHARED"),
                  EntityRecord(BOB, "node.person", {"name": " ", "labels": ["X"], "bad\x00key": 1}, "", " ",
                               "PUBLIC")],
        edges=[EdgeRecord(ADA, BOB, "IS_PART_OF", {}, "", "u1", "SHARED"),
               EdgeRecord(ADA, BOB, "LIKES", {}, "", "u1", "SHARED"),
               EdgeRecord(BOB, BOB, "KNOWS", {"confidence": 1.5}, "", "u1", "SHARED")],
        blocks=[BlockRecord(B1, properties={"text": "orphan"}, user_id="u1", visibility="SHARED"),
                BlockRecord(B2, type_id="node.person", properties={"text": "x"}, user_id="u1", visibility="SHARED")])
    got = violations(writer, req)
    expected = [
        ("universes[0]", "name", "must not be empty", UNI),
        ("universes[1]", "id", "duplicate id (also universes[0])", UNI),
        ("entities[0]", "id", "must be an RFC 4122 UUID string (got 'not-a-uuid')", "not-a-uuid"),
        ("entities[1]", "type_id", "unknown entity type 'node.spaceship' (expected node.<type> of the knowledge "
                                   "schema deriving from node.entity)", ADA),
        ("entities[2]", "user_id", "required (every record carries its owner)", BOB),
        ("entities[2]", "visibility", "must be PRIVATE or SHARED (got 'PUBLIC')", BOB),
        ("entities[2]", "properties.labels", "reserved: set by the service from the record", BOB),
        ("entities[2]", "properties.bad\x00key", "must not contain NUL characters", BOB),
        ("entities[2]", "properties.name", "must not be empty", BOB),
        ("blocks[1]", "type_id", "must be node.block (got 'node.person')", B2),
        ("edges[0]", "edge_type", "IS_PART_OF is written from the entity's universe_id", None),
        ("edges[1]", "edge_type", "unknown edge type 'LIKES'", None),
        ("edges[2]", "properties.confidence", "must be between 0 and 1", derived_id("g", BOB, "KNOWS", BOB)),
        ("blocks[0]", "parent", "no DESCRIBED_BY edge from an entity or SUMMARIZES edge from a parent block, in the "
                                "request or the graph, roots this block", B1),
    ]
    for v in expected:
        assert v in got, (v, got)
    with pytest.raises(SchemaViolationError):
        writer.upsert("g", req)
    assert writer.store.get_entities("g", [ADA, BOB, UNI]) == []


async def test_upserts_log_counts_and_never_content(writer, caplog):
    caplog.set_level("INFO", logger="loregraph.knowledge")
    with pytest.raises(SchemaViolationError):
        writer.upsert("g", KnowledgeDelta(universes=[UniverseRecord(UNI, "  ", "u1")]))
    writer.upsert("g", KnowledgeDelta(entities=[EntityRecord(ADA, "node.person", {"name": "Secret Name"}, "", "u1",
                                                             "SHARED")]))
    lines = [r.getMessage() for r in caplog.records if r.name == "loregraph.knowledge"]
    assert lines[0] == "graph delta rejected: group=g violations=1"
    assert lines[1].startswith("graph delta applied: group=g entities=1 blocks=0 edges=0 in ") and lines[1].endswith(
        " ms")
    assert not any("Secret" in line for line in lines)


# ---- the add-episode pipeline's result and context (ingest/pipeline.py) -----------------------------------------
async def test_an_episode_result_reports_usage_counts_timings_and_notes(open_memory):
    from datetime import UTC, datetime

    from loregraph.extract.base import ExtractedEntity, ExtractedRelation, Extraction
    from scripted import ScriptedExtractor

    def answer(ctx):
        return Extraction(entities=[ExtractedEntity("a", "Ada", "person"), ExtractedEntity("e", "Engine", "tool")],
                          relations=[ExtractedRelation("a", "USES", "e", "Ada uses the Engine")],
                          notes={"usage": {"input_tokens": 120.0, "output_tokens": 7}})

    m = await open_memory(extractor=ScriptedExtractor({"Ada": answer}))
    res = await m.add_episode(group_id="g", content="Ada wrote the first program", role_type="user",
                              reference_time=datetime(2024, 1, 1, tzinfo=UTC), preprocessing_prompt=False)
    assert res.usage == {"input_tokens": 120, "output_tokens": 7}
    assert all(type(v) is int for v in res.usage.values())
    assert {k: res.counts[k] for k in ("entities_extracted", "relations_extracted", "endings_extracted")} == {
        "entities_extracted": 2, "relations_extracted": 1, "endings_extracted": 0}
    assert set(res.timings_ms) == {"context", "candidates", "extract", "resolve_entities", "resolve_relations",
                                   "assemble", "embed", "persist"}
    assert res.extraction_notes["preprocessing"] == {"requested": res.extraction_notes["preprocessing"]["requested"],
                                                     "applied": False}
    assert res.extraction_notes["usage"] == {"input_tokens": 120.0, "output_tokens": 7}
    plain = await m.add_episode(group_id="g", content="nothing to see", role_type="user")
    assert plain.usage == {} and "preprocessing" not in plain.extraction_notes


async def test_earlier_messages_reach_the_extractor_without_their_speaker_prefix_only(open_memory):
    from datetime import UTC, datetime, timedelta

    from scripted import ScriptedExtractor

    extractor = ScriptedExtractor()
    m = await open_memory(extractor=extractor)
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    # the message itself quotes a speaker: only the body's own prefix ("Ana(user): ") is taken off
    await m.add_messages("g", [{"content": "Bob (user): quoted line", "role": "Ana", "role_type": "user",
                                "timestamp": t0},
                               {"content": "next", "role": "Ana", "role_type": "user",
                                "timestamp": t0 + timedelta(minutes=1)}])
    first, second = extractor.calls
    assert first[0] == "Bob (user): quoted line"
    assert [p.content for p in second[1].previous_episodes] == ["Bob (user): quoted line"]
    episodes = await m.get_episodes("g")
    quoted = next(e.id for e in episodes if "quoted" in e.content)
    later = next(e.id for e in episodes if e.id != quoted)
    reprocessed = await m.add_episode(group_id="g", content="ignored", uuid=quoted,
                                      previous_episode_ids=[quoted, later])
    assert extractor.calls[-1][0] == "Bob (user): quoted line" and reprocessed.episode.content.startswith("Ana(user)")
    assert [p.id for p in extractor.calls[-1][1].previous_episodes] == [later]  # never itself


async def test_the_extractor_is_offered_the_known_facts_whole_and_a_repeat_is_logged_as_skipped(open_memory, caplog):
    from datetime import UTC, datetime

    from loregraph.extract.base import ExtractedEntity, ExtractedRelation, Extraction
    from scripted import ScriptedExtractor

    def uses(ctx):
        return Extraction(entities=[ExtractedEntity("a", "Ada", "person"), ExtractedEntity("e", "Engine", "tool")],
                          relations=[ExtractedRelation("a", "USES", "e", "Ada uses the Engine")])

    extractor = ScriptedExtractor({"Ada uses": uses})
    m = await open_memory(extractor=extractor)
    when = datetime(2024, 1, 1, tzinfo=UTC)
    await m.add_episode(group_id="g", content="Ada uses the Engine", role_type="user", reference_time=when)
    await m.add_episode(group_id="g", content="What about Ada and the Engine?", role_type="user")
    [offered] = extractor.calls[-1][1].candidate_facts
    ids = {e.name: e.id for e in await m.list_entities("g")}
    assert (offered.source_id, offered.source_name, offered.type, offered.target_id, offered.target_name,
            offered.fact) == (ids["Ada"], "Ada", "USES", ids["Engine"], "Engine", "Ada uses the Engine")
    caplog.set_level("INFO", logger="loregraph.ingest")
    again = await m.add_episode(group_id="g", content="Ada uses the Engine", role_type="user", reference_time=when)
    assert again.already_ingested
    assert f"episode {again.episode.id} group=g: already ingested, skipped" in [
        r.getMessage() for r in caplog.records if r.name == "loregraph.ingest"]
