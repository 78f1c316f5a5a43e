"""The Store contract, run on both backends: SQLite (a file) and PostgreSQL 15 + pgvector (a fresh database).

The backend-independent cases of test_store.py are imported here, so they run against the parametrized
``store`` fixture of this module; the rest are written against ``make_store`` (a fresh store per call).
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import create_citus_database, drop_citus_database
from loregraph.graph.types import (
    Community,
    DuplicateLink,
    Entity,
    Episode,
    Fact,
    FactInvalidation,
    GraphDelta,
    Mention,
)
from loregraph.schema import SchemaViolationError
from loregraph.store import EmbedderMismatchError, StoreError, TimeFilter, open_store
from test_store import (  # reused cases: they take the `store` fixture defined below
    DIM,
    SCHEMA,
    T0,
    WORDS,
    small_graph,
    test_bitemporal_time_filters,
    test_delete_episode_removes_only_what_it_alone_contributed,
    test_delete_group_removes_everything_of_that_group_only,
    test_failure_injected_mid_write_leaves_nothing,
    test_ids_of_another_group_cannot_be_overwritten,
    test_schema_violation_writes_nothing,
    test_traversal_two_hops_both_directions,
    vec,
)

REUSED = (test_bitemporal_time_filters, test_delete_episode_removes_only_what_it_alone_contributed,
          test_delete_group_removes_everything_of_that_group_only, test_failure_injected_mid_write_leaves_nothing,
          test_ids_of_another_group_cannot_be_overwritten, test_schema_violation_writes_nothing,
          test_traversal_two_hops_both_directions)


class Backend:
    """Creates fresh stores (and reopens them) of one backend; cleans up at the end."""

    def __init__(self, name: str, tmp_path_factory, pg_admin_url: str | None):
        self.name = name
        self._tmp = tmp_path_factory
        self._admin = pg_admin_url
        self._databases: list[str] = []
        self._open: list = []

    def new_url(self) -> str:
        if self.name == "sqlite":
            return f"sqlite:///{self._tmp.mktemp('db') / 's.db'}"
        import psycopg

        db = "lg_test_" + uuid.uuid4().hex[:12]
        self._databases.append(db)
        if self.name == "citus":  # a database on every node of the cluster, its workers registered
            return create_citus_database(self._admin, db)
        with psycopg.connect(self._admin, autocommit=True) as c:
            c.execute(f"CREATE DATABASE {db}")
        return self._admin.rsplit("/", 1)[0] + "/" + db

    def open(self, url: str, embedder: bool = True):
        s = open_store(url)
        if embedder:
            s.ensure_embedder("test-model", DIM)
        self._open.append(s)
        return s

    def fresh(self, embedder: bool = True):
        return self.open(self.new_url(), embedder)

    def cleanup(self) -> None:
        for s in self._open:
            s.close()
        if self._databases and self.name == "citus":
            for db in self._databases:
                drop_citus_database(self._admin, db)
        elif self._databases:
            import psycopg

            with psycopg.connect(self._admin, autocommit=True) as c:
                for db in self._databases:
                    c.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")


def admin_url(request, name: str) -> str | None:
    """The server a backend's databases are made on (None for SQLite)."""
    return {"postgres": "pg_url", "citus": "citus_url"}.get(name) and request.getfixturevalue(
        {"postgres": "pg_url", "citus": "citus_url"}[name])


@pytest.fixture(params=["sqlite", "postgres", "citus"])
def backend(request, tmp_path_factory):
    admin = admin_url(request, request.param)
    b = Backend(request.param, tmp_path_factory, admin)
    yield b
    b.cleanup()


@pytest.fixture
def store(backend):
    return backend.fresh()


def test_migrations_are_recorded_and_reopen_is_idempotent(backend):
    url = backend.new_url()
    s = backend.open(url)
    v = s.schema_version
    assert v >= 1
    s2 = backend.open(url)
    assert s2.schema_version == v
    with s2._tx() as c:
        c.execute("INSERT INTO schema_migrations VALUES (999, 'future', " +
                  ("'x')" if backend.name == "sqlite" else "now())"))
    with pytest.raises(StoreError, match="newer than this loregraph supports"):
        backend.open(url)


def test_embedder_is_recorded_and_a_different_one_refused(backend):
    s = backend.fresh(embedder=False)
    s.ensure_embedder("model-a", 8)
    s.ensure_embedder("model-a", 8)
    with pytest.raises(EmbedderMismatchError, match="model-a"):
        s.ensure_embedder("model-b", 8)
    with pytest.raises(EmbedderMismatchError, match="dim 8"):
        s.ensure_embedder("model-a", 16)


def test_wrong_embedding_dimension_is_refused_and_writes_nothing(store):
    d = small_graph("g1", "wrongdim")
    d.entities[0].embedding = [0.1] * (DIM + 1)
    with pytest.raises(StoreError, match="dimension"):
        store.apply(d, SCHEMA)
    assert store.count("g1")["entities"] == 0


def test_reads_round_trip_every_field(store):
    d = small_graph("g1", "round", 3)
    d.entities[0].aliases = ["Roundy", "R. Person"]
    d.entities[0].attributes = {"is_speaker": True}
    d.entities[0].conversation_id = "c1"
    d.facts[0].conversation_id = "c1"
    d.facts[0].attributes = {}
    store.apply(d, SCHEMA)
    ent = store.get_entities("g1", [d.entities[0].id])[0]
    assert ent.aliases == ["Roundy", "R. Person"] and ent.attributes == {"is_speaker": True}
    assert ent.created_at == d.entities[0].created_at
    f = store.get_facts("g1", [d.facts[0].id])[0]
    assert (f.source_id, f.target_id, f.type, f.episodes) == (d.facts[0].source_id, d.facts[0].target_id, "USES",
                                                              [d.episodes[0].id])
    assert f.valid_at == T0 and f.invalid_at is None and f.conversation_id == "c1"
    ep = store.get_episodes("g1", [d.episodes[0].id])[0]
    assert ep.content == d.episodes[0].content and ep.valid_at == T0
    assert [e.id for e in store.speakers("g1")] == [ent.id]
    assert store.conversation_counts("g1", "c1") == {"entities": 1, "relationships": 1}
    assert {e.id for e in store.find_entities_by_names("g1", ["roundy", "r. person"])} == {ent.id}
    assert store.entity_types("g1", [e.id for e in d.entities]) == {d.entities[0].id: "person",
                                                                    d.entities[1].id: "tool"}
    assert store.groups_of("fact", f.id, None) == ["g1"] and store.groups_of("fact", "nope", None) == []
    assert store.groups_of("fact", f.id, ["g2"]) == [] and store.groups_of("fact", f.id, ["g2", "g1"]) == ["g1"]
    assert store.groups() == ["g1"]
    assert store.facts_of_episodes("g1", [ep.id]) == {ep.id: [f.id]}
    assert store.mentions_of_entities("g1", [ent.id]) == {ent.id: [ep.id]}
    emb = store.embeddings("fact", "g1", [f.id])
    assert np.allclose(emb[f.id], np.asarray(d.facts[0].embedding, dtype=np.float32), atol=1e-6)


def test_graph_lookups(store):
    g = "g1"
    ents = [Entity(group_id=g, name=f"n{i}", type="entity") for i in range(4)]
    facts = [Fact(group_id=g, source_id=ents[a].id, target_id=ents[b].id, type="RELATED_TO", fact=f"{a}-{b}")
             for a, b in ((0, 1), (2, 0), (2, 3))]
    com = Community(group_id=g, name="c", member_ids=[ents[0].id, ents[1].id])
    store.apply(GraphDelta(group_id=g, entities=ents, facts=facts, communities=[com],
                           duplicates=[DuplicateLink(group_id=g, entity_id=ents[3].id, canonical_id=ents[2].id)]),
                SCHEMA)
    got = [f.id for f in store.facts_of_entities(g, [ents[0].id], TimeFilter())]
    assert got == [facts[0].id, facts[1].id]
    assert [f.id for f in store.facts_of_entities(g, [ents[0].id], TimeFilter(), newest_first=True)] == got[::-1]
    assert store.facts_of_entities(g, [ents[0].id], TimeFilter(), types=["USES"]) == []
    assert [e[0] for e in store.fact_edges(g, [ents[2].id], TimeFilter(), 10)] == [facts[2].id, facts[1].id]
    assert store.neighbours_among(g, ents[0].id, [ents[1].id, ents[2].id, ents[3].id], TimeFilter()) == {
        ents[1].id, ents[2].id}
    assert store.communities_of(g, [ents[0].id, ents[3].id]) == [com.id]
    assert store.count(g)["duplicates"] == 1
    assert [e.id for e in store.list_entities(g)] == [e.id for e in ents]
    assert store.list_entities(g, entity_type="person") == []


def test_invalidation_and_cardinality_in_the_same_transaction(store):
    d = small_graph("g1", "card")
    store.apply(d, SCHEMA)
    dup = d.facts[0].model_copy(update={"id": "second", "fact": "card person uses card tool again",
                                        "embedding": None})
    with pytest.raises(SchemaViolationError, match="cardinality"):
        store.apply(GraphDelta(group_id="g1", facts=[dup]), SCHEMA)
    assert store.count("g1")["facts"] == 1
    inv = FactInvalidation(fact_id=d.facts[0].id, invalid_at=T0 + timedelta(days=1),
                           expired_at=T0 + timedelta(days=1))
    store.apply(GraphDelta(group_id="g1", facts=[dup], invalidations=[inv]), SCHEMA)
    assert [f.id for f in store.list_facts("g1", TimeFilter())] == ["second"]
    with pytest.raises(SchemaViolationError, match="fact not found"):
        store.apply(GraphDelta(group_id="g2", invalidations=[inv]), SCHEMA)


def test_delete_fact_and_episode_neighbours(store):
    g = "g1"
    eps = [Episode(group_id=g, content=f"turn {i}", valid_at=T0 + timedelta(minutes=i), conversation_id="c")
           for i in range(5)]
    store.apply(GraphDelta(group_id=g, episodes=eps), SCHEMA)
    assert [e.id for e in store.adjacent_episodes(g, eps[2].id, 1)] == [eps[1].id, eps[3].id]
    assert [e.id for e in store.recent_episodes(g, before=eps[4].valid_at, source=None, limit=2)] == [
        eps[2].id, eps[3].id]
    d = small_graph(g, "del")
    store.apply(d, SCHEMA)
    assert store.delete_fact(g, d.facts[0].id) == 1
    assert store.delete_fact(g, d.facts[0].id) == 0
    assert store.fulltext("fact", [g], "del", 10) == []
    assert store.get_episodes(g, [d.episodes[0].id])[0].fact_ids == d.episodes[0].fact_ids


def test_apply_hook_runs_inside_the_transaction(store):
    seen = []
    with store.apply_hook(lambda conn: seen.append(conn)):
        store.apply(small_graph("g1", "hook"), SCHEMA)
    store.apply(small_graph("g1", "nohook", 5), SCHEMA)
    assert len(seen) == 1


def _corpus(group: str, n: int, seed: int) -> GraphDelta:
    rng = np.random.default_rng(seed)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
             "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"]
    ents = []
    for i in range(n):
        k = int(rng.integers(2, 9))
        text = " ".join(rng.choice(words, size=k, p=np.linspace(2, 0.2, len(words)) / np.linspace(
            2, 0.2, len(words)).sum()))
        v = rng.standard_normal(DIM).astype(np.float32)
        ents.append(Entity(group_id=group, name=f"e{i} {text}", type="entity",
                           embedding=(v / np.linalg.norm(v)).tolist()))
    return GraphDelta(group_id=group, entities=ents)


def test_bm25_and_knn_rank_like_the_other_backend(backend, tmp_path):
    """Both backends rank the same corpus the same way (BM25 from term statistics; exact cosine kNN)."""
    s = backend.fresh()
    ref = open_store(f"sqlite:///{tmp_path / 'ref.db'}")
    ref.ensure_embedder("test-model", DIM)
    try:
        g1, g2 = _corpus("g1", 300, 1), _corpus("g2", 50, 2)
        for st_ in (s, ref):
            st_.apply(g1, SCHEMA)
        # one group: N and mean length agree with FTS5's (table-wide) ones, so BM25 scores are equal
        for q in ("alpha tango", "romeo sierra golf", "charlie", "papa quebec kilo lima", "india juliet",
                  "mike november oscar", "hotel", "bravo delta echo foxtrot"):
            a = s.fulltext("entity", ["g1"], q, 10)
            b = ref.fulltext("entity", ["g1"], q, 10)
            assert len(a) == len(b) == 10, q
            assert np.allclose([h.score for h in a], [h.score for h in b], rtol=1e-5), q
            assert a[0].id == b[0].id or np.isclose(a[0].score, a[1].score), q
        for st_ in (s, ref):
            st_.apply(g2, SCHEMA)
        qv = np.asarray(vec(11), dtype=np.float32)
        a = s.vector("entity", ["g1", "g2"], qv, 10)
        b = ref.vector("entity", ["g1", "g2"], qv, 10)
        assert [h.id for h in a] == [h.id for h in b]
        assert np.allclose([h.score for h in a], [h.score for h in b], atol=1e-5)
    finally:
        ref.close()


def test_open_store_postgres_url_errors():
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL"):
        open_store("postgresql://nobody:secret@127.0.0.1:1/none?connect_timeout=2")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.lists(st.tuples(st.sampled_from(["ga", "gb", "gc"]), WORDS, st.integers(0, 10_000)),
                     min_size=1, max_size=10),
       probe=WORDS, probe_group=st.sampled_from(["ga", "gb", "gc"]))
def test_no_primitive_returns_another_groups_rows(backend, data, probe, probe_group):
    s = backend.fresh()
    owner: dict[str, str] = {}
    for group, word, seed in data:
        d = small_graph(group, word, seed)
        s.apply(d, SCHEMA)
        for rec in (*d.entities, *d.facts, *d.episodes):
            owner[rec.id] = group
    q = np.asarray(vec(42), dtype=np.float32)
    for kind in ("entity", "fact", "episode"):
        for hit in s.fulltext(kind, [probe_group], probe, 50) + s.vector(kind, [probe_group], q, 50):
            assert owner[hit.id] == probe_group
    all_ids = list(owner)
    for rec in (*s.get_entities(probe_group, all_ids), *s.get_facts(probe_group, all_ids),
                *s.get_episodes(probe_group, all_ids), *s.list_facts(probe_group, TimeFilter()),
                *s.list_entities(probe_group), *s.recent_episodes(probe_group, before=None, source=None, limit=99)):
        assert rec.group_id == probe_group
    for eid in s.traverse(probe_group, all_ids, 2, TimeFilter()):
        assert owner[eid] == probe_group
    for f in s.facts_of_entities(probe_group, all_ids, TimeFilter()):
        assert f.group_id == probe_group
    assert set(s.mentions_of_entities(probe_group, all_ids)) <= {i for i, g in owner.items() if g == probe_group}


def test_mentions_are_idempotent(store):
    d = small_graph("g1", "twice")
    store.apply(d, SCHEMA)
    store.apply(GraphDelta(group_id="g1", mentions=[Mention(group_id="g1", episode_id=d.episodes[0].id,
                                                            entity_id=d.entities[0].id)]), SCHEMA)
    assert store.count("g1")["mentions"] == 2


# ---- ids are per group (issue 19 item 1) -------------------------------------------------------------------
def _twin(d: GraphDelta, group: str, old: str, new: str, seed: int) -> GraphDelta:
    """The same records with the same ids in another group, with other words and vectors."""
    def swap(text: str) -> str:
        return text.replace(old, new)

    ents = [e.model_copy(update={"group_id": group, "name": swap(e.name), "embedding": vec(seed + i)})
            for i, e in enumerate(d.entities)]
    eps = [e.model_copy(update={"group_id": group, "content": swap(e.content), "embedding": vec(seed + 10)})
           for e in d.episodes]
    facts = [f.model_copy(update={"group_id": group, "fact": swap(f.fact), "embedding": vec(seed + 20)})
             for f in d.facts]
    mentions = [m.model_copy(update={"group_id": group}) for m in d.mentions]
    return GraphDelta(group_id=group, episodes=eps, entities=ents, facts=facts, mentions=mentions)


def test_two_groups_hold_records_with_the_same_ids_independently(store):
    g1 = small_graph("g1", "alpha", 1)
    g2 = _twin(g1, "g2", "alpha", "bravo", 50)
    a, b = g1.entities
    f, ep = g1.facts[0], g1.episodes[0]
    com = Community(id="com-1", group_id="g1", name="c1", member_ids=[a.id])
    g1.communities = [com]
    g2.communities = [com.model_copy(update={"group_id": "g2", "name": "c2", "member_ids": [b.id]})]
    g1.duplicates = [DuplicateLink(group_id="g1", entity_id=b.id, canonical_id=a.id)]
    store.apply(g1, SCHEMA)
    store.apply(g2, SCHEMA)  # refused before: "id is already used in another group"
    for g, word in (("g1", "alpha"), ("g2", "bravo")):
        assert [e.name for e in store.get_entities(g, [a.id, b.id])] == [f"{word} person", f"{word} tool"]
        assert store.get_facts(g, [f.id])[0].fact == f"{word} person uses {word} tool"
        assert store.get_episodes(g, [ep.id])[0].content == f"{word} person uses {word} tool"
        assert all(x.group_id == g for x in (*store.get_entities(g, [a.id, b.id]), *store.get_facts(g, [f.id]),
                                            *store.get_episodes(g, [ep.id]), *store.list_facts(g, TimeFilter())))
        assert [x.id for x in store.find_entities_by_names(g, [f"{word} person"])] == [a.id]
        assert store.find_entities_by_names(g, ["alpha person" if word == "bravo" else "bravo person"]) == []
        assert [x.id for x in store.facts_of_entities(g, [a.id], TimeFilter())] == [f.id]
        assert store.facts_of_episodes(g, [ep.id]) == {ep.id: [f.id]}
        assert store.mentions_of_entities(g, [a.id]) == {a.id: [ep.id]}
        assert store.traverse(g, [a.id], 2, TimeFilter()) == {a.id: 0, b.id: 1}
        assert store.count(g)["entities"] == 2 and store.count(g)["mentions"] == 2
        for kind in ("entity", "fact", "episode"):
            hits = store.fulltext(kind, [g], f"{word} person", 10)
            assert hits and {h.id for h in hits} <= {a.id, b.id, f.id, ep.id}
            other = "bravo" if word == "alpha" else "alpha"
            assert store.fulltext(kind, [g], other, 10) == []
        own = np.asarray((g1 if g == "g1" else g2).facts[0].embedding, dtype=np.float32)
        assert store.vector("fact", [g], own, 1)[0].score == pytest.approx(1.0, abs=1e-5)
        assert np.allclose(store.embeddings("fact", g, [f.id])[f.id], own, atol=1e-6)
    assert store.communities_of("g1", [a.id, b.id]) == ["com-1"] and store.communities_of("g2", [a.id]) == []
    assert store.count("g1")["duplicates"] == 1 and store.count("g2")["duplicates"] == 0
    assert store.groups_of("entity", a.id, None) == ["g1", "g2"]
    assert store.groups_of("entity", a.id, ["g2", "g3"]) == ["g2"]
    assert store.groups_of("episode", ep.id, ["g3"]) == []

    # writes to one group's record never touch the other's
    store.apply(GraphDelta(group_id="g2", entities=[g2.entities[0].model_copy(update={"summary": "changed"})]),
                SCHEMA)
    assert store.get_entities("g1", [a.id])[0].summary == ""
    store.apply(GraphDelta(group_id="g2", invalidations=[FactInvalidation(
        fact_id=f.id, invalid_at=T0 + timedelta(days=1), expired_at=T0 + timedelta(days=1))]), SCHEMA)
    assert [x.id for x in store.list_facts("g1", TimeFilter())] == [f.id]
    assert store.list_facts("g2", TimeFilter()) == []
    assert store.delete_fact("g2", f.id) == 1
    assert store.get_facts("g1", [f.id])[0].episodes == [ep.id]
    assert [h.id for h in store.fulltext("fact", ["g1"], "alpha", 10)] == [f.id]
    assert store.delete_episode("g2", ep.id) == {"episodes": 1, "facts": 0, "entities": 2}
    assert store.count("g1") == {"episodes": 1, "entities": 2, "facts": 1, "mentions": 2, "duplicates": 1}
    assert store.mentions_of_entities("g1", [a.id]) == {a.id: [ep.id]}
    assert store.fulltext("entity", ["g1"], "alpha person", 10)[0].id == a.id
    q = np.asarray(g1.entities[0].embedding, dtype=np.float32)
    assert store.vector("entity", ["g1"], q, 1)[0].id == a.id
    store.apply(g2, SCHEMA)
    store.delete_group("g2")
    assert store.count("g1") == {"episodes": 1, "entities": 2, "facts": 1, "mentions": 2, "duplicates": 1}
    assert store.communities_of("g1", [a.id]) == ["com-1"]
    assert store.vector("entity", ["g1"], q, 1)[0].id == a.id
    assert store.delete_episode("g1", ep.id)["entities"] == 2


def test_cardinality_counts_only_the_writing_groups_entities(store):
    """A cardinality rule typed by endpoint joins the fact's own group's entities, not a namesake id elsewhere."""
    import json
    from importlib import resources

    from loregraph.schema import Schema

    doc = json.loads(resources.files("loregraph.schema").joinpath("default_schema.json").read_text("utf-8"))
    doc["cardinality"].append({"edge": "USES", "per": "source", "max_current": 1, "source_type": "person"})
    schema = Schema.from_dict(doc)
    g1 = small_graph("g1", "alpha", 1)
    store.apply(g1, schema)
    store.apply(_twin(g1, "g2", "alpha", "bravo", 50), schema)
    assert store.count("g2")["facts"] == 1
    second = g1.facts[0].model_copy(update={"id": "f2", "group_id": "g2", "target_id": g1.entities[0].id,
                                            "embedding": None})
    with pytest.raises(SchemaViolationError, match="cardinality"):
        store.apply(GraphDelta(group_id="g2", facts=[second]), schema)


# ---- review defects (issue 11) ------------------------------------------------------------------------------
def test_term_and_row_counts_follow_writes(store):
    """Full text drops terms in more than a share of a group's rows; the counts it uses (cached on SQLite) must
    follow every write, not only deletes and rollbacks."""
    store.COMMON_TERM_MIN_DOCS = 1  # the ceiling becomes max(1, 5% of the group's rows)
    common = [Entity(group_id="g1", name=f"common filler{i}", type="entity") for i in range(9)]
    rare = Entity(group_id="g1", name="rare item", type="entity")
    store.apply(GraphDelta(group_id="g1", entities=[*common, rare]), SCHEMA)
    # 10 rows, ceiling 1: "common" (9 rows) is dropped, "rare" (1 row) searched
    assert [h.id for h in store.fulltext("entity", ["g1"], "common rare", 50)] == [rare.id]
    more = [Entity(group_id="g1", name=f"rare stuff{i}", type="entity") for i in range(30)]
    store.apply(GraphDelta(group_id="g1", entities=more), SCHEMA)
    # 40 rows, ceiling 2: both terms are common now, so the rarer one ("common", 9 rows) is searched
    assert {h.id for h in store.fulltext("entity", ["g1"], "common rare", 50)} == {e.id for e in common}
    store.delete_group("g1")
    store.apply(GraphDelta(group_id="g1", entities=[rare]), SCHEMA)
    assert [h.id for h in store.fulltext("entity", ["g1"], "rare item", 50)] == [rare.id]


def test_facts_of_more_than_500_entities_are_all_found(store):
    hub = Entity(group_id="g1", name="hub", type="entity")
    ents = [Entity(group_id="g1", name=f"n{i}", type="entity") for i in range(620)]
    facts = [Fact(group_id="g1", source_id=e.id, target_id=hub.id, type="RELATED_TO", fact=f"{i}-hub")
             for i, e in enumerate(ents)]
    # a fact between two listed entities whose ids fall in different chunks is returned once
    facts.append(Fact(group_id="g1", source_id=ents[0].id, target_id=ents[610].id, type="RELATED_TO", fact="x"))
    store.apply(GraphDelta(group_id="g1", entities=[hub, *ents], facts=facts), SCHEMA)
    ids = [e.id for e in ents]
    got = store.facts_of_entities("g1", ids, TimeFilter(), limit=5000)
    assert [f.id for f in got] == [f.id for f in facts]
    newest = store.facts_of_entities("g1", ids, TimeFilter(), limit=3, newest_first=True)
    assert [f.id for f in newest] == [f.id for f in facts[::-1][:3]]
    assert len(store.fact_edges("g1", ids, TimeFilter(), 5000)) == len(facts)


def test_an_over_long_word_is_indexed_and_found_on_both_backends(store):
    """Issue 19 item 3 (storage): one word of thousands of characters made PostgreSQL refuse the record's
    tsvector ("word is too long"), so its write failed every time; terms are now capped for both backends."""
    long_ascii, long_utf8 = "x" * 5000, "é" * 3000  # 5,000 and 6,000 bytes
    ent = Entity(group_id="g1", name=f"{long_ascii} blob", type="entity", embedding=vec(1))
    ep = Episode(group_id="g1", content=f"pasted {long_utf8} here", valid_at=T0)
    other = Entity(group_id="g1", name="tail", type="entity")
    f = Fact(group_id="g1", source_id=ent.id, target_id=other.id, type="RELATED_TO", fact=f"{long_utf8} token")
    store.apply(GraphDelta(group_id="g1", entities=[ent, other], episodes=[ep], facts=[f]), SCHEMA)
    assert [h.id for h in store.fulltext("entity", ["g1"], long_ascii, 5)] == [ent.id]
    assert [h.id for h in store.fulltext("entity", ["g1"], "blob", 5)] == [ent.id]
    assert [h.id for h in store.fulltext("episode", ["g1"], long_utf8, 5)] == [ep.id]
    assert [h.id for h in store.fulltext("fact", ["g1"], f"{long_utf8} token", 5)] == [f.id]
    assert store.fulltext("entity", ["g1"], "x" * 50, 5) == []  # a shorter word is another term


def test_facts_between_two_entities_are_read_without_the_rest(store):
    g = "g1"
    ents = [Entity(group_id=g, name=f"m{i}", type="entity") for i in range(4)]
    pairs = ((0, 1), (2, 0), (0, 3), (1, 0), (3, 2))
    facts = [Fact(group_id=g, source_id=ents[a].id, target_id=ents[b].id, type="RELATED_TO", fact=f"{a}-{b}")
             for a, b in pairs]
    store.apply(GraphDelta(group_id=g, entities=ents, facts=facts), SCHEMA)
    # both directions, in write order; a fact of the other ends among themselves (3-2) is not between them
    got = store.facts_of_entities(g, [ents[0].id], TimeFilter(), other_ends=[ents[1].id])
    assert [f.fact for f in got] == ["0-1", "1-0"]
    got = store.facts_of_entities(g, [ents[0].id], TimeFilter(), other_ends=[ents[2].id, ents[3].id])
    assert [f.fact for f in got] == ["2-0", "0-3"]
    assert store.facts_of_entities(g, [ents[0].id], TimeFilter(), types=["USES"], other_ends=[ents[1].id]) == []
    assert store.facts_of_entities(g, [ents[0].id], TimeFilter(), other_ends=[]) == []
    # another group's ids as the other end find nothing
    twin = Entity(group_id="g2", name="m1", type="entity")
    store.apply(GraphDelta(group_id="g2", entities=[twin]), SCHEMA)
    assert store.facts_of_entities(g, [ents[0].id], TimeFilter(), other_ends=[twin.id]) == []
    assert store.facts_of_entities("g2", [ents[0].id], TimeFilter(), other_ends=[ents[1].id]) == []


def test_entity_names_are_the_live_entities_of_the_group(store):
    a, b = Entity(group_id="g1", name="Ada Lovelace", type="person"), Entity(group_id="g1", name="Kafka", type="tool")
    store.apply(GraphDelta(group_id="g1", entities=[a, b]), SCHEMA)
    assert store.entity_names("g1", [a.id, b.id, "nope"]) == {a.id: "Ada Lovelace", b.id: "Kafka"}
    assert store.entity_names("g2", [a.id, b.id]) == {}
    b.deleted_at = b.updated_at
    store.apply(GraphDelta(group_id="g1", entities=[b]), SCHEMA)
    assert store.entity_names("g1", [a.id, b.id]) == {a.id: "Ada Lovelace"}


def test_fact_lines_are_facts_of_entities_without_the_other_columns(store):
    g = "g1"
    ents = [Entity(group_id=g, name=f"k{i}", type="entity") for i in range(5)]
    facts = [Fact(group_id=g, source_id=ents[a].id, target_id=ents[b].id, type="RELATED_TO", fact=f"{a} and {b}",
                  invalid_at=T0 if (a, b) == (3, 4) else None, valid_at=T0 - timedelta(days=1))
             for a, b in ((0, 1), (2, 0), (1, 2), (3, 4), (4, 0))]
    store.apply(GraphDelta(group_id=g, entities=ents, facts=facts), SCHEMA)
    ids = [ents[0].id, ents[3].id]
    for time in (TimeFilter(), TimeFilter(include_expired=True)):
        for limit in (1, 2, 10):
            want = [(f.id, f.source_id, f.type, f.target_id, f.fact)
                    for f in store.facts_of_entities(g, ids, time, limit=limit)]
            assert store.fact_lines(g, ids, time, limit) == want
    assert [x[4] for x in store.fact_lines(g, ids, TimeFilter(), 10)] == ["0 and 1", "2 and 0", "4 and 0"]
    assert store.fact_lines("g2", ids, TimeFilter(include_expired=True), 10) == []
    assert store.fact_lines(g, [], TimeFilter(), 10) == []
