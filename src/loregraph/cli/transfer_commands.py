"""Moving memory between databases: ``export``, ``import``, ``migrate``, ``backup``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from loregraph.cli.app import DB_HELP, VERBOSE_HELP, app, err, run, setup


# ---- export / import / migrate / backup ------------------------------------------------------------
def _count_progress(what: str):
    """A progress display on stderr for a stream of unknown length: records done, rate, what is being done."""
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    return Progress(SpinnerColumn(), TextColumn(f"{what} " + "{task.completed:,} records"),
                    TextColumn("{task.fields[rate]}"), TextColumn("{task.description}"), TimeElapsedColumn(),
                    console=err, transient=True)


def _tracker(progress: Any) -> Any:
    import time

    task = progress.add_task("", total=None, rate="")
    t0 = time.perf_counter()
    state = {"n": 0}

    def step(doing: str, n: int) -> None:
        state["n"] += n
        rate = state["n"] / max(time.perf_counter() - t0, 1e-6)
        progress.update(task, advance=n, description=doing, rate=f"{rate:,.0f}/s")

    return step


def _embedder_for(header: Any) -> Any:
    """The configured embedder, loaded only when the file's records need vectors computed."""
    if header.embeddings:
        return None
    from loregraph.models.embedder import get_default_embedder

    return get_default_embedder()


@app.command("export")
def export_cmd(db: str = typer.Option(..., help=DB_HELP + " Also postgresql://..."),
               group: list[str] = typer.Option(None, "--group", "-g", help="A group to export (repeatable); "
                                                                        "default: every group."),
               embeddings: bool = typer.Option(True, "--embeddings/--no-embeddings",
                                               help="Write the stored vectors (else import computes them)."),
               out: Path = typer.Option(None, "--out", "-o", help="Write here instead of standard output."),
               verbose: bool = typer.Option(False, "--verbose", "-v", help=VERBOSE_HELP)) -> None:
    """Write a database's memory as versioned JSON lines (header, then every record of each group)."""
    setup(verbose)
    from loregraph.store import open_store
    from loregraph.transfer import export_memory

    async def go() -> None:
        store = open_store(db)
        try:
            stream = out.open("w", encoding="utf-8") if out is not None else sys.stdout
            try:
                with _count_progress("exported") as progress:
                    n = export_memory(store, stream, groups=group or None, embeddings=embeddings,
                                      progress=_tracker(progress))
            finally:
                if out is not None:
                    stream.close()
            err.print(f"exported {n:,} records from {store.label}")
        finally:
            store.close()

    run(go())


@app.command("import")
def import_cmd(file: Path = typer.Argument(..., help="A memory file written by `loregraph export` ('-': stdin)."),
               db: str = typer.Option(..., help=DB_HELP + " Also postgresql://..."),
               schema: Path = typer.Option(None, help="Schema file the records are checked against "
                                                      "(default: the bundled one)."),
               verbose: bool = typer.Option(False, "--verbose", "-v", help=VERBOSE_HELP)) -> None:
    """Apply a memory file to a database through the one write path (one transaction per batch; running it
    again after an interruption completes it without duplicates)."""
    setup(verbose)
    import itertools

    from loregraph.assembly.components import load_schema
    from loregraph.store import open_store
    from loregraph.transfer import import_lines
    from loregraph.transfer.memory_file import parse_header

    async def go() -> None:
        if str(file) != "-" and not file.is_file():
            raise ValueError(f"file not found: {file}")
        stream = sys.stdin if str(file) == "-" else file.open(encoding="utf-8")
        try:
            first = stream.readline()
            emb = _embedder_for(parse_header(first)) if first.strip() else None
            store = open_store(db)
            try:
                with _count_progress("imported") as progress:
                    report = import_lines(store, itertools.chain([first], stream), schema=load_schema(schema),
                                          embedder=emb, progress=_tracker(progress))
            finally:
                store.close()
        finally:
            if stream is not sys.stdin:
                stream.close()
        total = sum(report.records.values())
        err.print(f"imported {total:,} records in {report.batches} batches into {store.label}"
                  + (f"; {report.embedded:,} embedded" if report.embedded else "")
                  + (f"; {report.skipped_documents} documents there already" if report.skipped_documents else ""))

    run(go())


@app.command("migrate")
def migrate_cmd(from_db: str = typer.Option(..., "--from", help="Source database URL."),
                to_db: str = typer.Option(..., "--to", help="Target database URL."),
                group: list[str] = typer.Option(None, "--group", "-g", help="A group to move (repeatable)."),
                schema: Path = typer.Option(None, help="Schema file (default: the bundled one)."),
                verbose: bool = typer.Option(False, "--verbose", "-v", help=VERBOSE_HELP)) -> None:
    """Copy memory from one database to another (export piped into import, streamed in process)."""
    setup(verbose)
    from loregraph.assembly.components import load_schema
    from loregraph.store import open_store
    from loregraph.transfer import migrate

    async def go() -> None:
        source = open_store(from_db)
        try:
            target = open_store(to_db)
            try:
                with _count_progress("migrated") as progress:
                    report = migrate(source, target, schema=load_schema(schema), groups=group or None,
                                     progress=_tracker(progress))
            finally:
                target.close()
        finally:
            source.close()
        err.print(f"migrated {sum(report.records.values()):,} records from {source.label} to {target.label}")

    run(go())


@app.command("backup")
def backup_cmd(out: Path = typer.Argument(..., help="The new database file to write."),
               db: str = typer.Option(..., help="sqlite:///path.db or a file path."),
               verbose: bool = typer.Option(False, "--verbose", "-v", help=VERBOSE_HELP)) -> None:
    """A consistent copy of a SQLite database, taken with SQLite's online backup API (writers may go on)."""
    setup(verbose)
    from loregraph.transfer import backup_sqlite

    async def go() -> None:
        with err.status("backing up ..."):
            took = backup_sqlite(db, out)
        err.print(f"backed up {int(took['pages']):,} pages to {out} in {took['seconds']:.2f} s")

    run(go())
