"""PostgreSQL store: the Store protocol on PostgreSQL 15 + pgvector, shared by many processes.

Same logical schema as the SQLite store. Full text keeps the group-prefixed, stemmed terms of
``loregraph.store.text`` in a tsvector (GIN-indexed) and ranks with BM25 computed from term statistics
that triggers maintain (``fts_stats``, ``fts_terms``), so ranking follows SQLite's FTS5 ``bm25()``; the one
difference is that N and the average document length are per group here (global in FTS5).
Vector search is exact kNN with pgvector's cosine distance within each group (no ANN index yet).
Traversal is a recursive CTE. A connection is used from one thread at a time (Memory's store thread).
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from importlib import resources
from typing import Any

import numpy as np

from loregraph.graph.types import Entity, Episode, Fact, GraphDelta
from loregraph.schema import Schema, SchemaViolationError, Violation
from loregraph.store.base import EmbedderMismatchError, Hit, SearchKind, StoreError, TimeFilter
from loregraph.store.sqlite import normalize_name
from loregraph.store.text import GROUP_TOKEN_LEN, group_token, query_terms, terms

log = logging.getLogger("loregraph.store")

_TABLE = {"episode": "episodes", "entity": "entities", "fact": "facts"}
_MAX_POS = 16383  # tsvector positions stop here
_K1, _B = 1.2, 0.75  # FTS5's bm25() defaults


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _time_sql(alias: str, tf: TimeFilter) -> tuple[str, list[Any]]:
    if tf.include_expired:
        return "TRUE", []
    if tf.as_of is None:
        return f"{alias}.expired_at IS NULL AND {alias}.invalid_at IS NULL", []
    t = _utc(tf.as_of)
    return (
        f"({alias}.valid_at IS NULL OR {alias}.valid_at <= %s) "
        f"AND ({alias}.invalid_at IS NULL OR {alias}.invalid_at > %s) "
        f"AND ({alias}.expired_at IS NULL OR {alias}.invalid_at IS NOT NULL)",
        [t, t],
    )


def _tsvector(group_id: str, text: str) -> tuple[str, int]:
    """tsvector literal of a body's group-prefixed terms with positions (term frequency), and its length."""
    gt = group_token(group_id)
    positions: dict[str, list[int]] = {}
    words = terms(text)
    for i, t in enumerate(words, 1):
        positions.setdefault(gt + t, []).append(min(i, _MAX_POS))
    parts = []
    for term, pos in positions.items():
        quoted = term.replace("\\", "\\\\").replace("'", "''")
        parts.append(f"'{quoted}':{','.join(map(str, dict.fromkeys(pos)))}")
    return " ".join(parts), len(words)


def _tsquery(query: Sequence[str]) -> str:
    return " | ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in query)


def _vec_text(embedding: Sequence[float] | np.ndarray) -> str:
    return "[" + ",".join(repr(float(x)) for x in np.asarray(embedding, dtype=np.float32).tolist()) + "]"


class PostgresStore:
    """The server store. Not thread-safe by itself: use it from one thread (Memory does)."""

    MIGRATIONS_PACKAGE = "loregraph.store.migrations.postgres"
    COMMON_TERM_SHARE = 0.05
    COMMON_TERM_MIN_DOCS = 500

    def __init__(self, url: str):
        import psycopg

        self.url = url
        self.path = None  # no file: the SQLite-file job queue does not apply
        try:
            self.conn = psycopg.connect(url, autocommit=True)
        except Exception as exc:
            raise StoreError(f"cannot connect to PostgreSQL at {_redact(url)}: {exc}") from exc
        self.conn.execute("SET TIME ZONE 'UTC'")
        self._lock = threading.RLock()
        self._migrate()
        self._dim = self._meta("embedding_dim")
        self.fail_before_commit: Callable[[], None] | None = None  # test hook: inject a mid-write failure
        self._apply_hooks: list[Callable[[Any], None]] = []

    # ---- lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        with suppress(Exception):
            self.conn.close()

    def checkpoint(self) -> None:
        """Refresh planner statistics after a bulk import (the counterpart of SQLite's WAL checkpoint)."""
        with self._lock:
            self.conn.execute("ANALYZE")

    def _migrations(self) -> list[tuple[int, str, str]]:
        out = []
        for res in resources.files(self.MIGRATIONS_PACKAGE).iterdir():
            m = re.match(r"^(\d{4})_(.+)\.sql$", res.name)
            if m:
                out.append((int(m.group(1)), m.group(2), res.read_text("utf-8")))
        return sorted(out)

    def _migrate(self) -> None:
        c = self.conn
        with self._lock, c.transaction():
            # one migrating process at a time; the others wait, then find the work done
            c.execute("SELECT pg_advisory_xact_lock(hashtext('loregraph.migrate'))")
            c.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                      "name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)")
            applied = {r[0] for r in c.execute("SELECT version FROM schema_migrations")}
            known = self._migrations()
            newest = max((v for v, _, _ in known), default=0)
            if applied and max(applied) > newest:
                raise StoreError(f"database {_redact(self.url)} has schema version {max(applied)}, newer than "
                                 f"this loregraph supports ({newest}); upgrade loregraph")
            for version, name, sql in known:
                if version in applied:
                    continue
                t0 = time.perf_counter()
                c.execute(sql)  # type: ignore[arg-type]  # a whole file: no parameters, several statements
                c.execute("INSERT INTO schema_migrations VALUES (%s, %s, now())", (version, name))
                log.info("applied migration %04d_%s in %.1f ms", version, name, (time.perf_counter() - t0) * 1e3)

    @property
    def schema_version(self) -> int:
        return self.conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").fetchone()[0]

    @contextmanager
    def _tx(self) -> Iterator[None]:
        with self._lock, self.conn.transaction():
            yield

    def _meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
        return row[0] if row else None

    def ensure_embedder(self, name: str, dim: int) -> None:
        """Record the embedding model on first use; refuse a different model or dimension later."""
        with self._tx():
            self.conn.execute("SELECT pg_advisory_xact_lock(hashtext('loregraph.embedder'))")
            cur_name, cur_dim = self._meta("embedding_model"), self._meta("embedding_dim")
            if cur_name is not None:
                if cur_name != name or int(cur_dim or 0) != dim:
                    raise EmbedderMismatchError(
                        f"database {_redact(self.url)} was built with embedding model {cur_name!r} (dim {cur_dim}); "
                        f"the configured model is {name!r} (dim {dim}). Use the same model, or re-ingest into "
                        f"a new database."
                    )
                self._dim = str(dim)
                return
            self.conn.execute("INSERT INTO meta VALUES ('embedding_model', %s)", (name,))
            self.conn.execute("INSERT INTO meta VALUES ('embedding_dim', %s)", (str(dim),))
            for table in _TABLE.values():
                self.conn.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS embedding vector({int(dim)})")
        self._dim = str(dim)

    @property
    def embedding_model(self) -> tuple[str | None, int | None]:
        d = self._meta("embedding_dim")
        return self._meta("embedding_model"), int(d) if d else None

    # ---- writes ---------------------------------------------------------------------------------
    def apply(self, delta: GraphDelta, schema: Schema) -> None:
        """Validate and write ``delta`` in one transaction; on any error nothing is written."""
        gid = delta.group_id
        with self._tx():
            violations = schema.validate_delta(delta, lambda ids: self.entity_types(gid, ids))
            violations += self._foreign_ids(delta)
            if violations:
                raise SchemaViolationError(violations)
            c = self.conn
            for ep in delta.episodes:
                self._upsert_episode(ep)
            for ent in delta.entities:
                self._upsert_entity(ent)
            for fact in delta.facts:
                self._upsert_fact(fact)
            for inv in delta.invalidations:
                cur = c.execute(
                    "UPDATE facts SET invalid_at = COALESCE(invalid_at, %s), expired_at = COALESCE(expired_at, %s) "
                    "WHERE id = %s AND group_id = %s",
                    (_utc(inv.invalid_at), _utc(inv.expired_at), inv.fact_id, gid),
                )
                if cur.rowcount == 0:
                    raise SchemaViolationError([Violation("invalidations", "fact_id",
                                                          "fact not found in group", inv.fact_id)])
            with c.cursor() as cur:
                if delta.mentions:
                    cur.executemany("INSERT INTO mentions VALUES (%s,%s,%s,%s) ON CONFLICT DO NOTHING",
                                    [(m.group_id, m.episode_id, m.entity_id, _utc(m.created_at))
                                     for m in delta.mentions])
                if delta.duplicates:
                    cur.executemany("INSERT INTO duplicates VALUES (%s,%s,%s,%s) ON CONFLICT DO NOTHING",
                                    [(d.group_id, d.entity_id, d.canonical_id, _utc(d.created_at))
                                     for d in delta.duplicates])
            for b in delta.blocks:
                c.execute(
                    "INSERT INTO blocks (id, group_id, entity_id, parent_id, text, level, created_at, updated_at) "
                    "VALUES (%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (id) DO UPDATE SET text=excluded.text, "
                    "level=excluded.level, parent_id=excluded.parent_id, updated_at=excluded.updated_at",
                    (b.id, gid, b.entity_id, b.parent_id, b.text, b.level, _utc(b.created_at), _utc(b.updated_at)),
                )
            for com in delta.communities:
                c.execute(
                    "INSERT INTO communities (id, group_id, name, summary, created_at) VALUES (%s,%s,%s,%s,%s) "
                    "ON CONFLICT (id) DO UPDATE SET name=excluded.name, summary=excluded.summary",
                    (com.id, gid, com.name, com.summary, _utc(com.created_at)),
                )
                c.execute("DELETE FROM community_members WHERE community_id = %s", (com.id,))
                if com.member_ids:
                    with c.cursor() as cur:
                        cur.executemany("INSERT INTO community_members VALUES (%s,%s,%s)",
                                        [(gid, com.id, m) for m in com.member_ids])
            self._check_cardinality(delta, schema)
            if self.fail_before_commit is not None:
                self.fail_before_commit()
            for hook in list(self._apply_hooks):
                hook(self.conn)

    @contextmanager
    def apply_hook(self, hook: Callable[[Any], None]) -> Iterator[None]:
        """Within this block every ``apply`` also runs ``hook(conn)`` inside its transaction, before the commit."""
        self._apply_hooks.append(hook)
        try:
            yield
        finally:
            self._apply_hooks.remove(hook)

    def group_of(self, kind: SearchKind, record_id: str) -> str | None:
        row = self.conn.execute(f"SELECT group_id FROM {_TABLE[kind]} WHERE id = %s", (record_id,)).fetchone()
        return row[0] if row else None

    def delete_fact(self, group_id: str, fact_id: str) -> int:
        from psycopg.types.json import Jsonb

        c = self.conn
        with self._tx():
            if c.execute("SELECT 1 FROM facts WHERE id = %s AND group_id = %s",
                         (fact_id, group_id)).fetchone() is None:
                return 0
            episode_ids = [r[0] for r in c.execute(
                "SELECT episode_id FROM fact_episodes WHERE group_id = %s AND fact_id = %s", (group_id, fact_id))]
            for eid in episode_ids:
                row = c.execute("SELECT fact_ids FROM episodes WHERE id = %s AND group_id = %s",
                                (eid, group_id)).fetchone()
                if row is not None:
                    rest = [f for f in row[0] if f != fact_id]
                    c.execute("UPDATE episodes SET fact_ids = %s WHERE id = %s", (Jsonb(rest), eid))
            c.execute("DELETE FROM fact_episodes WHERE group_id = %s AND fact_id = %s", (group_id, fact_id))
            c.execute("DELETE FROM facts WHERE id = %s AND group_id = %s", (fact_id, group_id))
        return 1

    def _foreign_ids(self, delta: GraphDelta) -> list[Violation]:
        out: list[Violation] = []
        for table, records in (("episodes", delta.episodes), ("entities", delta.entities), ("facts", delta.facts)):
            ids = [r.id for r in records]
            if not ids:
                continue
            for (rid,) in self.conn.execute(f"SELECT id FROM {table} WHERE id = ANY(%s) AND group_id <> %s",
                                            (ids, delta.group_id)):
                out.append(Violation(table, "id", "id is already used in another group", rid))
        return out

    def _vec(self, kind: str, embedding: list[float] | None) -> str | None:
        if embedding is None:
            return None
        if self._dim is None:
            raise StoreError("no embedding model recorded for this database; call ensure_embedder first")
        if len(embedding) != int(self._dim):
            raise StoreError(f"{kind} embedding has dimension {len(embedding)}, database expects {self._dim}")
        return _vec_text(embedding)

    def _emb_sql(self) -> tuple[str, str]:
        """(column list suffix, value placeholder suffix) for the embedding column when one exists."""
        return (", embedding", ", %s::vector") if self._dim is not None else ("", "")

    def _upsert_episode(self, ep: Episode) -> None:
        from psycopg.types.json import Jsonb

        fts, n = _tsvector(ep.group_id, f"{ep.name} {ep.content}")
        col, val = self._emb_sql()
        emb = [self._vec("episode", ep.embedding)] if col else self._no_vec("episode", ep.embedding)
        keep = ", embedding=COALESCE(excluded.embedding, episodes.embedding)" if col else ""
        self.conn.execute(
            f"INSERT INTO episodes (id, group_id, name, content, source, source_description, role, role_type, "
            f"conversation_id, valid_at, created_at, fact_ids, entity_ids, fts, fts_len{col}) "
            f"VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s::tsvector,%s{val}) "
            "ON CONFLICT (id) DO UPDATE SET name=excluded.name, content=excluded.content, "
            "source_description=excluded.source_description, fact_ids=excluded.fact_ids, "
            f"entity_ids=excluded.entity_ids, fts=excluded.fts, fts_len=excluded.fts_len{keep}",
            (ep.id, ep.group_id, ep.name, ep.content, ep.source, ep.source_description, ep.role, ep.role_type,
             ep.conversation_id, _utc(ep.valid_at), _utc(ep.created_at), Jsonb(ep.fact_ids), Jsonb(ep.entity_ids),
             fts, n, *emb),
        )

    def _no_vec(self, kind: str, embedding: list[float] | None) -> list[Any]:
        if embedding is not None:
            raise StoreError("no embedding model recorded for this database; call ensure_embedder first")
        return []

    def _upsert_entity(self, ent: Entity) -> None:
        from psycopg.types.json import Jsonb

        fts, n = _tsvector(ent.group_id, " ".join([ent.name, *ent.aliases, ent.summary]))
        col, val = self._emb_sql()
        emb = [self._vec("entity", ent.embedding)] if col else self._no_vec("entity", ent.embedding)
        keep = ", embedding=COALESCE(excluded.embedding, entities.embedding)" if col else ""
        self.conn.execute(
            "INSERT INTO entities (id, group_id, name, name_norm, type, aliases, summary, attributes, confidence, "
            f"mention_count, source_episode_id, created_at, updated_at, deleted_at, conversation_id, fts, fts_len"
            f"{col}) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s::tsvector,%s{val}) "
            "ON CONFLICT (id) DO UPDATE SET name=excluded.name, name_norm=excluded.name_norm, type=excluded.type, "
            "aliases=excluded.aliases, summary=excluded.summary, attributes=excluded.attributes, "
            "confidence=excluded.confidence, mention_count=excluded.mention_count, updated_at=excluded.updated_at, "
            f"deleted_at=excluded.deleted_at, fts=excluded.fts, fts_len=excluded.fts_len{keep}",
            (ent.id, ent.group_id, ent.name, normalize_name(ent.name), ent.type, Jsonb(ent.aliases), ent.summary,
             Jsonb(ent.attributes), ent.confidence, ent.mention_count, ent.source_episode_id, _utc(ent.created_at),
             _utc(ent.updated_at), _utc(ent.deleted_at), ent.conversation_id, fts, n, *emb),
        )
        self.conn.execute("DELETE FROM entity_names WHERE entity_id = %s", (ent.id,))
        names = sorted({normalize_name(x) for x in [ent.name, *ent.aliases]} - {""})
        if names:
            self.conn.execute(
                "INSERT INTO entity_names SELECT %s, n, %s FROM unnest(%s::text[]) n ON CONFLICT DO NOTHING",
                (ent.group_id, ent.id, names))

    def _upsert_fact(self, f: Fact) -> None:
        from psycopg.types.json import Jsonb

        fts, n = _tsvector(f.group_id, f.fact)
        col, val = self._emb_sql()
        emb = [self._vec("fact", f.embedding)] if col else self._no_vec("fact", f.embedding)
        keep = ", embedding=COALESCE(excluded.embedding, facts.embedding)" if col else ""
        self.conn.execute(
            "INSERT INTO facts (id, group_id, source_id, target_id, type, fact, attributes, confidence, episodes, "
            f"valid_at, invalid_at, created_at, expired_at, conversation_id, fts, fts_len{col}) "
            f"VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s::tsvector,%s{val}) "
            "ON CONFLICT (id) DO UPDATE SET fact=excluded.fact, attributes=excluded.attributes, "
            "confidence=excluded.confidence, episodes=excluded.episodes, valid_at=excluded.valid_at, "
            "invalid_at=excluded.invalid_at, expired_at=excluded.expired_at, type=excluded.type, "
            f"source_id=excluded.source_id, target_id=excluded.target_id, fts=excluded.fts, "
            f"fts_len=excluded.fts_len{keep}",
            (f.id, f.group_id, f.source_id, f.target_id, f.type, f.fact, Jsonb(f.attributes), f.confidence,
             Jsonb(f.episodes), _utc(f.valid_at), _utc(f.invalid_at), _utc(f.created_at), _utc(f.expired_at),
             f.conversation_id, fts, n, *emb),
        )
        if f.episodes:
            self.conn.execute(
                "INSERT INTO fact_episodes SELECT %s, %s, e FROM unnest(%s::text[]) e ON CONFLICT DO NOTHING",
                (f.group_id, f.id, list(f.episodes)))

    def _check_cardinality(self, delta: GraphDelta, schema: Schema) -> None:
        """Graph-state rules: count current facts after the write for every touched endpoint."""
        rules = schema.cardinality_rules()
        if not rules or not delta.facts:
            return
        gid = delta.group_id
        touched = [f for f in delta.facts if f.is_current()]
        if not touched:
            return
        violations: list[Violation] = []
        seen: set[tuple[Any, ...]] = set()
        cols = {"source": ("source_id",), "target": ("target_id",), "pair": ("source_id", "target_id")}
        for rule in rules:
            for f in touched:
                if rule.edge not in ("*", f.type):
                    continue
                key_cols = cols[rule.per]
                key = (rule.per, rule.edge, f.type, *(getattr(f, k) for k in key_cols))
                if key in seen:
                    continue
                seen.add(key)
                where = " AND ".join(f"f.{k} = %s" for k in key_cols)
                params: list[Any] = [gid, f.type, *(getattr(f, k) for k in key_cols)]
                joins = ""
                if rule.source_type:
                    joins += " JOIN entities s ON s.id = f.source_id"
                if rule.target_type:
                    joins += " JOIN entities t ON t.id = f.target_id"
                rows = self.conn.execute(
                    f"SELECT f.id, {'s.type' if rule.source_type else 'NULL'}, "
                    f"{'t.type' if rule.target_type else 'NULL'} FROM facts f{joins} WHERE f.group_id = %s "
                    f"AND f.type = %s AND {where} AND f.expired_at IS NULL AND f.invalid_at IS NULL",
                    params,
                ).fetchall()
                rows = [r for r in rows
                        if (not rule.source_type or schema.is_a(r[1], rule.source_type))
                        and (not rule.target_type or schema.is_a(r[2], rule.target_type))]
                if len(rows) > rule.max_current:
                    violations.append(Violation(
                        "facts", "type",
                        f"cardinality: {len(rows)} current {f.type} facts per {rule.per} "
                        f"(max {rule.max_current})", f.id))
        if violations:
            raise SchemaViolationError(violations)

    def delete_episode(self, group_id: str, episode_id: str) -> dict[str, int]:
        """Remove an episode and what only it contributed: facts and entities with no other source."""
        from psycopg.types.json import Jsonb

        c = self.conn
        counts = {"episodes": 0, "facts": 0, "entities": 0}
        with self._tx():
            if c.execute("SELECT 1 FROM episodes WHERE id = %s AND group_id = %s",
                         (episode_id, group_id)).fetchone() is None:
                return counts
            fact_ids = [r[0] for r in c.execute(
                "SELECT fact_id FROM fact_episodes WHERE group_id = %s AND episode_id = %s", (group_id, episode_id))]
            c.execute("DELETE FROM fact_episodes WHERE group_id = %s AND episode_id = %s", (group_id, episode_id))
            candidates: list[str] = [r[0] for r in c.execute(
                "SELECT entity_id FROM mentions WHERE group_id = %s AND episode_id = %s", (group_id, episode_id))]
            mentioned = set(candidates)
            for fid in fact_ids:
                rest = [r[0] for r in c.execute("SELECT episode_id FROM fact_episodes WHERE fact_id = %s", (fid,))]
                if rest:
                    c.execute("UPDATE facts SET episodes = %s WHERE id = %s", (Jsonb(rest), fid))
                    continue
                ends = c.execute("DELETE FROM facts WHERE id = %s RETURNING source_id, target_id", (fid,)).fetchone()
                candidates += list(ends or ())
                counts["facts"] += 1
            c.execute("DELETE FROM mentions WHERE group_id = %s AND episode_id = %s", (group_id, episode_id))
            for eid in dict.fromkeys(candidates):
                other = c.execute("SELECT 1 FROM mentions WHERE entity_id = %s LIMIT 1", (eid,)).fetchone()
                used = c.execute("SELECT 1 FROM facts WHERE group_id = %s AND (source_id = %s OR target_id = %s) "
                                 "LIMIT 1", (group_id, eid, eid)).fetchone()
                if other is None and used is None:
                    c.execute("DELETE FROM entities WHERE id = %s", (eid,))
                    c.execute("DELETE FROM entity_names WHERE entity_id = %s", (eid,))
                    c.execute("DELETE FROM duplicates WHERE entity_id = %s OR canonical_id = %s", (eid, eid))
                    counts["entities"] += 1
                elif eid in mentioned:
                    c.execute("UPDATE entities SET mention_count = GREATEST(mention_count - 1, 1) WHERE id = %s",
                              (eid,))
            c.execute("DELETE FROM episodes WHERE id = %s AND group_id = %s", (episode_id, group_id))
            counts["episodes"] = 1
        return counts

    def delete_group(self, group_id: str) -> dict[str, int]:
        c = self.conn
        counts: dict[str, int] = {}
        with self._tx():
            # the group's BM25 statistics go wholesale below: no per-row trigger work (migration 0002)
            c.execute("SET LOCAL loregraph.fts_stats_off = 'on'")
            for table in ("episodes", "entities", "facts"):
                counts[table] = c.execute(f"DELETE FROM {table} WHERE group_id = %s", (group_id,)).rowcount
            for table in ("entity_names", "fact_episodes", "mentions", "duplicates", "blocks",
                          "community_members", "communities", "fts_stats", "vector_generations"):
                c.execute(f"DELETE FROM {table} WHERE group_id = %s", (group_id,))
            c.execute("DELETE FROM fts_terms WHERE term LIKE %s", (group_token(group_id) + "%",))
        return counts

    # ---- reads ----------------------------------------------------------------------------------
    _EP_COLS = ("id, group_id, name, content, source, source_description, role, role_type, conversation_id, "
                "valid_at, created_at, fact_ids, entity_ids")
    _ENT_COLS = ("id, group_id, name, type, aliases, summary, attributes, confidence, mention_count, "
                 "source_episode_id, created_at, updated_at, deleted_at, conversation_id")
    _FACT_COLS = ("id, group_id, source_id, target_id, type, fact, attributes, confidence, episodes, valid_at, "
                  "invalid_at, created_at, expired_at, conversation_id")

    @staticmethod
    def _episode(r: Sequence[Any]) -> Episode:
        return Episode.model_construct(
            id=r[0], group_id=r[1], name=r[2], content=r[3], source=r[4], source_description=r[5], role=r[6],
            role_type=r[7], conversation_id=r[8], valid_at=_utc(r[9]), created_at=_utc(r[10]),
            fact_ids=list(r[11]), entity_ids=list(r[12]), embedding=None,
        )

    @staticmethod
    def _entity(r: Sequence[Any]) -> Entity:
        return Entity.model_construct(
            id=r[0], group_id=r[1], name=r[2], type=r[3], aliases=list(r[4]), summary=r[5],
            attributes=dict(r[6]), confidence=r[7], mention_count=r[8], source_episode_id=r[9],
            created_at=_utc(r[10]), updated_at=_utc(r[11]), deleted_at=_utc(r[12]), embedding=None,
            conversation_id=r[13],
        )

    @staticmethod
    def _fact(r: Sequence[Any]) -> Fact:
        return Fact.model_construct(
            id=r[0], group_id=r[1], source_id=r[2], target_id=r[3], type=r[4], fact=r[5],
            attributes=dict(r[6]), confidence=r[7], episodes=list(r[8]), valid_at=_utc(r[9]),
            invalid_at=_utc(r[10]), created_at=_utc(r[11]), expired_at=_utc(r[12]), embedding=None,
            conversation_id=r[13],
        )

    def _by_ids(self, table: str, cols: str, group_id: str, ids: Sequence[str], conv: Callable[[Any], Any],
                extra: str = "") -> list[Any]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        out = {r[0]: conv(r) for r in self.conn.execute(
            f"SELECT {cols} FROM {table} WHERE group_id = %s AND id = ANY(%s){extra}", (group_id, wanted))}
        return [out[i] for i in wanted if i in out]

    def get_episodes(self, group_id: str, ids: Sequence[str]) -> list[Episode]:
        return self._by_ids("episodes", self._EP_COLS, group_id, ids, self._episode)

    def get_entities(self, group_id: str, ids: Sequence[str], include_deleted: bool = False) -> list[Entity]:
        extra = "" if include_deleted else " AND deleted_at IS NULL"
        return self._by_ids("entities", self._ENT_COLS, group_id, ids, self._entity, extra)

    def get_facts(self, group_id: str, ids: Sequence[str]) -> list[Fact]:
        return self._by_ids("facts", self._FACT_COLS, group_id, ids, self._fact)

    def entity_types(self, group_id: str, ids: Iterable[str]) -> dict[str, str]:
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        return dict(self.conn.execute(
            "SELECT id, type FROM entities WHERE group_id = %s AND id = ANY(%s) AND deleted_at IS NULL",
            (group_id, wanted)).fetchall())

    def recent_episodes(self, group_id: str, *, before: datetime | None, source: str | None,
                        limit: int) -> list[Episode]:
        where, params = ["group_id = %s"], [group_id]
        if before is not None:
            where.append("valid_at < %s")
            params.append(_utc(before))
        if source is not None:
            where.append("source = %s")
            params.append(source)
        rows = self.conn.execute(
            f"SELECT {self._EP_COLS} FROM episodes WHERE {' AND '.join(where)} ORDER BY valid_at DESC, seq DESC "
            "LIMIT %s", (*params, limit)).fetchall()
        return [self._episode(r) for r in reversed(rows)]

    def adjacent_episodes(self, group_id: str, episode_id: str, n: int = 1) -> list[Episode]:
        row = self.conn.execute("SELECT valid_at, conversation_id FROM episodes WHERE id = %s AND group_id = %s",
                                (episode_id, group_id)).fetchone()
        if row is None or n <= 0:
            return []
        at, conv = row
        conv_sql = "conversation_id = %s" if conv is not None else "conversation_id IS NULL"
        conv_p = [conv] if conv is not None else []
        before = self.conn.execute(
            f"SELECT {self._EP_COLS} FROM episodes WHERE group_id = %s AND {conv_sql} AND valid_at < %s "
            "ORDER BY valid_at DESC LIMIT %s", (group_id, *conv_p, at, n)).fetchall()
        after = self.conn.execute(
            f"SELECT {self._EP_COLS} FROM episodes WHERE group_id = %s AND {conv_sql} AND valid_at > %s "
            "ORDER BY valid_at LIMIT %s", (group_id, *conv_p, at, n)).fetchall()
        return [self._episode(r) for r in [*reversed(before), *after]]

    def find_entities_by_names(self, group_id: str, names_norm: Iterable[str]) -> list[Entity]:
        names = [n for n in dict.fromkeys(names_norm) if n]
        if not names:
            return []
        ids = [r[0] for r in self.conn.execute(
            "SELECT DISTINCT entity_id FROM entity_names WHERE group_id = %s AND name_norm = ANY(%s)",
            (group_id, names))]
        return self.get_entities(group_id, ids)

    def list_entities(self, group_id: str, *, entity_type: str | None = None, limit: int = 1000) -> list[Entity]:
        sql = f"SELECT {self._ENT_COLS} FROM entities WHERE group_id = %s AND deleted_at IS NULL"
        params: list[Any] = [group_id]
        if entity_type:
            sql += " AND type = %s"
            params.append(entity_type)
        sql += " ORDER BY seq LIMIT %s"
        return [self._entity(r) for r in self.conn.execute(sql, (*params, limit))]

    def _touching(self, cols: str, group_id: str, entity_ids: Sequence[str], time: TimeFilter,
                  types: Sequence[str] | None, limit: int, newest_first: bool) -> list[tuple[Any, ...]]:
        tsql, tparams = _time_sql("f", time)
        ids = list(dict.fromkeys(entity_ids))[:500]
        tfilter, typ = "", []
        if types:
            tfilter, typ = " AND f.type = ANY(%s)", [list(types)]
        # two index-backed halves; an OR over source/target would scan the whole group
        sql = (f"SELECT * FROM (SELECT {cols}, f.seq AS seq_ FROM facts f WHERE f.group_id = %s "
               f"AND f.source_id = ANY(%s) AND {tsql}{tfilter} UNION ALL SELECT {cols}, f.seq FROM facts f "
               f"WHERE f.group_id = %s AND f.target_id = ANY(%s) AND NOT f.source_id = ANY(%s) AND {tsql}{tfilter}"
               f") u ORDER BY seq_ {'DESC' if newest_first else ''} LIMIT %s")
        return self.conn.execute(sql, (group_id, ids, *tparams, *typ, group_id, ids, ids, *tparams, *typ,
                                       limit)).fetchall()

    def facts_of_entities(self, group_id: str, entity_ids: Sequence[str], time: TimeFilter,
                          types: Sequence[str] | None = None, limit: int = 1000,
                          newest_first: bool = False) -> list[Fact]:
        if not entity_ids:
            return []
        cols = ", ".join("f." + c.strip() for c in self._FACT_COLS.split(","))
        rows = self._touching(cols, group_id, entity_ids, time, types, limit, newest_first)
        return [self._fact(r) for r in rows]

    def fact_edges(self, group_id: str, entity_ids: Sequence[str], time: TimeFilter,
                   limit: int) -> list[tuple[str, str, str]]:
        if not entity_ids:
            return []
        rows = self._touching("f.id, f.source_id, f.target_id", group_id, entity_ids, time, None, limit, True)
        return [(r[0], r[1], r[2]) for r in rows]

    def list_facts(self, group_id: str, time: TimeFilter, limit: int = 10000) -> list[Fact]:
        tsql, tparams = _time_sql("f", time)
        rows = self.conn.execute(
            f"SELECT {', '.join('f.' + c.strip() for c in self._FACT_COLS.split(','))} FROM facts f "
            f"WHERE f.group_id = %s AND {tsql} ORDER BY f.seq LIMIT %s", (group_id, *tparams, limit))
        return [self._fact(r) for r in rows]

    def facts_of_episodes(self, group_id: str, episode_ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for fid, eid in self.conn.execute(
                "SELECT fact_id, episode_id FROM fact_episodes WHERE group_id = %s AND episode_id = ANY(%s)",
                (group_id, list(episode_ids))):
            out.setdefault(eid, []).append(fid)
        return out

    def mentions_of_entities(self, group_id: str, entity_ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for eid, epid in self.conn.execute(
                "SELECT m.entity_id, m.episode_id FROM mentions m JOIN episodes e ON e.id = m.episode_id "
                "WHERE m.group_id = %s AND m.entity_id = ANY(%s) ORDER BY e.valid_at",
                (group_id, list(entity_ids))):
            out.setdefault(eid, []).append(epid)
        return out

    def embeddings(self, kind: SearchKind, group_id: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if self._dim is None or not ids:
            return {}
        return {rid: np.asarray(v, dtype=np.float32) for rid, v in self.conn.execute(
            f"SELECT id, embedding::real[] FROM {_TABLE[kind]} WHERE group_id = %s AND id = ANY(%s) "
            "AND embedding IS NOT NULL", (group_id, list(ids)))}

    def communities_of(self, group_id: str, entity_ids: Sequence[str]) -> list[str]:
        rows = self.conn.execute(
            "SELECT community_id FROM community_members WHERE group_id = %s AND entity_id = ANY(%s)",
            (group_id, list(entity_ids))).fetchall()
        return list(dict.fromkeys(r[0] for r in rows))

    def duplicates_of(self, group_id: str) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self.conn.execute(
            "SELECT entity_id, canonical_id FROM duplicates WHERE group_id = %s", (group_id,))]

    # ---- retrieval primitives -------------------------------------------------------------------
    def fulltext(self, kind: SearchKind, group_ids: Sequence[str], query: str, limit: int,
                 time: TimeFilter | None = None) -> list[Hit]:
        """BM25 (FTS5's formula, k1=1.2, b=0.75) over the groups' own term spaces; best first."""
        table = _TABLE[kind]
        groups = list(dict.fromkeys(group_ids))
        qterms: list[str] = []
        for gid in groups:
            qterms += query_terms(gid, query)
        if not qterms or limit <= 0:
            return []
        df = dict(self.conn.execute("SELECT term, df FROM fts_terms WHERE kind = %s AND term = ANY(%s) AND df > 0",
                                    (kind, qterms)).fetchall())
        stats = {g: (d, t) for g, d, t in self.conn.execute(
            "SELECT group_id, docs, tokens FROM fts_stats WHERE kind = %s AND group_id = ANY(%s) AND docs > 0",
            (kind, groups))}
        present = [t for t in qterms if t in df]
        if not present or not stats:
            return []
        rows_total = sum(d for d, _ in stats.values())
        ceiling = max(self.COMMON_TERM_MIN_DOCS, self.COMMON_TERM_SHARE * rows_total)
        rare = [t for t in present if df[t] <= ceiling]
        present = rare or [min(present, key=lambda t: df[t])]
        # idf per term from its own group's document count (terms carry the group token)
        by_token = {group_token(g): stats.get(g, (0, 0))[0] for g in groups}
        idf = []
        for t in present:
            n = by_token.get(t[:GROUP_TOKEN_LEN], 0)
            v = math.log((n - df[t] + 0.5) / (df[t] + 0.5))
            idf.append(v if v > 0 else 1e-6)
        g_list = list(stats)
        avgdl = [max(stats[g][1] / stats[g][0], 1e-9) for g in g_list]
        extra, params = "", []
        if kind == "fact":
            tsql, params = _time_sql("x", time or TimeFilter())
            extra = f" AND {tsql}"
        elif kind == "entity":
            extra = " AND x.deleted_at IS NULL"
        sql = (
            "WITH q AS (SELECT * FROM unnest(%s::text[], %s::float8[]) AS q(term, idf)), "
            "g AS (SELECT * FROM unnest(%s::text[], %s::float8[]) AS g(group_id, avgdl)) "
            f"SELECT x.id, SUM(q.idf * (cardinality(u.positions) * {_K1 + 1}) / (cardinality(u.positions) + "
            f"{_K1} * ({1 - _B} + {_B} * x.fts_len / g.avgdl))) AS score "
            f"FROM {table} x JOIN g ON g.group_id = x.group_id CROSS JOIN LATERAL unnest(x.fts) u "
            "JOIN q ON q.term = u.lexeme "
            f"WHERE x.fts @@ %s::tsquery AND x.group_id = ANY(%s){extra} "
            "GROUP BY x.id ORDER BY score DESC, x.id LIMIT %s"
        )
        rows = self.conn.execute(sql, (present, idf, g_list, avgdl, _tsquery(present), g_list, *params,
                                       limit)).fetchall()
        return [Hit(r[0], float(r[1])) for r in rows]

    def vector(self, kind: SearchKind, group_ids: Sequence[str], embedding: np.ndarray, limit: int,
               time: TimeFilter | None = None) -> list[Hit]:
        """Exact cosine kNN within each group (score = 1 - cosine distance)."""
        if self._dim is None or not group_ids or limit <= 0:
            return []
        table = _TABLE[kind]
        extra, params = "", []
        if kind == "fact":
            tsql, params = _time_sql("x", time or TimeFilter())
            extra = f" AND {tsql}"
        elif kind == "entity":
            extra = " AND x.deleted_at IS NULL"
        q = _vec_text(embedding)
        hits: list[Hit] = []
        for gid in dict.fromkeys(group_ids):
            rows = self.conn.execute(
                f"SELECT x.id, x.embedding <=> %s::vector AS d FROM {table} x WHERE x.group_id = %s "
                f"AND x.embedding IS NOT NULL{extra} ORDER BY d LIMIT %s", (q, gid, *params, limit)).fetchall()
            hits += [Hit(r[0], 1.0 - float(r[1])) for r in rows]
        hits.sort(key=lambda h: -h.score)
        return hits[:limit]

    def traverse(self, group_id: str, start_ids: Sequence[str], depth: int, time: TimeFilter) -> dict[str, int]:
        """Entities reachable from ``start_ids`` within ``depth`` hops over facts valid under ``time``."""
        if not start_ids or depth <= 0:
            return {s: 0 for s in start_ids}
        tsql, tparams = _time_sql("f", time)
        sql = (
            "WITH RECURSIVE walk(entity_id, depth) AS ("
            " SELECT s, 0 FROM unnest(%s::text[]) s"
            " UNION"
            " SELECT CASE WHEN f.source_id = w.entity_id THEN f.target_id ELSE f.source_id END, w.depth + 1"
            " FROM walk w JOIN facts f ON f.group_id = %s AND (f.source_id = w.entity_id OR f.target_id = w.entity_id)"
            f" WHERE w.depth < %s AND {tsql}"
            ") SELECT entity_id, MIN(depth) FROM walk GROUP BY entity_id"
        )
        found = dict(self.conn.execute(sql, (list(start_ids), group_id, depth, *tparams)).fetchall())
        valid = self.entity_types(group_id, list(found))
        return {k: v for k, v in found.items() if k in valid}

    def neighbours_among(self, group_id: str, center: str, candidates: Sequence[str],
                         time: TimeFilter) -> set[str]:
        if not candidates:
            return set()
        tsql, tparams = _time_sql("f", time)
        cand = list(candidates)
        out: set[str] = set()
        for s_id, t_id in self.conn.execute(
                "SELECT f.source_id, f.target_id FROM facts f WHERE f.group_id = %s AND ("
                "(f.source_id = %s AND f.target_id = ANY(%s)) OR (f.target_id = %s AND f.source_id = ANY(%s)))"
                f" AND {tsql}", (group_id, center, cand, center, cand, *tparams)):
            out.add(t_id if s_id == center else s_id)
        return out

    def conversation_counts(self, group_id: str, conversation_id: str) -> dict[str, int]:
        ents = self.conn.execute("SELECT COUNT(*) FROM entities WHERE group_id = %s AND conversation_id = %s",
                                 (group_id, conversation_id)).fetchone()[0]
        facts = self.conn.execute("SELECT COUNT(*) FROM facts WHERE group_id = %s AND conversation_id = %s",
                                  (group_id, conversation_id)).fetchone()[0]
        return {"entities": ents, "relationships": facts}

    def speakers(self, group_id: str) -> list[Entity]:
        return [self._entity(r) for r in self.conn.execute(
            f"SELECT {self._ENT_COLS} FROM entities WHERE group_id = %s AND deleted_at IS NULL "
            "AND attributes->'is_speaker' IN ('true'::jsonb, '1'::jsonb) ORDER BY seq", (group_id,))]

    def count(self, group_id: str) -> dict[str, int]:
        out = {}
        for table in ("episodes", "entities", "facts", "mentions", "duplicates"):
            out[table] = self.conn.execute(f"SELECT COUNT(*) FROM {table} WHERE group_id = %s",
                                           (group_id,)).fetchone()[0]
        return out

    def groups(self) -> list[str]:
        return [r[0] for r in self.conn.execute(
            "SELECT group_id FROM episodes UNION SELECT group_id FROM entities ORDER BY 1")]


def _redact(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


__all__ = ["PostgresStore"]
