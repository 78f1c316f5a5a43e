"""Commands over a memory: ``demo``, ``ingest``, ``search``, ``extract``."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

import typer

from loregraph.cli.app import (
    DB_HELP,
    VERBOSE_HELP,
    app,
    console,
    existing_db,
    progress_bar,
    read_jsonl,
    run,
    setup,
    temporary_db,
)


# ---- demo -------------------------------------------------------------------------------------
@app.command()
def demo(db: str = typer.Option(None, help=DB_HELP + " Default: a new temporary database."),
         verbose: bool = typer.Option(False, "--verbose", "-v", help=VERBOSE_HELP)) -> None:
    """Ingest a bundled conversation offline, then show the graph and answer questions."""
    setup(verbose)
    from loregraph.cli.demo import run_demo

    run(run_demo(db, console))


# ---- ingest / search --------------------------------------------------------------------------
@app.command()
def ingest(file: Path = typer.Argument(..., help="JSON lines: content, role_type/role, timestamp, group_id/user_id"),
           db: str = typer.Option("sqlite:///memory.db", help=DB_HELP),
           group: str = typer.Option(None, help="Group for lines that name none."),
           verbose: bool = typer.Option(False, "--verbose", "-v", help=VERBOSE_HELP)) -> None:
    """Ingest messages from a JSONL file, in order."""
    setup(verbose)
    rows = read_jsonl(file)

    async def go() -> None:
        from loregraph.graph.messages import Message
        from loregraph.memory import Memory

        items = []
        for n, obj in enumerate(rows, 1):
            try:
                g, msg = Message.from_record(obj, group)
            except Exception as exc:
                raise ValueError(f"{file} message {n}: {exc}") from exc
            items.append((g, msg, obj.get("conversation_id")))
        m = await Memory.open(db)
        totals = {"entities": 0, "facts": 0, "invalidated": 0, "skipped": 0}
        try:
            async with m.bulk_import():
                with progress_bar() as prog:
                    task = prog.add_task("ingesting", total=len(items))
                    for g, msg, conv in items:
                        (res,) = await m.add_messages(g, [msg], conversation_id=conv)
                        totals["skipped"] += res.already_ingested
                        totals["entities"] += len(res.entities)
                        totals["facts"] += len(res.facts)
                        totals["invalidated"] += len(res.invalidated)
                        prog.advance(task)
        finally:
            await m.close()
        new = len(items) - totals["skipped"]
        skipped = f" ({totals['skipped']} already ingested, skipped)" if totals["skipped"] else ""
        console.print(f"ingested {new} messages into {db}{skipped}: {totals['facts']} facts written or reinforced, "
                      f"{totals['invalidated']} invalidated")

    run(go())


@app.command()
def search(query: str = typer.Argument(..., help="A question or keywords."),
           group: list[str] = typer.Option(..., "--group", "-g", help="Group(s) to search (repeat -g for several)."),
           db: str = typer.Option("sqlite:///memory.db", help=DB_HELP),
           limit: int = typer.Option(10, min=1, max=200, help="Results per part (facts, messages)."),
           as_of: datetime = typer.Option(None, help="Answer what was true at this time (ISO-8601)."),
           history: bool = typer.Option(False, "--history",
                                        help="Current and ended facts, each with its validity interval."),
           min_relevance: float = typer.Option(None, min=0.0, max=1.0,
                                               help="Relevance floor: below it, answer 'no relevant memory' "
                                                    "(default: the built-in floor; 0 turns it off)."),
           tables: bool = typer.Option(False, "--tables", help="Every part as tables, with scores."),
           as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text.")) -> None:
    """Hybrid search (BM25 + vector + graph) over one or more groups; an honest 'no relevant memory' when nothing
    clears the relevance floor."""
    setup()
    existing_db(db)

    async def go() -> None:
        from loregraph.memory import Memory

        m = await Memory.open(db)
        try:
            res = await m.search(query, group, limit=limit, as_of=as_of, include_ended=history,
                                 min_relevance=min_relevance)
        finally:
            await m.close()
        if as_json:
            console.print_json(json.dumps({
                "facts": [{"group_id": f.fact.group_id, "fact": f.fact.fact, "type": f.fact.type,
                           "source": f.source_name, "target": f.target_name, "valid_at": _iso(f.fact.valid_at),
                           "invalid_at": _iso(f.fact.invalid_at), "current": f.fact.is_current(),
                           "score": f.score, "id": f.fact.id} for f in res.facts],
                "entities": [{"group_id": e.entity.group_id, "name": e.entity.name, "type": e.entity.type,
                              "id": e.entity.id, "score": e.score} for e in res.entities],
                "episodes": [{"group_id": e.episode.group_id, "content": e.episode.content,
                              "valid_at": _iso(e.episode.valid_at), "id": e.episode.id, "score": e.score}
                             for e in res.episodes],
                "relevance": res.relevance, "min_relevance": res.min_relevance, "below_floor": res.below_floor,
                "timings_ms": res.timings_ms}))
            return
        from loregraph.cli.render import render_compact, render_search

        (render_search if tables else render_compact)(console, res)

    run(go())


def _iso(v: datetime | None) -> str | None:
    return v.isoformat() if v else None


# ---- extract ----------------------------------------------------------------------------------
@app.command()
def extract(file: Path = typer.Argument(..., help="Messages as JSON lines (group_id or user_id, content, role, "
                                                    "timestamp, message_id)"),
            db: str = typer.Option(None, help=DB_HELP + " Default: a new temporary database."),
            verbose: bool = typer.Option(False, "--verbose", "-v", help=VERBOSE_HELP),
            explain: bool = typer.Option(False, "--explain",
                                         help="Add per relation the stage and rule or example phrase behind it.")
            ) -> None:
    """Process messages in order and print the extraction report (one line per message, then final state)."""
    setup(verbose)
    rows = read_jsonl(file)
    from loregraph.cli.report import run_extract_report

    run(run_extract_report(rows, db or temporary_db(), sys.stdout, explain=explain))
