"""In-memory vector search for large groups: an exact float32 scan up to ``EXACT_SCAN_MAX`` vectors, above that
binary codes pick candidates and float16 rescoring ranks them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def _dot(mat: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``mat @ query`` on the calling thread. BLAS splits a product of a thousand rows or more over its threads, and
    waking them cost 5-8 ms a call on a busy 2-core machine (the episode stage of ``loregraph bench search`` at
    100k facts: 7.8 ms median against 0.04 ms here); einsum's own loop never leaves the thread."""
    return np.einsum("ij,j->i", mat, query)


def first_held(seqs: list[int], limit: int, held: Callable[[list[int]], dict[int, str]]) -> list[tuple[int, str]]:
    """The first ``limit`` of ``seqs`` (best first) that ``held`` keeps (it maps the seqs of a part that pass the
    kind's filter to their ids), as (seq, id): ``held`` asked for the best few first (most rows pass), for the
    rest only when too few did. The same as asking for all at once, at a fraction of the row reads (the kNN returns
    twice the candidates it was asked for)."""
    head = limit + limit // 4 + 5
    out: list[tuple[int, str]] = []
    for part in (seqs[:head], seqs[head:]):
        if not part:
            continue
        ids = held(part)
        out += [(sq, ids[sq]) for sq in part if sq in ids]
        if len(out) >= limit:
            break
    return out[:limit]


class GroupVectors:
    """One large group's vectors in memory.

    Up to ``EXACT_SCAN_MAX`` vectors: float32, scanned exactly (a matrix-vector product: cheaper than SQLite's
    vector scan by far). Above: binary codes (sign bits) for a Hamming pre-selection of ``CANDIDATES`` vectors,
    float16 for rescoring them. Measured on the 100k facts of ``loregraph bench search`` (MiniLM-composed vectors,
    174 real query embeddings): recall@20 against the exact scan 0.977 with 400 candidates, 0.992 with 600, 0.998
    with 1,000 (rescoring 1,000 float16 rows costs well under a millisecond).
    """

    CANDIDATES = 1000
    # float32 scan up to here: past ~4,000 rows OpenBLAS splits the product over threads, which took 20 ms on a
    # busy 2-core machine where the Hamming pre-selection of 20,000 took under 1 ms
    EXACT_SCAN_MAX = 4000

    def __init__(self, generation: int, rows: Sequence[tuple[Any, ...]], dim: int):
        """``rows``: (seq, float32 bytes) or (seq, float32 bytes, record id); with ids, ``ids`` maps seq to id."""
        self.generation = generation
        self.seqs = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        self.ids: dict[int, str] | None = {int(r[0]): str(r[2]) for r in rows} if rows and len(rows[0]) > 2 else None
        mat = self._unit(rows, dim)
        self.exact = len(rows) <= self.EXACT_SCAN_MAX
        self.bits = dim
        if self.exact:
            self.vectors: np.ndarray = mat
            self.codes = np.zeros((0, len(rows)), dtype=np.uint64)
        else:
            self.codes = self._codes(mat)
            self.vectors = mat.astype(np.float16)
        self.scores: dict[int, float] = {}

    @staticmethod
    def _unit(rows: Sequence[tuple[Any, ...]], dim: int) -> np.ndarray:
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
        # unit length, so a dot product is the cosine similarity sqlite-vec's exact path reports
        return mat / np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-12)

    @staticmethod
    def _codes(mat: np.ndarray) -> np.ndarray:
        codes = np.packbits(mat > 0, axis=1)
        pad = (-codes.shape[1]) % 8
        if pad:
            codes = np.pad(codes, ((0, 0), (0, pad)))
        return np.ascontiguousarray(codes.view(np.uint64).T)  # (words, n): fast column popcount

    def extended(self, generation: int, rows: Sequence[tuple[Any, ...]]) -> GroupVectors | None:
        """A copy with ``rows`` (the constructor's form, inserted after every row held) at the end: what loading
        them all would give. None when the rows held and new would be searched the other way (exact scan or
        binary codes), or for a subclass (whose own per-row data this does not extend): then load them all."""
        n = len(self.seqs) + len(rows)
        if (type(self) is not GroupVectors or not rows or (n <= self.EXACT_SCAN_MAX) != self.exact
                or (self.ids is not None) != (len(rows[0]) > 2)):
            return None
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.generation = generation
        out.seqs = np.concatenate([self.seqs, np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))])
        out.ids = None if self.ids is None else {**self.ids, **{int(r[0]): str(r[2]) for r in rows}}
        mat = self._unit(rows, self.bits)
        if self.exact:
            out.vectors = np.concatenate([self.vectors, mat])
            out.codes = np.zeros((0, n), dtype=np.uint64)
        else:
            out.codes = np.ascontiguousarray(np.concatenate([self.codes, self._codes(mat)], axis=1))
            out.vectors = np.concatenate([self.vectors, mat.astype(np.float16)])
        out.scores = {}
        return out

    @property
    def nbytes(self) -> int:
        """Memory held by the vectors and codes."""
        ids = sum(len(i) + 120 for i in self.ids.values()) if self.ids else 0  # str objects and dict slots, roughly
        return int(self.vectors.nbytes + self.codes.nbytes + self.seqs.nbytes + ids)

    def nearest(self, query: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[int]:
        """Seqs of (about) the ``k * 2`` nearest vectors, best first (``scores`` holds their similarities); with
        ``allowed`` (one bool per vector, in load order) only among those."""
        n = len(self.seqs)
        pool = n if allowed is None else int(np.count_nonzero(allowed))
        if pool == 0:
            self.scores = {}
            return []
        query = np.asarray(query, dtype=np.float32)
        query = query / max(float(np.linalg.norm(query)), 1e-12)
        if self.exact:
            sims = _dot(self.vectors, query)
            if allowed is not None:
                sims = np.where(allowed, sims, -np.inf)
            top = min(k * 2, pool)
            cand = np.argpartition(-sims, top - 1)[:top] if top < n else np.arange(n)
            if allowed is not None:
                cand = cand[allowed[cand]]
            sims = sims[cand]
        else:
            cand = self._candidates(query, min(pool, max(self.CANDIDATES, k * 4)), allowed)
            sims = _dot(self.vectors[cand].astype(np.float32), query)
        order = np.argsort(-sims, kind="stable")[: k * 2]
        chosen = self.seqs[cand[order]]
        self.scores = {int(sq): float(sims[i]) for sq, i in zip(chosen, order, strict=True)}
        return [int(x) for x in chosen]

    def _candidates(self, query: np.ndarray, m: int, allowed: np.ndarray | None) -> np.ndarray:
        """Indexes of the ``m`` vectors closest to ``query`` by Hamming distance of the sign bits (among
        ``allowed``): a histogram of the distances gives the cut, so no partial sort of all ``n`` is needed."""
        qc = np.packbits(query > 0)
        pad = (-qc.shape[0]) % 8
        qc = np.pad(qc, (0, pad)).view(np.uint64)
        dist = np.bitwise_count(self.codes[0] ^ qc[0]).astype(np.uint16)
        for w in range(1, len(qc)):
            dist += np.bitwise_count(self.codes[w] ^ qc[w])
        if allowed is not None:
            dist[~allowed] = self.bits + 1  # past any real distance
        cum = np.cumsum(np.bincount(dist, minlength=self.bits + 2))
        cut = int(np.searchsorted(cum, m))  # the distance at which the m-th candidate comes
        below = np.flatnonzero(dist < cut)
        tied = np.flatnonzero(dist == cut)[: m - len(below)]
        cand = np.concatenate([below, tied])
        if allowed is not None:
            cand = cand[allowed[cand]]
        return cand


class ScopedGroupVectors(GroupVectors):
    """A group's vectors with each one's owner and visibility, searched among those a user may see (their own or
    SHARED): the mask is applied before the Hamming pre-selection, so other users' vectors never crowd theirs out."""

    def __init__(self, generation: int, rows: list[tuple[int, bytes, str | None, str | None]], dim: int):
        super().__init__(generation, [(r[0], r[1]) for r in rows], dim)
        owners = np.array([r[2] or "" for r in rows], dtype=str)
        names, self.owner_codes = np.unique(owners, return_inverse=True)
        self.owner_index = {str(n): i for i, n in enumerate(names)}
        self.shared = np.fromiter((r[3] == "SHARED" for r in rows), dtype=bool, count=len(rows))

    def visible_to(self, user_id: str) -> np.ndarray:
        code = self.owner_index.get(user_id)
        return self.shared if code is None else self.shared | (self.owner_codes == code)
