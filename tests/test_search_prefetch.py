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
