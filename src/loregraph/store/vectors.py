"""In-memory vector search for large groups: binary codes pick candidates, float16 rescoring ranks them."""

from __future__ import annotations

import numpy as np


class GroupVectors:
    """One large group's vectors in memory: binary codes for a Hamming pre-selection, float16 for rescoring.

    Measured on 100k MiniLM-composed vectors: 400 Hamming candidates rescored give recall@20 of 0.99 in ~4 ms.
    """

    CANDIDATES = 400

    def __init__(self, generation: int, rows: list[tuple[int, bytes]], dim: int):
        self.generation = generation
        self.seqs = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
        self.codes = np.packbits(mat > 0, axis=1)
        pad = (-self.codes.shape[1]) % 8
        if pad:
            self.codes = np.pad(self.codes, ((0, 0), (0, pad)))
        self.codes = np.ascontiguousarray(self.codes.view(np.uint64).T)  # (words, n): fast column popcount
        self.vectors = mat.astype(np.float16)
        self.scores: dict[int, float] = {}

    def nearest(self, query: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[int]:
        """Seqs of (about) the ``k * 2`` nearest vectors, best first (``scores`` holds their similarities); with
        ``allowed`` (one bool per vector, in load order) only among those."""
        n = len(self.seqs)
        if n == 0:
            return []
        qc = np.packbits(query > 0)
        pad = (-qc.shape[0]) % 8
        qc = np.pad(qc, (0, pad)).view(np.uint64)
        dist = np.bitwise_count(self.codes ^ qc[:, None]).sum(axis=0, dtype=np.uint16)
        pool = n
        if allowed is not None:
            pool = int(np.count_nonzero(allowed))
            if pool == 0:
                return []
            dist = np.where(allowed, dist, np.iinfo(np.uint16).max)
        m = min(pool, max(self.CANDIDATES, k * 4))
        cand = np.argpartition(dist, m - 1)[:m] if m < n else np.arange(n)
        if allowed is not None:
            cand = cand[allowed[cand]]
        sims = self.vectors[cand].astype(np.float32) @ query
        order = np.argsort(-sims)[: k * 2]
        chosen = self.seqs[cand[order]]
        self.scores = {int(sq): float(sims[i]) for sq, i in zip(chosen, order, strict=True)}
        return [int(x) for x in chosen]


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
