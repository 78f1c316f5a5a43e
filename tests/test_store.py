"""SQLite store: migrations, embedder bookkeeping, one-transaction writes, deletes (group isolation on both
backends: test_store_contract.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import strategies as st

from loregraph.graph.types import Community, DuplicateLink, Entity, Episode, Fact, GraphDelta, Mention
from loregraph.schema import Schema, SchemaViolationError
from loregraph.store import EmbedderMismatchError, StoreError, TimeFilter, open_store
from loregraph.store.sqlite import SQLiteStore

DIM = 8
SCHEMA = Schema.default()
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def vec(seed: int) -> list[float]:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return (v / np.linalg.norm(v)).tolist()


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "s.db")
    s.ensure_embedder("test-model", DIM)
    yield s
    s.close()


def small_graph(group: str, word: str, seed: int = 0) -> GraphDelta:
    a = Entity(group_id=group, name=f"{word} person", type="person", embedding=vec(seed))
    b = Entity(group_id=group, name=f"{word} tool", type="tool", embedding=vec(seed + 1))
    ep = Episode(group_id=group, content=f"{word} person uses {word} tool", valid_at=T0, embedding=vec(seed + 2))
    f = Fact(group_id=group, source_id=a.id, target_id=b.id, type="USES", fact=f"{word} person uses {word} tool",
             episodes=[ep.id], valid_at=T0, embedding=vec(seed + 3))
    return GraphDelta(group_id=group, episodes=[ep], entities=[a, b], facts=[f],
                      mentions=[Mention(group_id=group, episode_id=ep.id, entity_id=x.id) for x in (a, b)])


def test_migrations_are_recorded_and_reopen_is_idempotent(tmp_path):
    s = SQLiteStore(tmp_path / "m.db")
    v = s.schema_version
    assert v >= 1
    assert s.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    s.close()
    s2 = SQLiteStore(tmp_path / "m.db")
    assert s2.schema_version == v
    s2.conn.execute("INSERT INTO schema_migrations VALUES (999, 'future', 'x')")
    s2.close()
    with pytest.raises(StoreError, match="newer than this loregraph supports"):
        SQLiteStore(tmp_path / "m.db")


def test_embedder_is_recorded_and_a_different_one_refused(tmp_path):
    s = SQLiteStore(tmp_path / "e.db")
    assert s.embedding_model() is None
    s.ensure_embedder("model-a", 8)
    s.ensure_embedder("model-a", 8)
    assert s.embedding_model() == ("model-a", 8)
    with pytest.raises(EmbedderMismatchError, match="model-a"):
        s.ensure_embedder("model-b", 8)
    with pytest.raises(EmbedderMismatchError, match="dim 8"):
        s.ensure_embedder("model-a", 16)
    s.close()


def test_open_store_urls(tmp_path):
    s = open_store(f"sqlite:///{tmp_path}/u.db")
    s.close()
    s = open_store(tmp_path / "bare.db")
    s.close()
    with pytest.raises(StoreError, match="file path"):
        open_store("sqlite:///:memory:")
    with pytest.raises(StoreError, match="unsupported database URL"):
        open_store("mysql://x")
    with pytest.raises(StoreError, match="directory does not exist"):
        open_store(tmp_path / "missing" / "x.db")


def test_failure_injected_mid_write_leaves_nothing(store):
    delta = small_graph("g1", "alpha")

    def boom(conn: object) -> None:  # runs inside the write transaction, after every row is written
        raise RuntimeError("disk on fire")

    with store.apply_hook(boom), pytest.raises(RuntimeError, match="disk on fire"):
        store.apply(delta, SCHEMA)
    assert store.count("g1") == {"episodes": 0, "entities": 0, "facts": 0, "mentions": 0, "duplicates": 0}
    assert store.fulltext("fact", ["g1"], "alpha", 10) == []
    assert store.vector("fact", ["g1"], np.asarray(vec(3), dtype=np.float32), 10) == []
    store.apply(delta, SCHEMA)
    assert store.count("g1")["facts"] == 1


def test_schema_violation_writes_nothing(store):
    delta = small_graph("g1", "beta")
    delta.facts[0].type = "NOT_A_TYPE"
    with pytest.raises(SchemaViolationError, match=r"facts\[0\].*type"):
        store.apply(delta, SCHEMA)
    assert store.count("g1")["entities"] == 0


def test_ids_of_another_group_cannot_be_overwritten(store):
    """Ids are per group: writing another group's id creates that group's own record and leaves the first alone."""
    d1 = small_graph("g1", "gamma")
    store.apply(d1, SCHEMA)
    same = d1.entities[0].model_copy(update={"group_id": "g2", "name": "hijack"})
    store.apply(GraphDelta(group_id="g2", entities=[same]), SCHEMA)
    assert store.get_entities("g1", [same.id])[0].name == "gamma person"
    assert store.get_entities("g2", [same.id])[0].name == "hijack"


def test_bitemporal_time_filters(store):
    d = small_graph("g1", "delta")
    f = d.facts[0]
    f.invalid_at, f.expired_at = T0 + timedelta(days=30), T0 + timedelta(days=31)
    store.apply(d, SCHEMA)
    assert store.list_facts("g1", TimeFilter()) == []
    assert [x.id for x in store.list_facts("g1", TimeFilter(as_of=T0 + timedelta(days=10)))] == [f.id]
    assert store.list_facts("g1", TimeFilter(as_of=T0 - timedelta(days=1))) == []
    assert store.list_facts("g1", TimeFilter(as_of=T0 + timedelta(days=40))) == []
    assert len(store.list_facts("g1", TimeFilter(include_expired=True))) == 1


def test_traversal_two_hops_both_directions(store):
    g = "g1"
    ents = [Entity(group_id=g, name=f"n{i}", type="entity") for i in range(5)]
    # n0 -> n1 <- n2 -> n3 ; n4 isolated
    facts = [Fact(group_id=g, source_id=ents[a].id, target_id=ents[b].id, type="RELATED_TO", fact=f"{a}-{b}")
             for a, b in ((0, 1), (2, 1), (2, 3))]
    store.apply(GraphDelta(group_id=g, entities=ents, facts=facts), SCHEMA)
    reach = store.traverse(g, [ents[0].id], 2, TimeFilter())
    assert reach == {ents[0].id: 0, ents[1].id: 1, ents[2].id: 2}
    assert store.traverse(g, [ents[0].id], 3, TimeFilter())[ents[3].id] == 3
    assert store.traverse("other", [ents[0].id], 2, TimeFilter()) == {}


def test_delete_episode_removes_only_what_it_alone_contributed(store):
    d = small_graph("g1", "eps")
    store.apply(d, SCHEMA)
    ep2 = Episode(group_id="g1", content="eps person again", valid_at=T0 + timedelta(days=1))
    f = d.facts[0].model_copy(update={"episodes": [d.episodes[0].id, ep2.id], "embedding": None})
    store.apply(GraphDelta(group_id="g1", episodes=[ep2], facts=[f],
                           mentions=[Mention(group_id="g1", episode_id=ep2.id, entity_id=d.entities[0].id)]), SCHEMA)
    counts = store.delete_episode("g1", d.episodes[0].id)
    assert counts == {"episodes": 1, "facts": 0, "entities": 0}  # fact and entities still backed by ep2
    assert store.get_facts("g1", [f.id])[0].episodes == [ep2.id]
    counts = store.delete_episode("g1", ep2.id)
    assert counts["facts"] == 1 and counts["entities"] == 2
    assert store.count("g1")["entities"] == 0
    assert store.delete_episode("g1", "nope")["episodes"] == 0


def test_delete_group_removes_everything_of_that_group_only(store):
    store.apply(small_graph("g1", "keep", 1), SCHEMA)
    store.apply(small_graph("g2", "drop", 2), SCHEMA)
    store.delete_group("g2")
    assert store.count("g2")["entities"] == 0
    assert store.count("g1")["entities"] == 2
    assert store.fulltext("fact", ["g2"], "drop", 10) == []
    assert len(store.fulltext("fact", ["g1"], "keep", 10)) == 1


WORDS = st.sampled_from(["apple", "banana", "cherry", "delta", "echo", "fig"])


def test_large_group_vector_path_matches_exact_and_sees_other_writers(tmp_path):
    path = tmp_path / "large.db"
    s = SQLiteStore(path)
    s.ensure_embedder("test-model", DIM)
    rng = np.random.default_rng(5)
    ents = []
    for i in range(300):
        v = rng.standard_normal(DIM).astype(np.float32)
        ents.append(Entity(group_id="big", name=f"e{i}", type="entity", embedding=(v / np.linalg.norm(v)).tolist()))
    s.apply(GraphDelta(group_id="big", entities=ents), SCHEMA)
    s.apply(small_graph("small", "other", 9), SCHEMA)
    q = np.asarray(vec(77), dtype=np.float32)
    exact = [h.id for h in s.vector("entity", ["big"], q, 10)]
    s.EXACT_KNN_MAX = 50  # force the in-memory Hamming + rescoring path
    approx = [h.id for h in s.vector("entity", ["big"], q, 10)]
    assert len(set(exact) & set(approx)) >= 9 and approx[0] == exact[0]
    assert all(h.id not in {e.id for e in ents} for h in s.vector("entity", ["small"], q, 10))
    # another process (connection) adds the best possible match: the cached vectors must notice
    other = SQLiteStore(path)
    best = Entity(group_id="big", name="best", type="entity", embedding=q.tolist())
    other.apply(GraphDelta(group_id="big", entities=[best]), SCHEMA)
    other.close()
    assert s.vector("entity", ["big"], q, 3)[0].id == best.id
    s.close()


def test_an_older_database_is_migrated_forward_with_its_data(tmp_path):
    import sqlean

    from loregraph.store.sqlite import _split_sql

    path = tmp_path / "v1.db"
    first = next(sql for v, _, sql in SQLiteStore._migrations(SQLiteStore.__new__(SQLiteStore)) if v == 1)
    c = sqlean.connect(str(path))
    c.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
              "applied_at TEXT NOT NULL)")
    for stmt in _split_sql(first):
        c.execute(stmt)
    c.execute("INSERT INTO schema_migrations VALUES (1, 'init', 'then')")
    c.execute("INSERT INTO entities (id, group_id, name, name_norm, type, created_at, updated_at) "
              "VALUES ('e1', 'g1', 'Old', 'old', 'tool', 'x', 'x')")
    c.commit()
    c.close()
    s = SQLiteStore(path)
    assert s.schema_version >= 2
    row = s.conn.execute("SELECT name, conversation_id FROM entities WHERE id = 'e1'").fetchone()
    assert row == ("Old", None)
    s.close()


# ---- deletes on both backends: exactly what one episode / fact alone contributed goes -------------------------
@pytest.fixture(params=["sqlite", "postgres"])
def either_store(request, tmp_path):
    url = request.getfixturevalue("pg_db") if request.param == "postgres" else f"sqlite:///{tmp_path / 'd.db'}"
    s = open_store(url)
    s.ensure_embedder("test-model", 8)
    yield s
    s.close()


def shared_graph(group: str) -> tuple[GraphDelta, dict[str, object]]:
    """Episode one: facts shared (also backed by episode two), only1, only2; entity quiet is only mentioned there;
    entity echo is mentioned by both episodes and in no fact."""
    e1 = Episode(group_id=group, content="one", valid_at=T0)
    e2 = Episode(group_id=group, content="two", valid_at=T0 + timedelta(days=1))
    ents = {n: Entity(group_id=group, name=n, type="tool") for n in ("ada", "bob", "cy", "dee", "quiet", "echo")}
    x = {**ents, "e1": e1, "e2": e2}

    def fact(s: str, t: str, eps: list[Episode]) -> Fact:
        return Fact(group_id=group, source_id=ents[s].id, target_id=ents[t].id, type="USES", fact=f"{s} uses {t}",
                    episodes=[e.id for e in eps], valid_at=T0)

    x["shared"], x["only1"], x["only2"] = fact("ada", "bob", [e1, e2]), fact("cy", "dee", [e1]), fact("ada", "cy", [e1])
    e1 = e1.model_copy(update={"fact_ids": [x["shared"].id, x["only1"].id, x["only2"].id]})
    x["e1"] = e1
    mentions = [Mention(group_id=group, episode_id=e1.id, entity_id=ents[n].id) for n in ents] + [
        Mention(group_id=group, episode_id=e2.id, entity_id=ents[n].id) for n in ("ada", "bob", "echo")]
    return GraphDelta(group_id=group, episodes=[e1, e2], entities=list(ents.values()),
                      facts=[x["shared"], x["only1"], x["only2"]], mentions=mentions), x


def test_deleting_an_episode_removes_what_it_alone_backed(either_store):
    delta, x = shared_graph("g")
    either_store.apply(delta, SCHEMA)
    other, _ = shared_graph("other")
    either_store.apply(other, SCHEMA)
    before_other = either_store.count("other")
    assert either_store.delete_episode("g", x["e1"].id) == {"episodes": 1, "facts": 2, "entities": 3}
    left = sorted(e.name for e in either_store.list_entities("g"))
    assert left == ["ada", "bob", "echo"], left  # cy, dee (only in its facts) and quiet (only mentioned there) went
    (shared,) = either_store.get_facts("g", [x["shared"].id])
    assert shared.episodes == [x["e2"].id]
    assert either_store.get_facts("g", [x["only1"].id, x["only2"].id]) == []
    assert either_store.count("other") == before_other


def test_deleting_a_fact_unlinks_it_from_its_episodes_in_its_group_only(either_store):
    delta, x = shared_graph("g")
    either_store.apply(delta, SCHEMA)
    other, y = shared_graph("other")
    either_store.apply(other, SCHEMA)
    assert either_store.delete_fact("other", x["only1"].id) == 0  # another group's id: nothing
    assert either_store.delete_fact("g", "no-such-fact") == 0
    assert either_store.delete_fact("g", x["only1"].id) == 1
    assert either_store.get_facts("g", [x["only1"].id]) == []
    (e1,) = either_store.get_episodes("g", [x["e1"].id])
    assert e1.fact_ids == [x["shared"].id, x["only2"].id]
    assert either_store.delete_fact("g", x["only1"].id) == 0
    assert len(either_store.get_facts("other", [y["only1"].id])) == 1
    (theirs,) = either_store.get_episodes("other", [y["e1"].id])
    assert len(theirs.fact_ids) == 3
    assert either_store.delete_episode("g", x["e1"].id)["facts"] == 1  # only2; only1 is gone already


# ---- each group-scoped read returns its own group's rows (a read that loses its group condition returns nothing,
# which no isolation test notices) --------------------------------------------------------------------------------
def test_link_reads_return_the_rows_of_their_own_group(either_store):
    delta, x = shared_graph("g")
    community = Community(group_id="g", name="ada and bob", member_ids=[x["ada"].id, x["bob"].id], embedding=vec(9))
    either_store.apply(delta.model_copy(update={"communities": [community]}), SCHEMA)
    other, y = shared_graph("other")
    theirs = Community(group_id="other", name="theirs", member_ids=[y["ada"].id], embedding=vec(8))
    either_store.apply(other.model_copy(update={"communities": [theirs]}), SCHEMA)
    e1, e2 = x["e1"].id, x["e2"].id

    by_episode = either_store.facts_of_episodes("g", [e1, e2, y["e1"].id])
    assert {k: sorted(v) for k, v in by_episode.items()} == {
        e1: sorted([x["shared"].id, x["only1"].id, x["only2"].id]), e2: [x["shared"].id]}
    mentions = either_store.mentions_of_entities("g", [x["ada"].id, x["quiet"].id, y["ada"].id])
    assert mentions == {x["ada"].id: [e1, e2], x["quiet"].id: [e1]}  # in world-time order
    assert either_store.communities_of("g", [x["ada"].id, x["cy"].id, y["ada"].id]) == [community.id]
    assert either_store.communities_of("other", [y["ada"].id]) == [theirs.id]
    assert either_store.facts_of_episodes("g", []) == {} and either_store.communities_of("g", []) == []


def test_document_reads_and_deletes_stay_in_their_group_and_collection(either_store):
    from loregraph.graph.documents import Chunk, Collection, Document

    def put(group: str, collection: Collection, title: str, texts: list[str]) -> tuple[Document, list[Chunk]]:
        doc = Document(group_id=group, collection_id=collection.id, title=title, source=f"{title}.md",
                       metadata={"kind": title}, chars=sum(map(len, texts)), content_hash=title, created_at=T0)
        parts = [Chunk(group_id=group, collection_id=collection.id, document_id=doc.id, ordinal=i, content=t,
                       embedding=vec(20 + i), created_at=T0) for i, t in enumerate(texts)]
        either_store.put_document(doc, parts)
        return doc, parts

    cols = {}
    for group in ("g", "other"):
        for name in ("manuals", "notes"):
            cols[group, name] = Collection(group_id=group, name=name, description=name, created_at=T0)
            either_store.create_collection(cols[group, name])
    manual, manual_chunks = put("g", cols["g", "manuals"], "pump", ["the pump needs oil monthly", "replace seals"])
    note, note_chunks = put("g", cols["g", "notes"], "memo", ["oil order placed"])
    put("g", cols["g", "notes"], "todo", ["call the plumber", "buy seals"])
    their, their_chunks = put("other", cols["other", "manuals"], "pump", ["the pump needs oil weekly"])

    (got,) = either_store.get_documents("g", [manual.id, their.id])
    assert (got.id, got.title, got.source, got.metadata, got.chunk_count, got.created_at) == (
        manual.id, "pump", "pump.md", {"kind": "pump"}, 2, T0)
    assert either_store.find_document("g", cols["g", "manuals"].id, "pump").id == manual.id
    assert either_store.find_document("g", cols["g", "notes"].id, "pump") is None
    assert [d.id for d in either_store.list_documents("g", cols["g", "manuals"].id, 10)] == [manual.id]
    got_chunks = either_store.get_chunks("g", [c.id for c in manual_chunks + their_chunks])
    assert sorted((c.ordinal, c.content, c.created_at) for c in got_chunks) == [
        (0, "the pump needs oil monthly", T0), (1, "replace seals", T0)]
    all_ids = [c.id for c in manual_chunks + note_chunks + their_chunks]
    assert either_store.chunk_ids_in("g", cols["g", "manuals"].id, all_ids) == {c.id for c in manual_chunks}
    assert either_store.chunk_ids_in("g", cols["g", "notes"].id, all_ids) == {note_chunks[0].id}
    assert either_store.chunk_ids_in("g", cols["g", "notes"].id, [manual_chunks[0].id]) == set()
    assert [h.id for h in either_store.fulltext_chunks("g", cols["g", "manuals"].id, "oil", 5)] == [
        manual_chunks[0].id]
    (col, n), _ = either_store.list_collections("g")
    assert (col.name, col.created_at, n) == ("manuals", T0, 1)
    assert [n for _, n in either_store.list_collections("g")] == [1, 2]
    by_document = either_store.export_records("chunk", "g", None, 10, document_id=manual.id)
    assert [c.id for c in by_document] == sorted(c.id for c in manual_chunks)
    assert either_store.get_collection("g", "notes").metadata_schema == cols["g", "notes"].metadata_schema

    # what the chunks said (a chunk is the episode of its text): A only in chunk 0, B only in chunk 1, C in chunk 1
    # and the note; gasket only mentioned in chunk 0, seals only in chunk 1, oil also in the note
    ents = {n: Entity(group_id="g", name=n, type="tool") for n in ("pump", "oil", "seals", "gasket", "memo")}
    eps = [Episode(id=c.id, group_id="g", content=c.content, valid_at=T0) for c in manual_chunks + note_chunks]

    def fact(s: str, t: str, backing: list[Episode]) -> Fact:
        return Fact(group_id="g", source_id=ents[s].id, target_id=ents[t].id, type="USES", fact=f"{s} uses {t}",
                    episodes=[e.id for e in backing], valid_at=T0)

    facts = {"A": fact("pump", "oil", eps[:1]), "B": fact("pump", "seals", eps[1:2]), "C": fact("memo", "oil", eps[1:])}
    said = {0: ("pump", "oil", "gasket"), 1: ("pump", "seals"), 2: ("memo", "oil")}
    either_store.apply(GraphDelta(group_id="g", episodes=eps, entities=list(ents.values()), facts=list(facts.values()),
                                  mentions=[Mention(group_id="g", episode_id=eps[i].id, entity_id=ents[n].id)
                                            for i, names in said.items() for n in names]), SCHEMA)

    assert either_store.delete_document("other", manual.id)["documents"] == 0  # another group's id: nothing
    assert either_store.delete_document("g", manual.id) == {"documents": 1, "chunks": 2, "facts": 2, "entities": 3}
    assert sorted(e.name for e in either_store.list_entities("g")) == ["memo", "oil"]
    (c,) = either_store.get_facts("g", [f.id for f in facts.values()])
    assert (c.id, c.episodes) == (facts["C"].id, [note_chunks[0].id])
    assert either_store.get_documents("g", [manual.id]) == [] and either_store.get_chunks(
        "g", [c.id for c in manual_chunks]) == []
    assert either_store.fulltext_chunks("g", cols["g", "manuals"].id, "oil", 5) == []
    assert [d.id for d in either_store.get_documents("g", [note.id])] == [note.id]
    assert [c.id for c in either_store.get_chunks("other", [their_chunks[0].id])] == [their_chunks[0].id]
    assert either_store.delete_collection("g", cols["g", "notes"].id) == {
        "collections": 1, "documents": 2, "chunks": 3, "facts": 1, "entities": 2}
    assert either_store.list_entities("g") == []
    assert [c.name for c, _ in either_store.list_collections("g")] == ["manuals"]
    assert [c.name for c, _ in either_store.list_collections("other")] == ["manuals", "notes"]


def test_communities_edges_and_neighbours_read_back_whole(either_store):
    delta, x = shared_graph("g")
    ada, bob, cy, dee, quiet, echo = (x[n].id for n in ("ada", "bob", "cy", "dee", "quiet", "echo"))
    shared = x["shared"].model_copy(update={"confidence": 0.6})
    ended = x["only2"].model_copy(update={"invalid_at": T0 + timedelta(days=3)})  # ada -> cy, ended
    small = Community(group_id="g", name="ada and bob", summary="the pair", member_ids=[ada, bob],
                      created_at=T0, updated_at=T0 + timedelta(days=2), embedding=vec(5))
    big = Community(group_id="g", name="cy and co", summary="three", member_ids=[cy, dee, quiet], created_at=T0,
                    updated_at=T0, embedding=vec(6))
    either_store.apply(delta.model_copy(update={"facts": [shared, x["only1"], ended], "communities": [small, big],
                                                "communities_rebuilt": True}), SCHEMA)
    other, _ = shared_graph("other")
    either_store.apply(other, SCHEMA)

    assert either_store.community_state("g") == {"members": 5, "communities": 2, "drift": 0}
    either_store.apply(GraphDelta(group_id="g", community_drift=3), SCHEMA)
    assert either_store.community_state("g") == {"members": 5, "communities": 2, "drift": 3}
    assert either_store.community_state("other") is None
    (got,) = either_store.get_communities("g", [small.id])
    assert (got.id, got.group_id, got.name, got.summary, got.created_at, got.updated_at, sorted(got.member_ids)) == (
        small.id, "g", "ada and bob", "the pair", T0, T0 + timedelta(days=2), sorted([ada, bob]))
    listed = either_store.list_communities("g", 10)
    assert [(c.name, sorted(c.member_ids)) for c in listed] == [("cy and co", sorted([cy, dee, quiet])),
                                                                ("ada and bob", sorted([ada, bob]))]
    assert either_store.community_membership("g", [ada, cy, echo]) == {ada: small.id, cy: big.id}

    assert either_store.current_edges("g", 10) == [(shared.id, ada, bob, 0.6), (x["only1"].id, cy, dee, 1.0)]
    assert either_store.current_edges("g", 1) == [(shared.id, ada, bob, 0.6)]
    assert either_store.neighbours_among("g", ada, [bob, cy, dee, echo], TimeFilter()) == {bob}
    assert either_store.neighbours_among("g", cy, [ada, dee], TimeFilter()) == {dee}  # from either side
    assert either_store.neighbours_among("g", ada, [bob, cy, dee], TimeFilter(include_expired=True)) == {bob, cy}
    assert either_store.neighbours_among("g", ada, [cy], TimeFilter(as_of=T0 + timedelta(days=1))) == {cy}


def test_export_pages_follow_the_key_and_carry_vectors(either_store):
    delta, x = shared_graph("g")
    ents = [e.model_copy(update={"embedding": vec(40 + i)}) for i, e in enumerate(delta.entities)]
    either_store.apply(delta.model_copy(update={"entities": ents}), SCHEMA)
    either_store.apply(shared_graph("other")[0], SCHEMA)

    def pages(kind: str, size: int, key) -> list:
        out, after = [], None
        while page := either_store.export_records(kind, "g", after, size):
            out += page
            after = key(page[-1])
        return out

    entities = pages("entity", 4, lambda e: [e.id])
    assert [e.id for e in entities] == sorted(e.id for e in ents)
    assert {e.id: e.embedding for e in entities} == {e.id: pytest.approx(e.embedding) for e in ents}
    assert all(e.embedding is None for e in either_store.export_records("entity", "g", None, 10, embeddings=False))
    mentions = pages("mention", 3, lambda m: [m.episode_id, m.entity_id])
    assert [(m.episode_id, m.entity_id) for m in mentions] == sorted((m.episode_id, m.entity_id)
                                                                      for m in delta.mentions)
    ada, bob, cy = (x[n].id for n in ("ada", "bob", "cy"))
    dup = DuplicateLink(group_id="g", entity_id=cy, canonical_id=ada, created_at=T0)
    pair = Community(group_id="g", name="pair", summary="two", member_ids=[ada, bob], embedding=vec(7),
                     created_at=T0, updated_at=T0)
    either_store.apply(GraphDelta(group_id="g", duplicates=[dup], communities=[pair]), SCHEMA)
    (got_dup,) = either_store.export_records("duplicate", "g", None, 10)
    assert (got_dup.group_id, got_dup.entity_id, got_dup.canonical_id, got_dup.created_at) == ("g", cy, ada, T0)
    (got_pair,) = either_store.export_records("community", "g", None, 10)
    assert (got_pair.name, got_pair.member_ids, got_pair.created_at) == ("pair", sorted([ada, bob]), T0)
    assert got_pair.embedding == pytest.approx(pair.embedding)
    with pytest.raises(StoreError, match=r"^after: a mention key has 2 parts \(episode_id, entity_id\)"):
        either_store.export_records("mention", "g", [x["e1"].id], 10)
    with pytest.raises(StoreError, match=r"^document_id: only chunks"):
        either_store.export_records("entity", "g", None, 10, document_id="d")


def test_the_rate_limit_count_reads_recent_rows_by_index_not_the_whole_group(store):
    """``creation_counts`` runs once per message: each of its queries must go through the (group_id, created_at)
    index, so its cost follows what was created recently, not the size of the group."""
    store.apply(small_graph("g", "alpha"), SCHEMA)
    seen: list[str] = []
    store.conn.set_trace_callback(seen.append)
    try:
        counts = store.creation_counts("g", datetime.now(UTC) - timedelta(days=1))
    finally:
        store.conn.set_trace_callback(None)
    assert set(counts) == {"entities", "relationships"}
    queries = [q for q in seen if q.lstrip().upper().startswith("SELECT")]
    assert len(queries) == 2, seen
    for q in queries:
        plan = " ".join(str(r[-1]) for r in store.conn.execute("EXPLAIN QUERY PLAN " + q))
        assert "_group_created" in plan, (q, plan)
