"""Rich rendering of search results and graph state."""

from __future__ import annotations

from datetime import datetime

from rich.console import Console
from rich.table import Table

from loregraph.search.hybrid import SearchResults


def fmt_time(v: datetime | None) -> str:
    return v.strftime("%Y-%m-%d") if v else "—"


def render_search(console: Console, res: SearchResults, limit: int | None = None) -> None:
    if res.is_empty():
        console.print("[yellow]No relevant memory found.[/yellow]")
        return
    if res.facts:
        t = Table(title="Facts", show_lines=False)
        for col in ("fact", "type", "valid from", "valid until", "score"):
            t.add_column(col)
        for f in res.facts[:limit]:
            t.add_row(f.fact.fact, f.fact.type, fmt_time(f.fact.valid_at), fmt_time(f.fact.invalid_at),
                      f"{f.score:.4f}")
        console.print(t)
    if res.entities:
        t = Table(title="Entities")
        for col in ("name", "type", "mentions", "score"):
            t.add_column(col)
        for e in res.entities[:limit]:
            t.add_row(e.entity.name, e.entity.type, str(e.entity.mention_count), f"{e.score:.4f}")
        console.print(t)
    if res.episodes:
        t = Table(title="Episodes")
        for col in ("when", "content", "score"):
            t.add_column(col)
        for ep in res.episodes[:limit]:
            t.add_row(fmt_time(ep.episode.valid_at), ep.episode.content[:120], f"{ep.score:.4f}")
        console.print(t)
    console.print(f"[dim]search took {res.timings_ms.get('total', 0):.1f} ms[/dim]")
