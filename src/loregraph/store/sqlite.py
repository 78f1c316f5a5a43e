"""SQLite store: one file, WAL, BM25 over postings with each group's own statistics, sqlite-vec kNN partitioned
by group, recursive-CTE traversal.

The stdlib ``sqlite3`` of many Python builds cannot load extensions, so the driver is ``sqlean``
(a drop-in with the same API) with sqlite-vec loaded into it. What SQLite shares with PostgreSQL lives in
``loregraph.store.sql``; this module keeps the file handling, full text, the vector tables and traversal.
Full text: each record's group-prefixed terms are kept in its kind's ``{table}_terms`` (read back when the record
is rewritten or deleted) and ``{table}_postings`` (term, seq, term frequency, length); ``fts_stats`` holds each
group's number of records and terms per kind. All three change in the record's write transaction, and
a query's BM25 is summed over its terms' postings with the group's statistics (PostgreSQL's scores).
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from loregraph.errors import StoreError
from loregraph.graph.types import Block
from loregraph.jobs.sqlite import SQLiteJobQueue
from loregraph.store.base import Hit, SearchKind, StoreCapabilities, TimeFilter
from loregraph.store.caches import LRU, TermStats
from loregraph.store.sql import BLOCK_COLS, TABLE, SQLStore, chunks
from loregraph.store.sqlite_tx import immediate_transaction
from loregraph.store.text import BM25_B, BM25_K1, GROUP_TOKEN_LEN, group_token, index_body, query_terms
from loregraph.store.timefmt import parse_ts, ts
from loregraph.store.vectors import GroupVectors, ScopedGroupVectors, first_held

log = logging.getLogger("loregraph.store")
GV = TypeVar("GV", bound=GroupVectors)


def _marks(values: Sequence[Any]) -> str:
    return ",".join("?" * len(values))


class SQLiteStore(SQLStore):
    """The embedded store. Not thread-safe by itself: use it from one thread (Memory does)."""

    MIGRATIONS_PACKAGE = "loregraph.store.migrations.sqlite"
    SPEAKER_SQL = "json_extract(attributes, '$.is_speaker') = 1"
    JSON_MERGE_SQL = "json_patch(attributes, ?)"
    # above this, a group's vectors of a kind are searched in memory (store.vectors: an exact float32 scan, past
    # GroupVectors.EXACT_SCAN_MAX a Hamming pre-selection + rescoring): sqlite-vec's scan took 17 ms a query over
    # 4,000 episodes and 3 ms over 987 entities in `bench search`, the in-memory scan well under one
    EXACT_KNN_MAX = 500
    # kinds whose vector search has no condition beyond the group (facts have time, entities deletion): their
    # in-memory vectors carry the record ids, so a search needs no lookup of the ids by seq
    IDS_IN_MEMORY = frozenset({"episode", "community", "chunk"})
    VECTOR_CACHE_GROUPS = 8  # (kind, group) entries: a large group holds two or three (facts, episodes, entities)
    # bounds of the per-process caches below (measured: ~130 bytes per cached term, ~200 per count)
    TERM_STATS_MAX = 20_000
    COUNT_CACHE_MAX = 4096
    QUERY_TERMS_CACHE = 64  # queries whose full-text terms are kept (pure: never stale)
    INTEGRITY_CHECK_BUDGET_S = 5.0  # quick_check at open stops after this (a multi-GB file is reported unchecked)

    capabilities = StoreCapabilities(concurrent_readers=1, shared_queue=False)

    @classmethod
    def from_url(cls, url: str) -> SQLiteStore:
        """``sqlite:///path.db`` or a bare file path; an in-memory database is refused (nothing would persist)."""
        path = url[len("sqlite:///"):] if url.startswith("sqlite:///") else url
        if "://" in path:
            raise StoreError(f"unsupported SQLite URL {url!r}: use sqlite:///path.db or a file path")
        if not path or path == ":memory:":
            raise StoreError("an SQLite database needs a file path (sqlite:///path/to/memory.db)")
        return cls(Path(path).expanduser())

    def open_queue(self, *, max_attempts: int = 3) -> SQLiteJobQueue:
        """The job queue in this database file (one worker process per file)."""
        return SQLiteJobQueue(self.path)

    def __init__(self, path: str | Path):
        import sqlean
        import sqlite_vec

        self.path = Path(path)
        self.url = f"sqlite:///{self.path}"
        self.label = str(self.path)
        if self.path.parent and not self.path.parent.exists():
            raise StoreError(f"directory does not exist for database file: {self.path.parent}")
        try:
            self.conn = sqlean.connect(str(self.path), isolation_level=None, check_same_thread=False)
            self.conn.enable_load_extension(True)
            sqlite_vec.load(self.conn)
            self.conn.enable_load_extension(False)
        except Exception as exc:  # sqlean raises its own DatabaseError subclasses
            raise StoreError(f"cannot open SQLite database {self.path}: {exc}") from exc
        self._lock = threading.RLock()
        self.integrity = self._check_integrity()
        c = self.conn
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("PRAGMA synchronous=NORMAL")
        c.execute("PRAGMA busy_timeout=10000")
        c.execute("PRAGMA temp_store=MEMORY")
        c.execute("PRAGMA cache_size=-65536")
        c.execute("PRAGMA mmap_size=1073741824")
        # per-group counts, dropped when the group's rows change: stored vectors of a kind (kind, group) for the
        # kNN path
        self._vector_counts: LRU[tuple[str, str], int] = LRU(self.COUNT_CACHE_MAX)
        # document frequencies of full-text terms, per (table, group token); dropped when the group's rows change
        # (this process's writes at once, any process's when a search sees the group's fts_stats.gen move)
        self._df_cache = TermStats(self.TERM_STATS_MAX)
        self._df_gens: LRU[tuple[str, str], int] = LRU(self.COUNT_CACHE_MAX)
        self._terms_cache: LRU[tuple[str, str], list[str]] = LRU(self.QUERY_TERMS_CACHE)
        self._touched_vectors: set[tuple[str, str]] = set()
        self._vector_cache: dict[tuple[str, str], GroupVectors] = {}
        self._tx_depth = 0
        self._init_common()

    def _check_integrity(self) -> str:
        """A bounded ``PRAGMA quick_check`` at open: a damaged file is refused with what to do; a check that runs
        out of its time budget (a very large file) is reported as ``unchecked``, not as damage."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return "ok"
        deadline = time.monotonic() + self.INTEGRITY_CHECK_BUDGET_S
        self.conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        try:
            rows = self.conn.execute("PRAGMA quick_check(5)").fetchall()
        except Exception as exc:
            self.conn.set_progress_handler(None, 0)
            if "interrupt" in str(exc).lower():
                log.warning("integrity check of %s skipped: it takes over %.0f s", self.path,
                            self.INTEGRITY_CHECK_BUDGET_S)
                return "unchecked"
            self.conn.close()
            raise StoreError(f"SQLite database {self.path} is damaged or not a database ({exc}); restore it from a "
                             f"backup, or salvage it with `sqlite3 {self.path} .recover`") from exc
        self.conn.set_progress_handler(None, 0)
        problems = [str(r[0]) for r in rows if r and r[0] != "ok"]
        if problems:
            self.conn.close()
            raise StoreError(f"SQLite database {self.path} is damaged ({'; '.join(problems)[:300]}); restore it "
                             f"from a backup, or salvage it with `sqlite3 {self.path} .recover`")
        return "ok"

    # ---- dialect --------------------------------------------------------------------------------
    def _ts(self, value: datetime | None) -> str | None:
        return ts(value)

    def _from_ts(self, value: Any) -> datetime | None:
        return parse_ts(value)

    def _json(self, value: Any) -> str:
        return json.dumps(value)

    def _from_json(self, value: Any) -> Any:
        return json.loads(value)

    def _executemany(self, c: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            c.executemany(sql, rows)

    def _run_script(self, c: Any, sql: str) -> None:
        for stmt in _split_sql(sql):
            c.execute(stmt)

    @contextmanager
    def _read(self) -> Iterator[Any]:
        with self._lock:
            yield self.conn

    # ---- lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        with suppress(Exception):  # closing twice is harmless
            self.conn.execute("PRAGMA optimize")
            self.conn.close()

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the database file. Worth calling after a bulk import: until the
        next write resets it, readers would otherwise look every page up in a large WAL."""
        with self._lock:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.conn.execute("PRAGMA optimize")

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        with self._lock:
            if self._tx_depth:  # inside this store's open transaction: a savepoint of it
                yield from self._savepoint()
                return
            self._tx_depth = 1
            try:
                yield from self._outer_tx()
            finally:
                self._tx_depth = 0

    def _savepoint(self) -> Iterator[Any]:
        name = f"lg_sp{self._tx_depth}"
        self._tx_depth += 1
        self.conn.execute(f"SAVEPOINT {name}")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute(f"ROLLBACK TO {name}")
            self.conn.execute(f"RELEASE {name}")
            self._forget_cached_counts()
            raise
        else:
            self.conn.execute(f"RELEASE {name}")
        finally:
            self._tx_depth -= 1

    def _outer_tx(self) -> Iterator[Any]:
        """BEGIN IMMEDIATE … COMMIT (``immediate_transaction``: a failed COMMIT leaves nothing written and the
        connection usable), bumping the generations of the vectors it touched; a failure forgets cached counts."""
        with self._lock:
            self._touched_vectors = set()
            with immediate_transaction(self.conn, str(self.path), before_commit=self._bump_vector_generations,
                                       on_failure=self._forget_cached_counts) as c:
                yield c

    def _bump_vector_generations(self) -> None:
        self.conn.executemany("INSERT INTO vector_generations VALUES (?,?,1) ON CONFLICT(kind, group_id) "
                              "DO UPDATE SET gen = gen + 1", sorted(self._touched_vectors))

    def _forget_cached_counts(self) -> None:
        """Counts a rolled-back transaction may have changed."""
        self._vector_counts.clear()
        self._df_cache.clear()

    def _create_vector_storage(self, c: Any, dim: int) -> None:
        for kind in ("episode", "entity", "fact", "chunk", "community"):
            # exact kNN (float), a coarse binary index for large groups, and plain rows for rescoring
            c.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {kind}_vec USING vec0("
                      f"grp TEXT PARTITION KEY, embedding FLOAT[{dim}] distance_metric=cosine)")
            c.execute(f"CREATE TABLE IF NOT EXISTS {kind}_emb (seq INTEGER PRIMARY KEY, "
                      f"grp TEXT NOT NULL, embedding BLOB NOT NULL)")
            c.execute(f"CREATE INDEX IF NOT EXISTS {kind}_emb_grp ON {kind}_emb (grp)")

    # ---- index rows -----------------------------------------------------------------------------
    def _index_records(self, c: Any, kind: SearchKind,
                       records: Sequence[tuple[int, str, str, list[float] | None]]) -> None:
        """Records' terms, postings and their groups' BM25 statistics (records whose terms did not change, as an
        entity written again, are left alone), then their vectors; a few statements for the whole batch."""
        table = TABLE[kind]
        latest = {seq: (gid, index_body(gid, body)) for seq, gid, body, _ in records}  # a seq twice: its last
        old: dict[int, str] = {}
        for part in chunks(list(latest), self.CHUNK):
            old.update(c.execute(f"SELECT seq, terms FROM {table}_terms WHERE seq IN ({_marks(part)})", part))
        changed = {seq: v for seq, v in latest.items() if old.get(seq) != v[1]}
        if changed:
            for gid in {gid for gid, _ in changed.values()}:
                self._unindex_bodies(c, kind, gid, [(seq, old[seq]) for seq, (g, _) in changed.items()
                                                    if g == gid and seq in old])
                added = [len(terms.split()) for g, terms in changed.values() if g == gid]
                self._change_fts_stats(c, kind, gid, len(added), sum(added))
                self._forget_counts(kind, gid)
            c.executemany(f"INSERT OR REPLACE INTO {table}_terms (seq, terms) VALUES (?,?)",
                          [(seq, terms) for seq, (_, terms) in changed.items()])
            postings = []
            for seq, (_, terms) in changed.items():
                words = terms.split()
                postings += [(term, seq, tf, len(words)) for term, tf in Counter(words).items()]
            c.executemany(f"INSERT INTO {table}_postings (term, seq, tf, len) VALUES (?,?,?,?)", postings)
        for seq, gid, _, embedding in records:
            self._vec_upsert(kind, seq, gid, embedding)

    def _unindex_bodies(self, c: Any, kind: str, group_id: str, bodies: Sequence[tuple[int, str]]) -> None:
        """Take records' indexed terms (seq, terms) out of the kind's postings and the group's BM25 statistics."""
        if not bodies:
            return
        c.executemany(f"DELETE FROM {TABLE[kind]}_postings WHERE term = ? AND seq = ?",
                      [(term, seq) for seq, body in bodies for term in dict.fromkeys(body.split())])
        self._change_fts_stats(c, kind, group_id, -len(bodies), -sum(len(body.split()) for _, body in bodies))

    @staticmethod
    def _change_fts_stats(c: Any, kind: str, group_id: str, docs: int, tokens: int) -> None:
        # gen: a random token, not a counter (a group deleted and written again never repeats one a process holds)
        c.execute("INSERT INTO fts_stats (kind, group_id, docs, tokens, gen) VALUES (?,?,?,?, random()) "
                  "ON CONFLICT (kind, group_id) DO UPDATE SET docs = docs + excluded.docs, "
                  "tokens = tokens + excluded.tokens, gen = excluded.gen",
                  (kind, group_id, docs, tokens))

    def _forget_counts(self, kind: str, group_id: str) -> None:
        """Drop the cached counts of a group's records of one kind (their rows changed)."""
        table = TABLE[kind]
        self._df_cache.forget((table, group_token(group_id)))
        self._vector_counts.pop((kind, group_id))

    def _vec_upsert(self, kind: str, seq: int, group_id: str, embedding: list[float] | None) -> None:
        if embedding is None:
            return
        if self._dim is None:
            raise StoreError("no embedding model recorded for this database; call ensure_embedder first")
        vec = np.asarray(embedding, dtype=np.float32)
        if vec.shape != (int(self._dim),):
            raise StoreError(f"{kind} embedding has dimension {vec.shape[0]}, database expects {self._dim}")
        blob = vec.tobytes()
        self._vec_delete(kind, [seq], group_id)
        self.conn.execute(f"INSERT INTO {kind}_vec(rowid, grp, embedding) VALUES (?,?,?)", (seq, group_id, blob))
        self.conn.execute(f"INSERT INTO {kind}_emb(seq, grp, embedding) VALUES (?,?,?)", (seq, group_id, blob))
        self._vector_counts.pop((kind, group_id))
        self._touched_vectors.add((kind, group_id))

    def _block_vec(self, embedding: list[float] | None) -> bytes | None:
        if embedding is None:
            return None
        vec = np.asarray(embedding, dtype=np.float32)
        if self._dim is None or vec.shape != (int(self._dim),):
            raise StoreError(f"block embedding has dimension {vec.shape[0]}, database expects {self._dim}")
        return vec.tobytes()

    def _block_embeddings(self, group_id: str, ids: Sequence[str]) -> dict[str, list[float]]:
        rows = self._pairs("SELECT id, embedding FROM blocks WHERE group_id = ? AND embedding IS NOT NULL AND {cond}",
                           group_id, "id", ids)
        return {rid: np.frombuffer(blob, dtype=np.float32).tolist() for rid, blob in rows}

    _VISIBLE_SQL = ("(? IS NULL OR json_extract(attributes, '$.user_id') = ? "
                    "OR json_extract(attributes, '$.visibility') = 'SHARED')")

    def _upsert_block(self, c: Any, gid: str, b: Block) -> None:
        super()._upsert_block(c, gid, b)
        self._vector_counts.pop(("block", gid))
        self._touched_vectors.add(("block", gid))  # a new generation of the group's in-memory block codes

    def block_vector(self, group_id: str, embedding: Any, limit: int,
                     user_id: str | None = None) -> list[tuple[Block, float]]:
        """Cosine kNN over the group's block vectors (only ``user_id``'s own and SHARED ones when given): an exact
        scan (sqlite-vec's distance) up to ``EXACT_KNN_MAX`` blocks, above that the in-memory binary codes pick
        candidates among the visible blocks, and their similarity is computed exactly from the stored floats."""
        if self._dim is None or limit <= 0:
            return []
        query = np.asarray(embedding, dtype=np.float32)
        if self._block_count(group_id) <= self.EXACT_KNN_MAX:
            rows = self._fetch(f"SELECT {BLOCK_COLS}, vec_distance_cosine(embedding, ?) AS d FROM blocks "
                               f"WHERE group_id = ? AND embedding IS NOT NULL AND {self._VISIBLE_SQL} "
                               "ORDER BY d LIMIT ?", (query.tobytes(), group_id, user_id, user_id, limit))
            return [(self._block(r), 1.0 - float(r[-1])) for r in rows]
        with self._lock:
            cached = self._block_vectors(group_id)
            seqs = cached.nearest(query, limit, None if user_id is None else cached.visible_to(user_id))
        if not seqs:
            return []
        rows = self._fetch(f"SELECT {BLOCK_COLS}, embedding FROM blocks WHERE +group_id = ? AND seq IN "  # rowid
                           f"({_marks(seqs)}) AND embedding IS NOT NULL AND {self._VISIBLE_SQL}",
                           (group_id, *seqs, user_id, user_id))
        if not rows:
            return []
        mat = np.frombuffer(b"".join(r[-1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
        sims = (mat @ query) / np.maximum(np.linalg.norm(mat, axis=1) * float(np.linalg.norm(query)), 1e-12)
        best = np.argsort(-sims, kind="stable")[:limit]  # Block objects only for what is returned
        return [(self._block(rows[i]), float(sims[i])) for i in best]

    def _block_count(self, group_id: str) -> int:
        n = self._vector_counts.get(("block", group_id))
        if n is None:
            n = self.conn.execute("SELECT COUNT(*) FROM blocks WHERE group_id = ?", (group_id,)).fetchone()[0]
            self._vector_counts.put(("block", group_id), n)
        return n

    def _block_vectors(self, group_id: str) -> ScopedGroupVectors:
        """The group's block vectors in memory, reloaded when a writer (any process) changed them."""
        row = self.conn.execute("SELECT gen FROM vector_generations WHERE kind = 'block' AND group_id = ?",
                                (group_id,)).fetchone()
        gen = row[0] if row else 0
        rows_sql = ("SELECT seq, embedding, json_extract(attributes, '$.user_id'), json_extract(attributes, "
                    "'$.visibility') FROM blocks WHERE group_id = ? AND embedding IS NOT NULL")
        return self._cached_vectors(("block", group_id), gen, rows_sql, ScopedGroupVectors)

    def _cached_vectors(self, key: tuple[str, str], gen: int, rows_sql: str, cls: type[GV]) -> GV:
        """The in-memory vectors of one (kind, group), loaded with ``rows_sql`` when missing or older than ``gen``
        (a writer in any process bumps it); at most ``VECTOR_CACHE_GROUPS`` entries, the least recently used go."""
        cached = self._vector_cache.pop(key, None)
        if not isinstance(cached, cls) or cached.generation != gen:
            t0 = time.perf_counter()
            cached = cls(gen, self.conn.execute(rows_sql, (key[1],)).fetchall(), int(self._dim or 0))
            while len(self._vector_cache) >= self.VECTOR_CACHE_GROUPS:
                self._vector_cache.pop(next(iter(self._vector_cache)))
            log.info("loaded %d %s vectors of a large group in %.0f ms (%s, %.1f MB)", len(cached.seqs), key[0],
                     (time.perf_counter() - t0) * 1e3, "exact scan" if cached.exact else "binary codes",
                     cached.nbytes / 1e6)
        self._vector_cache[key] = cached  # last: the most recently used
        return cached

    def vector_memory(self) -> dict[str, int]:
        """Bytes held by the in-memory vectors of large groups, by kind (a process-wide cache)."""
        out: dict[str, int] = {}
        for (kind, _), cached in self._vector_cache.items():
            out[kind] = out.get(kind, 0) + cached.nbytes
        return out

    def _vec_delete(self, kind: str, seqs: Sequence[int], group_id: str) -> None:
        if self._dim is None or not seqs:
            return
        self._touched_vectors.add((kind, group_id))
        marks = _marks(seqs)
        self.conn.execute(f"DELETE FROM {kind}_vec WHERE rowid IN ({marks})", list(seqs))
        self.conn.execute(f"DELETE FROM {kind}_emb WHERE seq IN ({marks})", list(seqs))

    def _delete_rows(self, c: Any, kind: SearchKind, group_id: str, ids: Sequence[str]) -> None:
        table = TABLE[kind]
        self._forget_counts(kind, group_id)
        for chunk in chunks(ids, self.CHUNK):
            seqs = [r[0] for r in c.execute(f"SELECT seq FROM {table} WHERE group_id = ? AND id IN ({_marks(chunk)})",
                                            (group_id, *chunk))]
            if not seqs:
                continue
            self._unindex_bodies(c, kind, group_id, c.execute(
                f"SELECT seq, terms FROM {table}_terms WHERE seq IN ({_marks(seqs)})", seqs).fetchall())
            c.execute(f"DELETE FROM {table}_terms WHERE seq IN ({_marks(seqs)})", seqs)
            self._vec_delete(kind, seqs, group_id)
            c.execute(f"DELETE FROM {table} WHERE seq IN ({_marks(seqs)})", seqs)

    def delete_group(self, group_id: str) -> dict[str, int]:
        counts: dict[str, int] = {}
        with self._tx() as c:
            for kind, table in TABLE.items():
                seqs = [r[0] for r in c.execute(f"SELECT seq FROM {table} WHERE group_id = ?", (group_id,))]
                counts[table] = len(seqs)
                for chunk in chunks(seqs, self.CHUNK):
                    c.execute(f"DELETE FROM {table}_terms WHERE seq IN ({_marks(chunk)})", chunk)
                    self._vec_delete(kind, chunk, group_id)
                c.execute(f"DELETE FROM {table} WHERE group_id = ?", (group_id,))
                # the group's postings: every term starting with its token (fixed width), one range of the key
                token = group_token(group_id)
                c.execute(f"DELETE FROM {table}_postings WHERE term >= ? AND term < ?",
                          (token, token[:-1] + chr(ord(token[-1]) + 1)))
            c.execute("DELETE FROM fts_stats WHERE group_id = ?", (group_id,))
            for kind in TABLE:
                self._forget_counts(kind, group_id)
            self._vector_counts.pop(("block", group_id))
            self._touched_vectors.add(("block", group_id))
            for table in self.GROUP_SIDE_TABLES:
                c.execute(f"DELETE FROM {table} WHERE group_id = ?", (group_id,))
        return counts

    # ---- retrieval primitives -------------------------------------------------------------------
    def embeddings(self, kind: SearchKind, group_id: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of records of one group, by id (for MMR)."""
        if self._dim is None or not ids:
            return {}
        rows = self._pairs(f"SELECT x.id, v.embedding FROM {TABLE[kind]} x JOIN {kind}_vec v ON v.rowid = x.seq "
                           "WHERE x.group_id = ? AND {cond}", group_id, "x.id", ids)
        return {rid: np.frombuffer(blob, dtype=np.float32) for rid, blob in rows}

    def fulltext(self, kind: SearchKind, group_ids: Sequence[str], query: str, limit: int,
                 time: TimeFilter | None = None) -> list[Hit]:
        """BM25 (FTS5's formula, k1=1.2, b=0.75) over the groups' own term spaces, with each group's own number
        of records and mean length (``fts_stats``): one group's ranking does not depend on another's rows, and
        the scores are PostgreSQL's. Summed over the query terms' postings; best first, ties in insertion order."""
        table = TABLE[kind]
        groups = list(dict.fromkeys(group_ids))
        terms: list[str] = []
        for gid in groups:
            terms += self._query_terms(gid, query)
        if not terms or limit <= 0:
            return []
        stats: dict[str, tuple[int, int]] = {}
        for g, docs, tokens, gen in self.conn.execute(
                f"SELECT group_id, docs, tokens, gen FROM fts_stats WHERE kind = ? AND group_id IN ({_marks(groups)}) "
                "AND docs > 0", (kind, *groups)):
            stats[g] = (docs, tokens)
            key = (table, group_token(g))
            if self._df_gens.get(key) != gen:  # written since (by any process): its cached frequencies go
                self._df_cache.forget(key)
                self._df_gens.put(key, gen)
        if not stats:
            return []
        df = self._term_docs(table, terms)
        terms = self._informative_terms([t for t in terms if df.get(t)], df, sum(d for d, _ in stats.values()))
        if not terms:
            return []
        by_token = {group_token(g): st for g, st in stats.items()}
        scored_terms: list[Any] = []
        for t in terms:
            docs, tokens = by_token.get(t[:GROUP_TOKEN_LEN], (0, 0))
            if not docs:
                continue
            idf = math.log((docs - df[t] + 0.5) / (df[t] + 0.5))
            scored_terms += [t, idf if idf > 0 else 1e-6, max(tokens / docs, 1e-9)]
        if not scored_terms:
            return []
        n = len(scored_terms) // 3
        # each term's postings (the (term, seq) key), its idf and its group's mean length; the expression is
        # PostgreSQL's, term for term
        scored = (f"WITH q(term, idf, avgdl) AS (VALUES {','.join(['(?,?,?)'] * n)}) "
                  f"SELECT p.seq, SUM(q.idf * (p.tf * {BM25_K1 + 1}) / (p.tf + {BM25_K1} * ({1 - BM25_B} + "
                  f"{BM25_B} * p.len / q.avgdl))) AS score FROM q JOIN {table}_postings p ON p.term = q.term "
                  "GROUP BY p.seq ORDER BY score DESC, p.seq LIMIT ?")
        if n == 1:  # one term (most queries): its postings are the scores, nothing to group (the same values)
            scored = (f"SELECT p.seq, ? * (p.tf * {BM25_K1 + 1}) / (p.tf + {BM25_K1} * ({1 - BM25_B} + "
                      f"{BM25_B} * p.len / ?)) AS score FROM {table}_postings p WHERE p.term = ? "
                      "ORDER BY score DESC, p.seq LIMIT ?")
            scored_terms = [scored_terms[1], scored_terms[2], scored_terms[0]]
        extra, params = self._kind_filter(kind, "x", time)
        sql = (f"SELECT x.id, s.score FROM ({scored}) s JOIN {table} x ON x.seq = s.seq "
               f"WHERE x.group_id IN ({_marks(groups)}){extra} ORDER BY s.score DESC, s.seq LIMIT ?")
        # the best few held to the kind's filter (facts by time, entities not deleted); when it leaves fewer than
        # ``limit`` of them, again over every candidate (the same results as filtering first)
        pool = limit * 4 + 20
        rows = self._fetch(sql, (*scored_terms, pool, *groups, *params, limit))
        if len(rows) < limit:
            rows = self._fetch(sql, (*scored_terms, -1, *groups, *params, limit))
        return [Hit(r[0], float(r[1])) for r in rows]

    def _query_terms(self, group_id: str, query: str) -> list[str]:
        """``query_terms``, remembered for a few queries: one search asks for the same query's terms once per kind
        (stemming is pure Python)."""
        key = (group_id, query)
        found = self._terms_cache.get(key)
        if found is None:
            found = query_terms(group_id, query)
            self._terms_cache.put(key, found)
        return list(found)

    def _term_docs(self, table: str, terms: list[str]) -> dict[str, int]:
        """Number of records holding each term (terms carry their group's token: per group), cached between
        writes (``fulltext`` drops a group's entries when its ``fts_stats.gen`` moved)."""
        df: dict[str, int] = {}
        missing: list[str] = []
        for t in terms:
            cached = self._df_cache.get((table, t[:GROUP_TOKEN_LEN]), t)
            if cached is None:
                missing.append(t)
            else:
                df[t] = cached
        if missing:
            found = dict(self.conn.execute(
                f"SELECT term, COUNT(*) FROM {table}_postings WHERE term IN ({_marks(missing)}) GROUP BY term",
                missing).fetchall())
            for t in missing:
                df[t] = found.get(t, 0)
                self._df_cache.put((table, t[:GROUP_TOKEN_LEN]), t, df[t])
        return df

    def _informative_terms(self, present: list[str], df: dict[str, int], rows: int) -> list[str]:
        """The query terms held by few enough of the groups' ``rows`` records; the rarest one if none is."""
        if len(present) < 2:
            return present
        ceiling = max(self.COMMON_TERM_MIN_DOCS, self.COMMON_TERM_SHARE * rows)
        rare = [t for t in present if df[t] <= ceiling]
        return rare or [min(present, key=lambda t: df[t])]

    def vector(self, kind: SearchKind, group_ids: Sequence[str], embedding: np.ndarray, limit: int,
               time: TimeFilter | None = None) -> list[Hit]:
        if self._dim is None or not group_ids:
            return []
        table = TABLE[kind]
        blob = np.asarray(embedding, dtype=np.float32).tobytes()
        extra, params = self._kind_filter(kind, "x", time)
        hits: list[Hit] = []
        # facts need headroom for the time filter applied after the kNN; others only for deleted rows
        fetch = limit * 2 + 10 if kind == "fact" else limit + 5
        query = np.asarray(embedding, dtype=np.float32)
        for gid in dict.fromkeys(group_ids):
            if self._vector_count(kind, gid) <= self.EXACT_KNN_MAX:
                # an exact scan of the group's stored floats: sqlite-vec's own distance, and its kNN's order (ties:
                # the later write first), without its kNN, which walks a whole 1,024-slot chunk once per neighbour
                # asked for (0.3-0.5 ms a query where this takes 0.1 over a few hundred rows)
                rows = self.conn.execute(
                    f"SELECT x.id, v.distance FROM (SELECT seq, vec_distance_cosine(embedding, ?) AS distance "
                    f"FROM {kind}_emb WHERE grp = ? ORDER BY distance, seq DESC LIMIT ?) v "
                    f"JOIN {table} x ON x.seq = v.seq WHERE x.group_id = ?{extra} ORDER BY v.distance LIMIT ?",
                    (blob, gid, fetch, gid, *params, limit),
                ).fetchall()
                hits += [Hit(r[0], 1.0 - float(r[1])) for r in rows]
                continue
            # large group: searched in memory (store.vectors)
            cached = self._group_vectors(kind, gid)
            seqs = cached.nearest(query, fetch)
            if not seqs:
                continue
            if cached.ids is not None:  # a kind with no condition of its own: ids come with the vectors
                hits += [Hit(cached.ids[sq], cached.scores[sq]) for sq in seqs[:limit]]
                continue
            # `+group_id`: by the rowid, never by an index on group_id (one without statistics, as a migration
            # leaves it, looked cheaper to the planner and read the whole group: 11.7 ms a search at 100k facts)
            sims = cached.scores

            def held(part: list[int], gid: str = gid) -> dict[int, str]:
                return dict(self.conn.execute(
                    f"SELECT x.seq, x.id FROM {table} x WHERE x.seq IN ({_marks(part)}) AND +x.group_id = ?{extra}",
                    (*part, gid, *params)).fetchall())

            hits += [Hit(i, sims[sq]) for sq, i in first_held(seqs, limit, held)]
        hits.sort(key=lambda h: -h.score)
        return hits[:limit]

    def _group_vectors(self, kind: str, group_id: str) -> GroupVectors:
        row = self.conn.execute("SELECT gen FROM vector_generations WHERE kind = ? AND group_id = ?",
                                (kind, group_id)).fetchone()
        gen = row[0] if row else 0
        if kind in self.IDS_IN_MEMORY:
            sql = (f"SELECT e.seq, e.embedding, x.id FROM {kind}_emb e JOIN {TABLE[kind]} x ON x.seq = e.seq "
                   "WHERE e.grp = ?")
        else:
            sql = f"SELECT seq, embedding FROM {kind}_emb WHERE grp = ?"
        return self._cached_vectors((kind, group_id), gen, sql, GroupVectors)

    def _vector_count(self, kind: str, group_id: str) -> int:
        n = self._vector_counts.get((kind, group_id))
        if n is None:
            n = self.conn.execute(f"SELECT COUNT(*) FROM {kind}_emb WHERE grp = ?", (group_id,)).fetchone()[0]
            self._vector_counts.put((kind, group_id), n)
        return n

    def search_chunks(self, group_id: str, collection_id: str, embedding: np.ndarray, limit: int) -> list[Hit]:
        """Cosine neighbours among a collection's chunks: the group's kNN when the collection is all of the group's
        chunks, else an exact scan of the collection's vectors."""
        if self._dim is None or limit <= 0:
            return []
        n = self._collection_chunk_count(group_id, collection_id)
        if n == 0:
            return []
        if n == self._vector_count("chunk", group_id):
            return self.vector("chunk", [group_id], embedding, limit)
        blob = np.asarray(embedding, dtype=np.float32).tobytes()
        rows = self._fetch("SELECT x.id, vec_distance_cosine(e.embedding, ?) AS d FROM chunks x JOIN chunk_emb e "
                           "ON e.seq = x.seq WHERE x.group_id = ? AND x.collection_id = ? ORDER BY d LIMIT ?",
                           (blob, group_id, collection_id, limit))
        return [Hit(r[0], 1.0 - float(r[1])) for r in rows]

    def traverse(self, group_id: str, start_ids: Sequence[str], depth: int, time: TimeFilter) -> dict[str, int]:
        """Entities reachable from ``start_ids`` within ``depth`` hops over facts valid under ``time``.

        One recursive CTE with two recursive terms (outgoing and incoming edges).
        """
        if not start_ids or depth <= 0:
            return {s: 0 for s in start_ids}
        tsql, tparams = self._time_sql("f", time)
        sql = (
            "WITH RECURSIVE walk(entity_id, depth) AS ("
            " SELECT value, 0 FROM json_each(?)"
            " UNION"
            f" SELECT f.target_id, w.depth + 1 FROM walk w JOIN facts f ON f.group_id = ? AND f.source_id = w.entity_id"
            f"  WHERE w.depth < ? AND {tsql}"
            " UNION"
            f" SELECT f.source_id, w.depth + 1 FROM walk w JOIN facts f ON f.group_id = ? AND f.target_id = w.entity_id"
            f"  WHERE w.depth < ? AND {tsql}"
            ") SELECT entity_id, MIN(depth) FROM walk GROUP BY entity_id"
        )
        rows = self.conn.execute(sql, (json.dumps(list(start_ids)), group_id, depth, *tparams, group_id, depth,
                                       *tparams)).fetchall()
        found = dict(rows)
        # start ids from another group must not leak: keep only entities of this group
        valid = self.entity_types(group_id, list(found))
        return {k: v for k, v in found.items() if k in valid}


def _split_sql(sql: str) -> list[str]:
    """Split a migration file into statements (no semicolons inside our statements' literals)."""
    lines = [ln for ln in sql.splitlines() if not ln.strip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


__all__ = ["SQLiteStore"]
