"""Isolation by construction (issue 23): every read of the ``Store`` protocol — found by inspecting the protocol,
so a read added tomorrow is covered the day it is added — is called for one group with arguments that name the
other groups' records too, on both backends; nothing of another group may come back, in any part of the answer.

A new read whose parameters this test cannot fill fails ``test_every_store_read_is_probed`` with the parameter's
name: add a rule to ``ARGUMENTS`` (what a caller of that group would pass)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from loregraph.graph.documents import Chunk, Collection, Document
from loregraph.graph.types import Block, Community, Entity, Episode, Fact, GraphDelta, Mention, Record
from loregraph.store import TimeFilter
from loregraph.store.base import EXPORT_KINDS, Store
from test_store import SCHEMA, T0, vec
from test_store_contract import Backend

GROUPS = ("ga", "gb", "gc")
PROBED = "gb"

# not reads of a group: lifecycle, writes, and admin listings that span groups by design
NOT_GROUP_READS = {"close", "checkpoint", "ensure_embedder", "apply", "delete_episode", "delete_group", "delete_fact",
                   "apply_hook", "open_queue", "groups", "schema_version", "transaction", "create_collection",
                   "delete_collection", "put_document", "delete_document", "embedding_model"}


class World:
    """Three groups with the same shape of graph and distinct ids, names and words."""

    def __init__(self, store: Store):
        self.store = store
        self.records: dict[str, list[Record]] = {}
        self.deltas = {g: self._graph(g, i) for i, g in enumerate(GROUPS)}
        for d in self.deltas.values():
            store.apply(d, SCHEMA)
        # documents: the same collection name and document title in every group, each group's own words
        self.collections: dict[str, Collection] = {}
        self.documents: dict[str, Document] = {}
        self.chunks: dict[str, list[Chunk]] = {}
        for i, g in enumerate(GROUPS):
            word = {"ga": "amber", "gb": "basalt", "gc": "cobalt"}[g]
            col = Collection(group_id=g, name="notes", description="team notes")
            doc = Document(group_id=g, collection_id=col.id, title="Handbook", chunk_count=2)
            chunks = [Chunk(group_id=g, collection_id=col.id, document_id=doc.id, ordinal=k,
                            content=f"{word} handbook part {k}: the team uses the {word} tool",
                            embedding=vec(300 + i * 10 + k))
                      for k in range(2)]
            store.create_collection(col)
            store.put_document(doc, chunks)
            self.collections[g], self.documents[g], self.chunks[g] = col, doc, chunks

    @staticmethod
    def _graph(group: str, i: int) -> GraphDelta:
        word = {"ga": "amber", "gb": "basalt", "gc": "cobalt"}[group]
        people = [Entity(group_id=group, name=f"{word} person {k}", type="person", embedding=vec(100 * i + k),
                         attributes={"is_speaker": k == 0}) for k in range(3)]
        tool = Entity(group_id=group, name=f"{word} tool", type="tool", embedding=vec(100 * i + 10))
        eps = [Episode(group_id=group, content=f"{word} person {k} uses {word} tool", valid_at=T0.replace(day=k + 1),
                       embedding=vec(100 * i + 20 + k), conversation_id="conv", name=f"{word}-{k}") for k in range(3)]
        facts = [Fact(group_id=group, source_id=p.id, target_id=tool.id, type="USES", fact=f"{p.name} uses {word} tool",
                      episodes=[eps[k].id], valid_at=T0, embedding=vec(100 * i + 30 + k), conversation_id="conv")
                 for k, p in enumerate(people)]
        mentions = [Mention(group_id=group, episode_id=e.id, entity_id=x.id) for e in eps for x in (*people, tool)]
        community = Community(group_id=group, name=f"{word} circle", summary="", member_ids=[p.id for p in people])
        blocks = [Block(group_id=group, entity_id=people[0].id, text=f"{word} description", embedding=vec(100 * i + 1),
                        attributes={"user_id": "u", "visibility": "SHARED"})]
        return GraphDelta(group_id=group, episodes=eps, entities=[*people, tool], facts=facts, mentions=mentions,
                          communities=[community], blocks=blocks)

    def ids(self, *kinds: str) -> list[str]:
        out = []
        for d in self.deltas.values():
            for kind in kinds:
                out += [r.id for r in getattr(d, kind)]
        return out

    def doc_ids(self, group: str) -> list[str]:
        return [self.collections[group].id, self.documents[group].id, *(c.id for c in self.chunks[group])]

    def foreign_ids(self) -> set[str]:
        def of(g: str) -> set[str]:
            d = self.deltas[g]
            records = (*d.entities, *d.facts, *d.episodes, *d.communities, *d.blocks)
            return {r.id for r in records} | set(self.doc_ids(g))

        return set().union(*(of(g) for g in GROUPS if g != PROBED))

    def foreign_words(self) -> set[str]:
        return {"amber", "cobalt"}


def _q(_w: World) -> np.ndarray:
    return np.asarray(vec(101), dtype=np.float32)  # near group ga's first person: a leak would rank it high


# what a caller probing PROBED passes for each parameter name; ids are every group's, so a read that forgets the
# group returns another group's records
ARGUMENTS: dict[str, Callable[[World], Any]] = {
    "group_id": lambda w: PROBED,
    "group_ids": lambda w: [PROBED],
    "within": lambda w: [PROBED],
    "kind": lambda w: "fact",
    "ids": lambda w: (w.ids("entities", "facts", "episodes", "blocks", "communities")
                      + [i for g in GROUPS for i in w.doc_ids(g)]),
    "collection_id": lambda w: Variants([w.collections["ga"].id, w.collections[PROBED].id]),
    "name": lambda w: "notes",
    "title": lambda w: "Handbook",
    "offset": lambda w: 0,
    "entity_ids": lambda w: w.ids("entities"),
    "episode_ids": lambda w: w.ids("episodes"),
    "start_ids": lambda w: w.ids("entities"),
    "candidates": lambda w: w.ids("entities"),
    # one id: another group's (must find nothing) and the group's own (must find only its own neighbourhood)
    "center": lambda w: Variants([w.deltas["ga"].entities[0].id, w.deltas[PROBED].entities[0].id]),
    "episode_id": lambda w: Variants([w.deltas["ga"].episodes[1].id, w.deltas[PROBED].episodes[1].id]),
    "record_id": lambda w: Variants([w.deltas["ga"].entities[0].id, w.deltas[PROBED].entities[0].id]),
    "names_norm": lambda w: [e.name.lower() for d in w.deltas.values() for e in d.entities],
    "query": lambda w: "amber basalt cobalt person tool uses",
    "embedding": _q,
    "time": lambda w: TimeFilter(include_expired=True),
    "limit": lambda w: 100,
    "depth": lambda w: 2,
    "width": lambda w: 5,
    "n": lambda w: 3,
    "before": lambda w: datetime(2030, 1, 1, tzinfo=UTC),
    "since": lambda w: datetime(2000, 1, 1, tzinfo=UTC),
    "source": lambda w: None,
    "entity_type": lambda w: None,
    "types": lambda w: None,
    "newest_first": lambda w: False,
    "conversation_id": lambda w: "conv",
    "record_kind": lambda w: Variants(EXPORT_KINDS),
    "after": lambda w: None,
}
class Variants(list):
    """Several values of one parameter: the read is probed with each."""


# a read whose answer is about kinds: probe each kind
KINDS = ("entity", "fact", "episode", "community")


def store_reads() -> list[str]:
    names = [n for n, v in inspect.getmembers(Store)
             if not n.startswith("_") and (callable(v) or isinstance(v, property))]
    return sorted(set(names) - NOT_GROUP_READS)


def _calls(w: World, name: str) -> list[dict[str, Any]]:
    params = [p for p in inspect.signature(getattr(Store, name)).parameters.values() if p.name != "self"]
    missing = [p.name for p in params if p.name not in ARGUMENTS and p.default is inspect.Parameter.empty]
    assert not missing, f"Store.{name}: no isolation probe knows parameter(s) {missing}; add them to ARGUMENTS"
    base = {p.name: ARGUMENTS[p.name](w) for p in params if p.name in ARGUMENTS}
    if "kind" in base:
        base["kind"] = Variants(KINDS)
    calls = [{}]
    for key, value in base.items():
        options = list(value) if isinstance(value, Variants) else [value]
        calls = [{**c, key: o} for c in calls for o in options]
    return calls


def _leaks(answer: Any, w: World) -> list[str]:
    """Everything in ``answer`` that belongs to another group: records of it, its ids, its words."""
    foreign_ids, words = w.foreign_ids(), w.foreign_words()
    found: list[str] = []

    def walk(x: Any) -> None:
        if isinstance(x, Record):
            if getattr(x, "group_id", PROBED) != PROBED:
                found.append(f"{type(x).__name__} of group {x.group_id}")
            walk(x.model_dump(exclude={"embedding"}))
        elif isinstance(x, str):
            if x in foreign_ids or any(word in x.lower() for word in words):
                found.append(repr(x))
        elif isinstance(x, dict):
            for k, v in x.items():
                walk(k)
                walk(v)
        elif isinstance(x, Iterable) and not isinstance(x, bytes | np.ndarray):
            for v in x:
                walk(v)
        elif hasattr(x, "__dataclass_fields__") or hasattr(x, "__slots__"):
            for f in getattr(x, "__dataclass_fields__", None) or getattr(x, "__slots__", ()):
                walk(getattr(x, f, None))

    walk(answer)
    return found


@pytest.fixture(params=["sqlite", "postgres"])
def world(request, tmp_path_factory):
    admin = request.getfixturevalue("pg_url") if request.param == "postgres" else None
    backend = Backend(request.param, tmp_path_factory, admin)
    try:
        yield World(backend.fresh())
    finally:
        backend.cleanup()


def test_every_store_read_is_probed(world):
    reads = store_reads()
    assert {"get_entities", "fulltext", "vector", "adjacent_episodes", "neighbours_among", "fact_edges",
            "find_entities_by_names", "conversation_counts", "embeddings", "speakers", "entity_types",
            "node_types", "get_blocks", "blocks_of_entities", "block_vector"} <= set(reads)
    for name in reads:
        member = getattr(type(world.store), name)
        for kwargs in _calls(world, name):
            answer = getattr(world.store, name) if isinstance(member, property) else \
                getattr(world.store, name)(**kwargs)
            assert _leaks(answer, world) == [], f"Store.{name}({kwargs}) returned another group's data"


def test_the_probe_sees_a_planted_leak(world):
    """The check can fail: an answer holding another group's record or id is caught."""
    other = world.deltas["ga"]
    assert _leaks([other.entities[0]], world)
    assert _leaks({"x": [other.facts[0].id]}, world)
    assert _leaks((other.episodes[0].id, "ok"), world)
    assert not _leaks(world.store.get_entities(PROBED, world.ids("entities")), world)
    assert _leaks(world.store.get_blocks("ga", world.ids("blocks")), world)  # blocks are probed too
    assert not _leaks(world.store.get_blocks(PROBED, world.ids("blocks")), world)


CHAT = {"ga": ["Amber team uses Rust for the amber parser.", "We switched amber from Rust to Zig."],
        "gb": ["Basalt team uses Go for the basalt service.", "We switched basalt from Go to Kotlin."],
        "gc": ["Cobalt team uses Elixir for the cobalt queue.", "We switched cobalt from Elixir to Gleam."]}


@pytest.mark.parametrize("db_kind", ["sqlite", "postgres"])
async def test_memory_search_answers_carry_nothing_of_another_group(request, tmp_path, embedder, db_kind):
    """Every part of a search answer — facts, entities, episodes, the best turn's context, evidence() — and the
    other group-scoped reads of Memory, for one group, with a query made of every group's words."""
    from loregraph.memory import Memory

    url = str(tmp_path / "m.db") if db_kind == "sqlite" else request.getfixturevalue("pg_db")
    m = await Memory.open(url, embedder=embedder)
    try:
        for group, lines in CHAT.items():
            await m.add_messages(group, [{"content": t, "role_type": "user", "timestamp": f"2025-0{i + 1}-01T10:00:00Z"}
                                         for i, t in enumerate(lines)], conversation_id="same-id-everywhere")
        foreign = ("amber", "cobalt", "rust", "zig", "elixir", "gleam")
        question = "What do the amber, basalt and cobalt teams use? Rust Go Elixir Zig Kotlin Gleam"
        for options in ({}, {"include_ended": True}, {"mmr": 0.5}, {"route": True}):
            res = await m.search(question, PROBED, limit=20, **options)
            parts: list[Any] = [*(f.fact for f in res.facts), *(e.entity for e in res.entities),
                                *(e.episode for e in res.episodes), *(e.episode for e in res.evidence(20)),
                                *(ep for eps in res.context.values() for ep in eps)]
            assert parts, "the probed group's own memory is found"
            for rec in parts:
                assert rec.group_id == PROBED, (options, rec)
                text = (getattr(rec, "content", "") or getattr(rec, "fact", "") or getattr(rec, "name", "")).lower()
                assert not any(w in text for w in foreign), (options, text)
        answer = await m.query_graph(question, PROBED)
        assert all(r.fact.group_id == PROBED for r in answer.relationships)
        for rec in (*await m.list_entities(PROBED), *await m.list_facts(PROBED, current=False),
                    *await m.get_episodes(PROBED, last_n=50)):
            assert rec.group_id == PROBED
    finally:
        await m.close()
