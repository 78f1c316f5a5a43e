"""Forward migration to group-scoped ids (issue 19 item 1), on both backends: a database written by the previous
schema version (ids unique across groups) is migrated on open and keeps its rows, their full-text and vector
index rows (SQLite: rowid = seq), and then accepts the same ids in another group."""

from __future__ import annotations

import json

import numpy as np
import psycopg
import pytest

from loregraph.graph.types import GraphDelta
from loregraph.store import TimeFilter, open_store
from loregraph.store.postgres import PostgresStore, _tsvector, _vec_text
from loregraph.store.sqlite import SQLiteStore, _split_sql
from loregraph.store.text import index_body
from test_store import DIM, SCHEMA, small_graph, vec

OLD_SQLITE = 4  # the last SQLite schema version with global ids
OLD_PG = 3  # the same on PostgreSQL
TS = "2025-01-01T00:00:00.000000Z"


def _old_rows() -> dict[str, list[tuple]]:
    """Two groups' records as the old schema held them (ids unique across groups); seq values with gaps."""
    return {
        "entities": [(7, "e-a", "g1", "Ada Lovelace", "ada lovelace", "person", 1),
                     (9, "e-b", "g1", "Analytical Engine", "analytical engine", "tool", 2),
                     (12, "e-c", "g2", "Grace Hopper", "grace hopper", "person", 3)],
        "facts": [(4, "f-1", "g1", "e-a", "e-b", "USES", "Ada Lovelace uses the Analytical Engine", 4)],
        "episodes": [(3, "ep-1", "g1", "Ada Lovelace uses the Analytical Engine", 5)],
    }


def _seed_sqlite(path) -> None:
    import sqlean
    import sqlite_vec

    c = sqlean.connect(str(path), isolation_level=None)
    c.enable_load_extension(True)
    sqlite_vec.load(c)
    c.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
              "applied_at TEXT NOT NULL)")
    for version, name, sql in SQLiteStore._migrations(SQLiteStore.__new__(SQLiteStore)):
        if version <= OLD_SQLITE:
            for stmt in _split_sql(sql):
                c.execute(stmt)
            c.execute("INSERT INTO schema_migrations VALUES (?,?,?)", (version, name, TS))
    c.execute("INSERT INTO meta VALUES ('embedding_model', 'test-model'), ('embedding_dim', ?)", (str(DIM),))
    SQLiteStore._create_vector_storage(SQLiteStore.__new__(SQLiteStore), c, DIM)
    rows = _old_rows()

    def index(kind: str, table: str, seq: int, group: str, body: str, seed: int) -> None:
        blob = np.asarray(vec(seed), dtype=np.float32).tobytes()
        c.execute(f"INSERT INTO {table}_fts(rowid, body) VALUES (?,?)", (seq, index_body(group, body)))
        c.execute(f"INSERT INTO {kind}_vec(rowid, grp, embedding) VALUES (?,?,?)", (seq, group, blob))
        c.execute(f"INSERT INTO {kind}_emb(seq, grp, embedding) VALUES (?,?,?)", (seq, group, blob))

    for seq, eid, g, name, norm, typ, seed in rows["entities"]:
        c.execute("INSERT INTO entities (seq, id, group_id, name, name_norm, type, created_at, updated_at) "
                  "VALUES (?,?,?,?,?,?,?,?)", (seq, eid, g, name, norm, typ, TS, TS))
        c.execute("INSERT INTO entity_names VALUES (?,?,?)", (g, norm, eid))
        index("entity", "entities", seq, g, name, seed)
    for seq, fid, g, s, t, typ, text, seed in rows["facts"]:
        c.execute("INSERT INTO facts (seq, id, group_id, source_id, target_id, type, fact, episodes, valid_at, "
                  "created_at) VALUES (?,?,?,?,?,?,?,?,?,?)", (seq, fid, g, s, t, typ, text, '["ep-1"]', TS, TS))
        c.execute("INSERT INTO fact_episodes VALUES (?,?,?)", (g, fid, "ep-1"))
        index("fact", "facts", seq, g, text, seed)
    for seq, epid, g, content, seed in rows["episodes"]:
        c.execute("INSERT INTO episodes (seq, id, group_id, content, source, valid_at, created_at, fact_ids) "
                  "VALUES (?,?,?,?,?,?,?,?)", (seq, epid, g, content, "message", TS, TS, '["f-1"]'))
        c.execute("INSERT INTO mentions VALUES (?,?,?,?), (?,?,?,?)", (g, epid, "e-a", TS, g, epid, "e-b", TS))
        index("episode", "episodes", seq, g, content, seed)
    c.close()


def _seed_postgres(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as c:
        c.execute("SET TIME ZONE 'UTC'")
        c.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                  "applied_at TIMESTAMPTZ NOT NULL)")
        for version, name, sql in PostgresStore._migrations(PostgresStore.__new__(PostgresStore)):
            if version <= OLD_PG:
                c.execute(sql)
                c.execute("INSERT INTO schema_migrations VALUES (%s, %s, now())", (version, name))
        c.execute("INSERT INTO meta VALUES ('embedding_model', 'test-model'), ('embedding_dim', %s)", (str(DIM),))
        for table in ("episodes", "entities", "facts"):
            c.execute(f"ALTER TABLE {table} ADD COLUMN embedding vector({DIM})")
        rows = _old_rows()
        for _, eid, g, name, norm, typ, seed in rows["entities"]:
            fts, n = _tsvector(g, name)
            c.execute("INSERT INTO entities (id, group_id, name, name_norm, type, created_at, updated_at, fts, "
                      "fts_len, embedding) VALUES (%s,%s,%s,%s,%s,now(),now(),%s::tsvector,%s,%s::vector)",
                      (eid, g, name, norm, typ, fts, n, _vec_text(vec(seed))))
            c.execute("INSERT INTO entity_names VALUES (%s,%s,%s)", (g, norm, eid))
        for _, fid, g, s, t, typ, text, seed in rows["facts"]:
            fts, n = _tsvector(g, text)
            c.execute("INSERT INTO facts (id, group_id, source_id, target_id, type, fact, episodes, valid_at, "
                      "created_at, fts, fts_len, embedding) VALUES (%s,%s,%s,%s,%s,%s,%s::jsonb,now(),now(),"
                      "%s::tsvector,%s,%s::vector)", (fid, g, s, t, typ, text, json.dumps(["ep-1"]), fts, n,
                                                      _vec_text(vec(seed))))
            c.execute("INSERT INTO fact_episodes VALUES (%s,%s,%s)", (g, fid, "ep-1"))
        for _, epid, g, content, seed in rows["episodes"]:
            fts, n = _tsvector(g, content)
            c.execute("INSERT INTO episodes (id, group_id, content, source, valid_at, created_at, fact_ids, fts, "
                      "fts_len, embedding) VALUES (%s,%s,%s,'message',now(),now(),'[\"f-1\"]'::jsonb,%s::tsvector,"
                      "%s,%s::vector)", (epid, g, content, fts, n, _vec_text(vec(seed))))
            c.execute("INSERT INTO mentions VALUES (%s,%s,'e-a',now()), (%s,%s,'e-b',now())", (g, epid, g, epid))


@pytest.fixture(params=["sqlite", "postgres"])
def old_url(request, tmp_path):
    if request.param == "sqlite":
        path = tmp_path / "old.db"
        _seed_sqlite(path)
        return f"sqlite:///{path}"
    url = request.getfixturevalue("pg_db")
    _seed_postgres(url)
    return url


def test_an_old_database_migrates_to_group_scoped_ids_keeping_its_data(old_url):
    s = open_store(old_url)
    try:
        s.ensure_embedder("test-model", DIM)
        # the ids migration (SQLite 0005, PostgreSQL 0004) and every later one have run (0006 / 0005: block vectors)
        assert s.schema_version == (6 if old_url.startswith("sqlite") else 5)
        assert [e.name for e in s.get_entities("g1", ["e-a", "e-b"])] == ["Ada Lovelace", "Analytical Engine"]
        assert s.get_entities("g2", ["e-a"]) == [] and s.get_entities("g2", ["e-c"])[0].name == "Grace Hopper"
        assert s.get_facts("g1", ["f-1"])[0].episodes == ["ep-1"]
        assert s.facts_of_episodes("g1", ["ep-1"]) == {"ep-1": ["f-1"]}
        assert s.mentions_of_entities("g1", ["e-a"]) == {"e-a": ["ep-1"]}
        assert [e.id for e in s.find_entities_by_names("g1", ["ada lovelace"])] == ["e-a"]
        # full-text and vector rows still point at their records (SQLite: rowid = the kept seq)
        assert [h.id for h in s.fulltext("entity", ["g1"], "lovelace", 5)] == ["e-a"]
        assert [h.id for h in s.fulltext("fact", ["g1"], "analytical engine", 5)] == ["f-1"]
        assert [h.id for h in s.fulltext("episode", ["g1"], "lovelace", 5)] == ["ep-1"]
        assert s.vector("entity", ["g1"], np.asarray(vec(2), dtype=np.float32), 1)[0].id == "e-b"
        assert s.vector("entity", ["g2"], np.asarray(vec(3), dtype=np.float32), 1)[0].id == "e-c"
        assert s.vector("fact", ["g1"], np.asarray(vec(4), dtype=np.float32), 1)[0].id == "f-1"
        assert [e.id for e in s.list_entities("g1")] == ["e-a", "e-b"]  # insertion order kept
        # the old database now takes another group's records under the same ids
        twin = small_graph("g2", "twin", 9)
        twin.entities[0].id, twin.facts[0].id, twin.episodes[0].id = "e-a", "f-1", "ep-1"
        twin.facts[0].source_id, twin.facts[0].episodes = "e-a", ["ep-1"]
        twin.mentions[0].entity_id = "e-a"
        for m in twin.mentions:
            m.episode_id = "ep-1"
        s.apply(twin, SCHEMA)
        assert s.get_entities("g2", ["e-a"])[0].name == "twin person"
        assert s.get_entities("g1", ["e-a"])[0].name == "Ada Lovelace"
        assert s.groups_of("fact", "f-1", None) == ["g1", "g2"]
        assert s.delete_episode("g2", "ep-1")["entities"] == 2
        assert s.get_entities("g1", ["e-a"])[0].name == "Ada Lovelace"
        assert [f.id for f in s.list_facts("g1", TimeFilter())] == ["f-1"]
        assert [h.id for h in s.fulltext("entity", ["g1"], "lovelace", 5)] == ["e-a"]
        s.apply(GraphDelta(group_id="g1", entities=[s.get_entities("g1", ["e-b"])[0].model_copy(
            update={"summary": "a mechanical computer", "embedding": vec(2)})]), SCHEMA)
        assert [h.id for h in s.fulltext("entity", ["g1"], "mechanical computer", 5)] == ["e-b"]
    finally:
        s.close()
