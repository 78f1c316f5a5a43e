"""``loregraph bench documents``: document ingest throughput (chunks/s through chunking, embedding, extraction and
the one-transaction write) and ``search_documents`` latency at N chunks in one collection, next to a brute-force
cosine scan over every chunk vector held in RAM (same run, same queries).

The N search chunks are written straight through the store (no extraction); their vectors are composed from real
embeddings of their facts' parts (names, relation wording), normalised: realistic neighbourhoods at a fraction of
the cost of embedding N paragraphs. Queries are embedded by the real model inside the timed search."""

from __future__ import annotations

import statistics
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
from rich.console import Console

from loregraph.bench.synthetic import TEMPLATES, World
from loregraph.graph.documents import Chunk, Document


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def _document_text(world: World, n_sections: int) -> str:
    parts = []
    for s in range(n_sections):
        parts.append(f"## {world.rng.choice(world.projects)} notes {s + 1}")
        for _ in range(3):
            parts.append(" ".join(world.fact()[5] + "." for _ in range(4)))
    return "\n\n".join(parts)


async def run_documents_bench(*, chunks: int, ingest_docs: int, queries: int, db: str | None, seed: int,
                              console: Console) -> None:
    from loregraph.memory import Memory
    from loregraph.store import url_scheme

    url = db or f"sqlite:///{Path(tempfile.mkdtemp(prefix='loregraph-bench-')) / 'docs.db'}"
    backend = "postgresql" if url_scheme(url) in ("postgresql", "postgres") else "sqlite"
    world = World(seed)
    tag = uuid.uuid4().hex[:8]
    g_ingest, g_search = f"bench-docs-ingest-{tag}", f"bench-docs-search-{tag}"
    m = await Memory.open(url)
    try:
        # ---- ingest throughput (with extraction) ----------------------------------------------------
        await m.create_collection(g_ingest, "ingest", "benchmark documents")
        texts = [_document_text(world, 3) for _ in range(ingest_docs)]
        await m.ingest_text(g_ingest, texts[0], "ingest", "warm-up")  # model warm-up, not timed
        t0 = time.perf_counter()
        n_chunks = n_facts = 0
        for i, text in enumerate(texts[1:], 1):
            r = await m.ingest_text(g_ingest, text, "ingest", f"doc {i}")
            n_chunks += r.num_chunks
            n_facts += r.facts_extracted
        took = time.perf_counter() - t0
        console.print(f"({backend}) ingest_text: {n_chunks} chunks ({n_facts} facts) from {len(texts) - 1} documents "
                      f"in {took:.1f} s = {n_chunks / took:.1f} chunks/s (chunk, embed, extract, one transaction "
                      "per document)")

        # ---- search at N chunks -------------------------------------------------------------------------
        await m.create_collection(g_search, "search", "benchmark chunks")
        col = await m.get_collection(g_search, "search")
        emb = m.embedder
        names = world.people[:300] + world.tools + world.projects[:100]
        name_vecs = dict(zip(names, emb.embed(names), strict=True))
        rel_vecs = {t: emb.embed_one(t.format(s="", o="", p="")) for _, t in TEMPLATES}
        rng = np.random.default_rng(seed)
        matrix = np.empty((chunks, len(next(iter(rel_vecs.values())))), dtype=np.float32)
        ids: list[str] = []
        facts_text: list[str] = []
        t0 = time.perf_counter()
        per_doc = 200
        async with m.bulk_import():
            for d in range(0, chunks, per_doc):
                doc = Document(group_id=g_search, collection_id=col.id, title=f"bulk {d // per_doc}",
                               chunk_count=min(per_doc, chunks - d))
                batch = []
                for i in range(d, min(d + per_doc, chunks)):
                    s, o = world.rng.choice(names), world.rng.choice(names)
                    tmpl = world.rng.choice(TEMPLATES)[1]
                    text = tmpl.format(s=s, o=o, p=world.rng.choice(world.projects))
                    v = name_vecs[s] + rel_vecs[tmpl] + name_vecs[o] + rng.normal(0, 0.02, matrix.shape[1])
                    v = (v / np.linalg.norm(v)).astype(np.float32)
                    matrix[i] = v
                    c = Chunk(group_id=g_search, collection_id=col.id, document_id=doc.id, ordinal=i - d,
                              content=text + ".", embedding=v.tolist())
                    ids.append(c.id)
                    facts_text.append(text)
                    batch.append(c)
                await m._run(m.store.put_document, doc, batch)
        console.print(f"({backend}) wrote {chunks} chunks (vectors, full text) in {time.perf_counter() - t0:.1f} s")
        qs = [facts_text[i] for i in rng.choice(len(facts_text), size=queries, replace=False)]
        await m.search_documents(g_search, qs[0], "search", limit=5, threshold=0.0)  # loads caches
        lat, embed_ms, index_ms, scan_ms, recall = [], [], [], [], []
        for q in qs:
            t1 = time.perf_counter()
            hits = await m.search_documents(g_search, q + " ", "search", limit=5, threshold=0.0)
            lat.append((time.perf_counter() - t1) * 1e3)
            t1 = time.perf_counter()
            qv = emb.embed_one(q + "  ")
            embed_ms.append((time.perf_counter() - t1) * 1e3)
            t1 = time.perf_counter()
            await m._read(m.store.search_chunks, g_search, col.id, qv, 5)
            index_ms.append((time.perf_counter() - t1) * 1e3)
            t1 = time.perf_counter()
            qn = qv / np.linalg.norm(qv)
            top = np.argpartition(-(matrix @ qn), 5)[:5]
            scan_ms.append((time.perf_counter() - t1) * 1e3)
            recall.append(len({ids[i] for i in top} & {h.chunk_id for h in hits}) / 5)
        p50, p95, e50 = _pct(lat, 0.5), _pct(lat, 0.95), _pct(embed_ms, 0.5)
        i50, s50 = _pct(index_ms, 0.5), _pct(scan_ms, 0.5)
        console.print(f"({backend}) search_documents at {chunks} chunks in one collection: p50 {p50:.1f} ms, p95 "
                      f"{p95:.1f} ms end to end (query embedding p50 {e50:.1f} ms), recall@5 "
                      f"{statistics.mean(recall):.2f} against brute force; brute-force cosine baseline (embed + numpy "
                      f"scan of {chunks} vectors in RAM) p50 {e50 + s50:.1f} ms, ratio {p50 / (e50 + s50):.2f}x; "
                      f"vector lookup alone p50 {i50:.1f} ms vs numpy scan alone p50 {s50:.1f} ms")
    finally:
        if db:
            for g in (g_ingest, g_search):
                await m.delete_group(g)
        await m.close()


__all__ = ["run_documents_bench"]
