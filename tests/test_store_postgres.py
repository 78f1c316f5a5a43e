"""What only the PostgreSQL store has to get right: its connection pool (concurrent threads, dropped
connections), concurrent writers of one group, and clear errors for bad connection settings.

Real server (the ``pg_url`` fixture), a fresh database per test.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import psycopg
import pytest

from loregraph.graph.types import Entity, Episode, Fact, GraphDelta
from loregraph.store import StoreError, TimeFilter
from loregraph.store.postgres import PostgresStore
from test_store import DIM, SCHEMA, T0, small_graph, vec


def _store(url: str, **kw) -> PostgresStore:
    s = PostgresStore(url, **kw)
    s.ensure_embedder("test-model", DIM)
    return s


def _terminate_others(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as c:
        return len(c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = "
                             "current_database() AND pid <> pg_backend_pid()").fetchall())


def test_store_survives_its_connections_being_dropped(pg_db):
    s = _store(pg_db, pool_size=2)
    try:
        s.apply(small_graph("g", "alpha"), SCHEMA)
        assert _terminate_others(pg_db) >= 1  # every pooled connection of the store is gone server-side
        assert s.count("g")["facts"] == 1  # a read takes a checked, fresh connection
        s.apply(small_graph("g", "beta", seed=10), SCHEMA)  # and so does a write
        assert s.count("g")["facts"] == 2
        assert [h.id for h in s.fulltext("fact", ["g"], "beta tool", 5)]
    finally:
        s.close()


def test_threads_read_concurrently_and_see_the_same_results(pg_db):
    s = _store(pg_db, pool_size=4)
    try:
        for i in range(30):
            s.apply(small_graph("g", f"w{i}", seed=i * 5), SCHEMA)
        queries = [f"w{i} person uses w{i} tool" for i in range(30)]

        def both(i: int) -> tuple[list[str], list[str]]:
            return ([h.id for h in s.fulltext("fact", ["g"], queries[i], 5)],
                    [h.id for h in s.vector("fact", ["g"], np.asarray(vec(i * 5 + 3)), 5)])

        serial = [both(i) for i in range(30)]
        with ThreadPoolExecutor(8) as ex:
            parallel = list(ex.map(both, range(30)))
        assert parallel == serial
        with psycopg.connect(pg_db) as c:  # the pool really held several connections
            opened = c.execute("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
                               "AND pid <> pg_backend_pid()").fetchone()[0]
        assert 2 <= opened <= 4
    finally:
        s.close()


def _delta(group: str, i: int, vocab: list[str]) -> GraphDelta:
    """One fact whose text shares most of its terms with every other delta of this test."""
    g = small_graph(group, f"n{i}", seed=i)
    words = " ".join(vocab[(i + k) % len(vocab)] for k in range(6))
    ep = Episode(group_id=group, content=f"{words} shared note {i}", valid_at=T0, embedding=vec(1000 + i))
    fact = Fact(group_id=group, source_id=g.entities[0].id, target_id=g.entities[1].id, type="RELATED_TO",
                fact=f"{words} shared note", episodes=[ep.id], valid_at=T0, embedding=vec(2000 + i))
    return GraphDelta(group_id=group, episodes=[*g.episodes, ep], entities=g.entities, facts=[*g.facts, fact],
                      mentions=g.mentions)


def _assert_term_statistics_match_rows(url: str, group: str) -> None:
    """The BM25 statistics kept for a group (fts_stats, fts_terms) equal a recount from its rows."""
    with psycopg.connect(url) as c:
        for table, kind in (("facts", "fact"), ("episodes", "episode"), ("entities", "entity")):
            docs, tokens = c.execute("SELECT docs, tokens FROM fts_stats WHERE kind = %s AND group_id = %s",
                                     (kind, group)).fetchone()
            assert (docs, tokens) == c.execute(
                f"SELECT COUNT(*), SUM(fts_len) FROM {table} WHERE group_id = %s", (group,)).fetchone()
            recount = dict(c.execute(f"SELECT u.lexeme, COUNT(*) FROM {table} x, unnest(x.fts) u "
                                     "WHERE x.group_id = %s GROUP BY 1", (group,)).fetchall())
            kept = dict(c.execute("SELECT term, df FROM fts_terms WHERE kind = %s AND group_id = %s AND df > 0",
                                  (kind, group)).fetchall())
            assert kept == recount


def _bulk(group: str, n: int, tag: str, like: GraphDelta | None = None) -> GraphDelta:
    """A person, ``n`` tools and a fact (and an episode) from the person to each, texts carrying ``tag``; with
    ``like``, the same entity and fact ids as that delta."""
    ents = like.entities if like else [
        Entity(group_id=group, name=f"{tag} person", type="person", embedding=vec(5000)),
        *(Entity(group_id=group, name=f"{tag} tool {i}", type="tool", embedding=vec(5001 + i)) for i in range(n))]
    eps = [Episode(group_id=group, content=f"{tag} note {i} orbit", valid_at=T0, embedding=vec(3000 + i))
           for i in range(n)]
    facts = [Fact(group_id=group, source_id=ents[0].id, target_id=ents[i + 1].id, type="USES",
                  fact=f"{tag} fact {i} ledger", episodes=[eps[i].id], valid_at=T0, embedding=vec(4000 + i),
                  **({"id": like.facts[i].id} if like else {}))
             for i in range(n)]
    return GraphDelta(group_id=group, episodes=eps, entities=ents, facts=facts)


@pytest.mark.parametrize("backend", ["postgres", "citus"])
def test_a_write_takes_as_many_statements_for_200_facts_as_for_20(backend, request, monkeypatch):
    """Records go many to a statement and the BM25 statistics are kept per batch, not per row (on Citus every
    statement, and every statement of a per-row trigger, is a trip to a worker); the statistics still equal a
    recount after inserts, rewrites of the same ids and an id given twice in one delta."""
    url = request.getfixturevalue("pg_db" if backend == "postgres" else "citus_db")
    s = _store(url, pool_size=1)
    try:
        statements: list[str] = []
        real = psycopg.Connection.execute

        def counted(self, query, *args, **kw):  # a spy: every statement still runs on the real server
            statements.append(str(query)[:40])
            return real(self, query, *args, **kw)

        monkeypatch.setattr(psycopg.Connection, "execute", counted)
        first = _bulk("g", 20, "alpha")
        s.apply(first, SCHEMA)
        small = len(statements)
        statements.clear()
        s.apply(_bulk("g2", 200, "beta"), SCHEMA)
        assert len(statements) == small, statements
        monkeypatch.undo()
        _assert_term_statistics_match_rows(url, "g")
        _assert_term_statistics_match_rows(url, "g2")
        # the same ids rewritten with other words, one fact twice in the delta (its last text stays)
        again = _bulk("g", 20, "gamma", like=first)
        twice = again.facts[3].model_copy(update={"fact": "delta rewritten twice kernel"})
        s.apply(again.model_copy(update={"facts": [*again.facts, twice]}), SCHEMA)
        _assert_term_statistics_match_rows(url, "g")
        assert [h.id for h in s.fulltext("fact", ["g"], "kernel", 5)] == [twice.id]
        assert s.fulltext("fact", ["g"], "alpha", 5) == []
        assert len(s.fulltext("fact", ["g"], "gamma", 50)) == 19
    finally:
        s.close()


def test_concurrent_writers_of_one_group_neither_deadlock_nor_skew_term_statistics(pg_db):
    """Two stores (as two processes would) and four threads write one group at once: two add deltas, two
    delete episodes written before (which touches the tables in the opposite order). Every write lands, and
    the BM25 statistics the triggers keep equal a recount from the rows."""
    stores = [_store(pg_db, pool_size=2), _store(pg_db, pool_size=2)]
    vocab = ["orbit", "ledger", "kernel", "harbor", "violet", "copper", "meadow", "signal", "tundra", "quartz"]
    old = [_delta("g", 1000 + i, vocab) for i in range(40)]
    for d in old:
        stores[0].apply(d, SCHEMA)
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        store = stores[worker % 2]
        for i in range(20):
            try:
                if worker < 2:
                    store.apply(_delta("g", worker * 20 + i, vocab), SCHEMA)
                else:
                    for ep in old[(worker - 2) * 20 + i].episodes:
                        store.delete_episode("g", ep.id)
            except BaseException as exc:  # collected and asserted below
                errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        assert stores[0].count("g")["facts"] == 80 and stores[0].count("g")["episodes"] == 80
        _assert_term_statistics_match_rows(pg_db, "g")
        hits = stores[1].fulltext("fact", ["g"], "quartz orbit", 200, TimeFilter())
        expected = sum(1 for i in range(40) if {"quartz", "orbit"} & {vocab[(i + k) % 10] for k in range(6)})
        assert len(hits) == expected
    finally:
        for s in stores:
            s.close()


def test_bad_connection_settings_are_named(pg_url):
    with pytest.raises(StoreError, match="pool_size must be at least 1"):
        PostgresStore(pg_url, pool_size=0)
    bad = "postgresql://loregraph:s3cret@127.0.0.1:1/none"
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL") as err:
        PostgresStore(bad, connect_timeout_s=1.0)
    assert "s3cret" not in str(err.value) and "***" in str(err.value)


def _index_names(url: str) -> dict[str, str]:
    """Partial HNSW indexes of the database: name -> definition."""
    with psycopg.connect(url) as c:
        return dict(c.execute("SELECT indexname, indexdef FROM pg_indexes WHERE indexdef LIKE '%USING hnsw%'"))


def _exact(s: PostgresStore, group: str, q: np.ndarray, k: int) -> list[str]:
    with psycopg.connect(s.url) as c:
        rows = c.execute("SELECT id, embedding::real[] FROM facts WHERE group_id = %s", (group,)).fetchall()
    sims = {rid: float(np.dot(np.asarray(v), q) / np.linalg.norm(v) / np.linalg.norm(q)) for rid, v in rows}
    return sorted(sims, key=lambda r: -sims[r])[:k]


def test_a_group_past_the_threshold_gets_its_own_hnsw_index(pg_db):
    s = _store(pg_db)
    s.HNSW_MIN_ROWS = 40
    try:
        for i in range(45):
            s.apply(small_graph("big", f"b{i}", seed=i * 7), SCHEMA)
        for i in range(10):
            s.apply(small_graph("small", f"s{i}", seed=500 + i * 7), SCHEMA)
        indexes = _index_names(pg_db)
        # facts and episodes of "big" passed 40 rows (45 each), entities too (90); "small" has none
        assert len(indexes) == 3 and all("'big'" in d for d in indexes.values())
        with psycopg.connect(pg_db) as c:  # tiny tables favour a scan: ask whether the index is usable at all
            c.execute("SET enable_seqscan = off")
            c.execute("SET enable_sort = off")
            plan = "\n".join(r[0] for r in c.execute(
                "EXPLAIN SELECT id FROM facts WHERE group_id = 'big' ORDER BY embedding <=> %s::vector LIMIT 5",
                (str(vec(3)),)))
        assert any(name in plan for name in indexes), plan
        for seed in (3, 11, 77):
            q = np.asarray(vec(seed))
            assert [h.id for h in s.vector("fact", ["big"], q, 5)] == _exact(s, "big", q, 5)
            assert [h.id for h in s.vector("fact", ["small"], q, 5)] == _exact(s, "small", q, 5)
            both = {h.id for h in s.vector("fact", ["big", "small"], q, 100)}
            assert both == {f.id for f in s.list_facts("big", TimeFilter())} | {
                f.id for f in s.list_facts("small", TimeFilter())}
        s.delete_group("big")
        assert _index_names(pg_db) == {}
        assert [h.id for h in s.vector("fact", ["big"], np.asarray(vec(3)), 5)] == []
    finally:
        s.close()


def test_bulk_load_builds_the_index_at_checkpoint(pg_db):
    s = _store(pg_db)
    s.HNSW_MIN_ROWS = 20
    s.build_vector_indexes = False
    try:
        for i in range(25):
            s.apply(small_graph("bulk", f"b{i}", seed=i * 7), SCHEMA)
        assert _index_names(pg_db) == {}
        s.checkpoint()
        assert len(_index_names(pg_db)) == 3
        reopened = _store(pg_db)  # another process sees the indexes recorded and builds nothing twice
        reopened.HNSW_MIN_ROWS = 20
        reopened.apply(small_graph("bulk", "late", seed=999), SCHEMA)
        assert len(_index_names(pg_db)) == 3
        reopened.close()
    finally:
        s.close()


def test_memory_on_postgresql_searches_in_parallel_with_the_same_results(pg_db, embedder):
    """On PostgreSQL, Memory runs searches side by side and a search prefetches fact and episode hits next to its
    entity stage: results equal those of the serial path, for many concurrent searches."""
    import asyncio

    from loregraph.memory import Memory

    async def go() -> None:
        m = await Memory.open(pg_db, embedder=embedder)
        try:
            assert m.searcher._prefetcher is not None and m.store.capabilities.concurrent_readers > 1
            lines = ["I moved our billing service from Heroku to Fly.io last month.",
                     "Marta leads the payments team and prefers Postgres over MySQL.",
                     "We use Grafana for dashboards and PagerDuty for alerts.",
                     "The mobile app is written in Kotlin; the web app uses Svelte.",
                     "Jonas joined the payments team in March and works on refunds."]
            await m.add_messages("team", [{"role_type": "user", "role": "ana", "content": t} for t in lines])
            queries = ["who works on refunds", "which database does Marta prefer", "where does billing run",
                       "what do we use for alerts", "what language is the mobile app"]
            parallel = await asyncio.gather(*(m.search(q, "team", limit=5) for q in queries * 3))
            m.searcher._prefetcher.shutdown()
            m.searcher._prefetcher = None
            serial = [await m.search(q, "team", limit=5) for q in queries * 3]

            def ids(r):
                return ([f.fact.id for f in r.facts], [e.entity.id for e in r.entities],
                        [e.episode.id for e in r.episodes])

            assert [ids(r) for r in parallel] == [ids(r) for r in serial]
            assert any(r.facts for r in serial) and any(r.episodes for r in serial)
        finally:
            await m.close()

    asyncio.run(go())
