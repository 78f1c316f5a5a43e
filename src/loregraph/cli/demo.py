"""``loregraph demo``: ingest the bundled conversation, show the graph, answer questions."""

from __future__ import annotations

import json
import tempfile
import time
from importlib import resources
from pathlib import Path

from rich.console import Console
from rich.table import Table

from loregraph.cli.render import fmt_time

QUESTIONS = [
    "What database does Orion use?",
    "Who works on Orion now?",
    "Which dashboards tool does Maya use?",
    "What is Ledger built with?",
    "Where does Ravi work?",
]


def load_conversation() -> list[dict]:
    text = resources.files("loregraph.demo").joinpath("conversation.jsonl").read_text("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


async def run_demo(db: str | None, console: Console) -> None:
    from loregraph.memory import Memory, Message

    rows = load_conversation()
    url = db or f"sqlite:///{Path(tempfile.mkdtemp(prefix='loregraph-demo-')) / 'demo.db'}"
    console.print(f"[bold]loregraph demo[/bold] — database {url}")
    t0 = time.perf_counter()
    m = await Memory.open(url)
    group = rows[0]["group_id"]
    try:
        console.print(f"ingesting {len(rows)} messages of a conversation spanning "
                      f"{rows[0]['timestamp'][:10]} to {rows[-1]['timestamp'][:10]} …")
        for row in rows:
            msg = Message(content=row["content"], role_type=row["role_type"], timestamp=row["timestamp"],
                          name=row["message_id"], role="Maya" if row["role_type"] == "user" else None)
            await m.add_messages(group, [msg], conversation_id=row["conversation_id"])
        console.print(f"done in {time.perf_counter() - t0:.1f} s (models loaded on first use)\n")

        ents = [e for e in await m.list_entities(group)]
        t = Table(title=f"Entities ({len(ents)})")
        for col in ("name", "type", "mentions", "aliases"):
            t.add_column(col)
        for e in sorted(ents, key=lambda e: (e.type, e.name.casefold())):
            t.add_row(e.name + (" (speaker)" if e.attributes.get("is_speaker") else ""), e.type,
                      str(e.mention_count), ", ".join(e.aliases))
        console.print(t)

        every = await m.list_facts(group, current=False)
        names = {e.id: e.name for e in ents}
        current = [f for f in every if f.is_current()]
        old = [f for f in every if not f.is_current()]
        t = Table(title=f"Current facts ({len(current)})")
        for col in ("source", "relation", "target", "fact", "since"):
            t.add_column(col)
        for f in sorted(current, key=lambda f: f.valid_at or f.created_at):
            t.add_row(names.get(f.source_id, "?"), f.type, names.get(f.target_id, "?"), f.fact, fmt_time(f.valid_at))
        console.print(t)
        t = Table(title=f"Superseded facts ({len(old)}) — kept, with their validity interval")
        for col in ("source", "relation", "target", "valid from", "valid until"):
            t.add_column(col)
        for f in sorted(old, key=lambda f: f.valid_at or f.created_at):
            t.add_row(names.get(f.source_id, "?"), f.type, names.get(f.target_id, "?"), fmt_time(f.valid_at),
                      fmt_time(f.invalid_at))
        console.print(t)

        for q in QUESTIONS:
            res = await m.search(q, group, limit=3)
            console.print(f"\n[bold cyan]Q:[/bold cyan] {q}  [dim]({res.timings_ms.get('total', 0):.1f} ms)[/dim]")
            if res.facts:
                for sf in res.facts:
                    console.print(f"  • {sf.fact.fact}  [dim](since {fmt_time(sf.fact.valid_at)})[/dim]")
            elif res.episodes:
                console.print(f"  • {res.episodes[0].episode.content}")
            else:
                console.print("  [yellow]no relevant memory[/yellow]")
        past = await m.search("What database does Orion use?", group, limit=3,
                              as_of=__import__("datetime").datetime(2025, 4, 1))
        console.print("\n[bold cyan]Q:[/bold cyan] What database did Orion use on 2025-04-01?  (as_of)")
        for sf in past.facts:
            span = f"{fmt_time(sf.fact.valid_at)} → {fmt_time(sf.fact.invalid_at)}"
            console.print(f"  • {sf.fact.fact}  [dim]({span})[/dim]")
    finally:
        await m.close()
