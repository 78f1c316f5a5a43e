"""``loregraph bench locomo``: evidence recall@k on LoCoMo without any LLM, against BM25 and vector baselines.

Every turn of a conversation is ingested as a message into its own group (speaker as role, the session's
date-time as timestamp, the ``dia_id`` as message name). For each question, the top-k results credit turns:
an episode credits itself, a fact credits the episodes of its provenance, entities credit nothing.
Recall@k = share of the question's evidence turns credited. Baselines over the raw turns of the same group,
in the same run: BM25 (SQLite FTS5, porter tokenizer) and vector kNN with the same embedder.

The data set (CC BY-NC) is never copied: without ``--data`` it is looked for at ../shared/bench/locomo/locomo10.json
from the current directory, then from the root of the source checkout loregraph runs from (``locate_data``).
"""

from __future__ import annotations

import json
import re
import statistics
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

DATA_FROM_CHECKOUT = Path("..") / "shared" / "bench" / "locomo" / "locomo10.json"
# ../shared seen from the root of the source checkout (src/loregraph/bench/locomo.py -> the root)
DEFAULT_DATA = Path(__file__).resolve().parents[3] / DATA_FROM_CHECKOUT
PAPER_K = (5, 10, 25)  # the k of the LoCoMo paper's retrieval table that the benchmark reports
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_SESSION_TIME = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I)
_MONTHS = {m: i for i, m in enumerate(["january", "february", "march", "april", "may", "june", "july", "august",
                                        "september", "october", "november", "december"], 1)}


def parse_session_time(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' → 2023-05-08 13:56 UTC."""
    m = _SESSION_TIME.match(text)
    if not m:
        raise ValueError(f"unrecognised session date-time {text!r}")
    hour, minute, ampm, day, month, year = m.groups()
    h = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
    mon = _MONTHS.get(month.lower()) or _MONTHS.get(next((k for k in _MONTHS if k.startswith(month.lower()[:3])), ""))
    if not mon:
        raise ValueError(f"unknown month in {text!r}")
    return datetime(int(year), mon, int(day), h, int(minute), tzinfo=UTC)


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    when: datetime


@dataclass
class Sample:
    sample_id: str
    turns: list[Turn]
    questions: list[dict[str, Any]]


def data_candidates(cwd: Path | None = None) -> list[Path]:
    """Where locomo10.json is looked for without ``--data``, in order: ../shared/bench/locomo/ seen from the current
    directory, then from the root of the source checkout loregraph is imported from (when it is one: a
    pyproject.toml there; an installed package has none)."""
    found = [((cwd or Path.cwd()) / DATA_FROM_CHECKOUT).resolve()]
    root = Path(__file__).resolve().parents[3]
    if (root / "pyproject.toml").is_file():
        found.append((root / DATA_FROM_CHECKOUT).resolve())
    return list(dict.fromkeys(found))


def locate_data(data: Path | None, cwd: Path | None = None) -> tuple[Path | None, str]:
    """The LoCoMo file to read and, when there is none, why: an explicit ``data`` path must exist (ValueError
    naming --data otherwise); without one, the first of ``data_candidates`` that exists, or None and a message
    naming the places looked at."""
    if data is not None:
        if not Path(data).is_file():
            raise ValueError(f"--data: no file at {data} (expected LoCoMo's locomo10.json)")
        return Path(data), ""
    candidates = data_candidates(cwd)
    for path in candidates:
        if path.is_file():
            return path, ""
    return None, ("LoCoMo data not found at " + " nor ".join(str(p) for p in candidates) + " (it lives in "
                  "../shared/bench/locomo, never in this repository; pass --data PATH/locomo10.json); skipping.")


def load(path: Path) -> list[Sample]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for i, conv in enumerate(data):
        c = conv["conversation"]
        sessions = sorted((int(k.split("_")[1]), k) for k in c if re.fullmatch(r"session_\d+", k))
        turns: list[Turn] = []
        for _, key in sessions:
            start = parse_session_time(c[f"{key}_date_time"])
            for j, t in enumerate(c[key]):
                text = t.get("text", "")
                if t.get("blip_caption"):
                    text = f"{text} [shares a photo: {t['blip_caption']}]".strip()
                # turns of a session share its date-time; a second apart keeps their order
                turns.append(Turn(t["dia_id"], t["speaker"], text, start + timedelta(seconds=j)))
        out.append(Sample(str(conv.get("sample_id", i)), turns, conv["qa"]))
    return out


@dataclass
class Scores:
    hits: dict[str, dict[int, list[float]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))

    def add(self, system: str, category: int, recall: float) -> None:
        self.hits[system][category].append(recall)

    def mean(self, system: str, cats: tuple[int, ...] = (1, 2, 3, 4)) -> float:
        vals = [v for c in cats for v in self.hits[system].get(c, [])]
        return sum(vals) / len(vals) if vals else 0.0

    def count(self, system: str, cats: tuple[int, ...] = (1, 2, 3, 4)) -> int:
        return sum(len(self.hits[system].get(c, [])) for c in cats)


def _recall(evidence: set[str], credited: set[str]) -> float:
    return len(evidence & credited) / len(evidence)


class TurnBaselines:
    """BM25 (FTS5 porter, stock bm25) and exact vector kNN over one group's raw turns."""

    def __init__(self, turns: list[Turn], vectors: np.ndarray):
        import sqlean

        self.ids = [t.dia_id for t in turns]
        self.vectors = vectors
        self.db = sqlean.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")
        self.db.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)",
                            [(i, f"{t.speaker}: {t.text}") for i, t in enumerate(turns)])

    def bm25(self, query: str, k: int) -> list[str]:
        words = [w for w in re.findall(r"\w+", query.casefold()) if len(w) > 1]
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in dict.fromkeys(words))
        rows = self.db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?", (match, k)).fetchall()
        return [self.ids[r[0]] for r in rows]

    def vector(self, qvec: np.ndarray, k: int) -> list[str]:
        sims = self.vectors @ qvec
        top = np.argsort(-sims)[:k]
        return [self.ids[i] for i in top]


def evidence_turns(res: Any, k: int) -> set[str]:
    """The headline: ``SearchResults.evidence(k)`` — k episodes, each crediting itself."""
    return {e.episode.name for e in res.evidence(k)}


def credited_turns(res: Any, k: int, names: dict[str, str]) -> set[str]:
    """Top-k of facts and episodes merged by score; a fact credits its provenance, an episode itself."""
    items = [(f.score, "f", f.fact) for f in res.facts] + [(e.score, "e", e.episode) for e in res.episodes]
    items.sort(key=lambda x: -x[0])
    out: set[str] = set()
    for _, kind, rec in items[:k]:
        if kind == "e":
            out.add(rec.name)
        else:
            out.update(names[e] for e in rec.episodes if e in names)
    return out


async def run_locomo_bench(*, data: Path | None, k: int, conversations: int | None, questions: int | None,
                           db: str | None, console: Console) -> dict[str, Any]:
    from loregraph.memory import Memory, Message

    path, missing = locate_data(data)
    if path is None:
        console.print(missing)
        return {}
    samples = load(path)[: conversations or None]
    url = db or f"sqlite:///{Path(tempfile.mkdtemp(prefix='loregraph-locomo-')) / 'locomo.db'}"
    m = await Memory.open(url)
    scores = Scores()
    halves = {"tune (0-4)": Scores(), "held apart (5-9)": Scores()}
    paper = Scores()  # the LoCoMo paper's aggregate: "<system>@<k>" over all five categories
    paper_halves = {"tune (0-4)": Scores(), "held apart (5-9)": Scores()}
    floored = 0  # answerable questions (categories 1-4) whose search said nothing cleared the relevance floor
    latencies: list[float] = []
    ingest_s = 0.0
    date_checks = date_ok = 0
    try:
        for idx, sample in enumerate(samples):
            group = f"locomo-{sample.sample_id}"
            t0 = time.perf_counter()
            stored = (await m.count(group))["episodes"]
            if stored not in (0, len(sample.turns)):
                raise ValueError(f"--db already holds {stored} episodes of {group}; use a new database")
            if stored == 0:  # a --db that already holds this conversation is reused as it is
                with console.status(f"{group}: ingesting {len(sample.turns)} turns") as status:
                    for n, turn in enumerate(sample.turns):
                        msg = Message(content=turn.text, role_type="user", role=turn.speaker, name=turn.dia_id,
                                      timestamp=turn.when)
                        # a LoCoMo session is one conversation (rate limits and provenance count per session)
                        await m.add_messages(group, [msg], conversation_id=f"{group}:{turn.dia_id.split(':')[0]}")
                        if n % 50 == 0:
                            status.update(f"{group}: ingesting turns {n}/{len(sample.turns)}")
                await m.checkpoint()
                ingest_s += time.perf_counter() - t0
            episodes = await m.get_episodes(group, last_n=len(sample.turns) + 10)
            names = {e.id: e.name for e in episodes}
            by_name = {e.name: e for e in episodes}
            for turn in sample.turns[:: max(1, len(sample.turns) // 20)]:
                date_checks += 1
                date_ok += by_name[turn.dia_id].valid_at == turn.when
            # the baselines see what BM25's body holds: "speaker: text", embedded by the same model
            base = TurnBaselines(sample.turns, m.embedder.embed([f"{t.speaker}: {t.text}" for t in sample.turns]))
            half_name = "tune (0-4)" if idx < 5 else "held apart (5-9)"
            half, paper_half = halves[half_name], paper_halves[half_name]
            qs = sample.questions
            for q in qs[: questions or None]:
                cat = int(q["category"])
                given = {e.strip() for e in q.get("evidence") or [] if isinstance(e, str)}
                evidence = given & set(by_name)
                if given and not evidence:
                    continue  # known defect: dangling evidence ids
                question = str(q["question"])
                qvec = m.embedder.embed_one(question)
                if not evidence:  # the paper's aggregate counts a question with no evidence as recall 1
                    for system in ("loregraph", "bm25", "vector"):
                        for pk in PAPER_K:
                            paper.add(f"{system}@{pk}", cat, 1.0)
                            paper_half.add(f"{system}@{pk}", cat, 1.0)
                    continue
                for pk in sorted({k, *PAPER_K}):
                    t = time.perf_counter()
                    res = await m.search(question, group, limit=pk, include=["facts", "episodes"])
                    if pk == k:
                        latencies.append((time.perf_counter() - t) * 1e3)
                    bm25_ids, vec_ids = set(base.bm25(question, pk)), set(base.vector(qvec, pk))
                    if pk in PAPER_K:
                        for system, credited in (("loregraph", evidence_turns(res, pk)), ("bm25", bm25_ids),
                                                 ("vector", vec_ids)):
                            paper.add(f"{system}@{pk}", cat, _recall(evidence, credited))
                            paper_half.add(f"{system}@{pk}", cat, _recall(evidence, credited))
                    if pk != k:
                        continue
                    floored += res.below_floor and cat != 5
                    for system, credited in (("loregraph", evidence_turns(res, k)),
                                             ("merged", credited_turns(res, k, names)),
                                             ("bm25", bm25_ids), ("vector", vec_ids)):
                        r = _recall(evidence, credited)
                        scores.add(system, cat, r)
                        half.add(system, cat, r)
            console.print(f"{group}: {len(sample.turns)} turns, {len(qs)} questions; running recall@{k} "
                          f"loregraph {scores.mean('loregraph'):.3f} bm25 {scores.mean('bm25'):.3f} "
                          f"vector {scores.mean('vector'):.3f}")
    finally:
        await m.close()

    systems = ("loregraph", "bm25", "vector", "merged")
    console.print(f"\nrecall@{k} by category (LoCoMo ids):")
    for cat in (1, 2, 3, 4, 5):
        n = len(scores.hits["loregraph"].get(cat, []))
        if n:
            cells = "  ".join(f"{s} {scores.mean(s, (cat,)):.3f}" for s in systems)
            console.print(f"  {cat} {CATEGORIES[cat]:<12} n={n:<4} {cells}")
    for name, half in halves.items():
        if half.count("loregraph"):
            console.print(f"  categories 1-4, {name}: n={half.count('loregraph')}  " +
                          "  ".join(f"{s} {half.mean(s):.3f}" for s in systems))
    cats = (1, 2, 3, 4, 5)
    console.print("\npaper aggregate (all five categories, a question without evidence = recall 1):")
    for pk in PAPER_K:
        cells = "  ".join(f"{CATEGORIES[c]} {paper.mean(f'loregraph@{pk}', (c,)):.3f}" for c in cats)
        console.print(f"  recall@{pk}: loregraph {paper.mean(f'loregraph@{pk}', cats):.3f}  bm25 "
                      f"{paper.mean(f'bm25@{pk}', cats):.3f}  vector {paper.mean(f'vector@{pk}', cats):.3f}  "
                      f"(loregraph per category: {cells})")
        for name, ph in paper_halves.items():
            if ph.count(f"loregraph@{pk}", cats):
                console.print(f"    {name}: n={ph.count(f'loregraph@{pk}', cats)}  loregraph "
                              f"{ph.mean(f'loregraph@{pk}', cats):.3f}  bm25 {ph.mean(f'bm25@{pk}', cats):.3f}  "
                              f"vector {ph.mean(f'vector@{pk}', cats):.3f}  (" +
                              "  ".join(f"{CATEGORIES[c]} {ph.mean(f'loregraph@{pk}', (c,)):.3f}" for c in cats) + ")")
    answerable = scores.count("loregraph")
    console.print(f"relevance floor: {floored}/{answerable} answerable questions (categories 1-4) got the "
                  f"'nothing relevant' answer ({floored / max(answerable, 1):.2%})")
    mean_ms = statistics.mean(latencies) if latencies else 0.0
    console.print("  (loregraph = SearchResults.evidence(k): episodes lifted by their facts; merged = facts and "
                  "episodes interleaved by score, a fact crediting its provenance)")
    console.print(f"mean search latency {mean_ms:.1f} ms over {len(latencies)} questions; ingest "
                  f"{ingest_s:.1f} s for {sum(len(s.turns) for s in samples)} turns; session dates in valid_at: "
                  f"{date_ok}/{date_checks}")
    result: dict[str, Any] = {
              "recall": scores.mean("loregraph"), "bm25": scores.mean("bm25"), "vector": scores.mean("vector"),
              "questions": scores.count("loregraph"), "k": k, "mean_ms": mean_ms,
              "dates_ok": (date_ok, date_checks),
              "halves": {n: {s: h.mean(s) for s in systems} for n, h in halves.items() if h.count("loregraph")},
              "floored": floored,
              "paper": {pk: paper.mean(f"loregraph@{pk}", cats) for pk in PAPER_K},
              "paper_halves": {n: {pk: h.mean(f"loregraph@{pk}", cats) for pk in PAPER_K}
                               for n, h in paper_halves.items() if h.count(f"loregraph@{PAPER_K[0]}", cats)}}
    print(f"locomo recall_at_k={result['recall']:.3f} bm25_recall_at_k={result['bm25']:.3f} "
          f"vector_recall_at_k={result['vector']:.3f} k={k} questions={result['questions']}")
    print(f"locomo recall_at_k={result['recall']:.3f} bm25_recall_at_k={result['bm25']:.3f} "
          f"vector_recall_at_k={result['vector']:.3f} k={k} questions={result['questions']} " +
          " ".join(f"paper_recall_at_{pk}={result['paper'][pk]:.3f}" for pk in PAPER_K))
    return result
