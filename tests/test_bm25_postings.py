"""PostgreSQL's BM25 posting lists (``fts_postings``, migration 0009): kept equal to the rows' terms through
inserts, rewrites, deletes, group deletion and the migration's backfill, on PostgreSQL and on Citus; and the
scores read from them are FTS5's bm25() over the group's own statistics, computed here independently from the
texts.

Real servers (the ``pg_db`` / ``citus_db`` fixtures), a fresh database per test.
"""

from __future__ import annotations

import math
from collections import Counter

import psycopg
import pytest

from loregraph.graph.types import Entity, Episode, Fact, GraphDelta
from loregraph.store.postgres import PostgresStore
from loregraph.store.text import group_token, query_terms, terms
from test_store import DIM, SCHEMA, T0, vec

KINDS = (("facts", "fact"), ("episodes", "episode"), ("entities", "entity"))


def _store(url: str) -> PostgresStore:
    s = PostgresStore(url, pool_size=2)
    s.ensure_embedder("test-model", DIM)
    return s


def _postings(url: str, group: str) -> dict[str, set[tuple[str, str, int, int]]]:
    with psycopg.connect(url) as c:
        return {kind: set(c.execute("SELECT term, id, tf, len FROM fts_postings WHERE group_id = %s AND kind = %s",
                                    (group, kind)).fetchall()) for _, kind in KINDS}


def _recount(url: str, group: str) -> dict[str, set[tuple[str, str, int, int]]]:
    """The postings a group's rows hold, read from their tsvectors."""
    with psycopg.connect(url) as c:
        return {kind: set(c.execute(f"SELECT u.lexeme, x.id, cardinality(u.positions), x.fts_len FROM {table} x, "
                                    "unnest(x.fts) u WHERE x.group_id = %s", (group,)).fetchall())
                for table, kind in KINDS}


def _assert_postings_match_rows(url: str, group: str) -> None:
    kept, rows = _postings(url, group), _recount(url, group)
    for _, kind in KINDS:
        assert kept[kind] == rows[kind], kind


def _graph(group: str, tag: str, n: int) -> GraphDelta:
    ents = [Entity(group_id=group, name=f"{tag} keeper", type="person", embedding=vec(1)),
            *(Entity(group_id=group, name=f"{tag} lantern {i}", type="tool", embedding=vec(2 + i)) for i in range(n))]
    eps = [Episode(group_id=group, content=f"{tag} lantern {i} glows over the harbour harbour", valid_at=T0,
                   embedding=vec(100 + i)) for i in range(n)]
    facts = [Fact(group_id=group, source_id=ents[0].id, target_id=ents[i + 1].id, type="USES",
                  fact=f"{tag} keeper trims lantern {i}" + " wick" * (i % 3), episodes=[eps[i].id], valid_at=T0,
                  embedding=vec(200 + i)) for i in range(n)]
    return GraphDelta(group_id=group, episodes=eps, entities=ents, facts=facts)


@pytest.mark.parametrize("backend", ["postgres", "citus"])
def test_postings_follow_inserts_rewrites_deletes_and_group_deletion(backend, request):
    url = request.getfixturevalue("pg_db" if backend == "postgres" else "citus_db")
    s = _store(url)
    try:
        first = _graph("g", "amber", 6)
        s.apply(first, SCHEMA)
        s.apply(_graph("other", "amber", 3), SCHEMA)
        _assert_postings_match_rows(url, "g")
        assert _postings(url, "g")["fact"]  # not vacuous
        # rewrites: new words and lengths for the same ids, one of them given twice in a delta (the last wins)
        again = first.model_copy(deep=True)
        again.facts[0].fact = "amber keeper polishes the brass brass brass"
        again.facts[1].fact = "amber keeper trims lantern 1"  # the same words: postings unchanged
        twice = again.facts[2].model_copy(update={"fact": "amber keeper sells oil"})
        again.facts.append(twice)
        again.episodes[0].content = "amber storm"
        s.apply(again, SCHEMA)
        _assert_postings_match_rows(url, "g")
        terms_of_first = {t for t, i, _, _ in _postings(url, "g")["fact"] if i == first.facts[0].id}
        assert terms_of_first == {group_token("g") + t for t in terms("amber keeper polishes the brass")}
        # deletes: a fact, an episode (and what only it held)
        s.delete_fact("g", first.facts[3].id)
        s.delete_episode("g", first.episodes[4].id)
        _assert_postings_match_rows(url, "g")
        assert first.facts[3].id not in {i for _, i, _, _ in _postings(url, "g")["fact"]}
        # the other group is untouched by all of it, and by deleting this group
        before_other = _postings(url, "other")
        s.delete_group("g")
        assert _postings(url, "g") == {kind: set() for _, kind in KINDS}
        assert _postings(url, "other") == before_other
        _assert_postings_match_rows(url, "other")
    finally:
        s.close()


def _bm25(docs: dict[str, str], query: str, group: str) -> dict[str, float]:
    """FTS5's bm25() (k1 = 1.2, b = 0.75) over ``docs`` alone, as a positive score."""
    tokenised = {i: terms(t) for i, t in docs.items()}
    n = len(docs)
    avgdl = sum(len(w) for w in tokenised.values()) / n
    q = [t[len(group_token(group)):] for t in dict.fromkeys(query_terms(group, query))]
    df = {t: sum(1 for w in tokenised.values() if t in w) for t in q}
    out: dict[str, float] = {}
    for i, words in tokenised.items():
        tf = Counter(words)
        score = 0.0
        for t in q:
            if not tf[t]:
                continue
            idf = max(math.log((n - df[t] + 0.5) / (df[t] + 0.5)), 1e-6)
            score += idf * tf[t] * 2.2 / (tf[t] + 1.2 * (0.25 + 0.75 * len(words) / avgdl))
        if score:
            out[i] = score
    return out


def test_scores_are_fts5_bm25_over_the_groups_rows_after_changes(pg_db):
    s = _store(pg_db)
    try:
        g = _graph("g", "amber", 12)
        s.apply(g, SCHEMA)
        s.apply(_graph("other", "amber", 20), SCHEMA)  # another group's rows change nothing here
        changed = g.model_copy(deep=True)
        changed.facts[5].fact = "amber wick wick wick lantern"
        s.apply(changed, SCHEMA)
        s.delete_fact("g", g.facts[7].id)
        texts = {f.id: f.fact for f in changed.facts if f.id != g.facts[7].id}
        for query in ("lantern wick", "keeper 3", "wick", "harbour lantern 5"):
            expected = _bm25(texts, query, "g")
            hits = s.fulltext("fact", ["g"], query, 50)
            assert {h.id for h in hits} == set(expected), query
            for h in hits:
                assert h.score == pytest.approx(expected[h.id], rel=1e-9), query
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    finally:
        s.close()


def test_an_ended_fact_is_filtered_after_ranking_and_the_limit_still_filled(pg_db):
    """Facts are ranked from the postings, then held to the time filter: when the filter drops the best ones,
    the next ones fill the limit (the same results as filtering first)."""
    s = _store(pg_db)
    try:
        g = _graph("g", "amber", 40)
        s.apply(g, SCHEMA)
        best = s.fulltext("fact", ["g"], "wick", 40)
        assert len(best) == 26  # the facts with a wick
        ended = g.model_copy(deep=True)
        gone = {h.id for h in best[:24]}  # more than the 1 * 4 + 20 best of a search for one fact
        for f in ended.facts:
            if f.id in gone:
                f.invalid_at = T0
        s.apply(ended, SCHEMA)
        assert [h.id for h in s.fulltext("fact", ["g"], "wick", 1)] == [best[24].id]
        assert [h.id for h in s.fulltext("fact", ["g"], "wick", 5)] == [best[24].id, best[25].id]
    finally:
        s.close()


def test_the_migration_backfills_postings_of_existing_rows(pg_db):
    s = _store(pg_db)
    try:
        s.apply(_graph("g", "amber", 5), SCHEMA)
        s.apply(_graph("h", "cobalt", 4), SCHEMA)
        expected = {"g": _recount(pg_db, "g"), "h": _recount(pg_db, "h")}
        scores = [(h.id, round(h.score, 9)) for h in s.fulltext("fact", ["g"], "keeper wick", 10)]
    finally:
        s.close()
    with psycopg.connect(pg_db, autocommit=True) as c:  # a database from before migration 0009
        c.execute("DROP TABLE fts_postings")
        c.execute("DELETE FROM schema_migrations WHERE version = 9")
    s = _store(pg_db)
    try:
        assert {"g": _postings(pg_db, "g"), "h": _postings(pg_db, "h")} == expected
        assert [(h.id, round(h.score, 9)) for h in s.fulltext("fact", ["g"], "keeper wick", 10)] == scores
    finally:
        s.close()


def test_a_writer_without_the_store_keeps_postings_through_the_trigger(pg_db):
    s = _store(pg_db)
    try:
        s.apply(_graph("g", "amber", 3), SCHEMA)
    finally:
        s.close()
    with psycopg.connect(pg_db, autocommit=True) as c:
        c.execute("UPDATE facts SET fts = to_tsvector('simple', 'x'), fts_len = 1 WHERE group_id = 'g' AND "
                  "seq = (SELECT MIN(seq) FROM facts WHERE group_id = 'g')")
        c.execute("DELETE FROM episodes WHERE group_id = 'g' AND seq = (SELECT MIN(seq) FROM episodes "
                  "WHERE group_id = 'g')")
    _assert_postings_match_rows(pg_db, "g")


def test_fact_edges_walked_per_entity_equal_the_shared_query(pg_db):
    """PostgreSQL's graph-expansion read (each entity's newest facts on the (group, end, seq) indexes, merged) gives
    what the shared SQL of both backends gives: the newest ``limit`` facts touching any of the entities, each
    once, current ones only unless the time filter says otherwise."""
    from loregraph.store.base import TimeFilter
    from loregraph.store.sql import SQLStore

    s = _store(pg_db)
    try:
        g = _graph("g", "amber", 30)
        hub, tools = g.entities[0], g.entities[1:]
        # facts between the entities asked about (either direction), and some that ended
        g.facts += [Fact(group_id="g", source_id=tools[i].id, target_id=tools[i + 1].id, type="RELATED_TO",
                         fact=f"lantern {i} beside lantern {i + 1}", valid_at=T0, embedding=vec(400 + i),
                         **({"invalid_at": T0} if i % 4 == 0 else {})) for i in range(20)]
        s.apply(g, SCHEMA)
        s.apply(_graph("other", "amber", 5), SCHEMA)
        for ids in ([hub.id], [tools[3].id, tools[4].id], [hub.id, tools[0].id, tools[1].id], ["missing"]):
            for tf in (TimeFilter(), TimeFilter(include_expired=True)):
                for limit in (1, 5, 50):
                    mine = s.fact_edges("g", ids, tf, limit)
                    assert mine == SQLStore.fact_edges(s, "g", ids, tf, limit), (ids, tf, limit)
                    assert len({f for f, _, _ in mine}) == len(mine)
        assert len(s.fact_edges("g", [hub.id], TimeFilter(), 50)) == 30
        # the hub's two facts to them, lantern 2 -> 3, 3 -> 4 and the ended 4 -> 5
        assert len(s.fact_edges("g", [tools[3].id, tools[4].id], TimeFilter(include_expired=True), 50)) == 5
        assert len(s.fact_edges("g", [tools[3].id, tools[4].id], TimeFilter(), 50)) == 4
    finally:
        s.close()


def test_equal_scores_rank_in_insertion_order_on_both_backends(pg_db, tmp_path):
    """Records with the same BM25 score come in the order they were written, on PostgreSQL as in SQLite's FTS5
    (by rowid): the same top results on both backends even where many records tie."""
    from loregraph.store.sqlite import SQLiteStore

    pg = _store(pg_db)
    lite = SQLiteStore(tmp_path / "t.db")
    lite.ensure_embedder("test-model", DIM)
    try:
        keeper = Entity(group_id="g", name="keeper", type="person", embedding=vec(1))
        tools = [Entity(group_id="g", name=f"tool {i}", type="tool", embedding=vec(2 + i)) for i in range(40)]
        facts = [Fact(group_id="g", source_id=keeper.id, target_id=tools[i].id, type="USES",
                      fact=f"keeper prefers {'copper' if i % 2 else 'brass'} kettle", valid_at=T0,
                      embedding=vec(100 + i)) for i in range(40)]
        delta = GraphDelta(group_id="g", entities=[keeper, *tools], facts=facts)
        for store in (pg, lite):
            store.apply(delta, SCHEMA)
        order = {f.id: i for i, f in enumerate(facts)}
        got = {name: [order[h.id] for h in store.fulltext("fact", ["g"], "copper kettle", 7)]
               for name, store in (("pg", pg), ("sqlite", lite))}
        assert got["pg"] == got["sqlite"] == [1, 3, 5, 7, 9, 11, 13]
    finally:
        pg.close()
        lite.close()
