"""Hybrid search on a store with concurrent readers (PostgreSQL's pool) starts BM25 before the query is embedded:
the server scores the words while the model embeds; the results are those of the same search run step by step.

A real PostgreSQL server (the ``pg_db`` fixture, a fresh database) and the real local embedding model.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from loregraph.search.hybrid import HybridSearch, SearchRequest
from loregraph.store.postgres import PostgresStore

pytestmark = pytest.mark.postgres


class _WaitingEmbedder:
    """The real model, whose ``embed_one`` first waits (up to a few seconds) for a BM25 call to have started."""

    def __init__(self, real: Any, started: threading.Event):
        self.real, self.started, self.saw_bm25 = real, started, []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def embed_one(self, text: str) -> np.ndarray:
        self.saw_bm25.append(self.started.wait(5.0))
        return self.real.embed_one(text)


async def test_bm25_runs_while_the_query_is_embedded_and_changes_nothing(pg_db, embedder):
    from loregraph.memory import Memory
    from scripted import ScriptedExtractor
    from test_search import SCRIPT, T0

    m = await Memory.open(pg_db, embedder=embedder, extractor=ScriptedExtractor(SCRIPT))
    try:
        for text in SCRIPT:
            await m.add_messages("g1", [{"content": text, "role_type": "user", "timestamp": T0}])
        store = m.store
        assert isinstance(store, PostgresStore)
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
            searcher._prefetcher, prefetcher = None, searcher._prefetcher  # the same search, one step at a time
            alone = searcher.search(req)
            searcher._prefetcher = prefetcher
        finally:
            searcher.close()
        assert found.facts and [f.fact.id for f in found.facts] == [f.fact.id for f in alone.facts]
        assert [e.entity.id for e in found.entities] == [e.entity.id for e in alone.entities]
        assert [e.episode.id for e in found.episodes] == [e.episode.id for e in alone.episodes]
    finally:
        await m.close()
