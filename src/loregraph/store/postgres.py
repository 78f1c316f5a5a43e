"""PostgreSQL store: the Store protocol on PostgreSQL 15 + pgvector, shared by many processes.

Same logical schema as the SQLite store; what both share lives in ``loregraph.store.sql``. Full text keeps the
group-prefixed, stemmed terms of ``loregraph.store.text`` in a tsvector and one posting per (record, term)
(``fts_postings``: term frequency, record length, insertion order); a query's BM25 is summed over its terms'
posting lists with the group's statistics (``fts_stats``, ``fts_terms``), all three kept by the store in its write
transactions; the SQLite store keeps the same postings and per-group statistics, so both rank alike (FTS5's
``bm25()`` formula with each group's own N and mean length; ties in insertion order). Vector search is
exact kNN with pgvector's cosine distance within each group; past ``VECTORS_IN_MEMORY_MIN_ROWS`` rows of a kind a
group's vectors are searched in this process's memory exactly as the SQLite store searches its large groups
(``loregraph.store.vectors``: binary codes pick candidates, float16 rescoring ranks them), so both backends return
the same neighbours; each write sets new tokens in the group's ``vector_generations`` row in its transaction, and a
search reads what is new since the vectors it holds (the rows inserted after them; everything, after an update or a
delete of vectors already there). With that switched off (``LOREGRAPH_PG_VECTORS_IN_MEMORY=off``) a large
group is searched through its own HNSW index. Traversal is a recursive CTE.

Connections come from a psycopg pool (``pool_size``, default 4, or ``LOREGRAPH_PG_POOL_SIZE``): any number of
threads may use one store at once. A connection is checked before each use, so a store survives a server
restart or a dropped connection; a call that was running when its connection died fails with its error.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
import secrets
import select
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import numpy as np

from loregraph.errors import StoreError, lock_timeout_error
from loregraph.graph.types import Block, Episode, GraphDelta
from loregraph.jobs.postgres import PostgresJobQueue
from loregraph.schema import Schema
from loregraph.store.base import Hit, SearchKind, StoreCapabilities, TimeFilter
from loregraph.store.sql import BLOCK_COLS, EP_COLS, TABLE, ExtraColumn, SQLStore
from loregraph.store.text import GROUP_TOKEN_LEN, group_token, query_terms, terms
from loregraph.store.vectors import GroupVectors, first_held

log = logging.getLogger("loregraph.store")

_MAX_POS = 16383  # tsvector positions stop here
_K1, _B = 1.2, 0.75  # FTS5's bm25() defaults
DEFAULT_POOL_SIZE = 4
HNSW_EF_SEARCH = 100
GROUP_WRITE_LOCK_CLASS = 0x4C57  # first key of the per-group write locks ("LW"); the job queue uses "LG"


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


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


def _vec_text(embedding: Sequence[float] | np.ndarray) -> str:
    return "[" + ",".join(repr(float(x)) for x in np.asarray(embedding, dtype=np.float32).tolist()) + "]"


@lru_cache(maxsize=512)
def _pg_params(sql: str) -> str:
    return sql.replace("?", "%s")


def _configure(conn: Any) -> None:
    conn.execute("SET TIME ZONE 'UTC'")
    # partial HNSW indexes (large groups): ef_search 100 measured recall@10 0.99-1.00 at 1-2 ms for 10k-30k
    # rows; iterative scans keep filling the k results when the time filter drops candidates
    conn.execute(f"SET hnsw.ef_search = {HNSW_EF_SEARCH}")
    conn.execute("SET hnsw.iterative_scan = relaxed_order")
    # Citus loaded: a SET LOCAL reaches the workers that run the transaction's shard queries (vector search sets
    # hnsw.ef_search that way: a session SET on the coordinator does not reach them)
    if conn.execute("SELECT current_setting('citus.propagate_set_commands', true)").fetchone()[0] is not None:
        conn.execute("SET citus.propagate_set_commands = 'local'")


def _check_connection(conn: Any) -> None:
    """The pool's check of a connection before each use, without a round trip when nothing happened to it: a
    connection the server ended (terminated, restarted, shut down) has something to read (the server's notice, or
    the end of the stream) while idle; only then is it asked for real (and dropped by the pool if dead). A search
    takes a dozen connections from the pool: a dozen round trips saved."""
    from psycopg_pool import ConnectionPool

    if conn.closed or select.select([conn.fileno()], [], [], 0)[0]:
        ConnectionPool.check_connection(conn)


CITUS_ENV = "LOREGRAPH_CITUS"
VECTORS_IN_MEMORY_ENV = "LOREGRAPH_PG_VECTORS_IN_MEMORY"
COORDINATOR_LOCAL_TABLES = ("jobs",)
"""Tables with a group_id kept on the Citus coordinator instead of distributed: the job queue (its claims scan
every group's pending jobs in acceptance order, which on a distributed table is a multi-shard ``FOR UPDATE``;
Citus refuses that, and the queue's advisory locks are valid on the coordinator it runs on)."""


BLOCK_TABLE = "blocks"
_FTS_KIND = {table: kind for kind, table in TABLE.items()}  # tables with BM25 statistics (the trigger's argument)


def _index_name(table: str, group_id: str) -> str:
    return f"{table}_hnsw_{hashlib.sha1(group_id.encode()).hexdigest()[:20]}"


class PostgresStore(SQLStore):
    """The server store. Thread-safe: each call takes a pooled connection (or the calling thread's open
    transaction)."""

    MIGRATIONS_PACKAGE = "loregraph.store.migrations.postgres"
    MIGRATIONS_DDL = ("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                      "name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)")
    CHUNK = 100_000  # ids go as one array parameter
    SPEAKER_SQL = "attributes->'is_speaker' IN ('true'::jsonb, '1'::jsonb)"
    JSON_MERGE_SQL = "attributes || ?::jsonb"
    # Vectors: exact kNN within a group up to this many rows of a kind, a partial HNSW index of the group beyond
    # (measured: exact p50 4.8 ms at 3k rows, 20 ms at 10k, 44 ms at 30k; the index 1.0-1.7 ms at 10k-30k)
    HNSW_MIN_ROWS = 3000
    # Vectors of a (kind, group) past this many rows are searched in memory (see the module docstring); ``None``:
    # never (exact kNN, then HNSW, on the server). SQLite's large-group threshold (SQLiteStore.EXACT_KNN_MAX).
    VECTORS_IN_MEMORY_MIN_ROWS: int | None = 500
    VECTOR_CACHE_GROUPS = 8  # (kind, group) entries held in memory; the least recently used go
    # kinds whose vector search has no condition beyond the group: their in-memory vectors carry the record ids
    IDS_IN_MEMORY = frozenset({"episode", "community", "chunk"})
    INDEX_BUILD_MEMORY = "512MB"  # maintenance_work_mem while building an index (a 100k-row graph is ~200 MB)

    @classmethod
    def from_url(cls, url: str) -> PostgresStore:
        return cls(url)

    def open_queue(self, *, max_attempts: int = 3) -> PostgresJobQueue:
        """The job queue in this database, shared by any number of API and worker processes."""
        return PostgresJobQueue(self.url, max_attempts=max_attempts)

    def __init__(self, url: str, *, pool_size: int | None = None, connect_timeout_s: float = 10.0,
                 citus: bool | None = None):
        from psycopg_pool import ConnectionPool, PoolTimeout

        self.url = url
        self.label = _redact(url)
        if pool_size is None:
            env = os.environ.get("LOREGRAPH_PG_POOL_SIZE", str(DEFAULT_POOL_SIZE))
            if not env.strip().isdigit():
                raise StoreError(f"LOREGRAPH_PG_POOL_SIZE must be a whole number of connections, got {env!r}")
            pool_size = int(env)
        if pool_size < 1:
            raise StoreError(f"pool_size must be at least 1, got {pool_size}")
        size = pool_size
        self.pool = ConnectionPool(url, min_size=1, max_size=size, kwargs={"autocommit": True},
                                   configure=_configure, check=_check_connection, open=False,
                                   name="loregraph-store", timeout=30.0)
        try:
            self.pool.open(wait=True, timeout=connect_timeout_s)
        except PoolTimeout as exc:
            self.pool.close()
            raise StoreError(f"cannot connect to PostgreSQL at {self.label} within {connect_timeout_s:g} s") from exc
        self.capabilities = StoreCapabilities(concurrent_readers=size, shared_queue=True)
        self._local = threading.local()
        self._indexed: set[tuple[str, str]] = set()
        mode = os.environ.get(VECTORS_IN_MEMORY_ENV, "on").strip().lower()
        if mode not in ("on", "off"):
            raise StoreError(f"{VECTORS_IN_MEMORY_ENV} must be on or off, got {mode!r}")
        if mode == "off":
            self.VECTORS_IN_MEMORY_MIN_ROWS = None
        self._vector_cache: dict[tuple[str, str], tuple[GroupVectors, int | None]] = {}  # with their base token
        self._vector_lock = threading.RLock()  # the cache, and GroupVectors.nearest (it keeps the last scores)
        try:
            self.citus = self._detect_citus(citus)
            self._init_common()
        except BaseException:
            self.pool.close()
            raise

    # ---- dialect --------------------------------------------------------------------------------
    def _q(self, sql: str) -> str:
        return _pg_params(sql)

    def _ts(self, value: datetime | None) -> datetime | None:
        return _utc(value)

    def _from_ts(self, value: Any) -> datetime | None:
        return _utc(value)

    def _json(self, value: Any) -> Any:
        from psycopg.types.json import Jsonb

        return Jsonb(value)

    def _from_json(self, value: Any) -> Any:
        return value

    def _in(self, col: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{col} = ANY(?)", [list(values)]

    def _executemany(self, c: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            with c.cursor() as cur:
                cur.executemany(self._q(sql), rows)

    def _run_script(self, c: Any, sql: str) -> None:
        c.execute(sql)  # a whole file: no parameters, several statements

    def _group_write_lock(self, c: Any, group_id: str) -> None:
        """The group's write lock, and its BM25 statistics (``fts_stats``, ``fts_terms``) kept by this store for
        the transaction: ``_upsert_many`` and ``_delete_rows`` change them once per batch; the per-row trigger of
        the migrations is switched off (``loregraph.fts_stats_off``). Measured on Citus: a trigger's statements
        are distributed queries planned on the worker, once per row — 5 ms a row; ``loregraph bench writes``)."""
        c.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (GROUP_WRITE_LOCK_CLASS, group_id))
        c.execute("SET LOCAL loregraph.fts_stats_off = 'on'")

    def _migration_lock(self, c: Any) -> None:
        # one migrating process at a time; the others wait, then find the work done
        c.execute("SELECT pg_advisory_xact_lock(hashtext('loregraph.migrate'))")

    def _lock_embedder(self, c: Any) -> None:
        c.execute("SELECT pg_advisory_xact_lock(hashtext('loregraph.embedder'))")

    def _create_vector_storage(self, c: Any, dim: int) -> None:
        for table in TABLE.values():
            c.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS embedding vector({int(dim)})")

    def _ensure_vector_storage(self, dim: int) -> None:
        with self._read() as c:
            have = {r[0] for r in c.execute(
                "SELECT table_name FROM information_schema.columns WHERE column_name = 'embedding' "
                "AND table_schema = current_schema() AND table_name = ANY(%s)", (list(TABLE.values()),))}
        if set(TABLE.values()) - have:
            with self._tx() as c:
                self._lock_embedder(c)
                self._create_vector_storage(c, dim)

    @contextmanager
    def _read(self) -> Iterator[Any]:
        current = getattr(self._local, "conn", None)
        if current is not None:  # inside this thread's transaction: read what it wrote
            yield current
            return
        with self.pool.connection() as c:
            self._local.conn = c
            try:
                yield c
            finally:
                self._local.conn = None

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        """A transaction (a savepoint inside this thread's open one). A failed COMMIT (a deferred constraint, the
        server going away) leaves nothing written — PostgreSQL rolls the transaction back — and is raised as a
        ``StoreError``."""
        import psycopg

        committing = False
        if getattr(self._local, "conn", None) is None:  # a new transaction: forget what the last one read
            self._local.fts_docs, self._local.fts_before = {}, {}
            self._local.vectors_touched = {}
        try:
            with self._read() as c:
                self._flush_fts_stats(c)  # the enclosing block's, before a savepoint that may roll back
                with c.transaction():
                    try:
                        yield c
                        self._flush_fts_stats(c)
                    finally:
                        self._local.fts_pending = {}
                        self._local.vectors_touched = {}
                    committing = True
        except psycopg.Error as exc:
            busy = lock_timeout_error(exc)  # lock_timeout, a deadlock: nothing written, the call can be retried
            if busy is not None:
                raise busy from exc
            if not committing:
                raise
            log.error("commit failed on %s: %s", self.label, type(exc).__name__)
            raise StoreError(f"the transaction could not be committed ({type(exc).__name__}: {exc}); nothing was "
                             "written") from exc

    # ---- Citus -----------------------------------------------------------------------------------
    def _detect_citus(self, wanted: bool | None) -> bool:
        """Lay the schema out for Citus when the server has the extension (``LOREGRAPH_CITUS=auto``, the
        default), always (``on``: an error without it) or never (``off``)."""
        if wanted is None:
            mode = os.environ.get(CITUS_ENV, "auto").strip().lower()
            if mode not in ("auto", "on", "off"):
                raise StoreError(f"{CITUS_ENV} must be auto, on or off, got {mode!r}")
            wanted = None if mode == "auto" else mode == "on"
        with self._read() as c:
            present = c.execute("SELECT 1 FROM pg_extension WHERE extname = 'citus'").fetchone() is not None
        if wanted and not present:
            raise StoreError(f"{CITUS_ENV}=on but the citus extension is not installed in {self.label}")
        return present if wanted is None else wanted

    def _migrate(self) -> None:
        super()._migrate()
        if self.citus:
            self._citus_layout()

    def _citus_layout(self) -> None:
        """Distribute what the migrations created, derived from the schema itself (so a table added by a later
        migration is covered): every table with a ``group_id`` column is distributed by it, all in one
        co-location group (a group's rows of every table live on one worker, its queries are single-shard);
        tables without one (meta, schema_migrations) become reference tables; ``COORDINATOR_LOCAL_TABLES`` stay
        on the coordinator. Triggers (the BM25 statistics) run on the shards and touch co-located shards only."""
        with self.pool.connection() as c:
            c.execute("SELECT pg_advisory_lock(hashtext('loregraph.migrate'))")
            try:
                c.execute("SET citus.enable_unsafe_triggers = on")
                tables = [r[0] for r in c.execute(
                    "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition")]
                placed = {r[0]: r[1] for r in c.execute(
                    "SELECT c.relname, p.partmethod FROM pg_dist_partition p "
                    "JOIN pg_class c ON c.oid = p.logicalrelid")}
                grouped = {r[0] for r in c.execute(
                    "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() "
                    "AND column_name = 'group_id'")}
                anchor = next((t for t, method in sorted(placed.items()) if method == "h"), None)
                # the statistics tables first: the triggers of the record tables write to them
                for table in sorted(tables, key=lambda t: (not t.startswith("fts_"), t)):
                    if table in placed or table in COORDINATOR_LOCAL_TABLES:
                        continue
                    if table in grouped:
                        c.execute("SELECT create_distributed_table(%s, 'group_id', colocate_with => %s)",
                                  (table, anchor or "default"))
                        anchor = anchor or table
                    else:
                        c.execute("SELECT create_reference_table(%s)", (table,))
                    log.info("citus: %s is %s", table, "distributed by group_id" if table in grouped else
                             "a reference table")
            finally:
                c.execute("SELECT pg_advisory_unlock(hashtext('loregraph.migrate'))")

    @contextmanager
    def _vector_settings(self, c: Any) -> Iterator[None]:
        """On Citus, the HNSW search settings for the shard queries of this block (``SET LOCAL`` in a transaction,
        propagated to the workers); elsewhere the session's settings already hold."""
        if not self.citus:
            yield
            return
        with c.transaction():
            c.execute(f"SET LOCAL hnsw.ef_search = {HNSW_EF_SEARCH}")
            c.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            yield

    # ---- lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        with suppress(Exception):
            self.pool.close()

    def checkpoint(self) -> None:
        """After a bulk import (the counterpart of SQLite's WAL checkpoint): build the vector indexes of groups
        that outgrew exact kNN, vacuum the BM25 posting lists (their index-only scans need the visibility map),
        then refresh planner statistics."""
        with self._read() as c:
            rows = c.execute("SELECT kind, group_id FROM fts_stats WHERE docs >= %s", (self.HNSW_MIN_ROWS,)).fetchall()
            blocks = c.execute("SELECT 'block', group_id FROM blocks WHERE embedding IS NOT NULL GROUP BY group_id "
                               "HAVING COUNT(*) >= %s", (self.HNSW_MIN_ROWS,)).fetchall()
        self._ensure_vector_indexes([(k, g) for k, g in rows if k in TABLE] + [(k, g) for k, g in blocks])
        outside = getattr(self._local, "conn", None) is None  # VACUUM cannot run inside a transaction
        with self._read() as c:
            if outside:
                c.execute("VACUUM fts_postings")
            c.execute("ANALYZE")

    def apply(self, delta: GraphDelta, schema: Schema) -> None:
        super().apply(delta, schema)
        # committed: from here on nothing may fail the call. Inside a caller's open transaction the index waits
        # (CREATE INDEX CONCURRENTLY cannot run there) for the next write or checkpoint()
        if not self.build_vector_indexes or self._dim is None or getattr(self._local, "conn", None) is not None:
            return
        try:
            self._index_if_large(delta)
        except Exception as exc:  # searching stays exact (and correct) until a later write builds it
            log.warning("could not build a vector index for group %s: %s", delta.group_id, type(exc).__name__)

    def _index_if_large(self, delta: GraphDelta) -> None:
        kinds = [k for k, recs in (("episode", delta.episodes), ("entity", delta.entities), ("fact", delta.facts))
                 if recs and (k, delta.group_id) not in self._indexed]
        blocks = bool(delta.blocks) and ("block", delta.group_id) not in self._indexed
        if not kinds and not blocks:
            return
        sizes = self._local.__dict__.get("fts_docs", {})
        big: list[Any] = []
        if all((k, delta.group_id) in sizes for k in kinds):  # known from this write's statistics
            big = [(k,) for k in kinds if sizes[(k, delta.group_id)] >= self.HNSW_MIN_ROWS]
            kinds = []
        if not kinds and not blocks:
            self._ensure_vector_indexes([(k, delta.group_id) for (k,) in big])
            return
        with self._read() as c:
            if kinds:
                big = c.execute("SELECT kind FROM fts_stats WHERE group_id = %s AND kind = ANY(%s) AND docs >= %s",
                                (delta.group_id, kinds, self.HNSW_MIN_ROWS)).fetchall()
            if blocks and c.execute("SELECT COUNT(*) FROM (SELECT 1 FROM blocks WHERE group_id = %s AND embedding "
                                    "IS NOT NULL LIMIT %s) b", (delta.group_id, self.HNSW_MIN_ROWS)
                                    ).fetchone()[0] >= self.HNSW_MIN_ROWS:
                big.append(("block",))
        self._ensure_vector_indexes([(k, delta.group_id) for (k,) in big])

    def _ensure_vector_indexes(self, wanted: Sequence[tuple[str, str]]) -> None:
        """Give each (kind, group) a partial HNSW index unless it has one. Built CONCURRENTLY (writes to the
        table go on meanwhile) on an autocommit connection, after the write that crossed the threshold."""
        from psycopg import sql as psql

        if self._dim is None:
            return
        if self.VECTORS_IN_MEMORY_MIN_ROWS is not None and self.VECTORS_IN_MEMORY_MIN_ROWS < self.HNSW_MIN_ROWS:
            # searched in memory long before an index would pay (and an index costs every insert): only blocks,
            # always searched on the server, get one
            wanted = [w for w in wanted if w[0] == "block"]
        todo = [w for w in dict.fromkeys(wanted) if w not in self._indexed]
        if not todo:
            return
        with self._read() as c:
            done = {(k, g) for k, g in c.execute(
                "SELECT kind, group_id FROM vector_indexes WHERE group_id = ANY(%s)", ([g for _, g in todo],))}
            self._indexed |= done
            for kind, group_id in todo:
                if (kind, group_id) in done:
                    continue
                table = BLOCK_TABLE if kind == "block" else TABLE[kind]
                name = _index_name(table, group_id)
                # blocks' column is an untyped vector (migration 0005): the index is on its cast to the dimension
                column = psql.SQL(f"(embedding::vector({int(self._dim)}))" if kind == "block" else "embedding")
                # one builder per index across processes; a loser leaves it to the winner
                key = int(hashlib.sha1(name.encode()).hexdigest()[:15], 16)
                if not c.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
                    continue
                try:
                    if c.execute("SELECT 1 FROM vector_indexes WHERE group_id = %s AND kind = %s",
                                 (group_id, kind)).fetchone() is not None:
                        self._indexed.add((kind, group_id))
                        continue
                    # an earlier build that died half way leaves an invalid index behind
                    c.execute(psql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(psql.Identifier(name)))
                    t0 = time.perf_counter()
                    c.execute(psql.SQL("SET maintenance_work_mem = {}").format(psql.Literal(self.INDEX_BUILD_MEMORY)))
                    try:
                        c.execute(psql.SQL(
                            "CREATE INDEX CONCURRENTLY {} ON {} USING hnsw ({} vector_cosine_ops) "
                            "WITH (m = 16, ef_construction = 64) WHERE group_id = {}").format(
                                psql.Identifier(name), psql.Identifier(table), column, psql.Literal(group_id)))
                    finally:
                        c.execute("RESET maintenance_work_mem")
                    rows = c.execute(f"SELECT COUNT(*) FROM {table} WHERE group_id = %s", (group_id,)).fetchone()[0]
                    c.execute("INSERT INTO vector_indexes VALUES (%s, %s, %s, %s, now()) ON CONFLICT DO NOTHING",
                              (kind, group_id, name, rows))
                    self._indexed.add((kind, group_id))
                    log.info("built the HNSW index of a group's %s vectors: rows=%d in %.1f s", kind, rows,
                             time.perf_counter() - t0)
                finally:
                    c.execute("SELECT pg_advisory_unlock(%s)", (key,))

    # ---- index columns --------------------------------------------------------------------------
    def _index_columns(self, kind: SearchKind, group_id: str, body: str,
                       embedding: list[float] | None) -> list[ExtraColumn]:
        fts, n = _tsvector(group_id, body)
        cols: list[ExtraColumn] = [("fts", "?::tsvector", fts, None), ("fts_len", "?", n, None)]
        if self._dim is None:
            if embedding is not None:
                raise StoreError("no embedding model recorded for this database; call ensure_embedder first")
            return cols
        vec = None
        if embedding is not None:
            if len(embedding) != int(self._dim):
                raise StoreError(f"{kind} embedding has dimension {len(embedding)}, database expects {self._dim}")
            vec = _vec_text(embedding)
        table = TABLE[kind]
        cols.append(("embedding", "?::vector", vec, f"embedding=COALESCE(excluded.embedding, {table}.embedding)"))
        return cols

    def _upsert_many(self, c: Any, table: str, records: Sequence[tuple[dict[str, Any], Sequence[ExtraColumn]]],
                     update: Sequence[str]) -> dict[str, int]:
        """The batched upsert, with the BM25 statistics changed by the net difference between the rows' terms
        before and after it (see ``_group_write_lock``)."""
        kind = _FTS_KIND.get(table)
        if kind is None or not records:
            return super()._upsert_many(c, table, records, update)
        gid = records[0][0]["group_id"]
        ids = list(dict.fromkeys(v["id"] for v, _ in records))
        read = self._local.__dict__.get("fts_before", {}).pop(kind, None)
        if read is not None and read[0] == gid and read[1] == set(ids):  # read with the others by _before_upserts
            before = read[2]
        else:
            before = {r[0]: (r[1], r[2], r[3]) for r in c.execute(
                f"SELECT id, fts_len, tsvector_to_array(fts), fts::text FROM {table} WHERE group_id = %s "
                "AND id = ANY(%s) AND fts IS NOT NULL", (gid, ids))}
        rows = self._upsert_rows(c, table, records, update, "id, seq, fts_len, tsvector_to_array(fts), fts::text")
        embedded = {v["id"] for v, cols in records for name, _, value, _ in cols if name == "embedding"
                    and value is not None}
        if embedded:  # rows that were there already: an update (which may change their vectors)
            self._touch_vectors(kind, gid, rewrite=bool(embedded & before.keys()))
        after = {r[0]: (r[2], r[3], r[4]) for r in rows if r[3] is not None}  # an id written twice: its last write
        self._change_fts_stats(c, kind, gid, [b[:2] for b in before.values()], [a[:2] for a in after.values()])
        # the postings of rows whose terms changed: the old ones out, the new ones read back from the rows
        self._drop_postings(c, kind, gid, [i for i, b in before.items() if after.get(i) != b])
        changed = [i for i, a in after.items() if before.get(i) != a]
        if changed:
            c.execute(f"INSERT INTO fts_postings (group_id, kind, term, id, tf, len, seq) SELECT x.group_id, %s, "
                      f"u.lexeme, x.id, cardinality(u.positions), x.fts_len, x.seq FROM {table} x CROSS JOIN LATERAL "
                      "unnest(x.fts) u WHERE x.group_id = %s AND x.id = ANY(%s)", (kind, gid, changed))
        return {r[0]: r[1] for r in rows}

    @staticmethod
    def _drop_postings(c: Any, kind: str, group_id: str, ids: Sequence[str]) -> None:
        if ids:
            c.execute("DELETE FROM fts_postings WHERE group_id = %s AND kind = %s AND id = ANY(%s)",
                      (group_id, kind, list(ids)))

    def _before_upserts(self, c: Any, delta: GraphDelta) -> None:
        """The terms of the delta's episodes, entities and facts already stored, one statement for the three kinds
        (a UNION ALL of co-located tables for one group: one shard on Citus), for ``_upsert_many``."""
        parts = [(k, TABLE[k], list(dict.fromkeys(r.id for r in recs))) for k, recs in
                 (("episode", delta.episodes), ("entity", delta.entities), ("fact", delta.facts)) if recs]
        if len(parts) < 2:
            return  # one kind: _upsert_many reads it itself
        found: dict[str, dict[str, tuple[int | None, list[str], str]]] = {k: {} for k, _, _ in parts}
        params: list[Any] = []
        for _, _, ids in parts:
            params += [delta.group_id, ids]
        for kind, rid, n, lex, text in c.execute(" UNION ALL ".join(
                f"SELECT '{k}', id, fts_len, tsvector_to_array(fts), fts::text FROM {t} WHERE group_id = %s "
                "AND id = ANY(%s) AND fts IS NOT NULL" for k, t, _ in parts), params).fetchall():
            found[kind][rid] = (n, lex, text)
        self._local.fts_before = {k: (delta.group_id, set(ids), found[k]) for k, _, ids in parts}

    def _change_fts_stats(self, c: Any, kind: str, group_id: str, removed: Sequence[tuple[int | None, list[str]]],
                          added: Sequence[tuple[int | None, list[str]]]) -> None:
        """Take ``removed`` rows' terms (length, lexemes) out of the group's BM25 statistics and put ``added``
        ones in. Collected, and written by ``_flush_fts_stats`` when the write block ends: two statements for all
        kinds of a transaction."""
        pending = self._local.__dict__.setdefault("fts_pending", {})
        docs_tokens_df = pending.setdefault((kind, group_id), [0, 0, {}])
        df = docs_tokens_df[2]
        for sign, side in ((-1, removed), (1, added)):
            docs_tokens_df[0] += sign * len(side)
            for n, lexemes in side:
                docs_tokens_df[1] += sign * (n or 0)
                for term in lexemes:
                    df[term] = df.get(term, 0) + sign

    def _flush_fts_stats(self, c: Any) -> None:
        touched = self._local.__dict__.get("vectors_touched")
        if touched:
            # random tokens, not counters: a group deleted and written again never repeats an older token that a
            # process may still hold with its vectors in memory. base changes only with a rewrite (and a new row).
            for rewrite in (False, True):
                self._insert_rows(c, "INSERT INTO vector_generations AS v (kind, group_id, gen, base)",
                                  [(k, g, secrets.randbits(62), secrets.randbits(62))
                                   for (k, g), r in sorted(touched.items()) if r == rewrite],
                                  "ON CONFLICT (kind, group_id) DO UPDATE SET gen = excluded.gen" +
                                  (", base = excluded.base" if rewrite else ""))
            self._local.vectors_touched = {}
        pending = self._local.__dict__.get("fts_pending")
        if not pending:
            return
        self._local.fts_pending = {}
        sizes = self._insert_rows(c, "INSERT INTO fts_stats AS s (kind, group_id, docs, tokens)",
                                  [(kind, gid, d, t) for (kind, gid), (d, t, _) in sorted(pending.items()) if d or t],
                                  "ON CONFLICT (kind, group_id) DO UPDATE SET docs = s.docs + excluded.docs, "
                                  "tokens = s.tokens + excluded.tokens RETURNING kind, group_id, docs")
        # the groups' sizes after this write: apply() decides on vector indexes without asking again
        self._local.__dict__.setdefault("fts_docs", {}).update({(k, g): d for k, g, d in sizes})
        self._insert_rows(c, "INSERT INTO fts_terms AS t (group_id, kind, term, df)",
                          [(gid, kind, term, n) for (kind, gid), (_, _, df) in sorted(pending.items())
                           for term, n in sorted(df.items()) if n],
                          "ON CONFLICT (group_id, kind, term) DO UPDATE SET df = t.df + excluded.df")

    BLOCK_VEC_MARK = "?::vector"

    def _block_vec(self, embedding: list[float] | None) -> str | None:
        if embedding is None:
            return None
        if self._dim is None or len(embedding) != int(self._dim):
            raise StoreError(f"block embedding has dimension {len(embedding)}, database expects {self._dim}")
        return _vec_text(embedding)

    def _block_embeddings(self, group_id: str, ids: Sequence[str]) -> dict[str, list[float]]:
        return {rid: [float(x) for x in v] for rid, v in self._fetch(
            "SELECT id, embedding::real[] FROM blocks WHERE group_id = ? AND id = ANY(?) AND embedding IS NOT NULL",
            (group_id, list(ids)))}

    def block_vector(self, group_id: str, embedding: Any, limit: int,
                     user_id: str | None = None) -> list[tuple[Block, float]]:
        """Cosine kNN over the group's block vectors (only ``user_id``'s own and SHARED ones when given): exact, or
        through the group's partial HNSW index (on the column cast to the model's dimension) once the group has
        ``HNSW_MIN_ROWS`` blocks; the user filter runs inside the index scan (iterative scans keep filling the
        results). Never a prepared plan: only a plan made for the group's value can use its partial index."""
        if self._dim is None or limit <= 0:
            return []
        dim = int(self._dim)
        q = _vec_text(embedding)
        with self._read() as c, c.transaction():
            # the planner guesses the user filter keeps 1% of the group and would rather sort a scan of all of it
            # than walk the group's HNSW index (measured: 49 ms vs 7 ms at 12.5k blocks): no sort when there is
            # an index to walk (a small group without one is still sorted: there is no other plan)
            c.execute("SET LOCAL enable_sort = off")
            rows = c.execute(self._q(
                f"SELECT {BLOCK_COLS}, embedding::vector({dim}) <=> ?::vector({dim}) AS d FROM blocks "
                "WHERE group_id = ? AND embedding IS NOT NULL AND (?::text IS NULL OR attributes->>'user_id' = ? "
                f"OR attributes->>'visibility' = 'SHARED') ORDER BY embedding::vector({dim}) <=> "
                f"?::vector({dim}) LIMIT ?"), (q, group_id, user_id, user_id, q, limit), prepare=False).fetchall()
            c.execute("SET LOCAL enable_sort = on")  # inside a caller's transaction SET LOCAL would outlive this read
        hits = [(self._block(r), 1.0 - float(r[-1])) for r in rows]
        hits.sort(key=lambda h: -h[1])  # an iterative index scan returns them in relaxed order
        return hits

    def _delete_rows(self, c: Any, kind: SearchKind, group_id: str, ids: Sequence[str]) -> None:
        gone = self._all(c, f"DELETE FROM {TABLE[kind]} WHERE group_id = ? AND id = ANY(?) "
                            "RETURNING id, fts_len, tsvector_to_array(fts)", (group_id, list(ids)))
        self._change_fts_stats(c, kind, group_id, [(n, lex) for _, n, lex in gone if lex is not None], [])
        self._drop_postings(c, kind, group_id, [i for i, _, lex in gone if lex is not None])
        if gone:
            self._touch_vectors(kind, group_id, rewrite=True)

    def _touch_vectors(self, kind: str, group_id: str, rewrite: bool) -> None:
        """This transaction changed the group's vectors of ``kind``: new tokens when it ends (``rewrite``: it
        changed or deleted vectors that were there, not only inserted new ones)."""
        touched = self._local.__dict__.setdefault("vectors_touched", {})
        touched[(kind, group_id)] = touched.get((kind, group_id), False) or rewrite

    def delete_group(self, group_id: str) -> dict[str, int]:
        from psycopg import sql as psql

        counts: dict[str, int] = {}
        with self._tx() as c:
            self._group_write_lock(c, group_id)
            # the group's BM25 statistics go wholesale below: no per-row trigger work (migration 0002)
            c.execute("SET LOCAL loregraph.fts_stats_off = 'on'")
            for table in ("episodes", "entities", "facts", "chunks"):
                counts[table] = c.execute(f"DELETE FROM {table} WHERE group_id = %s", (group_id,)).rowcount
            for (name,) in c.execute("SELECT name FROM vector_indexes WHERE group_id = %s", (group_id,)).fetchall():
                c.execute(psql.SQL("DROP INDEX IF EXISTS {}").format(psql.Identifier(name)))
            for table in (*self.GROUP_SIDE_TABLES, "fts_stats", "fts_postings", "vector_generations",
                          "vector_indexes"):
                c.execute(f"DELETE FROM {table} WHERE group_id = %s", (group_id,))
            self._indexed = {k for k in self._indexed if k[1] != group_id}
            c.execute("DELETE FROM fts_terms WHERE group_id = %s", (group_id,))
        with self._vector_lock:
            for key in [k for k in self._vector_cache if k[1] == group_id]:
                del self._vector_cache[key]
        return counts

    # ---- retrieval primitives -------------------------------------------------------------------
    def embeddings(self, kind: SearchKind, group_id: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if self._dim is None or not ids:
            return {}
        return {rid: np.asarray(v, dtype=np.float32) for rid, v in self._fetch(
            f"SELECT id, embedding::real[] FROM {TABLE[kind]} WHERE group_id = ? AND id = ANY(?) "
            "AND embedding IS NOT NULL", (group_id, list(ids)))}

    def fulltext(self, kind: SearchKind, group_ids: Sequence[str], query: str, limit: int,
                 time: TimeFilter | None = None) -> list[Hit]:
        """BM25 (FTS5's formula, k1=1.2, b=0.75) over the groups' own term spaces; best first."""
        table = TABLE[kind]
        groups = list(dict.fromkeys(group_ids))
        qterms: list[str] = []
        for gid in groups:
            qterms += query_terms(gid, query)
        if not qterms or limit <= 0:
            return []
        with self._read() as c:
            return self._bm25(c, kind, table, groups, qterms, limit, time)

    def _bm25(self, c: Any, kind: SearchKind, table: str, groups: list[str], qterms: list[str], limit: int,
              time: TimeFilter | None) -> list[Hit]:
        # the terms' document frequencies and the groups' sizes in one round trip
        df: dict[str, int] = {}
        stats: dict[str, tuple[int, int]] = {}
        for name, n, tokens in c.execute(
                "SELECT term, df, NULL FROM fts_terms WHERE group_id = ANY(%s) AND kind = %s AND term = ANY(%s) "
                "AND df > 0 UNION ALL SELECT group_id, docs, tokens FROM fts_stats WHERE kind = %s "
                "AND group_id = ANY(%s) AND docs > 0", (groups, kind, qterms, kind, groups)).fetchall():
            if tokens is None:
                df[name] = n
            else:
                stats[name] = (n, tokens)
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
        # scores from the terms' posting lists (index-only), equal scores in insertion order (as FTS5 ranks them:
        # by rowid); the best few are then held to the kind's filter
        # (facts by time, entities not deleted). When the filter leaves fewer than ``limit`` of them, again over
        # every candidate: the same results as filtering first.
        extra, params = self._kind_filter(kind, "x", time)
        # one group (the usual search) by equality on both tables: a single-shard query on Citus
        one = len(g_list) == 1
        group_cond, group_arg = ("p.group_id = ?", g_list[0]) if one else ("p.group_id = ANY(?)", g_list)
        join_cond, join_args = ("x.group_id = ?", [g_list[0]]) if one else ("x.group_id = s.group_id", [])
        scored = (
            "WITH q AS (SELECT * FROM unnest(?::text[], ?::float8[]) AS q(term, idf)), "
            "g AS (SELECT * FROM unnest(?::text[], ?::float8[]) AS g(group_id, avgdl)) "
            # float8 constants: a bare 2.2 is numeric in PostgreSQL, and numeric arithmetic per posting costs
            f"SELECT p.group_id, p.id, p.seq, SUM(q.idf * (p.tf * {_K1 + 1}::float8) / (p.tf + {_K1}::float8 * ("
            f"{1 - _B}::float8 + {_B}::float8 * p.len / g.avgdl))) AS score "
            f"FROM q JOIN fts_postings p ON p.term = q.term AND p.kind = ? AND {group_cond} "
            "JOIN g ON g.group_id = p.group_id "
            "GROUP BY p.group_id, p.id, p.seq ORDER BY score DESC, p.seq LIMIT ?"
        )
        args: list[Any] = [present, idf, g_list, avgdl, kind, group_arg]
        if one and len(present) == 1:
            # one term (most queries, once common terms are dropped): its postings are the scores, no aggregate to
            # build (the same expression and values: a sum of one term is that term)
            scored = (f"SELECT p.group_id, p.id, p.seq, ?::float8 * (p.tf * {_K1 + 1}::float8) / (p.tf + "
                      f"{_K1}::float8 * ({1 - _B}::float8 + {_B}::float8 * p.len / ?::float8)) AS score "
                      "FROM fts_postings p WHERE p.group_id = ? AND p.kind = ? AND p.term = ? "
                      "ORDER BY score DESC, p.seq LIMIT ?")
            args = [idf[0], avgdl[0], g_list[0], kind, present[0]]
        if not extra:
            rows = self._all(c, scored, (*args, limit))
            return [Hit(r[1], float(r[3])) for r in rows]
        sql = (f"SELECT s.id, s.score FROM ({scored}) s JOIN {table} x ON {join_cond} AND x.id = s.id"
               f"{extra} ORDER BY s.score DESC, s.seq LIMIT ?")
        pool = limit * 4 + 20
        rows = self._all(c, sql, (*args, pool, *join_args, *params, limit))
        if len(rows) < limit:
            rows = self._all(c, sql, (*args, None, *join_args, *params, limit))
        return [Hit(r[0], float(r[1])) for r in rows]

    def vector(self, kind: SearchKind, group_ids: Sequence[str], embedding: np.ndarray, limit: int,
               time: TimeFilter | None = None) -> list[Hit]:
        """Cosine kNN within each group (score = 1 - cosine distance): in memory for a group past
        ``VECTORS_IN_MEMORY_MIN_ROWS`` rows of the kind (the SQLite store's search of large groups, same
        candidates and scores), else on the server: exact, or through the group's partial HNSW index once it has
        one."""
        if self._dim is None or not group_ids or limit <= 0:
            return []
        groups = list(dict.fromkeys(group_ids))
        hits: list[Hit] = []
        server = groups
        if self.VECTORS_IN_MEMORY_MIN_ROWS is not None:
            with self._read() as c:
                held = self._held_vector(c, kind, groups, embedding, limit, time) if len(groups) == 1 else None
                if held is not None:
                    hits, searched = held, set(groups)
                else:
                    large = self._large_vector_groups(c, kind, groups)
                    for gid, tokens in large.items():
                        hits += self._memory_vector(c, kind, gid, tokens, embedding, limit, time)
                    searched = set(large)
            server = [g for g in groups if g not in searched]
        if server:
            hits += self._server_vector(kind, server, embedding, limit, time)
        hits.sort(key=lambda h: -h.score)
        return hits[:limit]

    def _held_vector(self, c: Any, kind: SearchKind, groups: list[str], embedding: np.ndarray, limit: int,
                     time: TimeFilter | None) -> list[Hit] | None:
        """``_memory_vector`` of one group's vectors already held, in one round trip instead of two: the kNN runs
        on the vectors held, then one statement reads the group's tokens with the best candidates' ids (held to
        the kind's filter). The hits when the tokens are those of the vectors held (nothing written since: the
        usual search); None when they are not, or nothing is held (then the caller reads the tokens first)."""
        gid = groups[0]
        if kind in self.IDS_IN_MEMORY or (kind, gid) in (self._local.__dict__.get("vectors_touched") or {}):
            return None  # ids held with the vectors: one round trip already; a group written in this transaction
        fetch = limit * 2 + 10 if kind == "fact" else limit + 5  # as _memory_vector
        with self._vector_lock:
            entry = self._vector_cache.pop((kind, gid), None)
            if entry is None:
                return None
            self._vector_cache[(kind, gid)] = entry  # the most recently used
            cached = entry[0]
            seqs = cached.nearest(np.asarray(embedding, dtype=np.float32), fetch)
            scores = cached.scores
        if not seqs:
            return None
        head = seqs[:limit + limit // 4 + 5]  # first_held's first part
        extra, params = self._kind_filter(kind, "x", time)
        rows = c.execute(self._q(
            "SELECT NULL::bigint, NULL::text, s.docs, g.gen FROM fts_stats s LEFT JOIN vector_generations g ON "
            "g.group_id = s.group_id AND g.kind = s.kind WHERE s.kind = ? AND s.group_id = ? UNION ALL "
            f"SELECT x.seq, x.id, NULL, NULL FROM {TABLE[kind]} x WHERE x.group_id = ? AND x.seq = ANY(?){extra}"),
            (kind, gid, gid, head, *params)).fetchall()
        tokens = [r for r in rows if r[0] is None]
        if (not tokens or tokens[0][2] <= (self.VECTORS_IN_MEMORY_MIN_ROWS or 0)
                or int(tokens[0][3] or 0) != cached.generation):
            return None
        first = {r[0]: r[1] for r in rows if r[0] is not None}
        sql = self._q(f"SELECT x.seq, x.id FROM {TABLE[kind]} x WHERE x.group_id = ? AND x.seq = ANY(?){extra}")

        def held(part: list[int]) -> dict[int, str]:
            if part == head:
                return first
            return dict(c.execute(sql, (gid, part, *params)).fetchall())

        return [Hit(i, scores[sq]) for sq, i in first_held(seqs, limit, held)]

    def _large_vector_groups(self, c: Any, kind: SearchKind, groups: list[str]) -> dict[str, tuple[int, int | None]]:
        """The groups searched in memory, with their vectors' tokens (gen, base; 0 and None: never written by a
        store that keeps them). Not a group this thread's open transaction changed: its tokens move at commit."""
        touched = self._local.__dict__.get("vectors_touched") or {}
        one = len(groups) == 1  # equality: a single-shard query on Citus
        rows = c.execute(
            "SELECT s.group_id, s.docs, g.gen, g.base FROM fts_stats s LEFT JOIN vector_generations g ON g.group_id = "
            f"s.group_id AND g.kind = s.kind WHERE s.kind = %s AND s.group_id {'= %s' if one else '= ANY(%s)'}",
            (kind, groups[0] if one else groups)).fetchall()
        floor = self.VECTORS_IN_MEMORY_MIN_ROWS or 0
        return {g: (int(gen or 0), base) for g, docs, gen, base in rows if docs > floor and (kind, g) not in touched}

    def _memory_vector(self, c: Any, kind: SearchKind, group_id: str, tokens: tuple[int, int | None],
                       embedding: np.ndarray, limit: int, time: TimeFilter | None) -> list[Hit]:
        """SQLiteStore.vector's large-group path: the ``fetch`` best by the in-memory search, held to the kind's
        filter (facts by time, entities not deleted) by their rows, the best ``limit`` of those."""
        query = np.asarray(embedding, dtype=np.float32)
        # facts need headroom for the time filter applied after the kNN; others only for deleted rows
        fetch = limit * 2 + 10 if kind == "fact" else limit + 5
        with self._vector_lock:
            cached = self._group_vectors(c, kind, group_id, *tokens)
            seqs = cached.nearest(query, fetch)
            scores = cached.scores
        if not seqs:
            return []
        if cached.ids is not None:  # a kind with no condition of its own: ids come with the vectors
            return [Hit(cached.ids[sq], scores[sq]) for sq in seqs[:limit]]
        extra, params = self._kind_filter(kind, "x", time)
        sql = self._q(f"SELECT x.seq, x.id FROM {TABLE[kind]} x WHERE x.group_id = ? AND x.seq = ANY(?){extra}")
        return [Hit(i, scores[sq]) for sq, i in first_held(
            seqs, limit, lambda part: dict(c.execute(sql, (group_id, part, *params)).fetchall()))]

    def _group_vectors(self, c: Any, kind: SearchKind, group_id: str, gen: int, base: int | None) -> GroupVectors:
        """The group's vectors of ``kind`` in memory (in insertion order, as SQLite loads them): as held while
        ``gen`` is theirs; the rows inserted since added while ``base`` is (only inserts happened); else loaded
        whole. At most ``VECTOR_CACHE_GROUPS`` entries. Under ``_vector_lock``."""
        key = (kind, group_id)
        held = self._vector_cache.pop(key, None)
        cached = held[0] if held is not None else None
        if cached is not None and cached.generation != gen:
            t0 = time.perf_counter()
            after = int(cached.seqs[-1]) if held is not None and held[1] == base and len(cached.seqs) else None
            new = self._load_vectors(c, kind, group_id, after) if after is not None else []
            cached = cached.extended(gen, new) if new else None
            if cached is not None:
                log.info("added %d %s vectors to a large group's in %.0f ms", len(new), kind,
                         (time.perf_counter() - t0) * 1e3)
        if cached is None or cached.generation != gen:
            t0 = time.perf_counter()
            cached = GroupVectors(gen, self._load_vectors(c, kind, group_id, None), int(self._dim or 0))
            log.info("loaded %d %s vectors of a large group in %.0f ms (%s, %.1f MB)", len(cached.seqs), kind,
                     (time.perf_counter() - t0) * 1e3, "exact scan" if cached.exact else "binary codes",
                     cached.nbytes / 1e6)
        while len(self._vector_cache) >= self.VECTOR_CACHE_GROUPS:
            self._vector_cache.pop(next(iter(self._vector_cache)))
        self._vector_cache[key] = (cached, base)  # last: the most recently used
        return cached

    def _load_vectors(self, c: Any, kind: SearchKind, group_id: str, after: int | None) -> list[tuple[Any, ...]]:
        """(seq, float32 bytes[, id]) of the group's vectors of ``kind`` (inserted after seq ``after``), in
        insertion order, read in pgvector's binary form (dimension, unused: 2 x uint16; big-endian floats)."""
        dim = int(self._dim or 0)
        with c.cursor(binary=True) as cur:
            rows = cur.execute(f"SELECT seq, embedding{', id' if kind in self.IDS_IN_MEMORY else ''} FROM "
                               f"{TABLE[kind]} WHERE group_id = %s AND embedding IS NOT NULL AND seq > %s "
                               "ORDER BY seq", (group_id, -1 if after is None else after)).fetchall()
        if not rows:
            return []
        raw = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.uint8).reshape(len(rows), 4 + 4 * dim)
        mat = np.ascontiguousarray(raw[:, 4:]).view(">f4").astype(np.float32)
        return [(r[0], mat[i].tobytes(), *r[2:]) for i, r in enumerate(rows)]

    def vector_memory(self) -> dict[str, int]:
        """Bytes held by the in-memory vectors of large groups, by kind (this store's cache)."""
        out: dict[str, int] = {}
        with self._vector_lock:
            for (kind, _), (cached, _) in self._vector_cache.items():
                out[kind] = out.get(kind, 0) + cached.nbytes
        return out

    def _server_vector(self, kind: SearchKind, groups: list[str], embedding: np.ndarray, limit: int,
                       time: TimeFilter | None) -> list[Hit]:
        """Exact kNN on the server, or through the group's partial HNSW index once it has one. Never a prepared
        (generic) plan: only a plan made for the group's value can use the group's partial index."""
        table = TABLE[kind]
        extra, params = self._kind_filter(kind, "x", time)
        q = _vec_text(embedding)
        hits: list[Hit] = []
        with self._read() as c, self._vector_settings(c):
            for gid in groups:
                rows = c.execute(self._q(
                    f"SELECT x.id, x.embedding <=> ?::vector AS d FROM {table} x WHERE x.group_id = ? AND "
                    f"x.embedding IS NOT NULL{extra} ORDER BY x.embedding <=> ?::vector LIMIT ?"),
                    (q, gid, *params, q, limit), prepare=False).fetchall()
                hits += [Hit(r[0], 1.0 - float(r[1])) for r in rows]
        return hits

    def fact_edges(self, group_id: str, entity_ids: Sequence[str], time: TimeFilter,
                   limit: int) -> list[tuple[str, str, str]]:
        """(fact id, source id, target id) of the newest facts touching ``entity_ids``: per entity and end, its
        newest ``limit`` facts walked backwards on the (group, end, seq) indexes (migration 0009), then merged —
        a hub entity's thousands of facts are not all read and sorted."""
        ids = list(dict.fromkeys(entity_ids))
        if not ids or limit <= 0:
            return []
        tsql, tparams = self._time_sql("f", time)
        sql = ("SELECT u.id, u.source_id, u.target_id, u.seq FROM unnest(?::text[]) AS e(id) CROSS JOIN LATERAL ("
               "(SELECT f.id, f.source_id, f.target_id, f.seq FROM facts f WHERE f.group_id = ? AND f.source_id = e.id "
               f"AND {tsql} ORDER BY f.seq DESC LIMIT ?) UNION ALL "
               "(SELECT f.id, f.source_id, f.target_id, f.seq FROM facts f WHERE f.group_id = ? AND f.target_id = e.id "
               f"AND f.source_id <> ALL(?) AND {tsql} ORDER BY f.seq DESC LIMIT ?)) u ORDER BY u.seq DESC LIMIT ?")
        rows = self._fetch(sql, (ids, group_id, *tparams, limit, group_id, ids, *tparams, limit, limit))
        return [(r[0], r[1], r[2]) for r in rows]

    def adjacent_episodes(self, group_id: str, episode_id: str, n: int = 1) -> list[Episode]:
        """``SQLStore.adjacent_episodes`` in one statement (the episode and the turns before and after it: one
        round trip instead of three). Each side has a branch for a conversation and one for none, so both walk
        the (group_id, conversation_id, valid_at) index on plain conditions."""
        if n <= 0:
            return []
        cols = ", ".join(f"e.{c.strip()}" for c in EP_COLS.split(","))
        side = ("SELECT {cols} FROM episodes e WHERE e.group_id = ? AND {conv} AND e.valid_at {op} a.at "
                "ORDER BY e.valid_at {order} LIMIT ?")
        parts = []
        for op, order in (("<", "DESC"), (">", "")):
            for conv in ("e.conversation_id = a.conv", "a.conv IS NULL AND e.conversation_id IS NULL"):
                parts.append(f"SELECT '{op}', b.* FROM a CROSS JOIN LATERAL ("
                             f"{side.format(cols=cols, conv=conv, op=op, order=order)}) b")
        rows = self._fetch("WITH a AS (SELECT valid_at AS at, conversation_id AS conv FROM episodes WHERE id = ? "
                           "AND group_id = ?) " + " UNION ALL ".join(parts),
                           (episode_id, group_id, *[group_id, n] * len(parts)))
        before = [r[1:] for r in rows if r[0] == "<"][::-1]  # read newest first
        return [self._episode(r) for r in [*before, *(r[1:] for r in rows if r[0] == ">")]]

    @staticmethod
    def _edges_sql(ids: str, tsql: str) -> str:
        """``fact_edges``' statement over the entity ids of the SQL expression ``ids`` (a text[])."""
        return ("SELECT u.id, u.source_id, u.target_id, u.seq FROM unnest(" + ids + ") AS e(id) CROSS JOIN LATERAL ("
                "(SELECT f.id, f.source_id, f.target_id, f.seq FROM facts f WHERE f.group_id = ? AND f.source_id = "
                f"e.id AND {tsql} ORDER BY f.seq DESC LIMIT ?) UNION ALL "
                "(SELECT f.id, f.source_id, f.target_id, f.seq FROM facts f WHERE f.group_id = ? AND f.target_id = "
                f"e.id AND f.source_id <> ALL({ids}) AND {tsql} ORDER BY f.seq DESC LIMIT ?)) u "
                "ORDER BY u.seq DESC LIMIT ?")

    def fact_edges_two_hops(self, group_id: str, entity_ids: Sequence[str], time: TimeFilter, limit: int,
                            width: int) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
        """Both hops of the graph expansion in one statement: the first hop's edges, the second hop's starts
        chosen from them as ``second_hop_starts`` chooses (the seed's position, then the first reach), and their
        edges. One round trip instead of two on the search's critical path."""
        ids = list(dict.fromkeys(entity_ids))
        if not ids or limit <= 0:
            return [], []
        tsql, tparams = self._time_sql("f", time)
        def edges(start: list[Any]) -> list[Any]:  # _edges_sql's parameters, ``start`` where ``ids`` is a "?"
            return [*start, group_id, *tparams, limit, group_id, *start, *tparams, limit, limit]

        sql = (
            f"WITH h1 AS MATERIALIZED ({self._edges_sql('?::text[]', tsql)}), "
            # each edge's other end and the position of the seed it was reached from, in the first hop's order
            "o AS (SELECT CASE WHEN h.source_id = ANY(?::text[]) THEN h.target_id ELSE h.source_id END AS other, "
            "array_position(?::text[], CASE WHEN h.source_id = ANY(?::text[]) THEN h.source_id ELSE h.target_id END) "
            "AS r, row_number() OVER (ORDER BY h.seq DESC) AS rn FROM h1 h), "
            "reached AS (SELECT DISTINCT ON (other) other, r, rn FROM o WHERE other <> ALL(?::text[]) "
            "ORDER BY other, rn), "
            "s AS (SELECT COALESCE(array_agg(n.other ORDER BY n.r, n.rn), '{}'::text[]) AS starts FROM "
            "(SELECT other, r, rn FROM reached ORDER BY r, rn LIMIT ?) n) "
            "SELECT 1, id, source_id, target_id, seq FROM h1 UNION ALL "
            f"SELECT 2, h2.* FROM s CROSS JOIN LATERAL ({self._edges_sql('s.starts', tsql)}) h2")
        rows = self._fetch(sql, (*edges([ids]), ids, ids, ids, ids, max(width, 0), *edges([])))
        rows.sort(key=lambda r: (r[0], -r[4]))
        return ([(r[1], r[2], r[3]) for r in rows if r[0] == 1], [(r[1], r[2], r[3]) for r in rows if r[0] == 2])

    def search_chunks(self, group_id: str, collection_id: str, embedding: np.ndarray, limit: int) -> list[Hit]:
        """Exact cosine neighbours among a collection's chunks (score = 1 - cosine distance)."""
        if self._dim is None or limit <= 0:
            return []
        q = _vec_text(embedding)
        with self._read() as c:
            rows = c.execute(self._q(
                "SELECT id, embedding <=> ?::vector AS d FROM chunks WHERE group_id = ? AND collection_id = ? AND "
                "embedding IS NOT NULL ORDER BY embedding <=> ?::vector LIMIT ?"),
                (q, group_id, collection_id, q, limit), prepare=False).fetchall()
        return [Hit(r[0], 1.0 - float(r[1])) for r in rows]

    def traverse(self, group_id: str, start_ids: Sequence[str], depth: int, time: TimeFilter) -> dict[str, int]:
        """Entities reachable from ``start_ids`` within ``depth`` hops over facts valid under ``time``."""
        if not start_ids or depth <= 0:
            return {s: 0 for s in start_ids}
        tsql, tparams = self._time_sql("f", time)
        sql = (
            "WITH RECURSIVE walk(entity_id, depth) AS ("
            " SELECT s, 0 FROM unnest(?::text[]) s"
            " UNION"
            " SELECT CASE WHEN f.source_id = w.entity_id THEN f.target_id ELSE f.source_id END, w.depth + 1"
            " FROM walk w JOIN facts f ON f.group_id = ? AND (f.source_id = w.entity_id OR f.target_id = w.entity_id)"
            f" WHERE w.depth < ? AND {tsql}"
            ") SELECT entity_id, MIN(depth) FROM walk GROUP BY entity_id"
        )
        found = dict(self._fetch(sql, (list(start_ids), group_id, depth, *tparams)))
        valid = self.entity_types(group_id, list(found))
        return {k: v for k, v in found.items() if k in valid}


def _redact(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


__all__ = ["PostgresStore"]
