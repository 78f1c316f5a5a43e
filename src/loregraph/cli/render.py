"""Rich rendering of search results and graph state."""

from __future__ import annotations

from datetime import datetime

from rich.console import Console
from rich.table import Table

from loregraph.search.hybrid import SearchResults


def fmt_time(v: datetime | None) -> str:
    return v.strftime("%Y-%m-%d") if v else "—"


def interval(valid_at: datetime | None, invalid_at: datetime | None) -> str:
    """A fact's validity: "since 2025-03-03" while current, "2025-03-03 → 2025-05-19" once ended."""
    if invalid_at is None:
        return f"since {fmt_time(valid_at)}" if valid_at else "current"
    return f"{fmt_time(valid_at)} → {fmt_time(invalid_at)}"


def no_result(res: SearchResults) -> str:
    """The honest empty answer, saying why when the relevance floor emptied the results."""
    if res.below_floor and res.relevance is not None:
        return (f"No relevant memory found: nothing cleared the relevance floor {res.min_relevance:.2f} "
                f"(closest match {res.relevance:.2f}; --min-relevance 0 shows it anyway).")
    return "No relevant memory found."


def render_compact(console: Console, res: SearchResults, limit: int | None = None) -> None:
    """One line per fact (group, fact, validity) and per related message: the default of ``loregraph search``."""
    if res.is_empty():
        console.print(f"[yellow]{no_result(res)}[/yellow]")
        return
    from rich.markup import escape

    if res.facts:
        console.print(f"[bold]Facts[/bold] ({len(res.facts[:limit])})")
        for f in res.facts[:limit]:
            ended = "" if f.fact.is_current() else " [dim](ended)[/dim]"
            console.print(f"  [cyan]{escape(f.fact.group_id)}[/cyan]  {escape(f.fact.fact)}  "
                          f"[dim]{interval(f.fact.valid_at, f.fact.invalid_at)}[/dim]{ended}")
    if res.episodes:
        console.print(f"[bold]Messages[/bold] ({len(res.episodes[:limit])})")
        for ep in res.episodes[:limit]:
            text = " ".join(ep.episode.content.split())
            console.print(f"  [cyan]{escape(ep.episode.group_id)}[/cyan]  {fmt_time(ep.episode.valid_at)}  "
                          f"{escape(text[:100])}{'…' if len(text) > 100 else ''}")
    if not res.facts and res.entities:
        names = ", ".join(f"{e.entity.name} ({e.entity.type})" for e in res.entities[:limit])
        console.print(f"[bold]Entities[/bold]: {escape(names)}")


def render_search(console: Console, res: SearchResults, limit: int | None = None) -> None:
    """Every part of the results as tables, with scores (``loregraph search --tables``)."""
    if res.is_empty():
        console.print(f"[yellow]{no_result(res)}[/yellow]")
        return
    if res.facts:
        t = Table(title="Facts", show_lines=False)
        for col in ("group", "fact", "type", "valid from", "valid until", "score"):
            t.add_column(col)
        for f in res.facts[:limit]:
            t.add_row(f.fact.group_id, f.fact.fact, f.fact.type, fmt_time(f.fact.valid_at),
                      fmt_time(f.fact.invalid_at), f"{f.score:.4f}")
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
