"""The in-memory vector search of large SQLite groups (``store.vectors.GroupVectors``): the exact scan of mid-size
groups returns exactly the nearest, the Hamming pre-selection of large ones keeps the nearest among its candidates,
and a visibility mask keeps every vector outside it out of the answer."""

from __future__ import annotations

import numpy as np

from loregraph.store.vectors import GroupVectors, ScopedGroupVectors, first_held

DIM = 384


def clustered(n: int, seed: int) -> np.ndarray:
    """Unit vectors around 400 topics within 20 themes: neighbourhoods like those of sentence embeddings."""
    rng = np.random.default_rng(seed)
    themes = rng.standard_normal((20, DIM)).astype(np.float32)
    topics = rng.standard_normal((400, DIM)).astype(np.float32)
    topic = rng.integers(0, 400, n)
    mat = themes[topic % 20] + 0.7 * topics[topic] + 0.2 * rng.standard_normal((n, DIM)).astype(np.float32)
    return mat / np.linalg.norm(mat, axis=1, keepdims=True)


def near(mat: np.ndarray, n: int, seed: int) -> np.ndarray:
    """Queries: stored vectors, moved a little."""
    rng = np.random.default_rng(seed)
    q = mat[rng.integers(0, len(mat), n)] + 0.05 * rng.standard_normal((n, DIM)).astype(np.float32)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def rows(mat: np.ndarray, first_seq: int = 1000) -> list[tuple[int, bytes]]:
    return [(first_seq + i, v.tobytes()) for i, v in enumerate(mat)]


def exact_top(mat: np.ndarray, q: np.ndarray, k: int, first_seq: int = 1000) -> list[int]:
    return [first_seq + int(i) for i in np.argsort(-(mat @ q), kind="stable")[:k]]


def test_a_mid_size_group_is_scanned_exactly():
    mat = clustered(3000, 1)
    gv = GroupVectors(1, rows(mat), DIM)
    assert gv.exact
    for q in near(mat, 20, 2):
        got = gv.nearest(q, 10)
        assert got[:10] == exact_top(mat, q, 10)
        assert abs(gv.scores[got[0]] - float(mat[got[0] - 1000] @ q)) < 1e-5


def test_a_large_group_finds_nearly_all_true_neighbours_through_its_binary_codes(monkeypatch):
    monkeypatch.setattr(GroupVectors, "EXACT_SCAN_MAX", 1000)
    mat = clustered(6000, 3)
    gv = GroupVectors(1, rows(mat), DIM)
    assert not gv.exact and gv.nbytes < mat.nbytes  # float16 and bit codes instead of float32
    found = 0
    queries = near(mat, 30, 4)
    for q in queries:
        got = gv.nearest(q, 20)
        assert len(got) == 40 and len(set(got)) == 40
        found += len(set(got[:20]) & set(exact_top(mat, q, 20)))
    assert found / (20 * len(queries)) >= 0.98


def test_a_visibility_mask_keeps_everything_outside_it_out(monkeypatch):
    mat = clustered(2500, 5)
    owners = ["ann" if i % 3 == 0 else "bob" for i in range(len(mat))]
    shared = [i % 10 == 1 for i in range(len(mat))]
    data = [(1000 + i, v.tobytes(), owners[i], "SHARED" if shared[i] else None) for i, v in enumerate(mat)]
    for scan_max in (GroupVectors.EXACT_SCAN_MAX, 1000):  # the exact scan, then the Hamming pre-selection
        monkeypatch.setattr(GroupVectors, "EXACT_SCAN_MAX", scan_max)
        gv = ScopedGroupVectors(1, data, DIM)
        assert gv.exact == (scan_max > len(mat))
        mask = gv.visible_to("ann")
        visible = {1000 + i for i in range(len(mat)) if owners[i] == "ann" or shared[i]}
        for q in near(mat, 10, 6):
            got = gv.nearest(q, 10, mask)
            assert got and set(got) <= visible
            assert got[0] == max(visible, key=lambda s: float(mat[s - 1000] @ q))
        assert gv.nearest(clustered(1, 7)[0], 10, np.zeros(len(mat), dtype=bool)) == []


def test_scores_are_cosine_similarities_whatever_the_stored_length(monkeypatch):
    """SQLite's exact path reports cosine similarity: the in-memory paths do too, for vectors of any length."""
    mat = clustered(2000, 8)
    scaled = mat * np.linspace(0.5, 3.0, len(mat), dtype=np.float32)[:, None]
    for scan_max in (GroupVectors.EXACT_SCAN_MAX, 1000):
        monkeypatch.setattr(GroupVectors, "EXACT_SCAN_MAX", scan_max)
        gv = GroupVectors(1, rows(scaled), DIM)
        q = near(mat, 1, 9)[0]
        got = gv.nearest(2.5 * q, 5)
        assert got[0] == exact_top(mat, q, 1)[0]
        for sq in got:
            assert abs(gv.scores[sq] - float(mat[sq - 1000] @ q)) < 2e-3  # float16 rescoring above the scan


def test_extended_equals_loading_every_row_and_declines_a_change_of_mode(monkeypatch):
    """``extended`` (rows inserted after those held, added without reloading them) gives what one load of all rows
    gives: seqs, ids, codes, vectors and neighbours; it declines when the group crosses the exact-scan limit."""
    monkeypatch.setattr(GroupVectors, "EXACT_SCAN_MAX", 300)
    rng = np.random.default_rng(4)
    mat = rng.standard_normal((900, 24)).astype(np.float32)
    rows = [(i * 3 + 1, mat[i].tobytes(), f"id{i}") for i in range(900)]
    for held, total in ((100, 250), (400, 900)):  # exact scan, binary codes
        full = GroupVectors(9, rows[:total], 24)
        grown = GroupVectors(1, rows[:held], 24).extended(9, rows[held:total])
        assert grown is not None and grown.generation == 9 and grown.exact == full.exact
        assert np.array_equal(grown.seqs, full.seqs) and grown.ids == full.ids
        assert np.array_equal(grown.codes, full.codes) and np.array_equal(grown.vectors, full.vectors)
        for _ in range(5):
            q = rng.standard_normal(24).astype(np.float32)
            assert grown.nearest(q, 10) == full.nearest(q, 10) and grown.scores == full.scores
    assert GroupVectors(1, rows[:250], 24).extended(2, rows[250:400]) is None  # exact -> codes: load them all
    assert GroupVectors(1, rows[:250], 24).extended(2, []) is None


def test_first_held_is_the_first_rows_passing_the_filter_read_best_first():
    """The kNN's candidates are held to the kind's filter best first: the result is that of filtering them all
    at once, and the rows past the best few are read only when too few of those pass."""
    seqs = list(range(100, 0, -1))
    for passing in (lambda s: True, lambda s: s % 3 == 0, lambda s: s < 20, lambda s: False):
        asked: list[list[int]] = []

        def held(part: list[int], passing=passing, asked=asked) -> dict[int, str]:
            asked.append(part)
            return {s: f"id{s}" for s in part if passing(s)}

        want = [(s, f"id{s}") for s in seqs if passing(s)][:10]
        assert first_held(seqs, 10, held) == want
        assert sorted(s for part in asked for s in part) == sorted(set(s for part in asked for s in part))
        if passing(100) and passing(99):  # all pass: only the best few were read
            assert sum(len(p) for p in asked) < len(seqs) // 2
    assert first_held([], 10, lambda part: {}) == []
