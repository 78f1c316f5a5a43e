"""Community detection on a group's graph of current facts: Louvain (networkx), weighted, seeded, bounded.

Pure functions over edges; nothing here reads or writes a store. Louvain comes from networkx (BSD licence, pure
Python): Leiden (``leidenalg``/``igraph``) is GPL-licensed, which an Apache-2.0 package cannot require.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import networkx as nx

SEED = 15
"""Louvain's random node order comes from this seed: one graph, one answer."""
MAX_LEVELS = 8
"""Louvain aggregates at most this many times (each level at least halves nothing but never loops forever:
modularity strictly rises every pass, and the levels are cut here)."""
RESOLUTION_EDGES = 20_000
"""Modularity cannot see clusters smaller than about the square root of the graph's edges (its resolution
limit): at 100k entities Louvain at resolution 1 merged 2000 planted clusters of 50 into 389 (ARI 0.30). The
resolution grows with the edge count past this many edges (resolution = edges / RESOLUTION_EDGES, at least 1),
so how much two clusters must be tied to merge stops depending on the size of the rest of the graph. Measured on
planted graphs (`loregraph bench communities`): 10k entities (60k edges) ARI 0.75 at 1, 1.0 at 3 (the rule's);
100k (600k edges) 0.30 at 1, 0.90 at 7.7, 0.99 at 16, 1.0 at 30 (the rule's)."""
THRESHOLD = 1e-7
MIN_SIZE = 2
"""A cluster of one entity (no current fact) is no community."""


@dataclass
class Clustering:
    """Clusters (each a sorted list of node ids), largest first; ``levels`` Louvain ran."""

    clusters: list[list[str]] = field(default_factory=list)
    levels: int = 0
    nodes: int = 0
    edges: int = 0

    def labels(self) -> dict[str, int]:
        """node id -> index of its cluster."""
        return {n: i for i, members in enumerate(self.clusters) for n in members}


def weighted_graph(edges: Iterable[tuple[str, str, float]], nodes: Iterable[str] = ()) -> nx.Graph:
    """An undirected graph, one edge per pair of entities, weighted by the sum of its facts' confidences.

    Nodes and edges go in sorted order, so the same facts give the same graph (and the same seeded clustering)
    whatever order the store returned them in."""
    weights: dict[tuple[str, str], float] = defaultdict(float)
    for a, b, w in edges:
        if a == b:
            continue
        weights[(a, b) if a < b else (b, a)] += max(float(w), 0.0) or 1e-3
    g = nx.Graph()
    g.add_nodes_from(sorted(set(nodes) | {x for pair in weights for x in pair}))
    g.add_weighted_edges_from((a, b, weights[(a, b)]) for a, b in sorted(weights))
    return g


def resolution_for(edges: int) -> float:
    """The Louvain resolution for a graph of ``edges`` edges (see ``RESOLUTION_EDGES``)."""
    return max(1.0, edges / RESOLUTION_EDGES)


def detect(graph: nx.Graph, *, seed: int = SEED, max_levels: int = MAX_LEVELS, resolution: float | None = None,
           min_size: int = MIN_SIZE) -> Clustering:
    """Louvain communities of ``graph`` (edge attribute ``weight``), at most ``max_levels`` aggregation levels;
    ``resolution`` by default from the graph's size (``resolution_for``)."""
    if max_levels < 1:
        raise ValueError("max_levels: must be at least 1")
    if resolution is None:
        resolution = resolution_for(graph.number_of_edges())
    out = Clustering(nodes=graph.number_of_nodes(), edges=graph.number_of_edges())
    if graph.number_of_edges() == 0:
        return out
    partition: list[set[str]] = []
    for level, part in enumerate(nx.community.louvain_partitions(graph, weight="weight", resolution=resolution,
                                                                 threshold=THRESHOLD, seed=seed), start=1):
        partition, out.levels = part, level
        if level >= max_levels:
            break
    clusters = [sorted(c) for c in partition if len(c) >= min_size]
    clusters.sort(key=lambda c: (-len(c), c[0]))
    out.clusters = clusters
    return out


def connected_components(graph: nx.Graph, min_size: int = MIN_SIZE) -> Clustering:
    """The baseline the benchmark compares with (and what loregraph did before): one cluster per component."""
    clusters = sorted((sorted(c) for c in nx.connected_components(graph) if len(c) >= min_size),
                      key=lambda c: (-len(c), c[0]))
    return Clustering(clusters=clusters, levels=0, nodes=graph.number_of_nodes(), edges=graph.number_of_edges())


def majority(neighbours: Mapping[str, float], membership: Mapping[str, str]) -> str | None:
    """The community holding the largest weight of a node's neighbours (ties: the smaller id), or None."""
    votes: dict[str, float] = defaultdict(float)
    for nb, w in neighbours.items():
        cid = membership.get(nb)
        if cid is not None:
            votes[cid] += w
    if not votes:
        return None
    return min(votes, key=lambda c: (-votes[c], c))


def assign_incrementally(graph: nx.Graph, new_nodes: Iterable[str], membership: Mapping[str, str],
                         max_passes: int = 3) -> dict[str, str]:
    """Join each new node to its neighbours' majority community. A node whose neighbours are new too may join
    through them on a later pass (at most ``max_passes``). Returns node -> community for the nodes placed."""
    known = dict(membership)
    todo = sorted(n for n in set(new_nodes) if n not in known and n in graph)
    placed: dict[str, str] = {}
    for _ in range(max_passes):
        progress = False
        for n in todo:
            if n in placed:
                continue
            cid = majority({nb: d.get("weight", 1.0) for nb, d in graph[n].items()}, known)
            if cid is not None:
                placed[n] = known[n] = cid
                progress = True
        if not progress:
            break
    return placed


__all__ = [
    "MAX_LEVELS",
    "RESOLUTION_EDGES",
    "SEED",
    "Clustering",
    "assign_incrementally",
    "connected_components",
    "detect",
    "majority",
    "resolution_for",
    "weighted_graph",
]
