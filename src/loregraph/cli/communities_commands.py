"""``loregraph communities build | list``."""

from __future__ import annotations

import json

import typer

from loregraph.cli.app import DB_HELP, VERBOSE_HELP, communities_app, console, existing_db, run, setup


# ---- communities --------------------------------------------------------------------------------
@communities_app.command("build")
def communities_build(group: str = typer.Option(..., "--group", "-g", help="The group whose communities to build."),
                      db: str = typer.Option("sqlite:///memory.db", help=DB_HELP),
                      verbose: bool = typer.Option(False, "--verbose", "-v", help=VERBOSE_HELP),
                      as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text.")) -> None:
    """Rebuild a group's communities from its current facts (Louvain, seeded); names and summaries by the LLM
    extractor when one is configured (one call per changed community), else from members and central facts."""
    setup(verbose)
    existing_db(db)

    async def go() -> None:
        from loregraph.memory import Memory

        async with await Memory.open(db) as m:
            report = await m.build_communities(group)
        if as_json:
            console.print_json(json.dumps(report.as_dict()))
            return
        console.print(f"group {group}: {report.communities} communities over {report.members} of "
                      f"{report.entities} entities ({report.edges} current facts, {report.levels} levels, "
                      f"{report.kept} unchanged, {report.llm_calls} LLM calls) in "
                      f"{report.timings_ms['total'] / 1000:.2f} s")

    run(go())


@communities_app.command("list")
def communities_list(group: str = typer.Option(..., "--group", "-g", help="The group."),
                     db: str = typer.Option("sqlite:///memory.db", help=DB_HELP),
                     limit: int = typer.Option(20, min=1, max=1000),
                     as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text.")) -> None:
    """A group's communities, largest first, with their summaries."""
    setup()
    existing_db(db)

    async def go() -> None:
        from loregraph.memory import Memory

        async with await Memory.open(db) as m:
            coms = await m.communities(group, limit=limit)
        if as_json:
            console.print_json(json.dumps([{"id": c.id, "name": c.name, "summary": c.summary,
                                            "member_ids": c.member_ids} for c in coms]))
            return
        if not coms:
            console.print(f"group {group} has no communities (build them: loregraph communities build -g {group})")
        for c in coms:
            console.print(f"[bold]{c.name}[/bold] ({len(c.member_ids)} members)\n  {c.summary}", highlight=False)

    run(go())
