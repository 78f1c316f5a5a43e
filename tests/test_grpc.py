"""The knowledge interface over gRPC (spec 001, issue 14): a real grpc.aio server on loopback over a real Memory on
both backends (a SQLite file, a fresh PostgreSQL database), called through real channels."""

from __future__ import annotations

import math

import grpc
import numpy as np
import pytest

from grpc_support import EDGE_PROPS, NoExtractor, Running, block, edge, entity, start, stop, uid
from loregraph.api.grpc import knowledge_pb2 as pb
from loregraph.api.grpc.errors import violations_of
from loregraph.config import ApiKey
from loregraph.ingest.knowledge import REAL_WORLD_UNIVERSE_ID, derived_id
from loregraph.memory import Memory
from loregraph.store import TimeFilter


@pytest.fixture
async def run(db_url, embedder):
    memory = await Memory.open(db_url, embedder=embedder, extractor=NoExtractor())
    r = await start(memory)
    yield r
    await stop(r)
    await memory.close()


async def expect_invalid(run: Running, group: str = "g1", **fields) -> list[tuple[str, str]]:
    before = await run.counts(group)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await run.upsert(group, **fields)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, info.value.details()
    fields_ = violations_of(info.value)
    assert fields_, "a BadRequest detail names every violation"
    assert await run.counts(group) == before, "nothing is written"
    return fields_


def spec_example() -> tuple[str, str, str, dict]:
    person, blk, friend = uid(), uid(), uid()
    req = dict(entities=[entity(person, "Ada Lovelace", aliases=["Ada"]), entity(friend, "Charles Babbage")],
               blocks=[block(blk, "Mathematician who wrote the first computer program.")],
               edges=[edge(person, blk, "DESCRIBED_BY"), edge(person, friend, "RELATED_TO")])
    return person, blk, friend, req


async def test_spec_example_is_written_with_labels_universe_and_block(run):
    person, blk, friend, req = spec_example()
    res = await run.upsert(**req)
    assert (res.entities_upserted, res.blocks_upserted, res.edges_upserted) == (2, 1, 2)
    ents = {e.id: e for e in await run.entities()}
    assert ents[person].type == "person" and ents[person].attributes["labels"] == ["Entity", "Person"]
    assert ents[person].attributes["user_id"] == "alice" and ents[person].attributes["visibility"] == "PRIVATE"
    assert ents[person].aliases == ["Ada"]
    assert ents[REAL_WORLD_UNIVERSE_ID].type == "universe"  # the implicit universe exists and holds both
    facts = run.memory.store.list_facts("g1", TimeFilter(), 100)
    part_of = {(f.source_id, f.target_id) for f in facts if f.type == "IS_PART_OF"}
    assert part_of == {(person, REAL_WORLD_UNIVERSE_ID), (friend, REAL_WORLD_UNIVERSE_ID)}
    b = run.memory.store.get_blocks("g1", [blk])[0]
    assert (b.entity_id, b.level, b.parent_id) == (person, 0, None)
    assert b.attributes == {"user_id": "alice", "visibility": "PRIVATE"}
    # the same delta again changes nothing (upserts by id; derived edge ids are stable)
    before = await run.counts()
    await run.upsert(**req)
    assert await run.counts() == before


async def test_label_chain_through_two_ancestors_and_explicit_universe(run):
    uni, friend = uid(), uid()
    await run.upsert(universes=[pb.Universe(id=uni, name="Middle-earth", user_id="alice", visibility=pb.SHARED)],
                     entities=[entity(friend, "Sam", type_id="node.friend", universe=uni)])
    ent = (await run.memory.get_entities("g1", [friend]))[0]
    assert ent.attributes["labels"] == ["Entity", "Person", "Friend"]
    facts = run.memory.store.facts_of_entities("g1", [friend], TimeFilter(), types=["IS_PART_OF"])
    assert [f.target_id for f in facts] == [uni]


async def test_mixed_user_records_in_one_request_are_accepted(run):
    a, b, blk = uid(), uid(), uid()
    await run.upsert(entities=[entity(a, "Ann", user="alice"), entity(b, "Bo", user="bob", vis=pb.SHARED)],
                     blocks=[block(blk, "Bo's description", user="bob", vis=pb.SHARED)],
                     edges=[edge(b, blk, "DESCRIBED_BY", user="bob"), edge(a, b, "RELATED_TO", user="carol")])
    ents = {e.id: e.attributes["user_id"] for e in await run.entities() if e.type == "person"}
    assert ents == {a: "alice", b: "bob"}


async def test_summarizes_from_a_parent_already_in_the_graph_resolves_level_and_root(run):
    person, root_blk, child, grandchild = uid(), uid(), uid(), uid()
    await run.upsert(entities=[entity(person)], blocks=[block(root_blk, "root")],
                     edges=[edge(person, root_blk, "DESCRIBED_BY")])
    # the parent edge of root_blk is not resent; the child hangs off a block that exists only in the graph
    await run.upsert(blocks=[block(child, "child"), block(grandchild, "grandchild")],
                     edges=[edge(root_blk, child, "SUMMARIZES"), edge(child, grandchild, "SUMMARIZES")])
    got = {b.id: b for b in run.memory.store.get_blocks("g1", [child, grandchild])}
    assert (got[child].entity_id, got[child].level, got[child].parent_id) == (person, 1, root_blk)
    assert (got[grandchild].entity_id, got[grandchild].level) == (person, 2)
    # a block update relies on its DESCRIBED_BY edge already in the graph
    await run.upsert(blocks=[block(root_blk, "root, rewritten")])
    b = run.memory.store.get_blocks("g1", [root_blk])[0]
    assert (b.text, b.entity_id, b.level) == ("root, rewritten", person, 0)


# ---- every validation rule: one failing case each ------------------------------------------------------------
def _rules():
    p, q, blk, org = uid(), uid(), uid(), uid()
    base = [entity(p, "Ada")]
    return {
        "id not a uuid": (dict(entities=[entity("not-a-uuid")]), "entities[0].id"),
        "uuid not canonical": (dict(entities=[entity("{" + uid() + "}")]), "entities[0].id"),
        "unknown type_id": (dict(entities=[entity(type_id="node.dragon")]), "entities[0].type_id"),
        "type_id without node. prefix": (dict(entities=[entity(type_id="person")]), "entities[0].type_id"),
        "unknown property": (dict(entities=[entity(shoe_size=44)]), "entities[0].properties.shoe_size"),
        "property of wrong type": (dict(entities=[entity(aliases="Ada")]), "entities[0].properties.aliases"),
        "required property missing": (dict(entities=[entity(name=None)]), "entities[0].properties.name"),
        "NUL character in a property": (dict(entities=[entity(description="a\x00b")]),
                                        "entities[0].properties.description"),
        "non-finite number": (dict(entities=[*base, entity(q)], edges=[edge(p, q, props={
            **EDGE_PROPS, "confidence": float("nan")})]), "edges[0].properties.confidence"),
        "NUL character in user_id": (dict(entities=[entity(user="a\x00")]), "entities[0].user_id"),
        "reserved property": (dict(entities=[entity(user_id="mallory")]), "entities[0].properties.user_id"),
        "visibility unspecified": (dict(entities=[entity(vis=pb.VISIBILITY_UNSPECIFIED)]),
                                   "entities[0].visibility"),
        "user_id missing": (dict(entities=[entity(user="")]), "entities[0].user_id"),
        "duplicate id": (dict(entities=[entity(p), entity(p)]), "entities[1].id"),
        "unknown universe": (dict(entities=[entity(universe=uid())]), "entities[0].universe_id"),
        "universe id not a uuid": (dict(entities=[entity(universe="earth")]), "entities[0].universe_id"),
        "universe without name": (dict(universes=[pb.Universe(id=uid(), name="", user_id="a",
                                                              visibility=pb.SHARED)]), "universes[0].name"),
        "edge missing global property": (dict(entities=[*base, entity(q)], edges=[edge(p, q, props={
            "confidence": 0.5, "status": "active"})]), "edges[0].properties.context"),
        "edge confidence out of range": (dict(entities=[*base, entity(q)], edges=[edge(p, q, props={
            **EDGE_PROPS, "confidence": 3})]), "edges[0].properties.confidence"),
        "unknown edge type": (dict(entities=[*base, entity(q)], edges=[edge(p, q, "LOVES")]), "edges[0].edge_type"),
        "edge rule through ancestors": (dict(entities=[*base, entity(org, "Acme", type_id="node.company")],
                                             edges=[edge(p, org, "KNOWS")]), "edges[0].type"),
        "edge endpoint unknown": (dict(entities=base, edges=[edge(p, uid())]), "edges[0].target_id"),
        "edge endpoint not a uuid": (dict(entities=base, edges=[edge(p, "x")]), "edges[0].target_id"),
        "IS_PART_OF sent by hand": (dict(entities=base, edges=[edge(p, REAL_WORLD_UNIVERSE_ID, "IS_PART_OF")]),
                                    "edges[0].edge_type"),
        "block without text": (dict(entities=base, blocks=[block(blk, text=None)],
                                    edges=[edge(p, blk, "DESCRIBED_BY")]), "blocks[0].properties.text"),
        "block without parent chain": (dict(blocks=[block()]), "blocks[0].parent"),
        "block with wrong type_id": (dict(blocks=[pb.Block(id=uid(), type_id="node.person", user_id="a",
                                                           visibility=pb.SHARED)]), "blocks[0].type_id"),
        "DESCRIBED_BY from a block": (dict(entities=base, blocks=[block(blk), block(q)],
                                           edges=[edge(p, blk, "DESCRIBED_BY"), edge(blk, q, "DESCRIBED_BY")]),
                                      "edges[1].type"),
        "edge id not a uuid": (dict(entities=[*base, entity(q)], edges=[edge(p, q, eid="edge-1")]), "edges[0].id"),
        "universe id not a uuid (record)": (dict(universes=[pb.Universe(id="earth", name="Earth", user_id="a",
                                                                        visibility=pb.SHARED)]), "universes[0].id"),
        "universe name with NUL": (dict(universes=[pb.Universe(id=uid(), name="E\x00", user_id="a",
                                                               visibility=pb.SHARED)]), "universes[0].name"),
        "universe visibility unspecified": (dict(universes=[pb.Universe(id=uid(), name="Earth", user_id="a")]),
                                            "universes[0].visibility"),
        "empty name": (dict(entities=[entity(name="   ")]), "entities[0].properties.name"),
        "NUL character in a property name": (dict(entities=[entity(**{"note\x00": "x"})]),
                                             "entities[0].properties.note\x00"),
        "two parent edges for one block": (dict(entities=[*base, entity(q)], blocks=[block(blk)],
                                                edges=[edge(p, blk, "DESCRIBED_BY"), edge(q, blk, "DESCRIBED_BY")]),
                                           "edges[1].target_id"),
        "edge user_id missing": (dict(entities=[*base, entity(q)], edges=[edge(p, q, user="")]), "edges[0].user_id"),
        "block visibility unspecified": (dict(entities=base, blocks=[block(blk, vis=pb.VISIBILITY_UNSPECIFIED)],
                                              edges=[edge(p, blk, "DESCRIBED_BY")]), "blocks[0].visibility"),
    }


RULES = _rules()


@pytest.mark.parametrize("rule", sorted(RULES))
async def test_every_validation_rule_fails_alone_with_its_field(run, rule):
    fields, wanted = RULES[rule]
    got = await expect_invalid(run, **fields)
    assert wanted in [f for f, _ in got], got


async def test_an_id_names_one_kind_of_node_in_the_graph(run):
    """A block id that names an entity in the graph, or an entity id that names a block, is refused."""
    person, blk = uid(), uid()
    await run.upsert(entities=[entity(person)], blocks=[block(blk)], edges=[edge(person, blk, "DESCRIBED_BY")])
    got = await expect_invalid(run, blocks=[block(person)], edges=[edge(blk, person, "SUMMARIZES")])
    assert any("names a person node" in d for f, d in got if f == "blocks[0].id"), got
    got = await expect_invalid(run, entities=[entity(blk, "Bo")])
    assert any("names a block" in d for f, d in got if f == "entities[0].id"), got


async def test_every_violation_is_reported_at_once(run):
    p = uid()
    got = await expect_invalid(run, entities=[entity("bad-id"), entity(p, type_id="node.dragon"),
                                              entity(vis=pb.VISIBILITY_UNSPECIFIED)],
                               blocks=[block()], edges=[edge(p, uid(), "LOVES")])
    names = {f for f, _ in got}
    assert {"entities[0].id", "entities[1].type_id", "entities[2].visibility", "blocks[0].parent",
            "edges[0].edge_type"} <= names
    assert all(d for _, d in got)


async def test_cardinality_is_checked_on_the_graph_after_the_write(run):
    a, b, blk = uid(), uid(), uid()
    await run.upsert(entities=[entity(a), entity(b, "Bo")], blocks=[block(blk)], edges=[edge(a, blk, "DESCRIBED_BY")])
    # a second entity claiming the same block: the block's parent edge is already in the graph
    got = await expect_invalid(run, edges=[edge(b, blk, "DESCRIBED_BY")])
    assert any("exactly one parent" in d for f, d in got if f == "edges[0].target_id"), got
    # a second RELATED_TO between the same pair (another edge id): fine in the payload, broken in the graph
    await run.upsert(edges=[edge(a, b, eid=uid())])
    got = await expect_invalid(run, edges=[edge(a, b, eid=uid())])
    assert any("cardinality" in d for f, d in got if f == "edges[0].type"), got
    # moving an entity to another universe replaces its IS_PART_OF edge (still one)
    uni = uid()
    await run.upsert(universes=[pb.Universe(id=uni, name="Other", user_id="alice", visibility=pb.SHARED)],
                     entities=[entity(a, universe=uni)])
    facts = run.memory.store.facts_of_entities("g1", [a], TimeFilter(), types=["IS_PART_OF"])
    assert [f.target_id for f in facts] == [uni]


# ---- InitializeUserGraph -----------------------------------------------------------------------------------
async def test_initialize_user_graph_is_idempotent(run):
    first = await run.stub.InitializeUserGraph(pb.InitializeUserGraphRequest(user_id="alice", name="Alice"),
                                               metadata=run.md())
    counts = await run.counts()
    second = await run.stub.InitializeUserGraph(pb.InitializeUserGraphRequest(user_id="alice", name="Alice"),
                                                metadata=run.md())
    assert first.created and not second.created
    assert first.person_entity_id == second.person_entity_id == derived_id("g1", "user", "alice")
    assert first.universe_id == REAL_WORLD_UNIVERSE_ID
    assert await run.counts() == counts
    ent = (await run.memory.get_entities("g1", [first.person_entity_id]))[0]
    assert (ent.name, ent.type, ent.attributes["user_id"]) == ("Alice", "person", "alice")
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await run.stub.InitializeUserGraph(pb.InitializeUserGraphRequest(user_id=" "), metadata=run.md())
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


# ---- FindEntityCandidates ----------------------------------------------------------------------------------
async def test_score_formula_on_a_constructed_case(run, embedder):
    ada, other, b0, b1 = uid(), uid(), uid(), uid()
    t0, t1 = "Pioneer of computing who wrote the first algorithm.", "Grew up in London."
    await run.upsert(entities=[entity(ada, "Ada Lovelace", aliases=["Countess of Lovelace"]),
                               entity(other, "Grace Hopper")],
                     blocks=[block(b0, t0), block(b1, t1)],
                     edges=[edge(ada, b0, "DESCRIBED_BY"), edge(b0, b1, "SUMMARIZES")])
    desc = "wrote the first computer algorithm"
    res = await run.stub.FindEntityCandidates(pb.FindEntityCandidatesRequest(
        names=["  ADA   lovelace "], short_description=desc, user_id="alice"), metadata=run.md())
    top = res.candidates[0]
    q = embedder.embed_one(desc)
    raw = [float(np.dot(q, embedder.embed_one(t)) / (np.linalg.norm(q) * np.linalg.norm(embedder.embed_one(t))))
           for t in (t0, t1)]
    weighted = max(raw[0] / (1 + 0), raw[1] / (1 + 1))
    assert top.entity_id == ada and top.matched_name == "Ada Lovelace" and top.entity_type_id == "node.person"
    assert math.isclose(top.score, 0.55 * 1.0 + 0.45 * weighted, abs_tol=2e-3), (top.score, weighted)
    assert top.described_by_text == t0  # the lowest-level block
    # alias match, no description: name score only
    res = await run.stub.FindEntityCandidates(pb.FindEntityCandidatesRequest(
        names=["countess of lovelace"], user_id="alice"), metadata=run.md())
    assert res.candidates[0].matched_alias == "Countess of Lovelace"
    assert math.isclose(res.candidates[0].score, 0.55, abs_tol=1e-9)
    # the description alone finds it through its blocks; deduplicated by entity
    res = await run.stub.FindEntityCandidates(pb.FindEntityCandidatesRequest(
        short_description=desc, user_id="alice"), metadata=run.md())
    ids = [c.entity_id for c in res.candidates]
    assert ids[0] == ada and len(ids) == len(set(ids))
    assert math.isclose(res.candidates[0].score, 0.45 * weighted, abs_tol=2e-3)


async def test_candidates_respect_user_visibility_type_limit_and_group(run):
    mine, theirs, shared = uid(), uid(), uid()
    await run.upsert(entities=[entity(mine, "Alex Smith", user="alice"),
                               entity(theirs, "Alex Smith", user="bob"),
                               entity(shared, "Alex Smith", type_id="node.company", user="bob", vis=pb.SHARED)])

    async def find(user: str, group: str = "g1", **kw) -> list[str]:
        res = await run.stub.FindEntityCandidates(pb.FindEntityCandidatesRequest(names=["alex smith"], user_id=user,
                                                                                 **kw), metadata=run.md(group))
        return [c.entity_id for c in res.candidates]

    assert set(await find("alice")) == {mine, shared}
    assert set(await find("bob")) == {theirs, shared}
    assert await find("alice", potential_type_ids=["node.organization"]) == [shared]  # through ancestors
    assert len(await find("alice", limit=1)) == 1
    assert await find("alice", group="g2") == []  # another group sees nothing
    res = await run.stub.FindEntityCandidates(pb.FindEntityCandidatesRequest(names=["alex\x00smith"], user_id="alice"),
                                              metadata=run.md())
    assert {c.entity_id for c in res.candidates} == {mine, shared}
    for bad in (pb.FindEntityCandidatesRequest(names=["  "], user_id="alice"),
                pb.FindEntityCandidatesRequest(names=["x"], user_id=""),
                pb.FindEntityCandidatesRequest(names=["x"], user_id="a", potential_type_ids=["node.dragon"]),
                pb.FindEntityCandidatesRequest(names=["x"], user_id="a", limit=-1)):
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await run.stub.FindEntityCandidates(bad, metadata=run.md())
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert violations_of(info.value)


async def test_groups_are_isolated(run):
    p, blk = uid(), uid()
    await run.upsert("g1", entities=[entity(p)], blocks=[block(blk)], edges=[edge(p, blk, "DESCRIBED_BY")])
    assert (await run.counts("g2"))["entities"] == 0
    # g2 cannot hang a block off g1's entity, nor see its block
    got = await expect_invalid(run, "g2", blocks=[block()], edges=[edge(p, uid(), "DESCRIBED_BY")])
    assert "edges[0].source_id" in [f for f, _ in got]
    assert run.memory.store.get_blocks("g2", [blk]) == []


async def test_api_keys_from_call_metadata(db_url, embedder):
    memory = await Memory.open(db_url, embedder=embedder, extractor=NoExtractor())
    keys = [ApiKey(name="a", key="alice-key-0123456789", groups=["alice"]),
            ApiKey(name="two", key="two-groups-key-0123456789", groups=["x", "y"])]
    run = await start(memory, keys=keys)
    try:
        req = pb.UpsertGraphDeltaRequest(entities=[entity()])
        uni = uid()
        req_y = pb.UpsertGraphDeltaRequest(universes=[pb.Universe(id=uni, name="Y", user_id="a", visibility=pb.SHARED)],
                                           entities=[entity(universe=uni)])
        for md, code in (([], grpc.StatusCode.UNAUTHENTICATED),
                         ([("authorization", "Bearer wrong-key-0123456789")], grpc.StatusCode.UNAUTHENTICATED),
                         ([("x-api-key", "alice-key-0123456789"), ("x-group-id", "bob")],
                          grpc.StatusCode.PERMISSION_DENIED),
                         ([("x-api-key", "two-groups-key-0123456789")], grpc.StatusCode.INVALID_ARGUMENT)):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await run.stub.UpsertGraphDelta(req, metadata=md)
            assert info.value.code() == code
        await run.stub.UpsertGraphDelta(req, metadata=[("x-api-key", "alice-key-0123456789")])  # its one group
        await run.stub.UpsertGraphDelta(req_y, metadata=[("authorization", "Bearer two-groups-key-0123456789"),
                                                       ("x-group-id", "y")])
        assert (await run.counts("alice"))["entities"] == 2 and (await run.counts("y"))["entities"] == 2
    finally:
        await stop(run)
        await memory.close()


async def test_real_world_universe_and_ids_in_two_groups(run):
    """Ids are scoped by group: the Real World universe (one fixed id, spec 001) and the same client ids exist in
    every group, each its own record."""
    p = uid()
    await run.upsert("g1", entities=[entity(p, "Ada")])
    await run.upsert("g2", entities=[entity(p, "Bea", user="bob")])
    assert (await run.memory.get_entities("g1", [p]))[0].name == "Ada"
    assert (await run.memory.get_entities("g2", [p]))[0].name == "Bea"
    for g in ("g1", "g2"):
        assert (await run.memory.get_entities(g, [REAL_WORLD_UNIVERSE_ID]))[0].type == "universe"


async def test_retyping_an_entity_is_checked_against_its_edges_in_the_graph(run):
    a, b = uid(), uid()
    await run.upsert(entities=[entity(a), entity(b, "Bo")], edges=[edge(a, b, "KNOWS")])
    got = await expect_invalid(run, entities=[entity(a, type_id="node.company")])
    assert "entities[0].type_id" in [f for f, _ in got], got
    await run.upsert(entities=[entity(a, type_id="node.friend")])  # a subtype keeps the edge rule satisfied


async def test_a_bad_group_in_metadata_is_invalid_argument(run):
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await run.upsert("bad group!", entities=[entity()])
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert violations_of(info.value)[0][0] == "x-group-id"


async def test_every_bad_property_of_one_record_is_reported(run):
    """A record's property checks go on past the first bad one (reserved names, NUL characters in values and
    names): the caller learns every field to fix at once."""
    got = await expect_invalid(run, entities=[entity(user_id="mallory", description="a\x00b", note="c\x00",
                                                     **{"zz\x00": "x"})])
    fields = {f for f, _ in got}
    assert {"entities[0].properties.user_id", "entities[0].properties.description", "entities[0].properties.note",
            "entities[0].properties.zz\x00"} <= fields, got
