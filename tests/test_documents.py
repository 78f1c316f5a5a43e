"""Documents (spec 002) on both backends: collections, ingest_text as one transaction, reingest, search,
collection-scoped graph questions, group isolation. Real SQLite files, the real PostgreSQL server, the real local
embedder and extractor."""

from __future__ import annotations

from itertools import pairwise

import pytest

from loregraph.errors import ConflictError, InvalidInputError, NotFoundError
from loregraph.memory import Memory

ORION = """# Project Orion

Project Orion is a payments platform. Orion uses FastAPI for its public API and PostgreSQL for storage.
Nora Patel leads Project Orion and works with Sam Lee on the billing service.

## Deployment

The Orion team deploys with Kubernetes on Google Cloud. Releases happen every Tuesday after the test suite
passes. Rollbacks use Helm.
"""

GARDEN = """# Garden notes

Tomatoes need six hours of sun a day. Basil grows well next to tomatoes and keeps some pests away.
Water the beds in the early morning so the leaves dry before night.
"""


@pytest.fixture
async def mem(db_url, embedder):
    m = await Memory.open(db_url, embedder=embedder)
    yield m
    await m.close()


async def test_collections_rules_and_isolation(mem):
    col = await mem.create_collection("alice", "eng-docs", "Engineering documents",
                                      metadata_schema={"custom": {"team": "string"}, "system": ["source_url"]})
    assert col.metadata_schema == {"custom": {"team": {"type": "string"}}, "system": ["source_url"]}
    with pytest.raises(ConflictError, match="name: a collection named 'eng-docs' exists"):
        await mem.create_collection("alice", "eng-docs", "again")
    with pytest.raises(InvalidInputError, match="description: is required"):
        await mem.create_collection("alice", "other", "  ")
    with pytest.raises(InvalidInputError, match='exactly the keys "custom" and "system"'):
        await mem.create_collection("alice", "other", "d", metadata_schema={"custom": {}})
    with pytest.raises(InvalidInputError, match=r"metadata_schema.custom.team.type"):
        await mem.create_collection("alice", "other", "d", metadata_schema={"custom": {"team": "str"}, "system": []})
    # the same name in another group is another collection; neither group sees the other's
    await mem.create_collection("bob", "eng-docs", "Bob's")
    assert [c.name for c, _ in await mem.list_collections("alice")] == ["eng-docs"]
    assert (await mem.get_collection("bob", "eng-docs")).description == "Bob's"
    with pytest.raises(NotFoundError, match="collection: no collection named 'nope'"):
        await mem.get_collection("alice", "nope")
    # text every backend can keep: NUL characters, lone surrogates and NaN are refused by name, nothing written
    with pytest.raises(InvalidInputError, match="description: must not contain NUL"):
        await mem.create_collection("alice", "nul", "a\x00b")
    with pytest.raises(InvalidInputError, match="metadata_schema: must be JSON without NaN"):
        await mem.create_collection("alice", "nan", "d", metadata_schema={"custom": {"x": float("nan")}, "system": []})
    with pytest.raises(InvalidInputError, match="content: must not contain NUL"):
        await mem.ingest_text("alice", "text \x00", "eng-docs", "T")
    with pytest.raises(InvalidInputError, match="title: must be valid Unicode"):
        await mem.ingest_text("alice", "text", "eng-docs", "T\ud800")
    with pytest.raises(InvalidInputError, match="metadata: must not contain NUL"):
        await mem.ingest_text("alice", "text", "eng-docs", "T", metadata={"team": "a\x00"})
    assert await mem.list_documents("alice", "eng-docs") == []


async def test_ingest_search_explain_and_group_scoping(mem):
    await mem.create_collection("alice", "eng", "Engineering",
                                metadata_schema={"custom": {"team": {"type": "string", "required": True}},
                                                 "system": []})
    await mem.create_collection("alice", "home", "Home notes")
    with pytest.raises(InvalidInputError, match=r"metadata\.team: is required"):
        await mem.ingest_text("alice", ORION, "eng", "Orion overview", metadata={})
    with pytest.raises(InvalidInputError, match=r"metadata\.team: must be of type string"):
        await mem.ingest_text("alice", ORION, "eng", "Orion overview", metadata={"team": 3})
    assert (await mem.count("alice"))["episodes"] == 0
    res = await mem.ingest_text("alice", ORION, "eng", "Orion overview", metadata={"team": "payments"})
    assert res.num_chunks >= 1 and res.facts_extracted >= 1
    await mem.ingest_text("alice", GARDEN, "home", "Garden")
    hits = await mem.search_documents("alice", "How does the Orion team deploy?", "eng", limit=5)
    assert hits and hits[0].title == "Orion overview" and hits[0].metadata == {"team": "payments"}
    assert all(h.similarity >= 0.35 for h in hits)
    assert [h.similarity for h in hits] == sorted((h.similarity for h in hits), reverse=True)
    # scoped to the collection: garden text never answers in "eng", and a high threshold leaves nothing
    assert all(h.title != "Garden" for h in await mem.search_documents("alice", "tomatoes basil sun", "eng"))
    assert await mem.search_documents("alice", "How does the Orion team deploy?", "eng", threshold=0.99) == []
    hybrid = await mem.search_documents("alice", "Helm rollbacks", "eng", hybrid=True)
    assert hybrid and "Helm" in hybrid[0].content
    # provenance: a fact from the document is explained by its chunk, named after the document
    facts = await mem.list_facts("alice")
    assert facts
    why = await mem.explain("alice", facts[0].id)
    assert why.sources and why.sources[0].message_name == "Orion overview"
    assert "Orion overview" in why.sources[0].source_description
    # another group sees nothing of it, even with the same collection name
    await mem.create_collection("bob", "eng", "Bob's engineering")
    assert await mem.search_documents("bob", "How does the Orion team deploy?", "eng") == []
    assert await mem.list_documents("bob", "eng") == []
    with pytest.raises(NotFoundError):
        await mem.delete_document("bob", res.document_id)
    assert await mem.query_relationships("bob", "Orion", "eng") == []


async def test_duplicate_title_and_reingest_replaces_exactly(mem):
    await mem.create_collection("alice", "eng", "Engineering")
    first = await mem.ingest_text("alice", ORION, "eng", "Orion")
    with pytest.raises(ConflictError, match="use mode='reingest'"):
        await mem.ingest_text("alice", ORION, "eng", "Orion")
    replaced_text = "Project Orion uses Django. Nora Patel leads Project Orion."
    second = await mem.ingest_text("alice", replaced_text, "eng", "Orion", mode="reingest")
    assert second.replaced and second.document_id != first.document_id
    docs = await mem.list_documents("alice", "eng")
    assert [d.id for d in docs] == [second.document_id] and docs[0].chunk_count == second.num_chunks == 1
    episodes = await mem.get_episodes("alice", last_n=100)
    assert len(episodes) == 1 and episodes[0].content == replaced_text
    hits = await mem.search_documents("alice", "Kubernetes Helm deployment", "eng", threshold=0.0)
    assert all("Kubernetes" not in h.content for h in hits)
    names = {e.name for e in await mem.list_entities("alice")}
    assert "FastAPI" not in names and "Kubernetes" not in names  # only the old version supported them
    # the result equals a fresh ingest of the new text into an empty group
    await mem.create_collection("carol", "eng", "Engineering")
    await mem.ingest_text("carol", replaced_text, "eng", "Orion")
    fresh = {(f.type, f.fact) for f in await mem.list_facts("carol")}
    assert {(f.type, f.fact) for f in await mem.list_facts("alice")} == fresh


async def test_failure_between_chunks_and_facts_leaves_nothing(mem, monkeypatch):
    await mem.create_collection("alice", "eng", "Engineering")
    long_text = ORION + "\n\n" + ("Sam Lee maintains the Orion billing service and reviews every change. " * 30)
    real = mem.pipeline.add_episode
    calls = []

    def failing(req):
        calls.append(req.episode_id)
        if len(calls) == 2:  # the chunks are written and the first chunk's facts too: now fail
            raise RuntimeError("injected failure")
        return real(req)

    monkeypatch.setattr(mem.pipeline, "add_episode", failing)
    with pytest.raises(RuntimeError, match="injected"):
        await mem.ingest_text("alice", long_text, "eng", "Orion long")
    assert len(calls) == 2
    assert await mem.list_documents("alice", "eng") == []
    assert mem.store.get_chunks("alice", calls) == []
    c = await mem.count("alice")
    assert (c["episodes"], c["entities"], c["facts"], c["mentions"]) == (0, 0, 0, 0)
    assert await mem.search_documents("alice", "Orion billing", "eng", threshold=0.0) == []
    # the store is usable afterwards and the same document goes in whole
    monkeypatch.setattr(mem.pipeline, "add_episode", real)
    res = await mem.ingest_text("alice", long_text, "eng", "Orion long")
    assert res.num_chunks >= 3
    assert len(await mem.get_episodes("alice", last_n=100)) == res.num_chunks


async def test_delete_document_and_collection_remove_what_only_they_supported(mem):
    await mem.create_collection("alice", "eng", "Engineering")
    await mem.create_collection("alice", "home", "Home")
    a = await mem.ingest_text("alice", ORION, "eng", "Orion")
    await mem.ingest_text("alice", GARDEN, "home", "Garden")
    before = await mem.count("alice")
    counts = await mem.delete_document("alice", a.document_id)
    assert counts["documents"] == 1 and counts["chunks"] == a.num_chunks and counts["facts"] >= 1
    after = await mem.count("alice")
    assert after["episodes"] == before["episodes"] - a.num_chunks
    assert await mem.search_documents("alice", "Orion deploy", "eng", threshold=0.0) == []
    gone = await mem.delete_collection("alice", "home")
    assert gone["collections"] == 1 and gone["documents"] == 1
    assert (await mem.count("alice"))["episodes"] == 0
    assert [c.name for c, _ in await mem.list_collections("alice")] == ["eng"]


async def test_query_relationships_and_temporal_are_collection_scoped(mem):
    await mem.create_collection("alice", "eng", "Engineering")
    await mem.create_collection("alice", "other", "Other")
    from datetime import UTC, datetime

    await mem.ingest_text("alice", "Project Orion uses FastAPI. Nora Patel works on Project Orion.", "eng",
                          "Orion 2024", reference_time=datetime(2024, 3, 1, tzinfo=UTC))
    await mem.ingest_text("alice", "Project Vega uses Flask.", "other", "Vega")
    rels = await mem.query_relationships("alice", "What does Project Orion use?", "eng", threshold=0.0)
    assert rels and all("Vega" not in r.fact for r in rels)
    assert any(r.target.name == "FastAPI" or r.source.name == "FastAPI" for r in rels)
    assert all(r.documents == ["Orion 2024"] for r in rels)
    assert [r.score for r in rels] == sorted((r.score for r in rels), reverse=True)
    assert await mem.query_relationships("alice", "What does Project Vega use?", "eng", threshold=0.0) == [] or all(
        "Vega" not in r.fact for r in await mem.query_relationships("alice", "Project Vega", "eng", threshold=0.0))
    timeline = await mem.query_temporal("alice", "Project Orion", "eng")
    assert timeline and all(t.status == "current" for t in timeline)
    assert await mem.query_temporal("alice", "Project Orion", "eng", valid_until=datetime(2020, 1, 1)) == []
    with pytest.raises(InvalidInputError, match="valid_from: must not be after valid_until"):
        await mem.query_temporal("alice", "Orion", "eng", valid_from=datetime(2025, 1, 1),
                                 valid_until=datetime(2024, 1, 1))


def test_chunking_is_hierarchical_sized_and_configurable():
    from loregraph.documents.chunking import chunk_text

    sections = [f"## Section {i}\n\n" + " ".join(f"Sentence {i}.{j} says something about topic {i}." for j in range(40))
                for i in range(3)]
    text = "# Handbook\n\n" + "\n\n".join(sections)
    chunks = chunk_text(text)
    assert all(len(c) <= 1000 + 200 for c in chunks) and len(chunks) >= 6
    starts = [c for c in chunks if c.startswith("## Section") or c.startswith("# Handbook\n## Section 0")]
    assert len(starts) == 3  # a heading opens a chunk: splits fall on headings first
    assert not any(c.rstrip().endswith("## Section 1") for c in chunks)  # never a heading cut from its text
    # neighbours overlap (the 200-character window), and sentences are not cut mid-word
    assert any(a[-80:].split(". ")[-1][:20] in b for a, b in pairwise(chunks))
    small = chunk_text(text, size=300, overlap=0)
    assert all(len(c) <= 300 + 0 for c in small if not c.startswith("#")) and len(small) > len(chunks)
    with pytest.raises(InvalidInputError, match="chunk_overlap: must be at least 0 and less than chunk_size"):
        chunk_text(text, size=300, overlap=300)
