"""BM25 with each group's own statistics (issue 16): a group's full-text scores are FTS5's bm25() over that group's
records alone (its own number of records, mean length and document frequencies), whatever other groups hold, on
both backends; SQLite's postings and statistics (``{table}_postings``, ``fts_stats``, migration 0011) follow
inserts, rewrites, deletes and group deletion, and the migration backfills them from the FTS5 tables it replaces;
both backends score a fixture alike.

Real SQLite files and the real PostgreSQL server (``pg_db``), a fresh database per test.
"""

from __future__ import annotations

from collections import Counter

import pytest

from loregraph.graph.types import Fact, GraphDelta
from loregraph.store import open_store
from loregraph.store.base import Store
from loregraph.store.sqlite import SQLiteStore
from loregraph.store.text import group_token
from test_bm25_postings import _bm25, _graph
from test_store import DIM, SCHEMA, T0

SQLITE_TABLES = (("episode", "episodes"), ("entity", "entities"), ("fact", "facts"), ("chunk", "chunks"),
                 ("community", "communities"))
QUERIES = ("lantern wick", "keeper 3", "wick", "harbour lantern 5", "café brass")


def _open(url: str) -> Store:
    s = open_store(url)
    s.ensure_embedder("test-model", DIM)
    return s


def _other_group(tag: str, n: int) -> GraphDelta:
    """Another group's records: more of them, longer, with the same words (every statistic differs)."""
    g = _graph("other", tag, n)
    for f in g.facts:
        f.fact += " wick lantern harbour keeper brass brass"
    return g


def _texts(delta: GraphDelta, deleted: set[str] = frozenset()) -> dict[str, str]:  # type: ignore[assignment]
    return {f.id: f.fact for f in delta.facts if f.id not in deleted}


def _assert_scores(s: Store, texts: dict[str, str]) -> None:
    for query in QUERIES:
        expected = _bm25(texts, query, "g")
        hits = s.fulltext("fact", ["g"], query, 50)
        assert {h.id for h in hits} == set(expected), query
        for h in hits:
            assert h.score == pytest.approx(expected[h.id], rel=1e-9), query


def test_scores_use_the_groups_own_statistics_whatever_other_groups_hold(db_url):
    s = _open(db_url)
    try:
        g = _graph("g", "amber", 12)
        g.facts[2].fact = "amber keeper drinks café brass"
        s.apply(g, SCHEMA)
        _assert_scores(s, _texts(g))
        s.apply(_other_group("amber", 40), SCHEMA)  # a larger group of longer records, the same words
        _assert_scores(s, _texts(g))
        changed = g.model_copy(deep=True)
        changed.facts[5].fact = "amber wick wick wick lantern"
        s.apply(changed, SCHEMA)
        s.delete_fact("g", g.facts[7].id)
        s.delete_fact("other", s.fulltext("fact", ["other"], "wick", 1)[0].id)
        _assert_scores(s, _texts(changed, {g.facts[7].id}))
    finally:
        s.close()


def _kept(path: str) -> tuple[dict[str, set[tuple[str, int, int, int]]], set[tuple[str, str, int, int]]]:
    """SQLite's postings of every kind, and its statistics."""
    import sqlean

    c = sqlean.connect(path)
    try:
        postings = {kind: set(c.execute(f"SELECT term, seq, tf, len FROM {table}_postings"))
                    for kind, table in SQLITE_TABLES}
        stats = set(c.execute("SELECT kind, group_id, docs, tokens FROM fts_stats WHERE docs > 0 OR tokens > 0"))
        return postings, stats
    finally:
        c.close()


def _recount(path: str) -> tuple[dict[str, set[tuple[str, int, int, int]]], set[tuple[str, str, int, int]]]:
    """The postings and statistics the records' indexed terms hold."""
    import sqlean

    c = sqlean.connect(path)
    try:
        postings: dict[str, set[tuple[str, int, int, int]]] = {}
        stats: set[tuple[str, str, int, int]] = set()
        for kind, table in SQLITE_TABLES:
            rows = c.execute(f"SELECT t.seq, t.terms, x.group_id FROM {table}_terms t JOIN {table} x "
                             "ON x.seq = t.seq").fetchall()
            postings[kind] = {(term, seq, tf, len(body.split())) for seq, body, _ in rows
                              for term, tf in Counter(body.split()).items()}
            per_group: dict[str, list[int]] = {}
            for _, body, gid in rows:
                docs_tokens = per_group.setdefault(gid, [0, 0])
                docs_tokens[0] += 1
                docs_tokens[1] += len(body.split())
            stats |= {(kind, gid, d, t) for gid, (d, t) in per_group.items()}
        return postings, stats
    finally:
        c.close()


def test_sqlite_postings_and_statistics_follow_writes(tmp_path):
    path = str(tmp_path / "m.db")
    s = _open(path)
    try:
        first = _graph("g", "amber", 6)
        s.apply(first, SCHEMA)
        s.apply(_other_group("amber", 3), SCHEMA)
        assert _kept(path) == _recount(path)
        assert _kept(path)[0]["fact"]  # not vacuous
        again = first.model_copy(deep=True)
        again.facts[0].fact = "amber keeper polishes the brass brass brass"
        again.facts[1].fact = "amber keeper trims lantern 1"  # the same words: nothing to redo
        again.facts.append(again.facts[2].model_copy(update={"fact": "amber keeper sells oil"}))  # twice: last wins
        again.episodes[0].content = "amber storm"
        s.apply(again, SCHEMA)
        assert _kept(path) == _recount(path)
        s.delete_fact("g", first.facts[3].id)
        s.delete_episode("g", first.episodes[4].id)
        assert _kept(path) == _recount(path)
        token = group_token("other")
        others = {kind: {p for p in kept if p[0].startswith(token)} for kind, kept in _kept(path)[0].items()}
        s.delete_group("g")
        postings, stats = _kept(path)
        assert (postings, stats) == _recount(path)
        assert postings == others  # the other group's postings, all of them and only them
        assert {gid for _, gid, _, _ in stats} == {"other"}
    finally:
        s.close()


def test_sqlite_migration_backfills_postings_and_statistics(tmp_path):
    path = str(tmp_path / "m.db")
    s = _open(path)
    try:
        g = _graph("g", "amber", 8)
        g.facts[1].fact = "amber keeper drinks café brass"
        s.apply(g, SCHEMA)
        s.apply(_other_group("cobalt", 5), SCHEMA)
        expected = _kept(path)
        scores = {q: [(h.id, h.score) for h in s.fulltext("fact", ["g"], q, 10)] for q in QUERIES}
    finally:
        s.close()
    import sqlean

    c = sqlean.connect(path, isolation_level=None)  # as migration 0010 left it: the terms in FTS5 tables
    for _, table in SQLITE_TABLES:
        c.execute(f"CREATE VIRTUAL TABLE {table}_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')")
        c.execute(f"CREATE VIRTUAL TABLE {table}_fts_vocab USING fts5vocab({table}_fts, 'row')")
        c.execute(f"INSERT INTO {table}_fts (rowid, body) SELECT seq, terms FROM {table}_terms")
        c.execute(f"DROP TABLE {table}_terms")
        c.execute(f"DROP TABLE {table}_postings")
    c.execute("DROP TABLE fts_stats")
    c.execute("DELETE FROM schema_migrations WHERE version = 11")
    c.close()
    s = _open(path)
    try:
        assert _kept(path) == expected
        for q in QUERIES:
            hits = s.fulltext("fact", ["g"], q, 10)
            assert [h.id for h in hits] == [i for i, _ in scores[q]], q
            assert [h.score for h in hits] == pytest.approx([v for _, v in scores[q]], rel=1e-9), q
    finally:
        s.close()


def test_both_backends_rank_a_group_alike(pg_db, tmp_path):
    """The same records on SQLite and PostgreSQL, next to other groups of different sizes on each: the same hits,
    in the same order, with the same scores, for every kind."""
    stores = [_open(str(tmp_path / "m.db")), _open(pg_db)]
    try:
        g = _graph("g", "amber", 15)
        g.facts[4].fact = "amber keeper drinks café brass"
        for s, n in zip(stores, (30, 3), strict=True):
            s.apply(g, SCHEMA)
            s.apply(_other_group("amber", n), SCHEMA)
        found = 0
        for kind in ("fact", "episode", "entity"):
            for q in QUERIES:
                sqlite_hits, pg_hits = (s.fulltext(kind, ["g"], q, 10) for s in stores)
                found += len(sqlite_hits)
                assert [h.id for h in sqlite_hits] == [h.id for h in pg_hits], (kind, q)
                assert [h.score for h in sqlite_hits] == pytest.approx([h.score for h in pg_hits], rel=1e-9)
        assert found > 60 and isinstance(stores[0], SQLiteStore)
    finally:
        for s in stores:
            s.close()


def test_sqlite_scores_follow_another_processes_writes(tmp_path):
    """Document frequencies are cached per process; a write by another store on the same file (another process:
    a worker, a second server) moves the group's ``fts_stats.gen``, and the next search counts them again."""
    path = str(tmp_path / "m.db")
    reader, writer = _open(path), _open(path)
    try:
        g = _graph("g", "amber", 10)
        writer.apply(g, SCHEMA)
        _assert_scores(reader, _texts(g))  # caches the terms' frequencies
        keeper = g.entities[0].id
        more = [Fact(group_id="g", source_id=keeper, target_id=e.id, type="KNOWS", fact=f"amber keeper wick {i}",
                     valid_at=T0) for i, e in enumerate(g.entities[1:4])]
        writer.apply(GraphDelta(group_id="g", facts=more), SCHEMA)
        _assert_scores(reader, {**_texts(g), **{f.id: f.fact for f in more}})
    finally:
        reader.close()
        writer.close()
