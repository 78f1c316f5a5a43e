"""What the SQL backends share: the write path of a GraphDelta, row mapping, lookups and bookkeeping.

``SQLStore`` holds every part of the Store protocol whose SQL is the same on SQLite and PostgreSQL. Shared
statements are written with ``?`` placeholders; a backend states its dialect through a few small hooks
(placeholder style, timestamp and JSON conversion, ``IN`` lists, how a connection is obtained) and keeps
only what really differs: full text, vectors, traversal and its own connection handling.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np

from loregraph.errors import ConflictError, EmbedderMismatchError, SchemaViolationError, StoreError, Violation
from loregraph.graph.documents import Chunk, Collection, Document
from loregraph.graph.names import normalize_name
from loregraph.graph.types import (
    BLOCK_TYPE,
    Block,
    Community,
    DuplicateLink,
    Entity,
    Episode,
    Fact,
    GraphDelta,
    Mention,
)
from loregraph.schema import Schema
from loregraph.store.base import (
    EXPORT_KEYS,
    ExportKind,
    Hit,
    SearchKind,
    StoreCapabilities,
    TimeFilter,
    second_hop_starts,
)

log = logging.getLogger("loregraph.store")

TABLE: dict[str, str] = {"episode": "episodes", "entity": "entities", "fact": "facts", "chunk": "chunks",
                         "community": "communities"}

EP_COLS = ("id, group_id, name, content, source, source_description, role, role_type, conversation_id, "
           "valid_at, created_at, fact_ids, entity_ids")
BLOCK_COLS = "id, group_id, entity_id, parent_id, text, level, attributes, created_at, updated_at"
ENT_COLS = ("id, group_id, name, type, aliases, summary, attributes, confidence, mention_count, "
            "source_episode_id, created_at, updated_at, deleted_at, conversation_id")
FACT_COLS = ("id, group_id, source_id, target_id, type, fact, attributes, confidence, episodes, valid_at, "
             "invalid_at, created_at, expired_at, conversation_id")
_F_FACT_COLS = ", ".join("f." + c.strip() for c in FACT_COLS.split(","))

# (column, placeholder, value, SET clause on conflict or None for "column=excluded.column")
ExtraColumn = tuple[str, str, Any, str | None]


@lru_cache(maxsize=64)
def column_names(cols: str) -> tuple[str, ...]:
    """The names of a column list ("f.id, f.group_id" -> ("id", "group_id"))."""
    return tuple(c.strip().rsplit(".", 1)[-1] for c in cols.split(","))


def _named(cols: str, row: Sequence[Any]) -> dict[str, Any]:
    """A row selected with the column list ``cols``, by column name (extra trailing columns are ignored)."""
    return dict(zip(column_names(cols), row, strict=False))


def chunks(items: Sequence[Any], n: int) -> Iterator[list[Any]]:
    items = list(items)
    for i in range(0, len(items), n):
        yield items[i:i + n]


class SQLStore:
    """The backend-neutral half of a SQL store. Subclasses set the dialect hooks below."""

    MIGRATIONS_PACKAGE: str
    MIGRATIONS_DDL = ("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                      "name TEXT NOT NULL, applied_at TEXT NOT NULL)")
    CHUNK = 500  # ids per IN list
    SPEAKER_SQL = ""  # condition selecting entities flagged is_speaker
    JSON_MERGE_SQL = ""  # ``attributes`` with the keys of the JSON object parameter set (one ``?``)
    capabilities = StoreCapabilities()
    # Vector indexes that a backend builds as groups grow (PostgreSQL's per-group HNSW): set False during a bulk
    # import so they are built once by checkpoint() rather than kept up row by row
    build_vector_indexes = True
    COMMON_TERM_SHARE = 0.05  # full-text terms in more than this share of a group's rows are dropped ...
    COMMON_TERM_MIN_DOCS = 500  # ... when rarer terms remain and the term is in more than this many rows

    url: str
    label: str  # how messages name the database (a path, or a URL without its password)
    _dim: str | None
    _apply_hooks: list[Callable[[Any], None]]

    # ---- dialect hooks --------------------------------------------------------------------------
    def _q(self, sql: str) -> str:
        """A shared statement in this backend's placeholder style."""
        return sql

    def _ts(self, value: datetime | None) -> Any:
        raise NotImplementedError

    def _from_ts(self, value: Any) -> datetime | None:
        raise NotImplementedError

    def _json(self, value: Any) -> Any:
        raise NotImplementedError

    def _from_json(self, value: Any) -> Any:
        raise NotImplementedError

    def _in(self, col: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``col`` is one of ``values``: the condition and its parameters."""
        return f"{col} IN ({','.join('?' * len(values))})", list(values)

    def _not_in(self, col: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        sql, params = self._in(col, values)
        return f"NOT ({sql})", params

    def _tx(self) -> AbstractContextManager[Any]:
        """A write transaction; yields the connection."""
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Any]:
        """A connection to read with (the current transaction's, inside one)."""
        raise NotImplementedError

    def _executemany(self, c: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        raise NotImplementedError

    def _run_script(self, c: Any, sql: str) -> None:
        raise NotImplementedError

    def _group_write_lock(self, c: Any, group_id: str) -> None:
        """Called first in every write transaction of a group: one writer per group at a time, so concurrent
        writers cannot deadlock on shared per-group rows (PostgreSQL's term statistics). SQLite's write
        transactions are serial already."""

    def _migration_lock(self, c: Any) -> None:
        """Called first inside the migration transaction (PostgreSQL: one migrating process at a time)."""

    def _create_vector_storage(self, c: Any, dim: int) -> None:
        raise NotImplementedError

    def _delete_rows(self, c: Any, kind: SearchKind, group_id: str, ids: Sequence[str]) -> None:
        """Delete records of one kind of one group by id, with their index rows."""
        raise NotImplementedError

    def _index_columns(self, kind: SearchKind, group_id: str, body: str,
                       embedding: list[float] | None) -> list[ExtraColumn]:
        """Columns written with a record for its text and vector indexes (PostgreSQL keeps them in the row)."""
        return []

    def _before_upserts(self, c: Any, delta: GraphDelta) -> None:
        """Called in ``apply`` before the delta's episodes, entities and facts are written (PostgreSQL reads what
        its statistics need of the rows being replaced, for the three kinds in one statement)."""

    def _index_records(self, c: Any, kind: SearchKind,
                       records: Sequence[tuple[int, str, str, list[float] | None]]) -> None:
        """Write records' text and vector index rows, (seq, group id, text, embedding) each, after the rows
        themselves; a seq given twice takes its last text and embedding (SQLite keeps side tables)."""

    # ---- small helpers --------------------------------------------------------------------------
    def _all(self, c: Any, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return c.execute(self._q(sql), params).fetchall()

    def _one(self, c: Any, sql: str, params: Sequence[Any] = ()) -> Any:
        return c.execute(self._q(sql), params).fetchone()

    def _run(self, c: Any, sql: str, params: Sequence[Any] = ()) -> int:
        return c.execute(self._q(sql), params).rowcount

    def _fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._read() as c:
            return self._all(c, sql, params)

    def _time_sql(self, alias: str, tf: TimeFilter) -> tuple[str, list[Any]]:
        """The condition selecting facts that count under ``tf``."""
        if tf.include_expired:
            return "1=1", []
        if tf.as_of is None:
            return f"{alias}.expired_at IS NULL AND {alias}.invalid_at IS NULL", []
        t = self._ts(tf.as_of)
        return (
            f"({alias}.valid_at IS NULL OR {alias}.valid_at <= ?) "
            f"AND ({alias}.invalid_at IS NULL OR {alias}.invalid_at > ?) "
            f"AND ({alias}.expired_at IS NULL OR {alias}.invalid_at IS NOT NULL)",
            [t, t],
        )

    def _kind_filter(self, kind: SearchKind, alias: str, time: TimeFilter | None) -> tuple[str, list[Any]]:
        """Extra condition for a retrieval primitive: facts by time, entities not deleted."""
        if kind == "fact":
            tsql, params = self._time_sql(alias, time or TimeFilter())
            return f" AND {tsql}", params
        if kind == "entity":
            return f" AND {alias}.deleted_at IS NULL", []
        return "", []

    # ---- lifecycle ------------------------------------------------------------------------------
    def _init_common(self) -> None:
        self._apply_hooks = []  # see apply_hook
        self._migrate()
        self._dim = self._meta("embedding_dim")
        if self._dim is not None:  # vector storage of kinds added by later migrations (chunks)
            self._ensure_vector_storage(int(self._dim))

    def _ensure_vector_storage(self, dim: int) -> None:
        with self._tx() as c:
            self._create_vector_storage(c, dim)

    def _migrations(self) -> list[tuple[int, str, str]]:
        out = []
        for res in resources.files(self.MIGRATIONS_PACKAGE).iterdir():
            m = re.match(r"^(\d{4})_(.+)\.sql$", res.name)
            if m:
                out.append((int(m.group(1)), m.group(2), res.read_text("utf-8")))
        return sorted(out)

    def _migrate(self) -> None:
        with self._tx() as c:
            self._migration_lock(c)
            self._run_script(c, self.MIGRATIONS_DDL)
            applied = {r[0] for r in self._all(c, "SELECT version FROM schema_migrations")}
            known = self._migrations()
            newest = max((v for v, _, _ in known), default=0)
            if applied and max(applied) > newest:
                raise StoreError(f"database {self.label} has schema version {max(applied)}, newer than this "
                                 f"loregraph supports ({newest}); upgrade loregraph")
            for version, name, sql in known:
                if version in applied:
                    continue
                t0 = time.perf_counter()
                self._run_script(c, sql)
                self._run(c, "INSERT INTO schema_migrations VALUES (?,?,?)",
                          (version, name, self._ts(datetime.now(UTC))))
                log.info("applied migration %04d_%s in %.1f ms", version, name, (time.perf_counter() - t0) * 1e3)

    @property
    def schema_version(self) -> int:
        return self._fetch("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")[0][0]

    def _meta(self, key: str, c: Any = None) -> str | None:
        if c is None:
            rows = self._fetch("SELECT value FROM meta WHERE key = ?", (key,))
        else:
            rows = self._all(c, "SELECT value FROM meta WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def ensure_embedder(self, name: str, dim: int) -> None:
        """Record the embedding model on first use; refuse a different model or dimension later."""
        if self._check_embedder(name, dim, self._meta("embedding_model"), self._meta("embedding_dim")):
            return
        with self._tx() as c:  # first use: record it, unless a concurrent opener just did
            self._lock_embedder(c)
            if self._check_embedder(name, dim, self._meta("embedding_model", c), self._meta("embedding_dim", c)):
                return
            self._run(c, "INSERT INTO meta VALUES ('embedding_model', ?)", (name,))
            self._run(c, "INSERT INTO meta VALUES ('embedding_dim', ?)", (str(dim),))
            self._create_vector_storage(c, dim)
        self._dim = str(dim)

    def embedding_model(self) -> tuple[str, int] | None:
        """The recorded embedding model and its dimension (None before the first ``ensure_embedder``)."""
        name, dim = self._meta("embedding_model"), self._meta("embedding_dim")
        return (name, int(dim)) if name is not None and dim is not None else None

    def _lock_embedder(self, c: Any) -> None:
        """Serialize first-time embedder recording between processes (SQLite's write lock already does)."""

    def _check_embedder(self, name: str, dim: int, cur_name: str | None, cur_dim: str | None) -> bool:
        if cur_name is None:
            return False
        if cur_name != name or int(cur_dim or 0) != dim:
            raise EmbedderMismatchError(
                f"database {self.label} was built with embedding model {cur_name!r} (dim {cur_dim}); "
                f"the configured model is {name!r} (dim {dim}). Use the same model, or re-ingest into "
                f"a new database."
            )
        self._dim = str(dim)
        return True

    # ---- writes ---------------------------------------------------------------------------------
    def apply(self, delta: GraphDelta, schema: Schema) -> None:
        """Validate and write ``delta`` in one transaction; on any error nothing is written."""
        gid = delta.group_id
        with self._tx() as c:
            self._group_write_lock(c, gid)
            violations = schema.validate_delta(delta, lambda ids: self.node_types(gid, ids))
            if violations:
                raise SchemaViolationError(violations)
            self._before_upserts(c, delta)
            self._upsert_episodes(c, delta.episodes)
            self._upsert_entities(c, delta.entities)
            self._upsert_facts(c, delta.facts)
            for inv in delta.invalidations:
                ending = {"end_reason": inv.reason, **({"ended_by": inv.episode_id} if inv.episode_id else {})}
                n = self._run(c, "UPDATE facts SET invalid_at = COALESCE(invalid_at, ?), "
                                 "expired_at = COALESCE(expired_at, ?), "
                                 f"attributes = CASE WHEN invalid_at IS NULL THEN {self.JSON_MERGE_SQL} "
                                 "ELSE attributes END WHERE id = ? AND group_id = ?",
                              (self._ts(inv.invalid_at), self._ts(inv.expired_at), self._json(ending), inv.fact_id,
                               gid))
                if n == 0:
                    raise SchemaViolationError([Violation("invalidations", "fact_id",
                                                          "fact not found in group", inv.fact_id)])
            self._insert_rows(c, "INSERT INTO mentions", [(m.group_id, m.episode_id, m.entity_id,
                                                            self._ts(m.created_at)) for m in delta.mentions],
                              "ON CONFLICT DO NOTHING")
            self._insert_rows(c, "INSERT INTO duplicates", [(d.group_id, d.entity_id, d.canonical_id,
                                                              self._ts(d.created_at)) for d in delta.duplicates],
                              "ON CONFLICT DO NOTHING")
            for b in delta.blocks:
                self._upsert_block(c, gid, b)
            self._write_communities(c, delta)
            self._check_cardinality(c, delta, schema)
            for hook in list(self._apply_hooks):
                hook(c)

    # ---- communities (issue 15) ------------------------------------------------------------------
    def _write_communities(self, c: Any, delta: GraphDelta) -> None:
        """Upsert the delta's communities (full text and vectors with them); a rebuild first drops the group's
        others. An entity belongs to one community: joining one leaves any other."""
        gid = delta.group_id
        if delta.communities_rebuilt:
            keep = {com.id for com in delta.communities}
            stale = [r[0] for r in self._all(c, "SELECT id FROM communities WHERE group_id = ?", (gid,))
                     if r[0] not in keep]
            if stale:
                self._delete_rows(c, "community", gid, stale)
            self._run(c, "DELETE FROM community_members WHERE group_id = ?", (gid,))
        bodies = [f"{com.name} {com.summary}" for com in delta.communities]
        seqs = self._upsert_many(c, "communities", [(
            {"id": com.id, "group_id": gid, "name": com.name, "summary": com.summary,
             "created_at": self._ts(com.created_at), "updated_at": self._ts(com.updated_at)},
            self._index_columns("community", gid, body, com.embedding)) for com, body in zip(delta.communities,
                                                                                           bodies, strict=True)],
            ("name", "summary", "updated_at"))
        self._index_records(c, "community", [(seqs[com.id], gid, body, com.embedding)
                                             for com, body in zip(delta.communities, bodies, strict=True)])
        for com in delta.communities:
            self._run(c, "DELETE FROM community_members WHERE group_id = ? AND community_id = ?", (gid, com.id))
            members = list(dict.fromkeys(com.member_ids))
            for part in chunks(members, self.CHUNK):
                cond, params = self._in("entity_id", part)
                self._run(c, f"DELETE FROM community_members WHERE group_id = ? AND {cond}", (gid, *params))
            self._insert_rows(c, "INSERT INTO community_members", [(gid, com.id, m) for m in members])
        if delta.communities_rebuilt:
            total = sum(len(set(com.member_ids)) for com in delta.communities)
            self._run(c, "INSERT INTO community_builds (group_id, built_at, members, communities, drift) "
                         "VALUES (?,?,?,?,0) ON CONFLICT (group_id) DO UPDATE SET built_at=excluded.built_at, "
                         "members=excluded.members, communities=excluded.communities, drift=0",
                      (gid, self._ts(datetime.now(UTC)), total, len(delta.communities)))
        elif delta.community_drift:
            self._run(c, "UPDATE community_builds SET drift = drift + ? WHERE group_id = ?",
                      (delta.community_drift, gid))

    COMMUNITY_COLS = "id, group_id, name, summary, created_at, updated_at"

    def _community(self, r: Sequence[Any]) -> Community:
        return Community.model_construct(
            id=r[0], group_id=r[1], name=r[2], summary=r[3], created_at=self._required_ts(r[4]),
            updated_at=self._from_ts(r[5]) or self._required_ts(r[4]), member_ids=[], embedding=None)

    def _with_members(self, group_id: str, coms: list[Community]) -> list[Community]:
        by_id = {com.id: com for com in coms}
        for cid, eid in self._pairs("SELECT community_id, entity_id FROM community_members WHERE group_id = ? "
                                    "AND {cond} ORDER BY entity_id", group_id, "community_id", list(by_id)):
            by_id[cid].member_ids.append(eid)
        return coms

    def current_edges(self, group_id: str, limit: int) -> list[tuple[str, str, str, float]]:
        rows = self._fetch(
            "SELECT f.id, f.source_id, f.target_id, f.confidence FROM facts f "
            "JOIN entities s ON s.group_id = f.group_id AND s.id = f.source_id AND s.deleted_at IS NULL "
            "JOIN entities t ON t.group_id = f.group_id AND t.id = f.target_id AND t.deleted_at IS NULL "
            "WHERE f.group_id = ? AND f.invalid_at IS NULL AND f.expired_at IS NULL ORDER BY f.seq LIMIT ?",
            (group_id, limit))
        return [(r[0], r[1], r[2], float(r[3] if r[3] is not None else 1.0)) for r in rows]

    def list_communities(self, group_id: str, limit: int, offset: int = 0) -> list[Community]:
        cols = ", ".join("c." + x.strip() for x in self.COMMUNITY_COLS.split(","))
        # a join with the group named on both sides, not a correlated subquery: one shard on Citus
        rows = self._fetch(
            f"SELECT {cols}, COUNT(m.entity_id) AS n FROM communities c LEFT JOIN community_members m "
            "ON m.group_id = ? AND m.community_id = c.id WHERE c.group_id = ? "
            f"GROUP BY {cols} ORDER BY n DESC, c.name, c.id LIMIT ? OFFSET ?",
            (group_id, group_id, limit, offset))
        return self._with_members(group_id, [self._community(r) for r in rows])

    def get_communities(self, group_id: str, ids: Sequence[str]) -> list[Community]:
        return self._with_members(group_id, self._by_ids("communities", self.COMMUNITY_COLS, group_id, ids,
                                                         self._community))

    def community_membership(self, group_id: str, entity_ids: Sequence[str]) -> dict[str, str]:
        return {eid: cid for eid, cid in self._pairs(
            "SELECT entity_id, community_id FROM community_members WHERE group_id = ? AND {cond}",
            group_id, "entity_id", entity_ids)}

    def community_state(self, group_id: str) -> dict[str, int] | None:
        rows = self._fetch("SELECT members, communities, drift FROM community_builds WHERE group_id = ?", (group_id,))
        if not rows:
            return None
        return {"members": int(rows[0][0]), "communities": int(rows[0][1]), "drift": int(rows[0][2])}

    # ---- blocks (issue 14): descriptive text of entities, vector-indexed per group ------------------------
    def _block_vec(self, embedding: list[float] | None) -> Any:
        """A block embedding as this backend stores it (checked against the recorded dimension)."""
        raise NotImplementedError

    BLOCK_VEC_MARK = "?"  # placeholder of the embedding column (PostgreSQL: a cast to vector)

    def _upsert_block(self, c: Any, gid: str, b: Block) -> None:
        self._run(c, "INSERT INTO blocks (id, group_id, entity_id, parent_id, text, level, attributes, created_at, "
                     f"updated_at, embedding) VALUES (?,?,?,?,?,?,?,?,?,{self.BLOCK_VEC_MARK}) "
                     "ON CONFLICT (group_id, id) DO UPDATE SET text=excluded.text, level=excluded.level, "
                     "parent_id=excluded.parent_id, entity_id=excluded.entity_id, attributes=excluded.attributes, "
                     "updated_at=excluded.updated_at, "
                     "embedding=COALESCE(excluded.embedding, blocks.embedding)",
                  (b.id, gid, b.entity_id, b.parent_id, b.text, b.level, self._json(b.attributes),
                   self._ts(b.created_at), self._ts(b.updated_at), self._block_vec(b.embedding)))

    def _block(self, r: Sequence[Any]) -> Block:
        return Block.model_construct(
            id=r[0], group_id=r[1], entity_id=r[2], parent_id=r[3], text=r[4], level=r[5],
            attributes=dict(self._from_json(r[6])), created_at=self._required_ts(r[7]),
            updated_at=self._required_ts(r[8]), embedding=None)

    def node_types(self, group_id: str, ids: Iterable[str]) -> dict[str, str]:
        """Types of the group's nodes by id: entities' own types, ``block`` for blocks (schema edge rules)."""
        wanted = list(ids)
        out = self.entity_types(group_id, wanted)
        rest = [i for i in wanted if i not in out]
        if rest:
            out.update({b.id: BLOCK_TYPE for b in self.get_blocks(group_id, rest)})
        return out

    def get_blocks(self, group_id: str, ids: Sequence[str]) -> list[Block]:
        """The group's blocks with these ids (missing ids are left out)."""
        return self._by_ids("blocks", BLOCK_COLS, group_id, ids, self._block)

    def blocks_of_entities(self, group_id: str, entity_ids: Sequence[str]) -> list[Block]:
        """Every block whose root entity is one of ``entity_ids``, lowest level first."""
        rows = self._pairs(f"SELECT {BLOCK_COLS} FROM blocks WHERE group_id = ? AND {{cond}} ORDER BY level, seq",
                           group_id, "entity_id", entity_ids)
        return sorted((self._block(r) for r in rows), key=lambda b: b.level)

    def block_vector(self, group_id: str, embedding: Any, limit: int,
                     user_id: str | None = None) -> list[tuple[Block, float]]:
        """The group's blocks nearest to ``embedding`` (cosine similarity), best first; with ``user_id`` only its
        own and SHARED blocks."""
        raise NotImplementedError

    @contextmanager
    def apply_hook(self, hook: Callable[[Any], None]) -> Iterator[None]:
        """Within this block every ``apply`` also runs ``hook(conn)`` inside its transaction, just before the
        commit: a caller's bookkeeping (e.g. marking a queued job done) commits or rolls back with the graph."""
        self._apply_hooks.append(hook)
        try:
            yield
        finally:
            self._apply_hooks.remove(hook)

    MAX_PARAMS = 30_000  # parameters per statement (SQLite allows 32766, PostgreSQL 65535)
    MAX_ROWS = 1000  # rows per multi-row INSERT

    def _insert_rows(self, c: Any, head: str, rows: Sequence[Sequence[Any]], tail: str = "",
                     marks: Sequence[str] | None = None) -> list[Any]:
        """``head`` ("INSERT INTO t (a, b)") with many rows per statement, then ``tail`` (ON CONFLICT ...,
        RETURNING ...): one round trip per ``MAX_ROWS`` rows instead of one per row (on Citus, each statement is a
        trip from the coordinator to a worker). ``marks``: each column's placeholder (default ``?``). Returns what
        RETURNING gives, in no particular order."""
        if not rows:
            return []
        width = len(rows[0])
        one = "(" + ",".join(marks or ["?"] * width) + ")"
        per = max(1, min(self.MAX_ROWS, self.MAX_PARAMS // width))
        out: list[Any] = []
        for part in chunks(rows, per):
            cur = c.execute(self._q(f"{head} VALUES {','.join([one] * len(part))} {tail}"),
                            [v for row in part for v in row])
            if "RETURNING" in tail:
                out += cur.fetchall()
        return out

    def _upsert_many(self, c: Any, table: str, records: Sequence[tuple[dict[str, Any], Sequence[ExtraColumn]]],
                     update: Sequence[str]) -> dict[str, int]:
        """Insert or update records by (group_id, id), many per statement; ``records``: (values by column name,
        index columns), all of one shape. Returns each id's seq. An id given twice is written twice, in order (a
        statement may change a row only once)."""
        return {r[0]: r[1] for r in self._upsert_rows(c, table, records, update, "id, seq")}

    def _upsert_rows(self, c: Any, table: str, records: Sequence[tuple[dict[str, Any], Sequence[ExtraColumn]]],
                     update: Sequence[str], returning: str) -> list[Any]:
        """``_upsert_many``'s statements; returns the rows of ``returning`` in the order written (per statement
        in no particular order; an id written twice comes twice, its last write last)."""
        if not records:
            return []
        values, extra = records[0]
        names = [*values, *(e[0] for e in extra)]
        marks = ["?"] * len(values) + [e[1] for e in extra]
        sets = [f"{u}=excluded.{u}" for u in update] + [e[3] or f"{e[0]}=excluded.{e[0]}" for e in extra]
        head = f"INSERT INTO {table} ({', '.join(names)})"
        tail = f"ON CONFLICT (group_id, id) DO UPDATE SET {', '.join(sets)} RETURNING {returning}"
        out: list[Any] = []
        run: list[tuple[Any, ...]] = []
        in_run: set[str] = set()
        for vals, ext in records:
            if vals["id"] in in_run:
                out += self._insert_rows(c, head, run, tail, marks)
                run, in_run = [], set()
            run.append((*vals.values(), *(e[2] for e in ext)))
            in_run.add(vals["id"])
        return out + self._insert_rows(c, head, run, tail, marks)

    def _upsert_episodes(self, c: Any, episodes: Sequence[Episode]) -> None:
        bodies = [f"{ep.name} {ep.content}" for ep in episodes]
        seqs = self._upsert_many(c, "episodes", [(
            {"id": ep.id, "group_id": ep.group_id, "name": ep.name, "content": ep.content, "source": ep.source,
             "source_description": ep.source_description, "role": ep.role, "role_type": ep.role_type,
             "conversation_id": ep.conversation_id, "valid_at": self._ts(ep.valid_at),
             "created_at": self._ts(ep.created_at), "fact_ids": self._json(ep.fact_ids),
             "entity_ids": self._json(ep.entity_ids)},
            self._index_columns("episode", ep.group_id, body, ep.embedding)) for ep, body in zip(episodes, bodies,
                                                                                              strict=True)],
            ("name", "content", "source_description", "fact_ids", "entity_ids"))
        self._index_records(c, "episode", [(seqs[ep.id], ep.group_id, body, ep.embedding)
                                           for ep, body in zip(episodes, bodies, strict=True)])

    def _upsert_entities(self, c: Any, entities: Sequence[Entity]) -> None:
        if not entities:
            return
        bodies = [" ".join([ent.name, *ent.aliases, ent.summary]) for ent in entities]
        seqs = self._upsert_many(c, "entities", [(
            {"id": ent.id, "group_id": ent.group_id, "name": ent.name, "name_norm": normalize_name(ent.name),
             "type": ent.type, "aliases": self._json(ent.aliases), "summary": ent.summary,
             "attributes": self._json(ent.attributes), "confidence": ent.confidence,
             "mention_count": ent.mention_count, "source_episode_id": ent.source_episode_id,
             "created_at": self._ts(ent.created_at), "updated_at": self._ts(ent.updated_at),
             "deleted_at": self._ts(ent.deleted_at), "conversation_id": ent.conversation_id},
            self._index_columns("entity", ent.group_id, body, ent.embedding)) for ent, body in zip(entities, bodies,
                                                                                                strict=True)],
            ("name", "name_norm", "type", "aliases", "summary", "attributes", "confidence", "mention_count",
             "updated_at", "deleted_at"))
        # the names of an entity are the last write's (a delta's records are all of its group)
        last = {ent.id: ent for ent in entities}
        gid = entities[0].group_id
        for part in chunks(list(last), self.CHUNK):
            cond, params = self._in("entity_id", part)
            self._run(c, f"DELETE FROM entity_names WHERE group_id = ? AND {cond}", (gid, *params))
        self._insert_rows(c, "INSERT INTO entity_names (group_id, name_norm, entity_id)", [
            (ent.group_id, n, ent.id) for ent in last.values()
            for n in sorted({normalize_name(n) for n in [ent.name, *ent.aliases]} - {""})], "ON CONFLICT DO NOTHING")
        self._index_records(c, "entity", [(seqs[ent.id], ent.group_id, body, ent.embedding)
                                          for ent, body in zip(entities, bodies, strict=True)])

    def _upsert_facts(self, c: Any, facts: Sequence[Fact]) -> None:
        seqs = self._upsert_many(c, "facts", [(
            {"id": f.id, "group_id": f.group_id, "source_id": f.source_id, "target_id": f.target_id,
             "type": f.type, "fact": f.fact, "attributes": self._json(f.attributes), "confidence": f.confidence,
             "episodes": self._json(f.episodes), "valid_at": self._ts(f.valid_at),
             "invalid_at": self._ts(f.invalid_at), "created_at": self._ts(f.created_at),
             "expired_at": self._ts(f.expired_at), "conversation_id": f.conversation_id},
            self._index_columns("fact", f.group_id, f.fact, f.embedding)) for f in facts],
            ("fact", "attributes", "confidence", "episodes", "valid_at", "invalid_at", "expired_at", "type",
             "source_id", "target_id"))
        self._insert_rows(c, "INSERT INTO fact_episodes (group_id, fact_id, episode_id)", [
            (f.group_id, f.id, e) for f in facts for e in dict.fromkeys(f.episodes)], "ON CONFLICT DO NOTHING")
        self._index_records(c, "fact", [(seqs[f.id], f.group_id, f.fact, f.embedding) for f in facts])

    def _check_cardinality(self, c: Any, delta: GraphDelta, schema: Schema) -> None:
        """Graph-state rules: count current facts after the write for every touched endpoint (one query per rule
        and chunk of touched facts, not one per fact)."""
        rules = schema.cardinality_rules()
        touched = [f for f in delta.facts if f.is_current()]
        if not rules or not touched:
            return
        violations: list[Violation] = []
        cols = {"source": ("source_id",), "target": ("target_id",), "pair": ("source_id", "target_id")}
        for rule in rules:
            key_cols = cols[rule.per]
            firsts: dict[tuple[Any, ...], Fact] = {}  # (type, *key) -> the first touched fact with it
            for f in touched:
                if rule.edge in ("*", f.type):
                    firsts.setdefault((f.type, *(getattr(f, k) for k in key_cols)), f)
            joins = ""
            if rule.source_type:
                joins += " JOIN entities s ON s.group_id = f.group_id AND s.id = f.source_id"
            if rule.target_type:
                joins += " JOIN entities t ON t.group_id = f.group_id AND t.id = f.target_id"
            current: dict[tuple[Any, ...], int] = {}
            width = 1 + len(key_cols)
            names = ", ".join(("type", *(f"k{i}" for i in range(len(key_cols)))))
            on = " AND ".join(["f.type = k.type", *(f"f.{col} = k.k{i}" for i, col in enumerate(key_cols))])
            for part in chunks(list(firsts), min(self.MAX_ROWS, self.MAX_PARAMS // width)):
                # the touched keys as a VALUES list joined to the group's current facts: exact matches only
                values = ",".join(["(" + ",".join("?" * width) + ")"] * len(part))
                rows = self._all(
                    c, f"WITH k({names}) AS (VALUES {values}) "
                       f"SELECT f.type, {', '.join('f.' + k for k in key_cols)}, "
                       f"{'s.type' if rule.source_type else 'NULL'}, {'t.type' if rule.target_type else 'NULL'} "
                       f"FROM facts f JOIN k ON {on}{joins} WHERE f.group_id = ? "
                       "AND f.expired_at IS NULL AND f.invalid_at IS NULL",
                    (*(v for key in part for v in key), delta.group_id))
                for r in rows:
                    key = tuple(r[:width])
                    if (not rule.source_type or schema.is_a(r[-2], rule.source_type)) \
                            and (not rule.target_type or schema.is_a(r[-1], rule.target_type)):
                        current[key] = current.get(key, 0) + 1
            for key, f in firsts.items():
                if current.get(key, 0) > rule.max_current:
                    violations.append(Violation(
                        "facts", "type",
                        f"cardinality: {current[key]} current {f.type} facts per {rule.per} "
                        f"(max {rule.max_current})", f.id))
        if violations:
            raise SchemaViolationError(violations)

    def delete_fact(self, group_id: str, fact_id: str) -> int:
        """Remove one fact (its index rows, its episode links); returns how many were deleted."""
        with self._tx() as c:
            self._group_write_lock(c, group_id)
            if self._one(c, "SELECT 1 FROM facts WHERE id = ? AND group_id = ?", (fact_id, group_id)) is None:
                return 0
            for (eid,) in self._all(c, "SELECT episode_id FROM fact_episodes WHERE group_id = ? AND fact_id = ?",
                                    (group_id, fact_id)):
                row = self._one(c, "SELECT fact_ids FROM episodes WHERE id = ? AND group_id = ?", (eid, group_id))
                if row is not None:
                    rest = [f for f in self._from_json(row[0]) if f != fact_id]
                    self._run(c, "UPDATE episodes SET fact_ids = ? WHERE group_id = ? AND id = ?",
                              (self._json(rest), group_id, eid))
            self._run(c, "DELETE FROM fact_episodes WHERE group_id = ? AND fact_id = ?", (group_id, fact_id))
            self._delete_rows(c, "fact", group_id, [fact_id])
        return 1

    def delete_episode(self, group_id: str, episode_id: str) -> dict[str, int]:
        """Remove an episode and what only it contributed: facts and entities with no other source."""
        with self._tx() as c:
            self._group_write_lock(c, group_id)
            return self._delete_episode_in(c, group_id, episode_id)

    def _delete_episode_in(self, c: Any, group_id: str, episode_id: str) -> dict[str, int]:
        """``delete_episode`` inside an open transaction."""
        counts = {"episodes": 0, "facts": 0, "entities": 0}
        if self._one(c, "SELECT 1 FROM episodes WHERE id = ? AND group_id = ?", (episode_id, group_id)) is None:
            return counts
        fact_ids = [r[0] for r in self._all(
            c, "SELECT fact_id FROM fact_episodes WHERE group_id = ? AND episode_id = ?", (group_id, episode_id))]
        self._run(c, "DELETE FROM fact_episodes WHERE group_id = ? AND episode_id = ?", (group_id, episode_id))
        candidates: list[str] = [r[0] for r in self._all(
            c, "SELECT entity_id FROM mentions WHERE group_id = ? AND episode_id = ?", (group_id, episode_id))]
        mentioned = set(candidates)
        for fid in fact_ids:
            rest = [r[0] for r in self._all(
                c, "SELECT episode_id FROM fact_episodes WHERE group_id = ? AND fact_id = ?", (group_id, fid))]
            if rest:
                self._run(c, "UPDATE facts SET episodes = ? WHERE group_id = ? AND id = ?",
                          (self._json(rest), group_id, fid))
                continue
            ends = self._one(c, "SELECT source_id, target_id FROM facts WHERE group_id = ? AND id = ?",
                             (group_id, fid))
            candidates += list(ends or ())
            self._delete_rows(c, "fact", group_id, [fid])
            counts["facts"] += 1
        self._run(c, "DELETE FROM mentions WHERE group_id = ? AND episode_id = ?", (group_id, episode_id))
        for eid in dict.fromkeys(candidates):
            other = self._one(c, "SELECT 1 FROM mentions WHERE group_id = ? AND entity_id = ? LIMIT 1",
                              (group_id, eid))
            used = self._one(c, "SELECT 1 FROM facts WHERE group_id = ? AND (source_id = ? OR target_id = ?) "
                                "LIMIT 1", (group_id, eid, eid))
            if other is None and used is None:
                self._delete_rows(c, "entity", group_id, [eid])
                self._run(c, "DELETE FROM entity_names WHERE group_id = ? AND entity_id = ?", (group_id, eid))
                self._run(c, "DELETE FROM duplicates WHERE group_id = ? AND (entity_id = ? OR canonical_id = ?)",
                          (group_id, eid, eid))
                counts["entities"] += 1
            elif eid in mentioned:
                self._run(c, "UPDATE entities SET mention_count = CASE WHEN mention_count > 1 "
                             "THEN mention_count - 1 ELSE 1 END WHERE group_id = ? AND id = ?", (group_id, eid))
        self._delete_rows(c, "episode", group_id, [episode_id])
        counts["episodes"] = 1
        return counts

    # ---- documents (spec 002) -------------------------------------------------------------------
    COLL_COLS = "id, group_id, name, description, domain, domain_scope, metadata_schema, created_at"
    DOC_COLS = "id, group_id, collection_id, title, source, metadata, chars, chunk_count, content_hash, created_at"
    CHUNK_COLS = "id, group_id, collection_id, document_id, ordinal, content, created_at"

    @contextmanager
    def transaction(self, group_id: str) -> Iterator[Any]:
        """One write transaction of a group: writes inside it (``apply``, ``put_document``, deletes) join it and
        commit or roll back together."""
        with self._tx() as c:
            self._group_write_lock(c, group_id)
            yield c

    def _collection(self, r: Sequence[Any]) -> Collection:
        d = _named(self.COLL_COLS, r)
        return Collection.model_construct(**{**d, "metadata_schema": dict(self._from_json(d["metadata_schema"])),
                                             "created_at": self._required_ts(d["created_at"])})

    def _document(self, r: Sequence[Any]) -> Document:
        d = _named(self.DOC_COLS, r)
        return Document.model_construct(**{**d, "metadata": dict(self._from_json(d["metadata"])),
                                           "created_at": self._required_ts(d["created_at"])})

    def _chunk(self, r: Sequence[Any]) -> Chunk:
        d = _named(self.CHUNK_COLS, r)
        return Chunk.model_construct(**{**d, "embedding": None, "created_at": self._required_ts(d["created_at"])})

    def create_collection(self, collection: Collection) -> None:
        """Insert a collection; a name the group already uses is a ConflictError."""
        col = collection
        with self.transaction(col.group_id) as c:
            if self._one(c, "SELECT 1 FROM collections WHERE group_id = ? AND name = ?", (col.group_id, col.name)):
                raise ConflictError(f"name: a collection named {col.name!r} exists already in group {col.group_id}")
            self._run(c, f"INSERT INTO collections ({self.COLL_COLS}) VALUES (?,?,?,?,?,?,?,?)",
                      (col.id, col.group_id, col.name, col.description, col.domain, col.domain_scope,
                       self._json(col.metadata_schema), self._ts(col.created_at)))

    def get_collection(self, group_id: str, name: str) -> Collection | None:
        rows = self._fetch(f"SELECT {self.COLL_COLS} FROM collections WHERE group_id = ? AND name = ?",
                           (group_id, name))
        return self._collection(rows[0]) if rows else None

    def list_collections(self, group_id: str) -> list[tuple[Collection, int]]:
        """The group's collections by name, each with its number of documents."""
        cols = ", ".join("c." + x.strip() for x in self.COLL_COLS.split(","))
        # the group as a value on both sides (not d.group_id = c.group_id): Citus routes it to one shard
        rows = self._fetch(f"SELECT {cols}, (SELECT COUNT(*) FROM documents d WHERE d.group_id = ? AND "
                           "d.collection_id = c.id) FROM collections c WHERE c.group_id = ? ORDER BY c.name",
                           (group_id, group_id))
        return [(self._collection(r), int(r[-1])) for r in rows]

    def delete_collection(self, group_id: str, collection_id: str) -> dict[str, int]:
        """Remove a collection, its documents and chunks, and the graph facts only they supported."""
        totals = {"collections": 0, "documents": 0, "chunks": 0, "facts": 0, "entities": 0}
        with self.transaction(group_id) as c:
            for (doc_id,) in self._all(c, "SELECT id FROM documents WHERE group_id = ? AND collection_id = ?",
                                       (group_id, collection_id)):
                for k, v in self._delete_document_in(c, group_id, doc_id).items():
                    totals[k] = totals.get(k, 0) + v
            totals["collections"] = self._run(c, "DELETE FROM collections WHERE group_id = ? AND id = ?",
                                              (group_id, collection_id))
        return totals

    def put_document(self, document: Document, chunks: Sequence[Chunk]) -> None:
        """Write a document and its chunks (full text and vectors with them) in one transaction, or inside the
        caller's (``transaction``)."""
        doc = document
        with self.transaction(doc.group_id) as c:
            if self._one(c, "SELECT 1 FROM collections WHERE group_id = ? AND id = ?",
                         (doc.group_id, doc.collection_id)) is None:
                raise StoreError(f"collection {doc.collection_id} not found in group {doc.group_id}")
            self._run(c, f"INSERT INTO documents ({self.DOC_COLS}) VALUES (?,?,?,?,?,?,?,?,?,?)",
                      (doc.id, doc.group_id, doc.collection_id, doc.title, doc.source, self._json(doc.metadata),
                       doc.chars, len(chunks), doc.content_hash, self._ts(doc.created_at)))
            if any(ch.group_id != doc.group_id or ch.document_id != doc.id for ch in chunks):
                raise StoreError("a chunk belongs to another document or group")
            seqs = self._upsert_many(c, "chunks", [(
                {"id": ch.id, "group_id": ch.group_id, "collection_id": ch.collection_id,
                 "document_id": ch.document_id, "ordinal": ch.ordinal, "content": ch.content,
                 "created_at": self._ts(ch.created_at)},
                self._index_columns("chunk", ch.group_id, ch.content, ch.embedding)) for ch in chunks],
                ("content", "ordinal"))
            self._index_records(c, "chunk", [(seqs[ch.id], ch.group_id, ch.content, ch.embedding) for ch in chunks])

    def find_document(self, group_id: str, collection_id: str, title: str) -> Document | None:
        rows = self._fetch(f"SELECT {self.DOC_COLS} FROM documents WHERE group_id = ? AND collection_id = ? "
                           "AND title = ?", (group_id, collection_id, title))
        return self._document(rows[0]) if rows else None

    def get_documents(self, group_id: str, ids: Sequence[str]) -> list[Document]:
        return self._by_ids("documents", self.DOC_COLS, group_id, ids, self._document)

    def list_documents(self, group_id: str, collection_id: str, limit: int, offset: int = 0) -> list[Document]:
        return [self._document(r) for r in self._fetch(
            f"SELECT {self.DOC_COLS} FROM documents WHERE group_id = ? AND collection_id = ? ORDER BY seq "
            "LIMIT ? OFFSET ?", (group_id, collection_id, limit, offset))]

    def delete_document(self, group_id: str, document_id: str) -> dict[str, int]:
        """Remove a document, its chunks (and the episodes they are) and the facts and entities only they
        supported. Joins the caller's transaction when there is one (reingest)."""
        with self.transaction(group_id) as c:
            return self._delete_document_in(c, group_id, document_id)

    def _delete_document_in(self, c: Any, group_id: str, document_id: str) -> dict[str, int]:
        counts = {"documents": 0, "chunks": 0, "facts": 0, "entities": 0}
        chunk_ids = [r[0] for r in self._all(c, "SELECT id FROM chunks WHERE group_id = ? AND document_id = ?",
                                             (group_id, document_id))]
        for cid in chunk_ids:
            gone = self._delete_episode_in(c, group_id, cid)
            counts["facts"] += gone["facts"]
            counts["entities"] += gone["entities"]
        if chunk_ids:
            self._delete_rows(c, "chunk", group_id, chunk_ids)
        counts["chunks"] = len(chunk_ids)
        counts["documents"] = self._run(c, "DELETE FROM documents WHERE group_id = ? AND id = ?",
                                        (group_id, document_id))
        return counts

    def get_chunks(self, group_id: str, ids: Sequence[str]) -> list[Chunk]:
        return self._by_ids("chunks", self.CHUNK_COLS, group_id, ids, self._chunk)

    def chunk_ids_in(self, group_id: str, collection_id: str, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are chunks of the collection."""
        rows = self._pairs("SELECT id, collection_id FROM chunks WHERE group_id = ? AND {cond}", group_id, "id", ids)
        return {r[0] for r in rows if r[1] == collection_id}

    def _collection_chunk_count(self, group_id: str, collection_id: str) -> int:
        """From the documents' chunk counts (a document's rows, not its chunks', are read)."""
        return int(self._fetch("SELECT COALESCE(SUM(chunk_count), 0) FROM documents WHERE group_id = ? AND "
                               "collection_id = ?", (group_id, collection_id))[0][0])

    def search_chunks(self, group_id: str, collection_id: str, embedding: Any, limit: int) -> list[Hit]:
        raise NotImplementedError

    def fulltext_chunks(self, group_id: str, collection_id: str, query: str, limit: int) -> list[Hit]:
        """BM25 over the group's chunks, kept to the collection (the group's best hits, over-fetched)."""
        hits = self.fulltext("chunk", [group_id], query, limit * 10 + 50)  # type: ignore[attr-defined]
        keep = self.chunk_ids_in(group_id, collection_id, [h.id for h in hits])
        return [h for h in hits if h.id in keep][:limit]

    # tables keyed by group that hold no searchable records (deleted wholesale with a group)
    GROUP_SIDE_TABLES = ("entity_names", "fact_episodes", "mentions", "duplicates", "blocks", "community_members",
                         "communities", "community_builds", "documents", "collections")

    # ---- reads ----------------------------------------------------------------------------------
    def _required_ts(self, value: Any) -> datetime:
        """A time every stored row has (NOT NULL columns)."""
        when = self._from_ts(value)
        if when is None:  # pragma: no cover - the schema forbids it
            raise StoreError("a stored row lacks a required time")
        return when

    def _episode(self, r: Sequence[Any]) -> Episode:
        d = _named(EP_COLS, r)
        return Episode.model_construct(
            id=d["id"], group_id=d["group_id"], name=d["name"], content=d["content"], source=d["source"],
            source_description=d["source_description"], role=d["role"], role_type=d["role_type"],
            conversation_id=d["conversation_id"], valid_at=self._required_ts(d["valid_at"]),
            created_at=self._required_ts(d["created_at"]), fact_ids=list(self._from_json(d["fact_ids"])),
            entity_ids=list(self._from_json(d["entity_ids"])), embedding=None,
        )

    def _entity(self, r: Sequence[Any]) -> Entity:
        d = _named(ENT_COLS, r)
        return Entity.model_construct(
            id=d["id"], group_id=d["group_id"], name=d["name"], type=d["type"],
            aliases=list(self._from_json(d["aliases"])), summary=d["summary"],
            attributes=dict(self._from_json(d["attributes"])), confidence=d["confidence"],
            mention_count=d["mention_count"], source_episode_id=d["source_episode_id"],
            created_at=self._required_ts(d["created_at"]), updated_at=self._required_ts(d["updated_at"]),
            deleted_at=self._from_ts(d["deleted_at"]), embedding=None, conversation_id=d["conversation_id"],
        )

    def _fact(self, r: Sequence[Any]) -> Fact:
        d = _named(FACT_COLS, r)
        return Fact.model_construct(
            id=d["id"], group_id=d["group_id"], source_id=d["source_id"], target_id=d["target_id"], type=d["type"],
            fact=d["fact"], attributes=dict(self._from_json(d["attributes"])), confidence=d["confidence"],
            episodes=list(self._from_json(d["episodes"])), valid_at=self._from_ts(d["valid_at"]),
            invalid_at=self._from_ts(d["invalid_at"]), created_at=self._required_ts(d["created_at"]),
            expired_at=self._from_ts(d["expired_at"]), embedding=None, conversation_id=d["conversation_id"],
        )

    def _by_ids(self, table: str, cols: str, group_id: str, ids: Sequence[str], conv: Callable[[Any], Any],
                extra: str = "") -> list[Any]:
        wanted = list(dict.fromkeys(ids))
        out: dict[str, Any] = {}
        with self._read() as c:
            for chunk in chunks(wanted, self.CHUNK):
                cond, params = self._in("id", chunk)
                for r in self._all(c, f"SELECT {cols} FROM {table} WHERE group_id = ? AND {cond}{extra}",
                                   (group_id, *params)):
                    out[r[0]] = conv(r)
        return [out[i] for i in wanted if i in out]

    def get_episodes(self, group_id: str, ids: Sequence[str]) -> list[Episode]:
        return self._by_ids("episodes", EP_COLS, group_id, ids, self._episode)

    def episode_places(self, group_id: str, ids: Sequence[str]) -> dict[str, tuple[str | None, datetime]]:
        """Where each episode sits, by id: its conversation id and ``valid_at`` (no content: cheap for a
        search's whole candidate pool)."""
        rows = self._by_ids("episodes", "id, conversation_id, valid_at", group_id, ids, tuple)
        return {r[0]: (r[1], self._required_ts(r[2])) for r in rows}

    def episode_texts(self, group_id: str, ids: Sequence[str]) -> dict[str, tuple[str | None, str]]:
        """Each episode's speaker (``role``) and content, by id: a light read (no other column, no model) for
        rescoring a search's candidates by their words."""
        rows = self._by_ids("episodes", "id, role, content", group_id, ids, tuple)
        return {r[0]: (r[1], r[2]) for r in rows}

    def get_entities(self, group_id: str, ids: Sequence[str]) -> list[Entity]:
        return self._by_ids("entities", ENT_COLS, group_id, ids, self._entity, " AND deleted_at IS NULL")

    def get_facts(self, group_id: str, ids: Sequence[str]) -> list[Fact]:
        return self._by_ids("facts", FACT_COLS, group_id, ids, self._fact)

    def entity_types(self, group_id: str, ids: Iterable[str]) -> dict[str, str]:
        return dict(self._by_ids("entities", "id, type", group_id, list(ids), tuple, " AND deleted_at IS NULL"))

    def entity_names(self, group_id: str, ids: Iterable[str]) -> dict[str, str]:
        return dict(self._by_ids("entities", "id, name", group_id, list(ids), tuple, " AND deleted_at IS NULL"))

    def groups_of(self, kind: SearchKind, record_id: str, within: Sequence[str] | None) -> list[str]:
        """The groups among ``within`` (every group if None: an admin caller) holding an episode, entity or fact
        with this id, sorted (for routes that name a record only by id). Ids are per group: several may."""
        if within is not None:
            groups = list(dict.fromkeys(within))
            if not groups:
                return []
            cond, params = self._in("group_id", groups)
            rows = self._fetch(f"SELECT group_id FROM {TABLE[kind]} WHERE {cond} AND id = ? ORDER BY group_id",
                               (*params, record_id))
        else:
            rows = self._fetch(f"SELECT group_id FROM {TABLE[kind]} WHERE id = ? ORDER BY group_id", (record_id,))
        return [r[0] for r in rows]

    def recent_episodes(self, group_id: str, *, before: datetime | None, source: str | None,
                        limit: int) -> list[Episode]:
        where, params = ["group_id = ?"], [group_id]
        if before is not None:
            where.append("valid_at < ?")
            params.append(self._ts(before))
        if source is not None:
            where.append("source = ?")
            params.append(source)
        rows = self._fetch(f"SELECT {EP_COLS} FROM episodes WHERE {' AND '.join(where)} "
                           "ORDER BY valid_at DESC, seq DESC LIMIT ?", (*params, limit))
        return [self._episode(r) for r in reversed(rows)]

    def adjacent_episodes(self, group_id: str, episode_id: str, n: int = 1) -> list[Episode]:
        """Up to ``n`` episodes right before and after one, in the same conversation (or with none)."""
        with self._read() as c:
            row = self._one(c, "SELECT valid_at, conversation_id FROM episodes WHERE id = ? AND group_id = ?",
                            (episode_id, group_id))
            if row is None or n <= 0:
                return []
            at, conv = row
            # plain range conditions so the (group_id, conversation_id, valid_at) index is walked, not scanned
            conv_sql, conv_p = ("conversation_id = ?", [conv]) if conv is not None else ("conversation_id IS NULL", [])
            before = self._all(c, f"SELECT {EP_COLS} FROM episodes WHERE group_id = ? AND {conv_sql} "
                                  "AND valid_at < ? ORDER BY valid_at DESC LIMIT ?", (group_id, *conv_p, at, n))
            after = self._all(c, f"SELECT {EP_COLS} FROM episodes WHERE group_id = ? AND {conv_sql} "
                                 "AND valid_at > ? ORDER BY valid_at LIMIT ?", (group_id, *conv_p, at, n))
        return [self._episode(r) for r in [*reversed(before), *after]]

    def find_entities_by_names(self, group_id: str, names_norm: Iterable[str]) -> list[Entity]:
        names = [n for n in dict.fromkeys(names_norm) if n]
        ids: list[str] = []
        with self._read() as c:
            for chunk in chunks(names, self.CHUNK):
                cond, params = self._in("name_norm", chunk)
                ids += [r[0] for r in self._all(
                    c, f"SELECT DISTINCT entity_id FROM entity_names WHERE group_id = ? AND {cond}",
                    (group_id, *params))]
        return self.get_entities(group_id, ids)

    def list_entities(self, group_id: str, *, entity_type: str | None = None, limit: int = 1000,
                      offset: int = 0) -> list[Entity]:
        sql = f"SELECT {ENT_COLS} FROM entities WHERE group_id = ? AND deleted_at IS NULL"
        params: list[Any] = [group_id]
        if entity_type:
            sql += " AND type = ?"
            params.append(entity_type)
        return [self._entity(r) for r in self._fetch(sql + " ORDER BY seq LIMIT ? OFFSET ?", (*params, limit, offset))]

    def _touching(self, cols: str, group_id: str, entity_ids: Sequence[str], time: TimeFilter,
                  types: Sequence[str] | None, limit: int, newest_first: bool,
                  other_ends: Sequence[str] | None = None) -> list[Any]:
        """Rows of facts touching any of ``entity_ids`` (either end) valid under ``time``, by seq (the last
        column of each row); with ``other_ends``, only those whose other end is one of them. Ids go in chunks;
        each chunk's first ``limit`` rows are merged and cut again."""
        tsql, tparams = self._time_sql("f", time)
        tfilter = ""
        typ: list[Any] = []
        if types:
            tfilter, typ = self._in("f.type", list(types))
            tfilter = " AND " + tfilter
        src_end = tgt_end = ""
        src_end_p: list[Any] = []
        tgt_end_p: list[Any] = []
        if other_ends is not None:
            if not other_ends:
                return []
            src_end, src_end_p = self._in("f.target_id", list(dict.fromkeys(other_ends)))
            tgt_end, tgt_end_p = self._in("f.source_id", list(dict.fromkeys(other_ends)))
            src_end, tgt_end = " AND " + src_end, " AND " + tgt_end
        by_seq: dict[int, Any] = {}
        with self._read() as c:
            for ids in chunks(list(dict.fromkeys(entity_ids)), self.CHUNK):
                src, src_p = self._in("f.source_id", ids)
                tgt, tgt_p = self._in("f.target_id", ids)
                not_src, not_src_p = self._not_in("f.source_id", ids)
                # two index-backed halves; an OR over source/target would scan the whole group
                sql = (f"SELECT * FROM (SELECT {cols}, f.seq AS seq_ FROM facts f WHERE f.group_id = ? AND {src}"
                       f"{src_end} AND {tsql}{tfilter} UNION ALL SELECT {cols}, f.seq FROM facts f WHERE "
                       f"f.group_id = ? AND {tgt} AND {not_src}{tgt_end} AND {tsql}{tfilter}) u "
                       f"ORDER BY seq_ {'DESC' if newest_first else ''} LIMIT ?")
                for r in self._all(c, sql, (group_id, *src_p, *src_end_p, *tparams, *typ, group_id, *tgt_p,
                                            *not_src_p, *tgt_end_p, *tparams, *typ, limit)):
                    by_seq[r[-1]] = r  # a fact with its ends in two chunks comes twice: once is kept
        return [by_seq[k] for k in sorted(by_seq, reverse=newest_first)][:limit]

    def facts_of_entities(self, group_id: str, entity_ids: Sequence[str], time: TimeFilter,
                          types: Sequence[str] | None = None, limit: int = 1000,
                          newest_first: bool = False, other_ends: Sequence[str] | None = None) -> list[Fact]:
        """Facts touching any of ``entity_ids`` (either end), valid under ``time``; with ``other_ends``, only
        facts whose other end is one of those (the facts between two entities, read without the rest)."""
        if not entity_ids:
            return []
        return [self._fact(r) for r in self._touching(_F_FACT_COLS, group_id, entity_ids, time, types, limit,
                                                      newest_first, other_ends)]

    def fact_lines(self, group_id: str, entity_ids: Sequence[str], time: TimeFilter,
                   limit: int) -> list[tuple[str, str, str, str, str]]:
        """(fact id, source id, type, target id, fact text) of the facts ``facts_of_entities`` gives, in its order
        (oldest first), without their other columns: what an extraction prompt shows of them."""
        if not entity_ids:
            return []
        rows = self._touching("f.id, f.source_id, f.type, f.target_id, f.fact", group_id, entity_ids, time, None,
                              limit, False)
        return [(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def fact_edges(self, group_id: str, entity_ids: Sequence[str], time: TimeFilter,
                   limit: int) -> list[tuple[str, str, str]]:
        """(fact id, source id, target id) of the newest facts touching ``entity_ids``; cheap graph walking."""
        if not entity_ids:
            return []
        rows = self._touching("f.id, f.source_id, f.target_id", group_id, entity_ids, time, None, limit, True)
        return [(r[0], r[1], r[2]) for r in rows]

    def fact_edges_two_hops(self, group_id: str, entity_ids: Sequence[str], time: TimeFilter, limit: int,
                            width: int) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
        """Hop 1: ``fact_edges`` of ``entity_ids``; hop 2: ``fact_edges`` of the ``second_hop_starts`` it reaches.
        Two reads here (PostgreSQL makes them one statement)."""
        first = self.fact_edges(group_id, entity_ids, time, limit)
        starts = second_hop_starts(first, list(dict.fromkeys(entity_ids)), width) if width > 0 else []
        return first, self.fact_edges(group_id, starts, time, limit) if starts else []

    def list_facts(self, group_id: str, time: TimeFilter, limit: int = 10000) -> list[Fact]:
        tsql, tparams = self._time_sql("f", time)
        return [self._fact(r) for r in self._fetch(
            f"SELECT {_F_FACT_COLS} FROM facts f WHERE f.group_id = ? AND {tsql} ORDER BY f.seq LIMIT ?",
            (group_id, *tparams, limit))]

    def _pairs(self, sql: str, group_id: str, col: str, ids: Sequence[str]) -> list[tuple[Any, Any]]:
        """Rows of ``sql`` (with ``{cond}`` for ``col`` in ``ids``) for one group, all chunks."""
        out: list[tuple[Any, Any]] = []
        with self._read() as c:
            for chunk in chunks(list(dict.fromkeys(ids)), self.CHUNK):
                cond, params = self._in(col, chunk)
                out += self._all(c, sql.format(cond=cond), (group_id, *params))
        return out

    def facts_of_episodes(self, group_id: str, episode_ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for fid, eid in self._pairs("SELECT fact_id, episode_id FROM fact_episodes WHERE group_id = ? AND {cond}",
                                    group_id, "episode_id", episode_ids):
            out.setdefault(eid, []).append(fid)
        return out

    def mentions_of_entities(self, group_id: str, entity_ids: Sequence[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for eid, epid in self._pairs("SELECT m.entity_id, m.episode_id FROM mentions m JOIN episodes e ON "
                                     "e.group_id = m.group_id AND e.id = m.episode_id WHERE m.group_id = ? AND {cond} "
                                     "ORDER BY e.valid_at",
                                     group_id, "m.entity_id", entity_ids):
            out.setdefault(eid, []).append(epid)
        return out

    def communities_of(self, group_id: str, entity_ids: Sequence[str]) -> list[str]:
        rows = self._pairs("SELECT community_id, entity_id FROM community_members WHERE group_id = ? AND {cond}",
                           group_id, "entity_id", entity_ids)
        return list(dict.fromkeys(r[0] for r in rows))

    def neighbours_among(self, group_id: str, center: str, candidates: Sequence[str],
                         time: TimeFilter) -> set[str]:
        """Which of ``candidates`` share a fact (valid under ``time``) with ``center``."""
        tsql, tparams = self._time_sql("f", time)
        out: set[str] = set()
        with self._read() as c:
            for chunk in chunks(list(candidates), self.CHUNK):
                tgt, tgt_p = self._in("f.target_id", chunk)
                src, src_p = self._in("f.source_id", chunk)
                for s_id, t_id in self._all(
                        c, f"SELECT f.source_id, f.target_id FROM facts f WHERE f.group_id = ? AND "
                           f"((f.source_id = ? AND {tgt}) OR (f.target_id = ? AND {src})) AND {tsql}",
                        (group_id, center, *tgt_p, center, *src_p, *tparams)):
                    out.add(t_id if s_id == center else s_id)
        return out

    def conversation_counts(self, group_id: str, conversation_id: str) -> dict[str, int]:
        """Entities and relationships first created in a conversation (for per-conversation rate limits)."""
        with self._read() as c:
            ents = self._one(c, "SELECT COUNT(*) FROM entities WHERE group_id = ? AND conversation_id = ?",
                             (group_id, conversation_id))[0]
            facts = self._one(c, "SELECT COUNT(*) FROM facts WHERE group_id = ? AND conversation_id = ?",
                              (group_id, conversation_id))[0]
        return {"entities": ents, "relationships": facts}

    def creation_counts(self, group_id: str, since: datetime) -> dict[str, int]:
        """Entities and relationships the group's conversations created at or after ``since`` (system time; for
        the burst and daily rate limits)."""
        t = self._ts(since)
        with self._read() as c:
            ents = self._one(c, "SELECT COUNT(*) FROM entities WHERE group_id = ? AND conversation_id IS NOT NULL "
                                "AND created_at >= ?", (group_id, t))[0]
            facts = self._one(c, "SELECT COUNT(*) FROM facts WHERE group_id = ? AND conversation_id IS NOT NULL "
                                 "AND created_at >= ?", (group_id, t))[0]
        return {"entities": ents, "relationships": facts}

    def speakers(self, group_id: str) -> list[Entity]:
        """Entities that stand for a speaking user of the group."""
        return [self._entity(r) for r in self._fetch(
            f"SELECT {ENT_COLS} FROM entities WHERE group_id = ? AND deleted_at IS NULL AND {self.SPEAKER_SQL} "
            "ORDER BY seq", (group_id,))]

    def count(self, group_id: str) -> dict[str, int]:
        with self._read() as c:
            return {table: self._one(c, f"SELECT COUNT(*) FROM {table} WHERE group_id = ?", (group_id,))[0]
                    for table in ("episodes", "entities", "facts", "mentions", "duplicates")}

    def groups(self) -> list[str]:
        return [r[0] for r in self._fetch(
            "SELECT group_id FROM episodes UNION SELECT group_id FROM entities ORDER BY 1")]

    # ---- export (loregraph.transfer): every record of a group, page by page ------------------------------
    def _block_embeddings(self, group_id: str, ids: Sequence[str]) -> dict[str, list[float]]:
        """Stored block vectors by id (the backend's encoding)."""
        raise NotImplementedError

    def export_records(self, record_kind: ExportKind, group_id: str, after: Sequence[str] | None, limit: int, *,
                       embeddings: bool = True, document_id: str | None = None) -> list[Any]:
        """One page of the group's records of a kind in key order (see ``Store.export_records``)."""
        table, cols, conv = self._export_source(record_kind)
        keys = EXPORT_KEYS[record_kind]
        where, params = ["group_id = ?"], [group_id]
        if document_id is not None:
            if record_kind != "chunk":
                raise StoreError("document_id: only chunks are listed by document")
            where.append("document_id = ?")
            params.append(document_id)
        if after is not None:
            if len(after) != len(keys):
                raise StoreError(f"after: a {record_kind} key has {len(keys)} parts ({', '.join(keys)})")
            where.append(f"({', '.join(keys)}) > ({', '.join('?' * len(keys))})" if len(keys) > 1
                         else f"{keys[0]} > ?")
            params += list(after)
        rows = self._fetch(f"SELECT {cols} FROM {table} WHERE {' AND '.join(where)} "
                           f"ORDER BY {', '.join(keys)} LIMIT ?", (*params, limit))
        records = [conv(r) for r in rows]
        if record_kind == "community" and records:
            members: dict[str, list[str]] = {}
            for cid, eid in self._pairs("SELECT community_id, entity_id FROM community_members WHERE group_id = ? "
                                        "AND {cond} ORDER BY community_id, entity_id", group_id, "community_id",
                                        [r.id for r in records]):
                members.setdefault(cid, []).append(eid)
            for rec in records:
                rec.member_ids = members.get(rec.id, [])
        if embeddings and records and self._dim is not None and record_kind not in ("mention", "duplicate",
                                                                                    "collection", "document"):
            ids = [r.id for r in records]
            if record_kind == "block":
                vecs: dict[str, Any] = self._block_embeddings(group_id, ids)
            elif record_kind in TABLE:
                vecs = dict(self.embeddings(record_kind, group_id, ids))  # type: ignore[attr-defined]
            else:
                vecs = {}
            for rec in records:
                if rec.id in vecs:  # float32's shortest text: the same on every backend, and it reads back exactly
                    rec.embedding = [float(str(x)) for x in np.asarray(vecs[rec.id], dtype=np.float32)]
        return records

    def _export_source(self, kind: ExportKind) -> tuple[str, str, Callable[[Sequence[Any]], Any]]:
        """(table, columns, row -> record) of an export kind."""
        def mention(r: Sequence[Any]) -> Mention:
            return Mention.model_construct(group_id=r[0], episode_id=r[1], entity_id=r[2],
                                           created_at=self._required_ts(r[3]))

        def duplicate(r: Sequence[Any]) -> DuplicateLink:
            return DuplicateLink.model_construct(group_id=r[0], entity_id=r[1], canonical_id=r[2],
                                                 created_at=self._required_ts(r[3]))

        sources: dict[str, tuple[str, str, Callable[[Sequence[Any]], Any]]] = {
            "episode": ("episodes", EP_COLS, self._episode),
            "entity": ("entities", ENT_COLS, self._entity),
            "block": ("blocks", BLOCK_COLS, self._block),
            "fact": ("facts", FACT_COLS, self._fact),
            "mention": ("mentions", "group_id, episode_id, entity_id, created_at", mention),
            "duplicate": ("duplicates", "group_id, entity_id, canonical_id, created_at", duplicate),
            "community": ("communities", self.COMMUNITY_COLS, self._community),
            "collection": ("collections", self.COLL_COLS, self._collection),
            "document": ("documents", self.DOC_COLS, self._document),
            "chunk": ("chunks", self.CHUNK_COLS, self._chunk),
        }
        if kind not in sources:
            raise StoreError(f"record_kind: {kind!r} is not one of {', '.join(sources)}")
        return sources[kind]


__all__ = ["BLOCK_COLS", "ENT_COLS", "EP_COLS", "FACT_COLS", "TABLE", "SQLStore", "chunks"]
