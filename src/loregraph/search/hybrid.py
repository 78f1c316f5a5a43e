"""Hybrid search: BM25 + vector kNN + BFS from the best entities, fused with reciprocal rank fusion.

Optional MMR (diversity) and center-node distance rerank. Current facts only by default; ``as_of``
answers what was true at a time. Every primitive is scoped to the requested groups.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any, Literal, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from loregraph.graph.types import Community, Entity, Episode, Fact, as_utc, validate_group_id
from loregraph.models.embedder import Embedder
from loregraph.search.graph import GraphQuery, route
from loregraph.search.turns import ANSWER_POOL, holds_question, rank_turns
from loregraph.store.base import Hit, Store, TimeFilter

T = TypeVar("T")
SearchPart = Literal["facts", "entities", "episodes", "communities"]
SEARCH_PARTS: tuple[SearchPart, ...] = ("facts", "entities", "episodes", "communities")
MAX_FILTER_VALUES = 256
RRF_K = 60
# Convex fusion: share of the score that comes from vector similarity (the rest from BM25). Tuned on LoCoMo
# conversations 0-4 (0.2-0.4 all beat RRF there); conversations 5-9 are reported apart.
VECTOR_WEIGHT = 0.3
BFS_WEIGHT = 0.25
# evidence(): how much a matching fact lifts the episodes it came from
FACT_EVIDENCE_BOOST = 0.1
# evidence(k) below k = 10: how many of the best turn's context turns (before, after) come right after it. None:
# the rescored turns (search.turns) already carry their neighbours' scores, and at k = 5 every slot counts
# (LoCoMo 0-4 paper recall@5 0.694 with 1 / 1, 0.710 with 0 / 1, 0.720 with 0 / 0) -- but a best turn that holds a
# question brings its reply, the turn after it (0.729). From k = 10 the whole context loaded (2 / 2 by default:
# recall@10 0.804, against 0.789 with 1 / 1 and 0.783 with none).
SMALL_EVIDENCE_CONTEXT = (0, 0)
SMALL_EVIDENCE_CONTEXT_OF_A_QUESTION = (0, 1)
# evidence(k) from k = 10: a context turn of the best turn is shown only when it is itself among the best
# EVIDENCE_CONTEXT_RANK rescored candidates (search.turns); a neighbour nothing else supports ("Nice! Good for
# you.") gives its slot to the next hit. LoCoMo 0-4 paper recall@10 0.828 -> 0.833 (5-9: 0.794 -> 0.797); best
# 10 / 15 / 20 / 40 / 60 / 120: 0.827 / 0.833 / 0.832 / 0.831 / 0.829 / 0.827; below k = 10 no change. A list as
# long as k = 25 keeps all the context (with the rule @25 0.884 -> 0.878, 0.881 with the best 75).
EVIDENCE_CONTEXT_RANK = 30
WHOLE_CONTEXT_FROM_K = 25
# with a prefetcher, the rows of this many of the best fused messages are read beside the pool's places (the
# rescoring loads the best ``ANSWER_POOL`` that pass the filters first; a few more cover those that do not)
HEAD_ROWS = ANSWER_POOL + 10
# Relevance floor: a search whose best match (cosine of the query to the closest fact, entity or message) stays
# below this returns nothing, flagged ``below_floor``; 0 turns the floor off. Measured with all-MiniLM-L6-v2
# (docs/relevance-floor.md): the highest floor (0.025 steps) that empties no on-topic question — LoCoMo's
# answerable questions of conversations 0-4 (lowest 0.37) and broad on-topic probes such as "What tools do we
# use?" (lowest 0.27) — while it empties 55 of 56 off-topic probes (highest 0.30).
DEFAULT_MIN_RELEVANCE = 0.25


class SearchFilters(BaseModel):
    """Narrow results. Time ranges are inclusive and apply to a fact's ``valid_at``."""

    model_config = ConfigDict(extra="forbid")
    entity_types: list[str] | None = Field(None, max_length=MAX_FILTER_VALUES)
    relation_types: list[str] | None = Field(None, max_length=MAX_FILTER_VALUES)
    valid_after: datetime | None = None
    valid_before: datetime | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None

    @field_validator("valid_after", "valid_before", "created_after", "created_before")
    @classmethod
    def _utc(cls, v: datetime | None) -> datetime | None:
        return as_utc(v) if v else None


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=4096)
    group_ids: list[str] = Field(min_length=1)
    limit: int = Field(default=10, ge=1, le=200)
    filters: SearchFilters = Field(default_factory=SearchFilters)
    as_of: datetime | None = None
    include_ended: bool = Field(default=False, description="Ended facts too (history), each with its interval")
    include: list[SearchPart] = Field(default_factory=lambda: list(SEARCH_PARTS))
    center_node_id: str | None = None
    mmr: float | None = Field(default=None, ge=0.0, le=1.0, description="MMR lambda; None disables")
    bfs_depth: int = Field(default=2, ge=0, le=3)
    route: bool = Field(default=False, description="Route the query (graph / vector / combined) first")
    # default: 2 from limit 10 up (LoCoMo paper recall@10 0.710 -> 0.744 on conversations 0-4 against 1, 0.672 ->
    # 0.696 on 5-9; 3 and 4 dilute: 0.726, 0.704 on 0-4), 1 below (at k = 5, four context turns crowd out the
    # other hits: recall@5 0.614 with 1, 0.605 with 2 on 0-4; 0.588 and 0.548 on 5-9)
    neighbours: int | None = Field(default=None, ge=0, le=5,
                                   description="Turns before/after the best episode kept as its context (evidence()); "
                                               "default 2 when limit >= 10, else 1")
    turn_context: bool = Field(
        default=True,
        description="Rescore candidate messages with their conversation (neighbouring turns, session strength) and "
                    "the day or month the query names (search.turns); False ranks each message alone")
    fusion: Literal["convex", "rrf"] = "convex"
    vector_weight: float = Field(default=VECTOR_WEIGHT, ge=0.0, le=1.0)
    min_relevance: float | None = Field(
        default=None, ge=0.0, le=1.0,
        description="Relevance floor (cosine of the query to its best match): below it the search returns nothing, "
                    "flagged below_floor. None: the searcher's floor (none with center_node_id); 0: no floor")

    @field_validator("group_ids")
    @classmethod
    def _groups(cls, v: list[str]) -> list[str]:
        return [validate_group_id(g, "group_ids") for g in v]

    @field_validator("as_of")
    @classmethod
    def _utc(cls, v: datetime | None) -> datetime | None:
        return as_utc(v) if v else None


@dataclass
class ScoredFact:
    fact: Fact
    score: float
    source_name: str = ""
    target_name: str = ""


@dataclass
class ScoredEntity:
    entity: Entity
    score: float


@dataclass
class ScoredCommunity:
    community: Community
    score: float


@dataclass
class ScoredEpisode:
    episode: Episode
    score: float


@dataclass
class _EpisodeStage:
    """What the episode stage of a search found."""

    episodes: list[ScoredEpisode] = field(default_factory=list)
    top_candidates: list[str] = field(default_factory=list)
    context: dict[str, list[Episode]] = field(default_factory=dict)
    closest: float | None = None  # the best cosine among the kNN hits
    ms: float = 0.0


@dataclass
class SearchResults:
    facts: list[ScoredFact] = field(default_factory=list)
    entities: list[ScoredEntity] = field(default_factory=list)
    episodes: list[ScoredEpisode] = field(default_factory=list)
    communities: list[ScoredCommunity] = field(default_factory=list)
    """Communities (clusters of related entities) whose name or summary match, best first."""
    timings_ms: dict[str, float] = field(default_factory=dict)
    route: str | None = None
    context: dict[str, list[Episode]] = field(default_factory=dict)
    """Adjacent turns of the best episode (by episode id): a message and its reply belong together."""
    relevance: float | None = None
    """Calibrated relevance of the search: cosine similarity of the query to its closest fact, entity or message
    (None when the groups hold nothing to compare)."""
    relevance_parts: dict[str, float] = field(default_factory=dict)
    """The closest cosine per part searched (fact, entity, episode): ``relevance`` is their maximum."""
    min_relevance: float = 0.0
    """The relevance floor this search applied (0: none)."""
    below_floor: bool = False
    """True when the groups hold memory but nothing cleared the relevance floor: the results are empty on purpose."""
    top_candidates: list[str] = field(default_factory=list)
    """Ids of the best ``EVIDENCE_CONTEXT_RANK`` candidate messages after rescoring with their conversation
    (search.turns), best first; empty without ``turn_context``. From k = 10 (below ``WHOLE_CONTEXT_FROM_K``)
    ``evidence`` shows the best turn's context turns that are among them (all of them when this is empty)."""

    def is_empty(self) -> bool:
        return not (self.facts or self.entities or self.episodes)

    def evidence(self, k: int) -> list[ScoredEpisode]:
        """The k source messages that best support an answer: episodes by score, each lifted by the facts
        derived from it (a fact points at the turns it came from); the best turn's context turns right after it
        (below k = 10 at most ``SMALL_EVIDENCE_CONTEXT`` before / after it, or, when it holds a question,
        ``SMALL_EVIDENCE_CONTEXT_OF_A_QUESTION``: its reply; from k = 10 those of ``top_candidates``, from
        ``WHOLE_CONTEXT_FROM_K`` all)."""
        scores = {e.episode.id: e.score for e in self.episodes}
        by_id = {e.episode.id: e.episode for e in self.episodes}
        for f in self.facts:
            for ep in f.fact.episodes:
                if ep in scores:
                    scores[ep] += FACT_EVIDENCE_BOOST * f.score
        out: list[ScoredEpisode] = []
        for i in sorted(scores, key=lambda i: -scores[i]):
            if all(e.episode.id != i for e in out):
                out.append(ScoredEpisode(by_id[i], round(scores[i], 6)))
            for ctx in self._shown_context(i, by_id, k):  # the best turn's neighbours come right after it
                if all(e.episode.id != ctx.id for e in out):
                    out.append(ScoredEpisode(ctx, round(scores[i], 6)))
        return out[:k]

    def _shown_context(self, episode_id: str, by_id: dict[str, Episode], k: int) -> list[Episode]:
        """The context turns of one episode that ``evidence(k)`` shows with it, in time order."""
        turns = self.context.get(episode_id, [])
        if 10 <= k < WHOLE_CONTEXT_FROM_K and self.top_candidates:
            supported = set(self.top_candidates)
            return [e for e in turns if e.id in supported]
        if k >= 10 or not turns:
            return turns
        asking = holds_question(by_id[episode_id].content)
        before, after = SMALL_EVIDENCE_CONTEXT_OF_A_QUESTION if asking else SMALL_EVIDENCE_CONTEXT
        at = by_id[episode_id].valid_at
        earlier = [e for e in turns if e.valid_at < at]
        shown = earlier[max(len(earlier) - before, 0):] if before else []
        return shown + [e for e in turns if e.valid_at > at][:after]


def rrf(rankings: list[list[str]], weights: list[float] | None = None, k: int = RRF_K) -> dict[str, float]:
    """Reciprocal rank fusion of several ranked id lists."""
    scores: dict[str, float] = {}
    for i, ranking in enumerate(rankings):
        w = weights[i] if weights else 1.0
        for rank, rid in enumerate(ranking):
            scores[rid] = scores.get(rid, 0.0) + w / (k + rank + 1)
    return scores


def convex(bm25: list[Hit], vec: list[Hit], vector_weight: float) -> dict[str, float]:
    """Min-max normalised BM25 and cosine, mixed: (1 - w) * bm25 + w * cosine, each in [0, 1]."""
    out: dict[str, float] = {}
    if bm25:
        top = max(h.score for h in bm25) or 1.0
        for h in bm25:
            out[h.id] = (1 - vector_weight) * (h.score / top)
    if vec:
        lo, hi = min(h.score for h in vec), max(h.score for h in vec)
        span = (hi - lo) or 1.0
        for h in vec:
            out[h.id] = out.get(h.id, 0.0) + vector_weight * (h.score - lo) / span
    return out


def mmr(ids: list[str], vectors: dict[str, np.ndarray], query: np.ndarray, lam: float, limit: int) -> list[str]:
    """Maximal marginal relevance: trade relevance to the query for novelty against what is chosen."""
    chosen: list[str] = []
    pool = [i for i in ids if i in vectors]
    rest = [i for i in ids if i not in vectors]
    while pool and len(chosen) < limit:
        best, best_score = pool[0], -1e9
        for i in pool:
            rel = float(vectors[i] @ query)
            red = max((float(vectors[i] @ vectors[c]) for c in chosen), default=0.0)
            s = lam * rel - (1 - lam) * red
            if s > best_score:
                best, best_score = i, s
        chosen.append(best)
        pool.remove(best)
    return (chosen + rest)[:limit]


class HybridSearch:
    # messages: the best 300 of BM25 and of vector search are fused and rescored (search.turns). LoCoMo 0-4 paper
    # recall@10 with a pool of 100 / 200 / 300 / 400: 0.811 / 0.821 / 0.823 / 0.823, @5 0.730 / 0.745 / 0.746 /
    # 0.745 (5-9, reported apart: @10 0.780 / 0.785 / 0.790, @5 0.706 / 0.711 / 0.716); docs/retrieval.md
    MIN_POOL = 300
    FACT_POOL = 50  # facts and entities: the wider pool paid off for episodes only

    def __init__(self, store: Store, embedder: Embedder, graph: GraphQuery | None = None,
                 min_relevance: float = DEFAULT_MIN_RELEVANCE):
        self.store = store
        self.embedder = embedder
        self.graph = graph  # a GraphQuery, for routed search
        self.min_relevance = min_relevance  # the floor of requests that name none (SearchRequest.min_relevance)
        # a store that takes concurrent readers (PostgreSQL's pool) runs the retrievals on these threads, next to
        # one another and to the stages that use them; one that does not (SQLite) embeds the query on its own
        # thread while the calling thread runs BM25. Results are the same.
        self._prefetcher = (ThreadPoolExecutor(max_workers=4, thread_name_prefix="loregraph-search")
                            if store.capabilities.concurrent_readers > 1 else None)
        self._embedding = (ThreadPoolExecutor(max_workers=1, thread_name_prefix="loregraph-embed")
                           if self._prefetcher is None else None)

    def close(self) -> None:
        for pool in (self._prefetcher, self._embedding):
            if pool is not None:
                pool.shutdown(wait=True)

    def search(self, req: SearchRequest) -> SearchResults:
        """Search, then apply the relevance floor: when the best match of the query stays below it, the results
        are emptied and flagged ``below_floor`` (an honest "nothing relevant" instead of unrelated hits)."""
        res, graph_answered = self._search_routed(req)
        floor = req.min_relevance
        if floor is None:  # a centre node names what is relevant: ranking around it is not held to the floor
            floor = 0.0 if req.center_node_id else self.min_relevance
        res.min_relevance = floor
        # relationships the graph route found for the question's entity/relation types are relevant by structure
        if floor > 0 and res.relevance is not None and res.relevance < floor and not graph_answered:
            res.facts, res.entities, res.episodes, res.context, res.top_candidates = [], [], [], {}, []
            res.below_floor = True
        return res

    def _search_routed(self, req: SearchRequest) -> tuple[SearchResults, bool]:
        """The results, and whether the graph route answered with relationships."""
        if not req.route or self.graph is None:
            return self._search(req), False
        chosen = route(req.query)
        answered = False
        if chosen == "vector":
            res = self._search(req.model_copy(update={"bfs_depth": 0}))
        elif chosen == "graph" and len(req.group_ids) == 1 and req.as_of is None:
            res = self._search(req)
            answer = self.graph.query_graph(req.query, req.group_ids[0], limit=req.limit)
            first = [ScoredFact(r.fact, 1.0, r.source.name, r.target.name) for r in answer.relationships
                     if self._fact_ok(r.fact, req.filters, TimeFilter())]
            ids = {f.fact.id for f in first}
            res.facts = (first + [f for f in res.facts if f.fact.id not in ids])[:req.limit]
            answered = bool(first)
        else:
            res = self._search(req)
        res.route = chosen
        return res, answered

    def _search(self, req: SearchRequest) -> SearchResults:
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        tf = TimeFilter(as_of=req.as_of, include_expired=req.include_ended and req.as_of is None)
        fetch = max(req.limit * 5, self.MIN_POOL)  # fusion normalises over the candidate pool: keep it wide
        groups = list(dict.fromkeys(req.group_ids))
        fact_fetch = max(req.limit * 5, self.FACT_POOL)
        # a store that takes concurrent readers runs every retrieval on the prefetcher: BM25 from the start (it
        # needs no query vector: the server scores while the model embeds), kNN once the query is embedded
        pools = {"entity": max(req.limit * 5, self.FACT_POOL)}
        for kind, n, wanted in (("fact", fact_fetch, "facts"), ("episode", fetch, "episodes"),
                              ("community", max(req.limit * 2, 10), "communities")):
            if wanted in req.include:
                pools[kind] = n
        texts: dict[str, Future[list[Hit]]] = {}
        early: dict[str, tuple[Future[list[Hit]], Future[list[Hit]]]] = {}
        staged: Future[_EpisodeStage] | None = None
        if self._prefetcher is not None:
            texts = {kind: self._prefetcher.submit(self._fulltext, kind, groups, req.query, n, tf)
                     for kind, n in pools.items()}
            qvec = self.embedder.embed_one(req.query)
            timings["embed"] = _ms(t0)
            early = {kind: (texts[kind], self._prefetcher.submit(self._vector, kind, groups, qvec, n, tf))
                     for kind, n in pools.items()}
            if "episode" in early:  # the messages' stage beside the entity and fact stages; submitted after the
                hits = early["episode"]  # hits it waits for, so never queued ahead of them
                staged = self._prefetcher.submit(lambda: self._episode_stage(groups, req, qvec, fetch, tf,
                                                                             _results(hits)))
        elif self._embedding is not None:  # the store's calls stay on this thread (one connection), the model beside
            embedded = self._embedding.submit(self.embedder.embed_one, req.query)
            try:
                texts = {kind: _done(self._fulltext(kind, groups, req.query, n, tf)) for kind, n in pools.items()}
            finally:
                qvec = embedded.result()
            timings["embed"] = _ms(t0)  # with BM25, run meanwhile
            early = {kind: (texts[kind], _done(self._vector(kind, groups, qvec, n, tf))) for kind, n in pools.items()}
        else:  # every step in turn, on this thread
            qvec = self.embedder.embed_one(req.query)
            timings["embed"] = _ms(t0)
        out = SearchResults()
        flt = req.filters

        # entities first: they seed the graph expansion
        t = time.perf_counter()
        closest: dict[str, float] = {}  # closest cosine per part: the calibrated relevance signal
        ent_ranked = self._fused("entity", groups, req.query, qvec, pools["entity"], tf, req,
                                 _results(early.get("entity")), best=closest)
        bfs_fetch = max(req.limit * 5, self.FACT_POOL)
        guess: list[str] = []
        walked: Future[list[str]] | None = None
        if (self._prefetcher is not None and "facts" in req.include and req.bfs_depth and len(groups) == 1
                and not flt.entity_types and ent_ranked):
            # the graph expansion from the best three entities, on the prefetcher while this thread reads their
            # rows: those rows only confirm them as the seeds (one is missing only if deleted meanwhile; then it
            # runs again from the seeds found)
            guess = [i for i, _ in ent_ranked[:3]]
            walk = partial(self._bfs, groups, dict.fromkeys(guess, groups[0]), guess, req.bfs_depth, tf, bfs_fetch)
            walked = self._prefetcher.submit(walk)
        entities: dict[str, Entity] = {}
        need = max(req.limit, 3)
        for start in range(0, len(ent_ranked), need * 2):  # load in score order until enough pass the filter
            part = self._load_entities(groups, [i for i, _ in ent_ranked[start:start + need * 2]])
            entities.update({k: v for k, v in part.items()
                             if not flt.entity_types or v.type in flt.entity_types})
            if len(entities) >= need:
                break
        ent_order = [(i, s) for i, s in ent_ranked if i in entities]
        timings["entities"] = _ms(t)

        if "facts" in req.include:
            t = time.perf_counter()
            seeds = [i for i, _ in ent_order[:3]]
            bfs_ranking: list[str] = []
            if req.bfs_depth and seeds:
                bfs_ranking = (_claim(walked, walk) if walked is not None and seeds == guess else
                               self._bfs(groups, {s: entities[s].group_id for s in seeds}, seeds, req.bfs_depth,
                                         tf, bfs_fetch))
            # facts keep the smaller pool: the wider one paid off for episodes only (LoCoMo, conversations 0-4)
            bm25, vec = _results(early.get("fact")) or self._hits("fact", groups, req.query, qvec, fact_fetch, tf)
            if vec:
                closest["fact"] = max(h.score for h in vec)
            if req.fusion == "rrf":
                fused = rrf([[h.id for h in bm25], [h.id for h in vec], bfs_ranking], [1.0, 1.0, 0.5])
            else:
                fused = convex(bm25, vec, req.vector_weight)
                for rank, fid in enumerate(bfs_ranking):  # graph proximity to the best entities
                    fused[fid] = fused.get(fid, 0.0) + BFS_WEIGHT * (1 - rank / len(bfs_ranking))
            ids = sorted(fused, key=lambda i: -fused[i])
            facts: list[Fact] = []
            want = req.limit * 3 if (req.mmr is not None or req.center_node_id) else req.limit
            for start in range(0, len(ids), max(want, 10)):  # load in score order until enough pass
                chunk = self._load_facts(groups, ids[start:start + max(want, 10)])
                facts += [f for f in chunk if self._fact_ok(f, flt, tf)]
                if len(facts) >= want and not flt.entity_types:
                    break
            if flt.entity_types:
                types = {}
                for g in groups:
                    types.update(self.store.entity_types(g, {x for f in facts for x in (f.source_id, f.target_id)}))
                facts = [f for f in facts if types.get(f.source_id) in flt.entity_types
                         or types.get(f.target_id) in flt.entity_types]
            order = [f.id for f in facts]
            if req.center_node_id:
                order = self._center_rerank(groups, facts, req.center_node_id, tf, fused)
            if req.mmr is not None:
                order = mmr(order, self._vectors("fact", groups, order), qvec, req.mmr, req.limit)
            by_id = {f.id: f for f in facts}
            names = self._names(groups, [by_id[i] for i in order[:req.limit]], entities)
            out.facts = [ScoredFact(by_id[i], round(fused.get(i, 0.0), 6), names.get(by_id[i].source_id, ""),
                                    names.get(by_id[i].target_id, "")) for i in order[:req.limit]]
            timings["facts"] = _ms(t)

        if "entities" in req.include:
            out.entities = [ScoredEntity(entities[i], round(s, 6)) for i, s in ent_order[:req.limit]]

        if "communities" in req.include:
            t = time.perf_counter()
            ranked = self._fused("community", groups, req.query, qvec, pools["community"], tf, req,
                                 _results(early.get("community")))[:req.limit]
            found: dict[str, Community] = {}
            for g in groups:
                found.update({c.id: c for c in self.store.get_communities(g, [i for i, _ in ranked])})
            out.communities = [ScoredCommunity(found[i], round(s, 6)) for i, s in ranked if i in found]
            timings["communities"] = _ms(t)

        if "episodes" in req.include:
            stage = (staged.result() if staged is not None else
                     self._episode_stage(groups, req, qvec, fetch, tf, _results(early.get("episode"))))
            out.episodes, out.top_candidates, out.context = stage.episodes, stage.top_candidates, stage.context
            if stage.closest is not None:
                closest["episode"] = stage.closest
            timings["episodes"] = stage.ms
        if "episode" not in closest:  # the messages calibrate relevance in every mode (facts alone are terse)
            top = self._vector("episode", groups, qvec, 1, tf)
            if top:
                closest["episode"] = max(h.score for h in top)
        timings["total"] = _ms(t0)
        out.timings_ms = timings
        out.relevance_parts = {k: round(v, 6) for k, v in closest.items()}
        out.relevance = max(out.relevance_parts.values()) if closest else None
        return out

    # ---- pieces ---------------------------------------------------------------------------------
    def _fulltext(self, kind: Any, groups: list[str], query: str, fetch: int, tf: TimeFilter) -> list[Hit]:
        if kind == "fact":
            return self.store.fulltext(kind, groups, query, fetch, tf)
        return self.store.fulltext(kind, groups, query, fetch)

    def _vector(self, kind: Any, groups: list[str], qvec: np.ndarray, fetch: int, tf: TimeFilter) -> list[Hit]:
        if kind == "fact":
            return self.store.vector(kind, groups, qvec, fetch, tf)
        return self.store.vector(kind, groups, qvec, fetch)

    def _hits(self, kind: Any, groups: list[str], query: str, qvec: np.ndarray, fetch: int,
              tf: TimeFilter) -> tuple[list[Hit], list[Hit]]:
        return self._fulltext(kind, groups, query, fetch, tf), self._vector(kind, groups, qvec, fetch, tf)

    def _fused(self, kind: Any, groups: list[str], query: str, qvec: np.ndarray, fetch: int,
               tf: TimeFilter, req: SearchRequest,
               hits: tuple[list[Hit], list[Hit]] | None = None,
               best: dict[str, float] | None = None) -> list[tuple[str, float]]:
        bm25, vec = hits if hits is not None else self._hits(kind, groups, query, qvec, fetch, tf)
        if best is not None and vec:
            best[kind] = max(h.score for h in vec)
        if req.fusion == "rrf":
            fused = rrf([[h.id for h in bm25], [h.id for h in vec]])
        else:
            fused = convex(bm25, vec, req.vector_weight)
        return sorted(fused.items(), key=lambda kv: -kv[1])

    def _episode_stage(self, groups: list[str], req: SearchRequest, qvec: np.ndarray, fetch: int, tf: TimeFilter,
                       hits: tuple[list[Hit], list[Hit]] | None) -> _EpisodeStage:
        """The messages: the fused pool, rescored with their conversations (``turn_context``) or loaded in score
        order, and the best one's context turns."""
        t = time.perf_counter()
        flt = req.filters
        out = _EpisodeStage()
        best: dict[str, float] = {}
        ep_ranked = self._fused("episode", groups, req.query, qvec, fetch, tf, req, hits, best=best)
        out.closest = best.get("episode")
        if req.turn_context:  # the whole pool: its conversations and dates rescore each candidate
            load = self._head_loader(groups, [i for i, _ in ep_ranked[:HEAD_ROWS]])
            places: dict[str, tuple[str | None, datetime]] = {}
            for g in groups:
                places.update(self.store.episode_places(g, [i for i, _ in ep_ranked]))
            places = {i: p for i, p in places.items() if self._time_ok(p[1], flt, req.as_of)}
            chosen, eps = rank_turns(self.store, req.query, ep_ranked, places, req.limit, load,
                                     lambda ids: self._episode_texts(groups, ids))
            out.episodes = [ScoredEpisode(eps[i], round(s, 6)) for i, s in chosen[:req.limit] if i in eps]
            out.top_candidates = [i for i, _ in chosen[:EVIDENCE_CONTEXT_RANK]]
        step = max(req.limit, 10)
        for start in range(0, len(ep_ranked) if not req.turn_context else 0, step):
            ranked_part = ep_ranked[start:start + step]  # load in score order until enough pass the filters
            eps = self._load_episodes(groups, [i for i, _ in ranked_part])
            out.episodes += [ScoredEpisode(eps[i], round(s, 6)) for i, s in ranked_part
                             if i in eps and self._episode_ok(eps[i], flt, req.as_of)]
            if len(out.episodes) >= req.limit:
                break
        out.episodes = out.episodes[:req.limit]
        around = req.neighbours if req.neighbours is not None else (2 if req.limit >= 10 else 1)
        if around and out.episodes:
            first = out.episodes[0].episode
            out.context[first.id] = [e for e in self.store.adjacent_episodes(first.group_id, first.id, around)
                                     if self._episode_ok(e, flt, req.as_of)]
        out.ms = _ms(t)
        return out

    def _head_loader(self, groups: list[str], head: list[str]) -> Callable[[list[str]], dict[str, Episode]]:
        """``_load_episodes`` for ``rank_turns``. With a prefetcher, the rows of the best fused candidates
        (``head``) are read on it while this thread reads the pool's places: the rescoring's first load (the best
        ``ANSWER_POOL`` that pass the filters) then waits for no second round trip. A load of ids outside
        ``head`` reads those."""
        if self._prefetcher is None or not head:
            return lambda ids: self._load_episodes(groups, ids)
        read = partial(self._load_episodes, groups, head)
        early = self._prefetcher.submit(read)
        known = set(head)

        def load(ids: list[str]) -> dict[str, Episode]:
            got = _claim(early, read)  # this stage runs on the prefetcher too: never wait for a queued task
            out = {i: got[i] for i in ids if i in got}
            if rest := [i for i in ids if i not in known]:
                out.update(self._load_episodes(groups, rest))
            return out

        return load

    BFS_NEIGHBOURS = 5

    def _bfs(self, groups: list[str], group_of: dict[str, str], seeds: list[str], depth: int,
             tf: TimeFilter, fetch: int) -> list[str]:
        """Facts around the best entities (``seeds``, each in its group ``group_of``): hop 1 = facts touching a
        seed, hop 2 = facts touching the first neighbours reached. Two bounded reads per group (one statement on
        PostgreSQL), so hubs (the speaker, a popular tool) stay cheap."""
        ranked: list[tuple[int, int, str]] = []
        rank_of = {s: i for i, s in enumerate(seeds)}
        width = self.BFS_NEIGHBOURS if depth >= 2 else 0
        for gid in groups:
            mine = [s for s in seeds if group_of[s] == gid]
            if not mine:
                continue
            second: list[tuple[str, str, str]] | None = None
            if len(mine) == len(seeds):  # the store picks hop 2's starts as below
                first, second = self.store.fact_edges_two_hops(gid, mine, tf, fetch, width)
            else:  # another group's seeds are no neighbours here either (ids are per group): hop by hop
                first = self.store.fact_edges(gid, mine, tf, limit=fetch)
            neighbours: dict[str, int] = {}
            for fid, src, dst in first:
                seed = src if src in rank_of else dst
                r = rank_of.get(seed, len(seeds))
                ranked.append((1, r, fid))
                other = dst if seed == src else src
                if other not in rank_of:
                    neighbours.setdefault(other, r)
            if second is None and width and neighbours:
                near = sorted(neighbours, key=lambda x: neighbours[x])[:width]
                second = self.store.fact_edges(gid, near, tf, limit=fetch)
            for fid, src, dst in second or []:
                r = min(neighbours.get(src, len(seeds)), neighbours.get(dst, len(seeds)))
                ranked.append((2, r, fid))
        ranked.sort()
        return list(dict.fromkeys(fid for _, _, fid in ranked))

    def _center_rerank(self, groups: list[str], facts: list[Fact], center: str, tf: TimeFilter,
                       fused: dict[str, float]) -> list[str]:
        """Facts touching the center node first, then facts one hop away, then the rest (by fused score)."""
        endpoints = list({x for f in facts for x in (f.source_id, f.target_id)} - {center})
        near: set[str] = set()
        for g in groups:
            near |= self.store.neighbours_among(g, center, endpoints, tf)

        def hop(f: Fact) -> int:
            if center in (f.source_id, f.target_id):
                return 0
            return 1 if f.source_id in near or f.target_id in near else 2

        return [f.id for f in sorted(facts, key=lambda f: (hop(f), -fused.get(f.id, 0.0)))]

    @staticmethod
    def _episode_ok(ep: Episode, flt: SearchFilters, as_of: datetime | None) -> bool:
        return HybridSearch._time_ok(ep.valid_at, flt, as_of)

    @staticmethod
    def _time_ok(valid_at: datetime, flt: SearchFilters, as_of: datetime | None) -> bool:
        if as_of is not None and valid_at > as_of:
            return False
        if flt.valid_after and valid_at < flt.valid_after:
            return False
        return not (flt.valid_before and valid_at > flt.valid_before)

    @staticmethod
    def _fact_ok(f: Fact, flt: SearchFilters, tf: TimeFilter) -> bool:
        if tf.as_of is None and not tf.include_expired and not f.is_current():
            return False
        if tf.as_of is not None and not f.held_at(tf.as_of):
            return False
        if flt.relation_types and f.type not in flt.relation_types:
            return False
        va = f.valid_at
        if flt.valid_after and (va is None or va < flt.valid_after):
            return False
        if flt.valid_before and (va is None or va > flt.valid_before):
            return False
        if flt.created_after and f.created_at < flt.created_after:
            return False
        return not (flt.created_before and f.created_at > flt.created_before)

    def _load_entities(self, groups: list[str], ids: list[str]) -> dict[str, Entity]:
        out: dict[str, Entity] = {}
        for g in groups:
            out.update({e.id: e for e in self.store.get_entities(g, ids)})
        return out

    def _load_facts(self, groups: list[str], ids: list[str]) -> list[Fact]:
        got: dict[str, Fact] = {}
        for g in groups:
            got.update({f.id: f for f in self.store.get_facts(g, ids)})
        return [got[i] for i in ids if i in got]

    def _load_episodes(self, groups: list[str], ids: list[str]) -> dict[str, Episode]:
        out: dict[str, Episode] = {}
        for g in groups:
            out.update({e.id: e for e in self.store.get_episodes(g, ids)})
        return out

    def _episode_texts(self, groups: list[str], ids: list[str]) -> dict[str, tuple[str | None, str]]:
        out: dict[str, tuple[str | None, str]] = {}
        for g in groups:
            out.update(self.store.episode_texts(g, ids))
        return out

    def _names(self, groups: list[str], facts: list[Fact], known: dict[str, Entity]) -> dict[str, str]:
        """Names of the facts' ends: those of ``known`` entities (already loaded by this search), the rest read."""
        ids = {x for f in facts for x in (f.source_id, f.target_id)}
        groups_of = {x: f.group_id for f in facts for x in (f.source_id, f.target_id)}
        names = {i: known[i].name for i in ids if i in known and known[i].group_id == groups_of[i]}
        if rest := [i for i in ids if i not in names]:  # names only: no other column, no model built
            for g in groups:
                names.update(self.store.entity_names(g, rest))
        return names

    def _vectors(self, kind: str, groups: list[str], ids: list[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for g in groups:
            out.update(self.store.embeddings(kind, g, ids))  # type: ignore[arg-type]
        return out


def _done(hits: list[Hit]) -> Future[list[Hit]]:
    """Hits already at hand, as a finished future."""
    f: Future[list[Hit]] = Future()
    f.set_result(hits)
    return f


def _claim(future: Future[T], fn: Callable[[], T]) -> T:
    """The result of ``fn``, submitted as ``future`` to the prefetcher: run on this thread when it has not started
    yet. A prefetcher task that waits for another one queued behind it could wait forever (every worker waiting
    so, under concurrent searches); and a caller that would only wait does the work itself."""
    return fn() if future.cancel() else future.result()


def _results(futures: tuple[Future[list[Hit]], Future[list[Hit]]] | None) -> tuple[list[Hit], list[Hit]] | None:
    """The (BM25, kNN) hits of a prefetched retrieval; None when it was not prefetched."""
    return (futures[0].result(), futures[1].result()) if futures is not None else None


def _ms(t: float) -> float:
    return round((time.perf_counter() - t) * 1e3, 3)
