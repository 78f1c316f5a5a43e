"""Hybrid search starts BM25 before the query is embedded: on a store with concurrent readers (PostgreSQL's pool)
the server scores the words while the model embeds; on SQLite the model embeds on its own thread while the calling
thread runs BM25. The results are those of the same search run step by step.

A real PostgreSQL server (the ``pg_db`` fixture, a fresh database), a real SQLite file, the real local model.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from loregraph.search.hybrid import HybridSearch, SearchRequest


class _WaitingEmbedder:
    """The real model, whose ``embed_one`` first waits (up to a few seconds) for a BM25 call to have started."""

    def __init__(self, real: Any, started: threading.Event):
        self.real, self.started, self.saw_bm25 = real, started, []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def embed_one(self, text: str) -> np.ndarray:
        self.saw_bm25.append(self.started.wait(5.0))
        return self.real.embed_one(text)


async def _search_both_ways(url: str, embedder: Any) -> None:
    """Search with BM25 watched and the model waiting for it, then the same search one step at a time."""
    from loregraph.memory import Memory
    from scripted import ScriptedExtractor
    from test_search import SCRIPT, T0

    m = await Memory.open(url, embedder=embedder, extractor=ScriptedExtractor(SCRIPT))
    try:
        for text in SCRIPT:
            await m.add_messages("g1", [{"content": text, "role_type": "user", "timestamp": T0}])
        store = m.store
        started = threading.Event()
        fulltext = store.fulltext

        def watched(*args: Any, **kwargs: Any) -> Any:
            started.set()
            return fulltext(*args, **kwargs)

        store.fulltext = watched  # type: ignore[method-assign]
        waiting = _WaitingEmbedder(embedder, started)
        searcher = HybridSearch(store, waiting)  # type: ignore[arg-type]
        try:
            req = SearchRequest(query="Where does Orion store its data?", group_ids=["g1"])
            found = searcher.search(req)
            assert waiting.saw_bm25 == [True]
            store.fulltext = fulltext  # type: ignore[method-assign]
            alone = HybridSearch(store, embedder)
            alone._prefetcher, alone._embedding = None, None  # one step at a time, on this thread
            stepwise = alone._search(req)
        finally:
            searcher.close()
        assert found.facts and [f.fact.id for f in found.facts] == [f.fact.id for f in stepwise.facts]
        assert [e.entity.id for e in found.entities] == [e.entity.id for e in stepwise.entities]
        assert [e.episode.id for e in found.episodes] == [e.episode.id for e in stepwise.episodes]
    finally:
        await m.close()


@pytest.mark.postgres
async def test_bm25_runs_on_the_server_while_the_query_is_embedded_and_changes_nothing(pg_db, embedder):
    await _search_both_ways(pg_db, embedder)


async def test_sqlite_bm25_runs_while_the_model_embeds_beside_it_and_changes_nothing(tmp_path, embedder):
    await _search_both_ways(f"sqlite:///{tmp_path / 'memory.db'}", embedder)


@pytest.mark.postgres
async def test_graph_expansion_runs_beside_the_entity_rows_and_again_when_a_seed_is_gone(pg_db, embedder):
    """On PostgreSQL the graph expansion from the best three entities starts on the prefetcher while the calling
    thread reads their rows. Results (the episode stage's too, whose best candidates' rows are read beside the
    pool's places) are those of the step-by-step search, also when a ranked entity's row is gone by the time it is
    read (deleted meanwhile): then the expansion runs again from the seeds found."""
    from loregraph.memory import Memory
    from scripted import ScriptedExtractor
    from test_search import SCRIPT, T0

    m = await Memory.open(pg_db, embedder=embedder, extractor=ScriptedExtractor(SCRIPT))
    try:
        for text in SCRIPT:
            await m.add_messages("g1", [{"content": text, "role_type": "user", "timestamp": T0}])
        store = m.store
        expanded: list[tuple[str, list[str]]] = []
        two_hops, get_entities = store.fact_edges_two_hops, store.get_entities

        def watched(group_id: str, ids: Any, *args: Any) -> Any:
            expanded.append((threading.current_thread().name, list(ids)))
            return two_hops(group_id, ids, *args)

        store.fact_edges_two_hops = watched  # type: ignore[method-assign]
        req = SearchRequest(query="Where does Orion store its data?", group_ids=["g1"])
        alone = HybridSearch(store, embedder)
        alone._prefetcher, alone._embedding = None, None  # one step at a time, on this thread
        searcher = HybridSearch(store, embedder)
        try:
            for hidden in (set(), None):
                expanded.clear()
                if hidden is None:  # the best entity's row is gone when the rows are read
                    best = searcher._search(req).entities[0].entity.id
                    hidden = {best}
                    store.get_entities = lambda g, ids, gone=frozenset(hidden): [  # type: ignore[method-assign]
                        e for e in get_entities(g, ids) if e.id not in gone]
                    expanded.clear()
                found = searcher._search(req)
                stepwise = alone._search(req)
                assert found.facts and [f.fact.id for f in found.facts] == [f.fact.id for f in stepwise.facts]
                assert [e.entity.id for e in found.entities] == [e.entity.id for e in stepwise.entities]
                assert [e.episode.id for e in found.episodes] == [e.episode.id for e in stepwise.episodes]
                if not hidden:  # the guess held: the expansion begun from it is the one used (then step by step)
                    assert len(expanded) == 2
                else:  # guessed with the hidden one; run again without it (here and step by step)
                    searcher.close()  # lets the guessed expansion finish
                    searched = [ids for thread, ids in expanded if thread.startswith("loregraph-search")]
                    assert len(searched) == 1 and hidden <= set(searched[0])
                    assert len(expanded) == 3 and not any(hidden & set(ids) for thread, ids in expanded
                                                          if not thread.startswith("loregraph-search"))
        finally:
            searcher.close()
    finally:
        await m.close()


@pytest.mark.postgres
async def test_a_prefetcher_with_every_worker_busy_still_finishes_the_search(pg_db, embedder):
    """The episode stage runs on the prefetcher and hands it a read of its best candidates' rows: with one worker
    (every worker busy, as under concurrent searches) that read is done by the stage itself, not waited for."""
    from concurrent.futures import ThreadPoolExecutor

    from loregraph.memory import Memory
    from scripted import ScriptedExtractor
    from test_search import SCRIPT, T0

    m = await Memory.open(pg_db, embedder=embedder, extractor=ScriptedExtractor(SCRIPT))
    try:
        for text in SCRIPT:
            await m.add_messages("g1", [{"content": text, "role_type": "user", "timestamp": T0}])
        searcher = HybridSearch(m.store, embedder)
        assert searcher._prefetcher is not None
        searcher._prefetcher.shutdown()
        searcher._prefetcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="loregraph-search")
        alone = HybridSearch(m.store, embedder)
        alone._prefetcher, alone._embedding = None, None
        req = SearchRequest(query="Where does Orion store its data?", group_ids=["g1"])
        with ThreadPoolExecutor(max_workers=1) as caller:
            found = caller.submit(searcher.search, req).result(timeout=30)
        searcher.close()
        stepwise = alone.search(req)
        assert found.episodes and [e.episode.id for e in found.episodes] == [e.episode.id for e in stepwise.episodes]
        assert [f.fact.id for f in found.facts] == [f.fact.id for f in stepwise.facts]
    finally:
        await m.close()
