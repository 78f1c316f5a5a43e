"""Memory that moves (issue 17): export → import into the other backend → export gives the same records (SQLite and
PostgreSQL, both directions), a group filter, an interrupted import resumed, a corrupt line, a model mismatch,
vectors computed when the file has none, and SQLite's online backup while another process writes."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import time
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from loregraph.errors import EmbedderMismatchError, InvalidInputError
from loregraph.graph.documents import Chunk, Collection, Document
from loregraph.graph.types import (
    Block,
    Community,
    DuplicateLink,
    Entity,
    Episode,
    Fact,
    GraphDelta,
    Mention,
)
from loregraph.store import TimeFilter, open_store
from loregraph.transfer import backup_sqlite, export_lines, import_lines, migrate
from test_store import DIM, SCHEMA, T0, vec

GROUPS = ("ga", "gb")


def build_world(store, groups=GROUPS, people: int = 4) -> None:
    """Every kind of record in every group: ended and retracted facts, a soft-deleted entity, duplicates, blocks,
    communities, a collection with two documents and their chunks."""
    for i, g in enumerate(groups):
        word = ("amber", "basalt", "cobalt")[i]
        folks = [Entity(group_id=g, name=f"{word} person {k}", type="person", embedding=vec(100 * i + k),
                        aliases=[f"{word[:2]}{k}"], attributes={"is_speaker": k == 0},
                        summary=f"{word} summary {k}", confidence=0.5 + k / 10, mention_count=k + 1)
                 for k in range(people)]
        tool = Entity(group_id=g, name=f"{word} tool", type="tool", embedding=vec(100 * i + 50))
        gone = Entity(group_id=g, name=f"{word} ghost", type="tool", deleted_at=T0 + timedelta(days=3))
        eps = [Episode(group_id=g, content=f"{word} person {k} uses {word} tool", valid_at=T0 + timedelta(days=k),
                       embedding=vec(100 * i + 20 + k), conversation_id="conv", name=f"{word}-{k}", role=f"p{k}",
                       role_type="user") for k in range(people)]
        facts = [Fact(group_id=g, source_id=p.id, target_id=tool.id, type="USES", fact=f"{p.name} uses {word} tool",
                      episodes=[eps[k].id], valid_at=T0 + timedelta(days=k), embedding=vec(100 * i + 30 + k),
                      conversation_id="conv") for k, p in enumerate(folks)]
        facts[1].invalid_at, facts[1].expired_at = T0 + timedelta(days=9), T0 + timedelta(days=10)
        facts[2].expired_at = T0 + timedelta(days=11)  # retracted
        mentions = [Mention(group_id=g, episode_id=e.id, entity_id=x.id) for e in eps for x in (*folks, tool)]
        blocks = [Block(group_id=g, entity_id=folks[0].id, text=f"{word} description", embedding=vec(100 * i + 1),
                        attributes={"user_id": "u", "visibility": "SHARED"})]
        blocks.append(Block(group_id=g, entity_id=folks[0].id, parent_id=blocks[0].id, level=1,
                            text=f"{word} detail"))
        store.apply(GraphDelta(
            group_id=g, episodes=eps, entities=[*folks, tool, gone], facts=facts, mentions=mentions, blocks=blocks,
            duplicates=[DuplicateLink(group_id=g, entity_id=folks[3].id, canonical_id=folks[0].id)],
            communities=[Community(group_id=g, name=f"{word} circle", summary="s",
                                   member_ids=[p.id for p in folks])]), SCHEMA)
        col = Collection(group_id=g, name="notes", description="team notes", domain="eng")
        store.create_collection(col)
        for d in range(2):
            doc = Document(group_id=g, collection_id=col.id, title=f"Handbook {d}", source="file://h",
                           metadata={"k": d}, chars=100, content_hash=f"h{d}")
            store.put_document(doc, [Chunk(group_id=g, collection_id=col.id, document_id=doc.id, ordinal=k,
                                           content=f"{word} handbook {d} part {k}", embedding=vec(300 + 10 * i + k))
                                     for k in range(3)])


def records(lines) -> list[dict]:
    """The records of a memory file (header dropped), in a canonical order for comparing stores."""
    out = [json.loads(x) for x in list(lines)[1:]]
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True))


def fresh(url: str):
    s = open_store(url)
    return s


@pytest.fixture
def sqlite_url(tmp_path_factory):
    def make() -> str:
        return f"sqlite:///{tmp_path_factory.mktemp('db') / 'm.db'}"
    return make


def test_round_trip_sqlite_to_postgres_and_back(sqlite_url, pg_db):
    a = open_store(sqlite_url())
    a.ensure_embedder("test-model", DIM)
    build_world(a)
    first = list(export_lines(a))
    kinds = {json.loads(x)["kind"] for x in first[1:]}
    assert kinds == {"episode", "entity", "block", "fact", "mention", "duplicate", "community", "collection",
                     "document", "chunk"}
    pg = open_store(pg_db)
    report = import_lines(pg, first, schema=SCHEMA, batch_size=7)
    assert report.batches > 4
    second = list(export_lines(pg))
    assert records(second) == records(first)
    b = open_store(sqlite_url())
    import_lines(b, second, schema=SCHEMA)
    assert records(export_lines(b)) == records(first)
    # the imported stores answer like the source: vectors, full text, time filters, documents
    for s in (pg, b):
        f_ids = {f.id for f in a.list_facts("ga", TimeFilter(), 100)}
        assert {f.id for f in s.list_facts("ga", TimeFilter(), 100)} == f_ids
        assert [h.id for h in s.vector("fact", ["ga"], np.asarray(vec(31)), 3)] == \
               [h.id for h in a.vector("fact", ["ga"], np.asarray(vec(31)), 3)]
        assert {h.id for h in s.fulltext("chunk", ["gb"], "handbook", 10)} == \
               {h.id for h in a.fulltext("chunk", ["gb"], "handbook", 10)}
        assert [d.chunk_count for c, _ in s.list_collections("gb")
                for d in s.list_documents("gb", c.id, 10)] == [3, 3]
    for s in (a, pg, b):
        s.close()


def test_postgres_to_sqlite_with_migrate(sqlite_url, pg_db):
    pg = open_store(pg_db)
    pg.ensure_embedder("test-model", DIM)
    build_world(pg)
    target = open_store(sqlite_url())
    migrate(pg, target, schema=SCHEMA)
    assert records(export_lines(target)) == records(export_lines(pg))
    pg.close()
    target.close()


def test_group_filter_exports_only_that_group(sqlite_url):
    s = open_store(sqlite_url())
    s.ensure_embedder("test-model", DIM)
    build_world(s, groups=("ga", "gb", "gc"))
    lines = list(export_lines(s, groups=["gb"]))
    assert json.loads(lines[0])["groups"] == ["gb"]
    got = [json.loads(x) for x in lines[1:]]
    assert got and {r["group_id"] for r in got} == {"gb"}
    text = "\n".join(lines)
    assert "amber" not in text and "cobalt" not in text
    everything = records(export_lines(s))
    assert [r for r in everything if r["group_id"] == "gb"] == records(lines)
    s.close()


def test_interrupted_import_resumed_gives_no_duplicates(sqlite_url, pg_db):
    src = open_store(sqlite_url())
    src.ensure_embedder("test-model", DIM)
    build_world(src)
    lines = list(export_lines(src))
    for url in (sqlite_url(), pg_db):
        target = open_store(url)
        done = {"batches": 0}

        class Killed(Exception):
            pass

        def stop_after_three(_what: str, _n: int, done: dict = done) -> None:
            done["batches"] += 1
            if done["batches"] == 3:
                raise Killed

        with pytest.raises(Killed):
            import_lines(target, lines, schema=SCHEMA, batch_size=10, progress=stop_after_three)
        partial = records(export_lines(target))
        assert 0 < len(partial) < len(lines) - 1
        import_lines(target, lines, schema=SCHEMA, batch_size=10)
        import_lines(target, lines, schema=SCHEMA, batch_size=10)  # and once more: still the same records
        assert records(export_lines(target)) == records(lines)
        assert target.count("ga") == src.count("ga")
        target.close()
    src.close()


def test_corrupt_line_is_named_and_nothing_after_the_last_good_batch_is_written(sqlite_url, pg_db):
    src = open_store(sqlite_url())
    src.ensure_embedder("test-model", DIM)
    build_world(src)
    lines = list(export_lines(src))
    bad_at = next(n for n, x in enumerate(lines, 1) if json.loads(x)["kind"] == "fact" and n > 30)
    rec = json.loads(lines[bad_at - 1])
    rec["valid_at"] = "the day after tomorrow"
    broken = [*lines[:bad_at - 1], json.dumps(rec), *lines[bad_at:]]
    for url in (sqlite_url(), pg_db):
        target = open_store(url)
        with pytest.raises(InvalidInputError) as info:
            import_lines(target, broken, schema=SCHEMA, batch_size=10)
        assert f"line {bad_at} (fact)" in str(info.value) and "'valid_at'" in str(info.value)
        written = records(export_lines(target))
        before = [json.loads(x) for x in lines[1:bad_at - 1]]
        # a prefix of the file, in whole batches: the batch holding the bad line wrote nothing
        key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
        assert {key(r) for r in written} <= {key(r) for r in before}
        assert len(before) - len(written) <= 10
        assert rec["id"] not in {r.get("id") for r in written}
        n_written = len(written)
        assert all(key(r) in {key(w) for w in written} for r in before[:n_written])
        # not JSON at all: named too
        cut = [*lines[:bad_at - 1], lines[bad_at - 1][:40], *lines[bad_at:]]
        with pytest.raises(InvalidInputError, match=f"line {bad_at}: not valid JSON"):
            import_lines(target, cut, schema=SCHEMA, batch_size=10)
        target.close()
    src.close()


def test_vectors_of_another_model_are_refused(sqlite_url):
    src = open_store(sqlite_url())
    src.ensure_embedder("test-model", DIM)
    build_world(src, groups=("ga",))
    target = open_store(sqlite_url())
    target.ensure_embedder("other-model", DIM)
    with pytest.raises(EmbedderMismatchError, match=r"'test-model'.*'other-model'.*--no-embeddings"):
        import_lines(target, export_lines(src), schema=SCHEMA)
    assert target.groups() == []
    with pytest.raises(InvalidInputError, match="embedding model is needed"):
        import_lines(target, export_lines(src, embeddings=False), schema=SCHEMA)
    src.close()
    target.close()


def test_without_vectors_import_computes_them_with_the_targets_model(sqlite_url, embedder):
    src = open_store(sqlite_url())
    src.ensure_embedder("test-model", DIM)
    build_world(src, groups=("ga",), people=4)
    lines = list(export_lines(src, embeddings=False))
    assert json.loads(lines[0])["embeddings"] is False
    assert not any("embedding" in json.loads(x) for x in lines[1:])
    target = open_store(sqlite_url())
    report = import_lines(target, lines, schema=SCHEMA, embedder=embedder)
    assert report.embedded > 0
    assert target.embedding_model() == (embedder.name, embedder.dim)
    fact = target.list_facts("ga", TimeFilter(include_expired=True), 1)[0]
    stored = target.embeddings("fact", "ga", [fact.id])[fact.id]
    assert np.allclose(stored, embedder.embed_one(fact.fact), atol=1e-5)
    chunk_hits = target.vector("chunk", ["ga"], embedder.embed_one("amber handbook 1 part 2"), 1)
    assert target.get_chunks("ga", [chunk_hits[0].id])[0].content == "amber handbook 1 part 2"
    com = target.list_communities("ga", 10)[0]
    com_vec = target.embeddings("community", "ga", [com.id])[com.id]
    assert np.allclose(com_vec, embedder.embed_one(f"{com.name}. {com.summary}"), atol=1e-5)
    src.close()
    target.close()


def test_community_vectors_travel_with_the_export(sqlite_url):
    src = open_store(sqlite_url())
    src.ensure_embedder("test-model", DIM)
    build_world(src, groups=("ga",), people=4)
    com = src.list_communities("ga", 10)[0]
    com.embedding = vec(77)
    src.apply(GraphDelta(group_id="ga", communities=[com]), SCHEMA)
    target = open_store(sqlite_url())
    import_lines(target, list(export_lines(src)), schema=SCHEMA)
    assert np.allclose(target.embeddings("community", "ga", [com.id])[com.id], vec(77), atol=1e-6)
    assert target.list_communities("ga", 10)[0].member_ids == com.member_ids
    src.close()
    target.close()


# ---- backup ---------------------------------------------------------------------------------------
def _writer(url: str, stop: str, group: str) -> None:
    """Another process: writes deltas of an episode, two entities, a fact and two mentions until told to stop."""
    from loregraph.store import open_store as _open
    from test_store import small_graph as _small

    s = _open(url)
    i = 0
    while not os.path.exists(stop) or i < 5:
        s.apply(_small(group, f"w{i}", seed=i), SCHEMA)
        i += 1
    s.close()


def test_backup_is_consistent_while_another_process_writes(sqlite_url, tmp_path):
    url = sqlite_url()
    s = open_store(url)
    s.ensure_embedder("test-model", DIM)
    build_world(s, groups=("ga",))
    stop = tmp_path / "stop"
    ctx = mp.get_context("spawn")
    proc = ctx.Process(target=_writer, args=(url, str(stop), "gw"))
    proc.start()
    copies: list[Path] = []
    try:
        deadline = time.monotonic() + 60
        while s.count("gw")["episodes"] < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        for k in range(4):
            out = tmp_path / f"copy{k}.db"
            backup_sqlite(url, out)
            copies.append(out)
    finally:
        stop.touch()
        proc.join(60)
    assert proc.exitcode == 0
    totals = []
    for out in copies:
        c = open_store(f"sqlite:///{out}")
        counts = c.count("gw")
        # every write is one transaction: a copy holds whole deltas only (1 episode, 2 entities, 1 fact each)
        assert counts["entities"] == 2 * counts["episodes"] == 2 * counts["facts"] == counts["mentions"]
        assert records(export_lines(c, groups=["ga"])) == records(export_lines(s, groups=["ga"]))
        totals.append(counts["episodes"])
        c.close()
    assert totals == sorted(totals) and totals[-1] >= 5
    with pytest.raises(InvalidInputError, match="exists already"):
        backup_sqlite(url, copies[0])
    with pytest.raises(InvalidInputError, match="SQLite"):
        backup_sqlite("postgresql://x@127.0.0.1/db", tmp_path / "x.db")
    s.close()


def test_cli_export_import_migrate_backup(sqlite_url, pg_db, tmp_path):
    from typer.testing import CliRunner

    from loregraph.cli.main import app

    src_url = sqlite_url()
    s = open_store(src_url)
    s.ensure_embedder("test-model", DIM)
    build_world(s)
    s.close()
    runner = CliRunner()
    out = tmp_path / "memory.jsonl"
    r = runner.invoke(app, ["export", "--db", src_url, "-g", "gb", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert {json.loads(x).get("group_id") for x in out.read_text().splitlines()[1:]} == {"gb"}
    r = runner.invoke(app, ["import", str(out), "--db", pg_db])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["import", str(out), "--db", pg_db])  # again: nothing new
    assert r.exit_code == 0, r.output
    pg = open_store(pg_db)
    assert pg.groups() == ["gb"] and records(export_lines(pg)) == records(out.read_text().splitlines())
    pg.close()
    bad = tmp_path / "bad.jsonl"
    lines = out.read_text().splitlines()
    bad.write_text("\n".join([*lines[:3], '{"kind": "fact", "group_id": "gb"}', *lines[3:]]) + "\n")
    r = runner.invoke(app, ["import", str(bad), "--db", sqlite_url()])
    assert r.exit_code == 1 and "line 4 (fact)" in r.output
    target = sqlite_url()
    r = runner.invoke(app, ["migrate", "--from", src_url, "--to", target])
    assert r.exit_code == 0, r.output
    copy = tmp_path / "copy.db"
    r = runner.invoke(app, ["backup", "--db", target, str(copy)])
    assert r.exit_code == 0, r.output
    a, b = open_store(src_url), open_store(f"sqlite:///{copy}")
    assert records(export_lines(b)) == records(export_lines(a))
    a.close()
    b.close()


@pytest.mark.parametrize("backend", ["postgres", "citus"])
def test_facts_of_a_soft_deleted_entity_round_trip(sqlite_url, backend, request):
    """A fact written while its entity was live keeps pointing at it after the entity is soft-deleted; the file
    carries both, and importing it (the entity and the fact in different batches) writes both back: SQLite →
    PostgreSQL (or Citus) → SQLite gives the same records."""
    url = request.getfixturevalue("pg_db" if backend == "postgres" else "citus_db")
    a = open_store(sqlite_url())
    a.ensure_embedder("test-model", DIM)
    person = Entity(group_id="g", name="ash person", type="person", embedding=vec(1))
    ghost = Entity(group_id="g", name="ash ghost", type="tool", embedding=vec(2))
    fact = Fact(group_id="g", source_id=person.id, target_id=ghost.id, type="USES", fact="ash person uses the ghost",
                valid_at=T0, invalid_at=T0 + timedelta(days=2), embedding=vec(3))
    a.apply(GraphDelta(group_id="g", entities=[person, ghost], facts=[fact]), SCHEMA)
    a.apply(GraphDelta(group_id="g", entities=[ghost.model_copy(update={"deleted_at": T0 + timedelta(days=3)})]),
            SCHEMA)
    first = list(export_lines(a))
    assert {json.loads(x)["kind"] for x in first[1:]} == {"entity", "fact"}
    target = open_store(url)
    import_lines(target, first, schema=SCHEMA, batch_size=1)
    second = list(export_lines(target))
    assert records(second) == records(first)
    import_lines(target, first, schema=SCHEMA, batch_size=1)  # idempotent: a re-run changes nothing
    assert records(export_lines(target)) == records(first)
    b = open_store(sqlite_url())
    import_lines(b, second, schema=SCHEMA, batch_size=1)
    assert records(export_lines(b)) == records(first)
    # still deleted where it landed: not listed, not an endpoint of current facts
    for s in (target, b):
        assert [e.id for e in s.list_entities("g")] == [person.id]
        assert [f.id for f in s.list_facts("g", TimeFilter(include_expired=True), 10)] == [fact.id]
    for s in (a, target, b):
        s.close()


@pytest.mark.parametrize("target", ["sqlite", "postgres"])
def test_facts_ended_by_a_message_move_with_why_and_by_whom(sqlite_url, pg_db, target):
    """An ending records ``end_reason`` / ``ended_by`` on the fact (the store writes them, not the schema's
    properties); the import refused them as undeclared, so any memory with an ended fact could not move."""
    from loregraph.graph.types import FactInvalidation
    from loregraph.transfer import migrate as move

    source = open_store(sqlite_url())
    source.ensure_embedder("test-model", DIM)
    build_world(source, groups=("ga",))
    fact = source.list_facts("ga", TimeFilter(), 100)[0]
    ender = Episode(group_id="ga", content="we dropped it", valid_at=T0 + timedelta(days=20), embedding=vec(7))
    source.apply(GraphDelta(group_id="ga", episodes=[ender], invalidations=[FactInvalidation(
        fact_id=fact.id, invalid_at=T0 + timedelta(days=20), reason="replaced", episode_id=ender.id)]), SCHEMA)
    into = open_store(sqlite_url() if target == "sqlite" else pg_db)
    move(source, into, schema=SCHEMA)
    (moved,) = into.get_facts("ga", [fact.id])
    assert moved.invalid_at == T0 + timedelta(days=20)
    assert (moved.attributes["end_reason"], moved.attributes["ended_by"]) == ("replaced", ender.id)
    assert records(export_lines(into)) == records(export_lines(source))
    source.close()
    into.close()
