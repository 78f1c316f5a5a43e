"""The command-line application: the ``loregraph`` Typer app, its sub-apps and the helpers every command uses.
Commands live in the ``*_commands`` modules next to this one (``cli/main.py`` registers them, in order).

Imports of heavy modules happen inside commands so that ``loregraph search`` starts fast.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

app = typer.Typer(no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                  help="loregraph: temporal knowledge-graph memory for AI agents (embedded, offline).")
bench_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                        help="Benchmarks; each prints a ratio against a same-run baseline.")
models_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help="Local model files.")
app.add_typer(bench_app, name="bench")
app.add_typer(models_app, name="models")
communities_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                              help="Communities: clusters of closely related entities, named and searchable.")
app.add_typer(communities_app, name="communities")
console = Console()
err = Console(stderr=True)

DB_HELP = "Database URL (sqlite:///path.db) or a file path."
VERBOSE_HELP = "Log what happens (counts and timings)."


def setup(verbose: bool = False) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def fail(message: str) -> None:
    err.print(f"[red]error:[/red] {message}")
    raise typer.Exit(1)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Read message lines; errors name the line and field."""
    if not path.exists():
        fail(f"file not found: {path}")
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            fail(f"{path}:{n}: not valid JSON ({exc.msg})")
        if not isinstance(obj, dict) or not isinstance(obj.get("content"), str):
            fail(f"{path}:{n}: field 'content' is required and must be a string")
        rows.append(obj)
    return rows


def temporary_db() -> str:
    return f"sqlite:///{Path(tempfile.mkdtemp(prefix='loregraph-')) / 'memory.db'}"


def run(coro: Any) -> Any:
    """Run a command's coroutine; loregraph's errors (and bad values) end it with their message, exit 1."""
    from loregraph.errors import LoregraphError

    try:
        return asyncio.run(coro)
    except (LoregraphError, ValueError) as exc:
        fail(str(exc))


def progress_bar():
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                    console=err, transient=True)


def existing_db(db: str) -> None:
    """End the command if ``db`` names an SQLite file that does not exist."""
    from loregraph.store import url_scheme

    if url_scheme(db) == "sqlite" and not Path(db.removeprefix("sqlite:///")).exists():
        fail(f"database not found: {db}")
