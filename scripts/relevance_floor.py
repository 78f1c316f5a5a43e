"""Measure the relevance signal behind the search floor (docs/relevance-floor.md).

LoCoMo (read from ../shared/bench/locomo, never copied; skips when absent): every question of each conversation in
its own group (answerable = categories 1-4 with evidence; adversarial = category 5), plus every third question of
the next conversation asked in this one (its evidence is absent). Probes: small topical groups written here, asked
on-topic and off-topic questions. Prints percentiles of ``SearchResults.relevance`` per set and writes the rows.

    loregraph bench locomo --db /tmp/locomo.db          # ingest once
    python scripts/relevance_floor.py sqlite:////tmp/locomo.db /tmp/rows.json
"""

import asyncio
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from loregraph.bench.locomo import DEFAULT_DATA, load
from loregraph.memory import Memory, Message

GROUPS = {
    "cooking": [
        "I made a sourdough loaf this morning, the starter finally got active after a week.",
        "For the risotto I toast the arborio rice in butter before adding warm stock.",
        "My grandmother's lasagna recipe uses bechamel instead of ricotta.",
        "I switched to a cast iron pan for searing steaks, it holds heat much better.",
        "We are hosting a dinner party on Saturday, I'm planning a mushroom tart as the starter.",
        "The curry needs more cumin and a bit of tamarind for sourness.",
        "I bought a new chef's knife, a Japanese gyuto, and it slices tomatoes effortlessly.",
        "Baking bread at high hydration makes the crumb more open.",
    ],
    "garden": [
        "The tomatoes in the greenhouse are finally ripening.",
        "I planted garlic cloves in October so they overwinter.",
        "Slugs ate half of my lettuce seedlings last night.",
        "I'm building a compost bin out of old pallets.",
        "The roses need pruning before spring.",
        "We put drip irrigation on the vegetable beds to save water.",
    ],
    "running": [
        "I ran my first half marathon in 1:52 last Sunday.",
        "My coach wants me to add interval training on Tuesdays.",
        "I bought new trail shoes with more grip for the muddy hills.",
        "My knee hurts after long runs, the physio said it's runner's knee.",
        "I'm training for the Berlin marathon in September.",
    ],
    "devops": [
        "We migrated the payment service to Kubernetes last month.",
        "The Helm chart for the API gateway needs a new readiness probe.",
        "Our Terraform state lives in an S3 bucket with locking in DynamoDB.",
        "Prometheus alerts fire when pod restarts exceed five per hour.",
        "Alice set up ArgoCD for GitOps deployments.",
    ],
    "finance": [
        "I opened an index fund account and invest 300 euros every month.",
        "Our mortgage rate resets next year, we might refinance.",
        "I track every expense in a spreadsheet to stick to the budget.",
        "My pension contribution went up to 8 percent of salary.",
    ],
}
# broad on-topic questions: the hardest to tell from off-topic ones
GENERIC = {
    "cooking": ["What do I like to cook?", "What kitchen tools do I have?", "What have I baked?"],
    "garden": ["What grows in my garden?", "What problems does my garden have?"],
    "running": ["How is my training going?", "What races am I doing?"],
    "devops": ["What tools do we use?", "Who does what on the team?", "What infrastructure do we run?"],
    "finance": ["What are my savings plans?", "What do I spend money on?"],
}
ON_TOPIC = {
    "cooking": [
        "How do I make risotto?",
        "What knife did I buy?",
        "What am I cooking for the dinner party?",
        "What does the lasagna recipe use?",
        "How is my sourdough starter doing?",
        "What pan do I sear steak in?",
    ],
    "garden": [
        "When did I plant garlic?",
        "What is eating my lettuce?",
        "How do I water the vegetable beds?",
        "What am I building the compost bin from?",
    ],
    "running": [
        "What was my half marathon time?",
        "Which marathon am I training for?",
        "What shoes did I buy?",
        "Why does my knee hurt?",
    ],
    "devops": [
        "Where does the Terraform state live?",
        "What did we migrate to Kubernetes?",
        "Who set up ArgoCD?",
        "When do the Prometheus alerts fire?",
    ],
    "finance": [
        "How much do I invest every month?",
        "What happens to our mortgage rate?",
        "How do I track my expenses?",
    ],
}
OFF_TOPIC = [
    "How do I configure a Kubernetes ingress controller?",
    "What is the capital of Australia?",
    "Which Python version supports pattern matching?",
    "How does TCP congestion control work?",
    "Who won the football world cup in 2014?",
    "What are the symptoms of a vitamin D deficiency?",
    "How do I replace the brake pads on my bicycle?",
    "What is the tax rate on capital gains?",
    "How do I fix a segmentation fault in C?",
    "When was the Eiffel Tower built?",
    "What is the best sourdough hydration?",
    "How do I train for a marathon?",
]
# off-topic per group: every OFF_TOPIC question whose subject is not that group's (hand-marked overlaps removed)
OVERLAP = {"devops": {0}, "cooking": {10}, "running": {11}, "finance": {7}}


def q(vals):
    a = np.array(vals)
    return " ".join(f"p{p}={np.percentile(a, p):.3f}" for p in (1, 5, 10, 25, 50, 75, 90, 95, 99)) + f" n={len(a)}"


async def main(db: str, out: Path) -> None:
    rows = []  # (source, split, kind, relevance of a full search, of a facts-only search, category)
    m = await Memory.open(db)
    samples = load(DEFAULT_DATA)
    for idx, s in enumerate(samples):
        g = f"locomo-{s.sample_id}"
        split = "tune" if idx < 5 else "held"
        other = samples[(idx + 1) % len(samples)]
        for qq in s.questions:
            kind = (
                "answerable"
                if qq["category"] != 5 and qq.get("evidence")
                else ("adversarial" if qq["category"] == 5 else "noevidence")
            )
            full = await m.search(str(qq["question"]), g, limit=10, include=["facts", "episodes"], min_relevance=0)
            facts = await m.search(str(qq["question"]), g, limit=10, include=["facts"], min_relevance=0)
            rows.append(("locomo", split, kind, full.relevance, facts.relevance, qq["category"]))
        for qq in other.questions[::3]:
            full = await m.search(str(qq["question"]), g, limit=10, include=["facts", "episodes"], min_relevance=0)
            facts = await m.search(str(qq["question"]), g, limit=10, include=["facts"], min_relevance=0)
            rows.append(("locomo", split, "crossconv", full.relevance, facts.relevance, qq["category"]))
    await m.close()
    d = tempfile.mkdtemp()
    p = await Memory.open(f"sqlite:///{d}/probes.db")
    for g, msgs in GROUPS.items():
        await p.add_messages(g, [Message(content=t, role_type="user", role="me") for t in msgs])
    for g in GROUPS:
        for qq in ON_TOPIC[g]:
            r = await p.search(qq, g, include=["facts", "episodes"], min_relevance=0)
            f = await p.search(qq, g, include=["facts"], min_relevance=0)
            rows.append(("probe", "-", "on-topic", r.relevance, f.relevance, 0))
        for qq in GENERIC[g]:
            r = await p.search(qq, g, include=["facts", "episodes"], min_relevance=0)
            f = await p.search(qq, g, include=["facts"], min_relevance=0)
            rows.append(("probe", "-", "on-topic-generic", r.relevance, f.relevance, 0))
        for i, qq in enumerate(OFF_TOPIC):
            if i in OVERLAP.get(g, set()):
                continue
            r = await p.search(qq, g, include=["facts", "episodes"], min_relevance=0)
            f = await p.search(qq, g, include=["facts"], min_relevance=0)
            rows.append(("probe", "-", "off-topic", r.relevance, f.relevance, 0))
    await p.close()
    out.write_text(json.dumps(rows))
    for src, split, kind in sorted({(r[0], r[1], r[2]) for r in rows}):
        sel = [r for r in rows if (r[0], r[1], r[2]) == (src, split, kind)]
        print(f"{src} {split} {kind}: full  {q([r[3] or 0 for r in sel])}")
        print(f"{src} {split} {kind}: facts {q([r[4] or 0 for r in sel])}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: relevance_floor.py DB_URL OUT.json  (DB: a `loregraph bench locomo --db` database)")
    if not DEFAULT_DATA.exists():
        print(f"LoCoMo data not found at {DEFAULT_DATA}; skipping.")
        sys.exit(0)
    asyncio.run(main(sys.argv[1], Path(sys.argv[2])))
