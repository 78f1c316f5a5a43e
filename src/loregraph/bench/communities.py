"""``loregraph bench communities``: planted clusters (a stochastic block model from networkx) recovered by the
community build, scored by the adjusted Rand index against the planted blocks, with build time; the baseline is
connected components (what "X and related" communities were) on the same graph in the same run. A second table
measures drift: clusters first built without a share of the entities, those then placed incrementally (each
joins its neighbours' majority), against a full rebuild — how far incremental assignment may go before a
rebuild pays (``DRIFT_SHARE``)."""

from __future__ import annotations

import random
import time
from typing import Any

import networkx as nx
from rich.console import Console

from loregraph.communities.builder import DRIFT_SHARE
from loregraph.communities.cluster import (
    Clustering,
    assign_incrementally,
    connected_components,
    detect,
    weighted_graph,
)

BLOCK = 50
IN_DEGREE = 10.0
OUT_DEGREE = 2.0


def _ari() -> Any:
    try:
        from sklearn.metrics import adjusted_rand_score
    except ImportError:  # pragma: no cover - scikit-learn comes with the test and bench extras
        raise SystemExit("loregraph bench communities needs scikit-learn: pip install 'loregraph[bench]'") from None
    return adjusted_rand_score


def planted(n: int, seed: int, block: int = BLOCK, in_degree: float = IN_DEGREE,
            out_degree: float = OUT_DEGREE) -> tuple[list[tuple[str, str, float]], dict[str, int]]:
    """Edges of an SBM graph with ``n // block`` planted blocks (expected degree: ``in_degree`` inside the
    block, ``out_degree`` outside) and each node's block."""
    k = max(n // block, 2)
    p_in, p_out = min(in_degree / (block - 1), 1.0), out_degree / max(n - block, 1)
    probs = [[p_in if i == j else p_out for j in range(k)] for i in range(k)]
    g = nx.stochastic_block_model([block] * k, probs, seed=seed, sparse=True)
    truth = {f"e{v:07d}": g.nodes[v]["block"] for v in g.nodes}
    return [(f"e{a:07d}", f"e{b:07d}", 1.0) for a, b in g.edges()], truth


def score(found: Clustering | dict[str, Any], truth: dict[str, int]) -> float:
    labels = found.labels() if isinstance(found, Clustering) else found
    nodes = sorted(truth)
    return float(_ari()([truth[v] for v in nodes], [labels.get(v, f"alone-{v}") for v in nodes]))


def run_communities_bench(sizes: list[int], seed: int, console: Console, drift: list[float]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for n in sizes:
        t = time.perf_counter()
        edges, truth = planted(n, seed)
        gen_s = time.perf_counter() - t
        t = time.perf_counter()
        graph = weighted_graph(edges, truth)
        found = detect(graph)
        build_s = time.perf_counter() - t
        t = time.perf_counter()
        base = connected_components(weighted_graph(edges, truth))
        base_s = time.perf_counter() - t
        row = {"entities": n, "edges": len(edges), "planted": n // BLOCK, "communities": len(found.clusters),
               "levels": found.levels, "ari": round(score(found, truth), 4), "build_s": round(build_s, 2),
               "baseline_components": len(base.clusters), "baseline_ari": round(score(base, truth), 4),
               "baseline_s": round(base_s, 3), "generate_s": round(gen_s, 1)}
        out.append(row)
        console.print(
            f"communities n={n} edges={len(edges)} planted={row['planted']}: louvain ARI {row['ari']:.3f} in "
            f"{build_s:.2f} s ({len(found.clusters)} communities, {found.levels} levels) | baseline connected "
            f"components ARI {row['baseline_ari']:.3f} in {base_s:.3f} s ({len(base.clusters)} components) | "
            f"ARI +{row['ari'] - row['baseline_ari']:.3f}, time x{build_s / max(base_s, 1e-9):.0f}", soft_wrap=True)
    if drift and sizes:
        n = sizes[0]
        edges, truth = planted(n, seed)
        full = detect(weighted_graph(edges, truth))
        full_ari = score(full, truth)
        nodes = sorted(truth)
        for share in drift:
            held = set(random.Random(seed).sample(nodes, int(share * n)))
            kept_edges = [e for e in edges if e[0] not in held and e[1] not in held]
            partial = detect(weighted_graph(kept_edges, [v for v in nodes if v not in held]))
            membership = {v: str(i) for i, c in enumerate(partial.clusters) for v in c}
            # the held-out entities arrive with their facts; each joins its neighbours' majority community
            placed = assign_incrementally(weighted_graph(edges, nodes), sorted(held), membership)
            labels = {**membership, **placed}
            inc_ari = score(labels, truth)
            console.print(
                f"drift n={n}: {share:.0%} of entities placed incrementally: ARI {inc_ari:.3f} vs full "
                f"rebuild {full_ari:.3f} (ratio {inc_ari / max(full_ari, 1e-9):.3f}; rebuild threshold "
                f"DRIFT_SHARE={DRIFT_SHARE:.0%})", soft_wrap=True)
            out.append({"drift_share": share, "incremental_ari": round(inc_ari, 4), "full_ari": round(full_ari, 4)})
    return out


__all__ = ["planted", "run_communities_bench", "score"]
