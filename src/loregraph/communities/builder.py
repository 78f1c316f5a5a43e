"""Builds and keeps a group's communities: full rebuilds (Louvain over current facts) and incremental
assignment of new entities on ingest, named and summarised from their members (or by one LLM call each)."""

from __future__ import annotations

import logging
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from loregraph.communities.cluster import MAX_LEVELS, SEED, assign_incrementally, detect, weighted_graph
from loregraph.graph.types import Community, Entity, Fact, GraphDelta, utcnow
from loregraph.models.embedder import Embedder
from loregraph.models.llm import LLMClient, LLMError
from loregraph.schema import Schema
from loregraph.store.base import Store, TimeFilter

log = logging.getLogger("loregraph.communities")

MAX_EDGES = 2_000_000
"""A rebuild clusters at most this many current facts (the oldest): its size, and so its time, is bounded."""
DRIFT_SHARE = 0.10
"""A full rebuild is due once the entities placed (or left out) incrementally since the last build reach this
share of the members then. Measured (`loregraph bench communities`): placing 10% of a planted graph's
entities incrementally keeps 97% of a full rebuild's ARI, 25% only 87%."""
DRIFT_MIN = 20
"""...and at least this many, so a small group is not rebuilt on every message."""
TOP_MEMBERS = 3
TOP_FACTS = 3
LLM_MEMBERS = 12
LLM_FACTS = 12
NAMESPACE = uuid.UUID("6f1b3c1e-2a55-4b63-9a0e-15c0aa15c0aa")

SUMMARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 80}, "summary": {"type": "string", "maxLength": 600}},
    "required": ["name", "summary"],
    "additionalProperties": False,
}
SUMMARY_PROMPT = ("You name and summarise one community of a knowledge graph: entities that are closely related. "
                  "Answer with JSON: a short name (at most 6 words) and a summary (1-3 sentences) of what ties the "
                  "members together, using only the facts given.")


@dataclass
class BuildReport:
    """What a full rebuild did."""

    group_id: str
    entities: int = 0
    edges: int = 0
    communities: int = 0
    members: int = 0
    levels: int = 0
    llm_calls: int = 0
    kept: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"group_id": self.group_id, "entities": self.entities, "edges": self.edges,
                "communities": self.communities, "members": self.members, "levels": self.levels,
                "llm_calls": self.llm_calls, "unchanged": self.kept, "timings_ms": self.timings_ms}


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1e3, 1)


def embedding_text(community: Community) -> str:
    """The text a community's vector is computed from (its name and summary)."""
    return f"{community.name}. {community.summary}"


class CommunityBuilder:
    """Community detection for one store. ``llm`` (the LLM extractor's client) names and summarises each
    community with one call; without it names and summaries are extractive."""

    def __init__(self, store: Store, schema: Schema, embedder: Embedder, llm: LLMClient | None = None, *,
                 seed: int = SEED, max_levels: int = MAX_LEVELS, max_edges: int = MAX_EDGES,
                 drift_share: float = DRIFT_SHARE, drift_min: int = DRIFT_MIN):
        self.store, self.schema, self.embedder, self.llm = store, schema, embedder, llm
        self.seed, self.max_levels, self.max_edges = seed, max_levels, max_edges
        self.drift_share, self.drift_min = drift_share, drift_min

    # ---- full rebuild ---------------------------------------------------------------------------------
    def build(self, group_id: str) -> BuildReport:
        """Recluster the group from its current facts and replace its communities (one transaction)."""
        report = BuildReport(group_id)
        t0 = t = time.perf_counter()
        edges = self.store.current_edges(group_id, self.max_edges)
        graph = weighted_graph((s, d, w) for _, s, d, w in edges)
        report.timings_ms["read"] = _ms(t)
        t = time.perf_counter()
        clustering = detect(graph, seed=self.seed, max_levels=self.max_levels)
        report.timings_ms["cluster"] = _ms(t)
        report.entities, report.edges, report.levels = graph.number_of_nodes(), len(edges), clustering.levels
        t = time.perf_counter()
        old_members: dict[str, set[str]] = defaultdict(set)
        for eid, cid in self.store.community_membership(group_id, list(graph.nodes)).items():
            old_members[cid].add(eid)
        old = {c.id: c for c in self.store.get_communities(group_id, list(old_members))}
        ids = self._stable_ids(group_id, clustering.clusters, old_members)
        member_ids = [m for c in clustering.clusters for m in c]
        entities = {e.id: e for e in self.store.get_entities(group_id, member_ids)}
        by_id = {fid: (s, d) for fid, s, d, _ in edges}
        communities: list[Community] = []
        fresh: list[Community] = []
        now = utcnow()
        for cid, members in zip(ids, clustering.clusters, strict=True):
            prev = old.get(cid)
            if prev is not None and set(prev.member_ids) == set(members):  # same members: name, summary, vector
                communities.append(Community(id=cid, group_id=group_id, name=prev.name, summary=prev.summary,
                                             member_ids=members, created_at=prev.created_at, updated_at=now))
                report.kept += 1
                continue
            name, summary, called = self.describe(group_id, members, graph, entities, by_id)
            report.llm_calls += called
            com = Community(id=cid, group_id=group_id, name=name, summary=summary, member_ids=members,
                            created_at=prev.created_at if prev else now, updated_at=now)
            communities.append(com)
            fresh.append(com)
        report.timings_ms["describe"] = _ms(t)
        t = time.perf_counter()
        self._embed(fresh)
        report.timings_ms["embed"] = _ms(t)
        t = time.perf_counter()
        self.store.apply(GraphDelta(group_id=group_id, communities=communities, communities_rebuilt=True),
                         self.schema)
        report.timings_ms["persist"] = _ms(t)
        report.communities, report.members = len(communities), len(member_ids)
        report.timings_ms["total"] = _ms(t0)
        log.info("communities of group=%s rebuilt in %.0f ms: entities=%d edges=%d communities=%d members=%d "
                 "levels=%d unchanged=%d llm_calls=%d", group_id, report.timings_ms["total"], report.entities,
                 report.edges, report.communities, report.members, report.levels, report.kept, report.llm_calls)
        return report

    @staticmethod
    def _stable_ids(group_id: str, clusters: list[list[str]], old_members: dict[str, set[str]]) -> list[str]:
        """Each new cluster keeps the id of the old community it shares most members with (greedy, largest
        overlap first); the others get an id derived from the group and their first member."""
        overlaps = []
        for i, members in enumerate(clusters):
            counts = Counter(cid for cid, ms in old_members.items() for _ in ms.intersection(members))
            overlaps += [(-n, i, cid) for cid, n in counts.items()]
        chosen: dict[int, str] = {}
        taken: set[str] = set()
        for _, i, cid in sorted(overlaps):
            if i not in chosen and cid not in taken:
                chosen[i] = cid
                taken.add(cid)
        return [chosen.get(i) or str(uuid.uuid5(NAMESPACE, f"{group_id}:{members[0]}"))
                for i, members in enumerate(clusters)]

    # ---- names and summaries --------------------------------------------------------------------------
    def describe(self, group_id: str, members: Sequence[str], graph: nx.Graph, entities: dict[str, Entity],
                 fact_ends: dict[str, tuple[str, str]]) -> tuple[str, str, int]:
        """(name, summary, LLM calls made) of one community: its most central members and facts."""
        inside = set(members)
        sub = graph.subgraph(inside)
        degree = {m: float(sub.degree(m, weight="weight")) for m in members}
        ranked = sorted((m for m in members if m in entities),
                        key=lambda m: (-degree[m], -entities[m].mention_count, entities[m].name))
        fact_ids = [fid for fid, (s, d) in fact_ends.items() if s in inside and d in inside]
        fact_ids.sort(key=lambda f: (-(degree.get(fact_ends[f][0], 0) + degree.get(fact_ends[f][1], 0)), f))
        facts = self.store.get_facts(group_id, fact_ids[:max(TOP_FACTS, LLM_FACTS if self.llm else 0)])
        if self.llm is not None:
            described = self._llm_describe(group_id, [entities[m] for m in ranked[:LLM_MEMBERS]], facts, len(members))
            if described is not None:
                return described[0], described[1], 1
            return (*self._extractive(ranked, entities, facts, len(members)), 1)
        return (*self._extractive(ranked, entities, facts, len(members)), 0)

    @staticmethod
    def _extractive(ranked: list[str], entities: dict[str, Entity], facts: list[Fact], size: int) -> tuple[str, str]:
        top = [entities[m].name for m in ranked[:TOP_MEMBERS]]
        name = ", ".join(top) if top else "community"
        types = Counter(entities[m].type for m in ranked)
        kinds = ", ".join(f"{n} {t}" for t, n in sorted(types.items(), key=lambda kv: (-kv[1], kv[0])))
        parts = [f"{size} related entities ({kinds})." if kinds else f"{size} related entities."]
        if top:
            parts.append(f"Central: {', '.join(top)}.")
        texts = [f.fact.rstrip(".") for f in facts[:TOP_FACTS] if f.fact]
        if texts:
            parts.append("Key facts: " + "; ".join(texts) + ".")
        return name, " ".join(parts)

    def _llm_describe(self, group_id: str, members: list[Entity], facts: list[Fact],
                      size: int) -> tuple[str, str] | None:
        assert self.llm is not None
        lines = [f"Community of {size} entities. Most central members:"]
        lines += [f"- {e.name} ({e.type})" for e in members]
        lines.append("Most central facts:")
        lines += [f"- {f.fact}" for f in facts[:LLM_FACTS] if f.fact]
        messages = [{"role": "system", "content": SUMMARY_PROMPT}, {"role": "user", "content": "\n".join(lines)}]
        try:
            res = self.llm.complete_json(messages, SUMMARY_SCHEMA, name="community_summary")
        except LLMError as exc:
            log.warning("community summary of group=%s by the LLM failed (%s); extractive instead", group_id,
                        exc.kind)
            return None
        name, summary = str(res.data.get("name") or "").strip(), str(res.data.get("summary") or "").strip()
        if not name:
            return None
        return name[:120], summary[:1000]

    def _embed(self, communities: list[Community]) -> None:
        if not communities:
            return
        vectors = self.embedder.embed([embedding_text(c) for c in communities])
        for com, vec in zip(communities, vectors, strict=True):
            com.embedding = vec.tolist()

    # ---- incremental ----------------------------------------------------------------------------------
    def assign(self, delta: GraphDelta) -> None:
        """Before ``delta`` is applied: place its entities that are in no community yet into their neighbours'
        majority community (the delta then carries those communities' new member lists and the drift)."""
        gid = delta.group_id
        new_ids = [e.id for e in delta.entities]
        if not new_ids:
            return
        ended = {inv.fact_id for inv in delta.invalidations}
        delta_facts = {f.id: f for f in delta.facts}
        edges: dict[str, tuple[str, str, float]] = {}
        for fid, s, d in self.store.fact_edges(gid, new_ids, TimeFilter(), 2000):
            edges[fid] = (s, d, 1.0)
        for f in delta.facts:
            if f.is_current():
                edges[f.id] = (f.source_id, f.target_id, f.confidence)
            else:
                edges.pop(f.id, None)
        for fid in ended:
            edges.pop(fid, None)
        for fid in list(edges):
            if fid in delta_facts and not delta_facts[fid].is_current():
                edges.pop(fid)
        graph = weighted_graph(edges.values(), new_ids)
        membership = self.store.community_membership(gid, list(graph.nodes))
        placed = assign_incrementally(graph, new_ids, membership)
        lonely = [n for n in new_ids if n not in membership and n not in placed and graph.degree(n) > 0]
        delta.community_drift = len(placed) + len(lonely)
        if not placed:
            return
        joined: dict[str, list[str]] = defaultdict(list)
        for eid, cid in placed.items():
            joined[cid].append(eid)
        now = utcnow()
        for com in self.store.get_communities(gid, sorted(joined)):
            delta.communities.append(Community(
                id=com.id, group_id=gid, name=com.name, summary=com.summary, created_at=com.created_at,
                updated_at=now, member_ids=sorted({*com.member_ids, *joined[com.id]})))

    def rebuild_due(self, group_id: str) -> bool:
        """A first build once the group has a fact; later ones once the drift passes the threshold."""
        state = self.store.community_state(group_id)
        if state is None:
            return bool(self.store.current_edges(group_id, 1))
        return state["drift"] >= max(self.drift_min, self.drift_share * state["members"])


__all__ = ["DRIFT_MIN", "DRIFT_SHARE", "MAX_EDGES", "BuildReport", "CommunityBuilder"]
