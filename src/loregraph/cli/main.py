"""Command-line interface: ``loregraph demo | ingest | search | extract | export | import | migrate | backup | serve |
worker | bench | models``.

Imports of heavy modules happen inside commands so that ``loregraph search`` starts fast.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import tempfile
from datetime import datetime
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


def _setup(verbose: bool = False) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _fail(message: str) -> None:
    err.print(f"[red]error:[/red] {message}")
    raise typer.Exit(1)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Read message lines; errors name the line and field."""
    if not path.exists():
        _fail(f"file not found: {path}")
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            _fail(f"{path}:{n}: not valid JSON ({exc.msg})")
        if not isinstance(obj, dict) or not isinstance(obj.get("content"), str):
            _fail(f"{path}:{n}: field 'content' is required and must be a string")
        rows.append(obj)
    return rows


def _temporary_db() -> str:
    return f"sqlite:///{Path(tempfile.mkdtemp(prefix='loregraph-')) / 'memory.db'}"


def _run(coro: Any) -> Any:
    """Run a command's coroutine; loregraph's errors (and bad values) end it with their message, exit 1."""
    from loregraph.errors import LoregraphError

    try:
        return asyncio.run(coro)
    except (LoregraphError, ValueError) as exc:
        _fail(str(exc))


def _progress():
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                    console=err, transient=True)


# ---- demo -------------------------------------------------------------------------------------
@app.command()
def demo(db: str = typer.Option(None, help=DB_HELP + " Default: a new temporary database."),
         verbose: bool = typer.Option(False, "--verbose", "-v", help=VERBOSE_HELP)) -> None:
    """Ingest a bundled conversation offline, then show the graph and answer questions."""
    _setup(verbose)
    from loregraph.cli.demo import run_demo

    _run(run_demo(db, console))


# ---- ingest / search --------------------------------------------------------------------------
@app.command()
def ingest(file: Path = typer.Argument(..., help="JSON lines: content, role_type/role, timestamp, group_id/user_id"),
           db: str = typer.Option("sqlite:///memory.db", help=DB_HELP),
           group: str = typer.Option(None, help="Group for lines that name none."),
           verbose: bool = typer.Option(False, "--verbose", "-v", help=VERBOSE_HELP)) -> None:
    """Ingest messages from a JSONL file, in order."""
    _setup(verbose)
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
                with _progress() as prog:
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

    _run(go())


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
    _setup()
    from loregraph.store import url_scheme

    if url_scheme(db) == "sqlite" and not Path(db.removeprefix("sqlite:///")).exists():
        _fail(f"database not found: {db}")

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

    _run(go())


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
    _setup(verbose)
    rows = read_jsonl(file)
    from loregraph.cli.report import run_extract_report

    _run(run_extract_report(rows, db or _temporary_db(), sys.stdout, explain=explain))


# ---- communities --------------------------------------------------------------------------------
def _existing_db(db: str) -> None:
    from loregraph.store import url_scheme

    if url_scheme(db) == "sqlite" and not Path(db.removeprefix("sqlite:///")).exists():
        _fail(f"database not found: {db}")


@communities_app.command("build")
def communities_build(group: str = typer.Option(..., "--group", "-g", help="The group whose communities to build."),
                      db: str = typer.Option("sqlite:///memory.db", help=DB_HELP),
                      verbose: bool = typer.Option(False, "--verbose", "-v", help=VERBOSE_HELP),
                      as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text.")) -> None:
    """Rebuild a group's communities from its current facts (Louvain, seeded); names and summaries by the LLM
    extractor when one is configured (one call per changed community), else from members and central facts."""
    _setup(verbose)
    _existing_db(db)

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

    _run(go())


@communities_app.command("list")
def communities_list(group: str = typer.Option(..., "--group", "-g", help="The group."),
                     db: str = typer.Option("sqlite:///memory.db", help=DB_HELP),
                     limit: int = typer.Option(20, min=1, max=1000),
                     as_json: bool = typer.Option(False, "--json", help="Print JSON instead of text.")) -> None:
    """A group's communities, largest first, with their summaries."""
    _setup()
    _existing_db(db)

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

    _run(go())


# ---- bench ------------------------------------------------------------------------------------
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
    _setup(verbose)
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

    _run(go())


@app.command("import")
def import_cmd(file: Path = typer.Argument(..., help="A memory file written by `loregraph export` ('-': stdin)."),
               db: str = typer.Option(..., help=DB_HELP + " Also postgresql://..."),
               schema: Path = typer.Option(None, help="Schema file the records are checked against "
                                                      "(default: the bundled one)."),
               verbose: bool = typer.Option(False, "--verbose", "-v", help=VERBOSE_HELP)) -> None:
    """Apply a memory file to a database through the one write path (one transaction per batch; running it
    again after an interruption completes it without duplicates)."""
    _setup(verbose)
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

    _run(go())


@app.command("migrate")
def migrate_cmd(from_db: str = typer.Option(..., "--from", help="Source database URL."),
                to_db: str = typer.Option(..., "--to", help="Target database URL."),
                group: list[str] = typer.Option(None, "--group", "-g", help="A group to move (repeatable)."),
                schema: Path = typer.Option(None, help="Schema file (default: the bundled one)."),
                verbose: bool = typer.Option(False, "--verbose", "-v", help=VERBOSE_HELP)) -> None:
    """Copy memory from one database to another (export piped into import, streamed in process)."""
    _setup(verbose)
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

    _run(go())


@app.command("backup")
def backup_cmd(out: Path = typer.Argument(..., help="The new database file to write."),
               db: str = typer.Option(..., help="sqlite:///path.db or a file path."),
               verbose: bool = typer.Option(False, "--verbose", "-v", help=VERBOSE_HELP)) -> None:
    """A consistent copy of a SQLite database, taken with SQLite's online backup API (writers may go on)."""
    _setup(verbose)
    from loregraph.transfer import backup_sqlite

    async def go() -> None:
        with err.status("backing up ..."):
            took = backup_sqlite(db, out)
        err.print(f"backed up {int(took['pages']):,} pages to {out} in {took['seconds']:.2f} s")

    _run(go())

@bench_app.command("communities")
def bench_communities(sizes: str = typer.Option("10000,100000", help="Entity counts, comma-separated."),
                      seed: int = typer.Option(7),
                      drift: str = typer.Option("0.05,0.1,0.25,0.5",
                                                help="Shares of entities placed incrementally (at the first size); "
                                                     "empty: skip.")) -> None:
    """Planted-cluster recovery (ARI vs the planted blocks) and build time vs connected components."""
    _setup()
    from loregraph.bench.communities import run_communities_bench

    try:
        ns = [int(x) for x in sizes.split(",") if x.strip()]
        shares = [float(x) for x in drift.split(",") if x.strip()]
    except ValueError:
        _fail("--sizes: comma-separated integers; --drift: comma-separated fractions")
    if not ns or any(n < 100 for n in ns) or any(not 0 < s < 1 for s in shares):
        _fail("--sizes: each at least 100; --drift: each between 0 and 1")
    run_communities_bench(ns, seed, console, shares)


@bench_app.command("search")
def bench_search(facts: int = typer.Option(100000, min=100), queries: int = typer.Option(200, min=10),
                 db: str = typer.Option(None, help=DB_HELP + " Also postgresql://... (the bench builds and then "
                                             "deletes a group of its own). Default: a new temporary database."),
                 seed: int = typer.Option(7),
                 compare_sqlite: bool = typer.Option(False, "--compare-sqlite",
                                                     help="With a PostgreSQL --db: also run on a new temporary "
                                                          "SQLite file in the same run (one line per backend)."),
                 compare_pg: str = typer.Option(None, "--compare-pg",
                                                help="Tenants mode: a plain PostgreSQL URL measured next to --db "
                                                     "(a Citus coordinator) with the same groups."),
                 groups: int = typer.Option(100, min=1, help="Tenants mode: small groups ..."),
                 group_facts: int = typer.Option(1000, min=10, help="... of this many facts (plus one group of "
                                                                    "--facts)."),
                 clients: int = typer.Option(4, min=1, max=64, help="Tenants mode: client processes for the "
                                                                    "throughput run.")
                 ) -> None:
    """Search latency at N facts in one group vs a brute-force scan in the same run; with --compare-pg, many
    tenants on a Citus cluster (--db) next to one PostgreSQL server: coordinator overhead and total queries/s."""
    _setup()
    if compare_pg:
        if not db:
            _fail("--compare-pg needs --db (the Citus coordinator's URL)")
        from loregraph.bench.cluster import run_cluster_bench

        _run(run_cluster_bench(db=db, baseline=compare_pg, groups=groups, group_facts=group_facts, facts=facts,
                               queries=queries, clients=clients, seed=seed, console=err))
        return
    from loregraph.bench.search import run_search_bench

    _run(run_search_bench(facts=facts, queries=queries, db=db, seed=seed, console=err,
                          compare_sqlite=compare_sqlite))


@bench_app.command("pg-vectors")
def bench_pg_vectors(db: str = typer.Option(..., help="postgresql://... of a server where a throw-away database "
                                                      "lg_vecbench_<pid> may be created and dropped"),
                     queries: int = typer.Option(200, min=10), scale: float = typer.Option(1.0, min=0.01,
                                                                                         help="multiply every "
                                                                                              "group size"),
                     inserts: int = typer.Option(2000, min=10)) -> None:
    """Group-filtered kNN on pgvector: exact scan vs a global HNSW index vs a partial index per group
    (recall@10 against exact, latency, build and insert cost). ~6 min at scale 1."""
    _setup()
    from loregraph.bench.pg_vector_index import main as pg_vectors_main

    pg_vectors_main(["--db", db, "--queries", str(queries), "--scale", str(scale), "--inserts", str(inserts)])


@bench_app.command("locomo")
def bench_locomo(data: Path = typer.Option(None, help="locomo10.json (default: ../shared/bench/locomo/locomo10.json)"),
                 k: int = typer.Option(10, min=1, max=100), conversations: int = typer.Option(None, min=1),
                 questions: int = typer.Option(None, min=1, help="At most this many questions per conversation."),
                 db: str = typer.Option(None, help=DB_HELP + " Default: a new temporary database.")) -> None:
    """LoCoMo evidence recall@k vs BM25 and vector baselines over the raw turns (no LLM)."""
    _setup()
    from loregraph.bench.locomo import run_locomo_bench

    _run(run_locomo_bench(data=data, k=k, conversations=conversations, questions=questions, db=db, console=err))


@bench_app.command("locomo-extract")
def bench_locomo_extract(out: Path = typer.Option(..., help="Where to write the facts and entities (JSON lines; keep "
                                                           "it outside the repository)."),
                         data: Path = typer.Option(None, help="locomo10.json (default: "
                                                              "../shared/bench/locomo/locomo10.json)"),
                         conversations: int = typer.Option(None, min=1),
                         db: str = typer.Option(None, help=DB_HELP + " Default: a new temporary database.")) -> None:
    """Ingest LoCoMo's conversations and dump every new fact and entity with its source turn, to judge by hand."""
    _setup()
    from loregraph.bench.locomo_extract import run_locomo_extract

    _run(run_locomo_extract(data=data, out=out, conversations=conversations, db=db, console=err))


@bench_app.command("llm-cost")
def bench_llm_cost(data: Path = typer.Option(None, help="Gold JSONL (default: ../shared/bench/extraction/dev.jsonl)"),
                   graphiti_python: str = typer.Option(None, envvar="LOREGRAPH_GRAPHITI_PYTHON",
                                                       help="Python of another venv with graphiti-core, if not here."),
                   preprocessing: str = typer.Option(None, help="Preprocessing prompt for our side (e.g. "
                                                                "default-session-turn.md)."),
                   limit: int = typer.Option(None, min=1, help="Only the first N messages.")) -> None:
    """LLM calls and prompt tokens per message: LLMExtractor vs graphiti-core, same scripted answers."""
    _setup()
    from loregraph.bench.llm_cost import run_llm_cost_bench

    _run(run_llm_cost_bench(data=data, graphiti_python=graphiti_python, console=err, preprocessing=preprocessing,
                            limit=limit))


@bench_app.command("llm-real")
def bench_llm_real(base_url: str = typer.Option(..., help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1"),
                   model: str = typer.Option(..., help="Model name the endpoint serves."),
                   data: list[Path] = typer.Option(None, help="Gold JSONL (default: ../shared/bench/extraction/"
                                                               "dev.jsonl and dev2.jsonl); repeatable."),
                   api_key: str = typer.Option(None, envvar="LOREGRAPH_LLM_API_KEY"),
                   structured_output: str = typer.Option("auto", envvar="LOREGRAPH_LLM_STRUCTURED_OUTPUT",
                                                         help="auto (negotiated) | json_schema | json_object | none"),
                   max_tokens: int = typer.Option(1024, min=16), timeout: float = typer.Option(120.0, min=1.0),
                   limit: int = typer.Option(None, min=1, help="Only the first N messages of each set."),
                   report: Path = typer.Option(None, help="Folder for the per-message reports (default: a temp dir)."),
                   ) -> None:
    """The LLM extractor against a real endpoint: calls and tokens per message, latency, validated share, P/R."""
    _setup()
    if structured_output not in ("auto", "json_schema", "json_object", "none"):
        _fail(f"--structured-output: {structured_output!r} is not auto, json_schema, json_object or none")
    from loregraph.bench.llm_real import run_llm_real_bench

    _run(run_llm_real_bench(base_url=base_url, model=model, console=err, data=data or None, api_key=api_key,
                            structured_output=structured_output, max_tokens=max_tokens, timeout=timeout, limit=limit,
                            report=report))


@bench_app.command("documents")
def bench_documents(chunks: int = typer.Option(100000, min=100, help="Chunks in the searched collection."),
                    documents: int = typer.Option(21, min=2, help="Documents ingested with extraction (first one "
                                                                  "warms up, untimed)."),
                    queries: int = typer.Option(200, min=10), seed: int = typer.Option(7),
                    db: str = typer.Option(None, help=DB_HELP + " Also postgresql://... (the bench's groups are "
                                                  "deleted afterwards). Default: a new temporary database.")) -> None:
    """Document ingest chunks/s (with extraction) and search_documents p50 at N chunks vs brute-force cosine."""
    _setup()
    from loregraph.bench.documents import run_documents_bench

    _run(run_documents_bench(chunks=chunks, ingest_docs=documents, queries=queries, db=db, seed=seed, console=err))


@bench_app.command("writes")
def bench_writes(db: str = typer.Option(..., help="postgresql://... measured (e.g. a Citus coordinator)"),
                 compare_pg: str = typer.Option(..., "--compare-pg", help="The baseline (plain PostgreSQL) measured "
                                                                         "in the same run."),
                 messages: int = typer.Option(200, min=10, help="Message-shaped writes (one transaction each)."),
                 bulk: int = typer.Option(2000, min=10, help="Facts in the one bulk write."),
                 seed: int = typer.Option(7)) -> None:
    """Store write latency (message-shaped writes, one bulk write) on --db next to --compare-pg: the ratio."""
    _setup()
    from loregraph.bench.writes import run_writes_bench

    run_writes_bench(db=db, baseline=compare_pg, messages=messages, bulk=bulk, seed=seed)


@bench_app.command("cluster-vectors")
def bench_cluster_vectors(db: str = typer.Option(..., help="A Citus coordinator's postgresql://... (a throw-away "
                                                          "schema lg_clvec_<pid> is created and dropped)"),
                          small: int = typer.Option(60, min=1, help="Small groups ..."),
                          small_rows: int = typer.Option(1000, min=10, help="... of this many vectors."),
                          big: int = typer.Option(3, min=1, help="Big groups ..."),
                          big_rows: int = typer.Option(10000, min=100, help="... of this many vectors."),
                          queries: int = typer.Option(100, min=10)) -> None:
    """Group-filtered kNN on Citus: a partial HNSW index per big group against one HNSW index per shard."""
    _setup()
    from loregraph.bench.cluster_vectors import run_cluster_vectors_bench

    run_cluster_vectors_bench(db=db, small=small, small_rows=small_rows, big=big, big_rows=big_rows, queries=queries)


@bench_app.command("cluster-queue")
def bench_cluster_queue(db: str = typer.Option(..., help="A Citus coordinator's postgresql://... (a throw-away "
                                                        "schema lg_clq_<pid> is created and dropped)"),
                        jobs: int = typer.Option(5000, min=10), groups: int = typer.Option(100, min=1),
                        batch: int = typer.Option(10, min=1, help="Jobs per enqueue call."),
                        cycles: int = typer.Option(500, min=10, help="Claim cycles timed.")) -> None:
    """The job queue's table on Citus: coordinator-local against distributed by group (group-filtered claims)."""
    _setup()
    from loregraph.bench.cluster_queue import run_cluster_queue_bench

    run_cluster_queue_bench(db=db, jobs=jobs, groups=groups, batch=batch, cycles=cycles)


@bench_app.command("ingest")
def bench_ingest(messages: int = typer.Option(300, min=10),
                 db: str = typer.Option(None, help=DB_HELP + " Default: a new temporary database.")) -> None:
    """Messages per second through the full pipeline with the local extractor."""
    _setup()
    from loregraph.bench.ingest import run_ingest_bench

    _run(run_ingest_bench(messages=messages, db=db, console=err))


@bench_app.command("api")
def bench_api(messages: int = typer.Option(400, min=20), clients: int = typer.Option(8, min=1, max=64),
              db: str = typer.Option(None, help=DB_HELP + " Default: a new temporary database.")) -> None:
    """REST POST /messages acceptance rate and p95 latency (concurrent clients), end-to-end messages/s."""
    _setup()
    from loregraph.bench.api import run_api_bench

    _run(run_api_bench(messages=messages, clients=clients, db=db, console=err))


@bench_app.command("soak")
def bench_soak(minutes: float = typer.Option(5.0, min=0.1, help="How long the soak runs."),
               clients: int = typer.Option(8, min=1, max=64), groups: int = typer.Option(20, min=1),
               search_share: float = typer.Option(0.5, min=0.0, max=1.0, help="Share of requests that search."),
               max_requests: int = typer.Option(1_000_000, min=10, help="Stop after this many requests."),
               sample_s: float = typer.Option(2.0, min=0.2, help="Seconds between RSS samples.")) -> None:
    """Mixed ingestion and search against a real server: throughput, p95, RSS slope per 10k requests."""
    _setup()
    from loregraph.bench.soak import run_soak_bench

    _run(run_soak_bench(minutes=minutes, clients=clients, search_share=search_share, groups=groups,
                        max_requests=max_requests, sample_s=sample_s, console=err))


# ---- serve ------------------------------------------------------------------------------------
@bench_app.command("grpc")
def bench_grpc(entities: int = typer.Option(10000, min=100, help="People, each with a description block (the issue's "
                                                                "full scale is 100000)."),
               batch: int = typer.Option(250, min=1, help="Entities per UpsertGraphDelta request."),
               queries: int = typer.Option(200, min=10),
               db: str = typer.Option(None, help=DB_HELP + " Default: a new temporary database.")) -> None:
    """gRPC UpsertGraphDelta records/s and FindEntityCandidates p50 vs the same code in process (same run)."""
    _setup()
    from loregraph.bench.grpc import run_grpc_bench

    _run(run_grpc_bench(entities=entities, batch=batch, queries=queries, db=db, console=err))


@app.command()
def serve(db: str = typer.Option(None, help=DB_HELP + " Default: sqlite:///memory.db."),
          host: str = typer.Option(None, help="Interface to bind (default 127.0.0.1; loopback only without keys)."),
          port: int = typer.Option(None, help="Port (default 8000; 0 picks a free one)."),
          config: Path = typer.Option(None, "--config", help="Config file (.yaml/.toml/.json); also LOREGRAPH_CONFIG."),
          worker: bool = typer.Option(None, "--worker/--no-worker",
                                      help="Run the job worker in this process (default yes; --no-worker: accept "
                                           "jobs only, e.g. with `loregraph worker` processes on PostgreSQL)."),
          grpc_port: int = typer.Option(None, "--grpc-port", help="Also serve the gRPC knowledge interface here."),
          ) -> None:
    """Run the REST service. Settings: flags > environment (LOREGRAPH_*) > .env > config file."""
    from loregraph.api.grpc.server import start_server
    from loregraph.api.rest import create_app
    from loregraph.assembly.service import run_serve

    raise typer.Exit(run_serve(create_app, config_file=config, grpc_server=start_server, db=db, host=host, port=port,
                               worker=worker, grpc_port=grpc_port))


@app.command("grpc")
def grpc_cmd(db: str = typer.Option(None, help=DB_HELP + " Default: sqlite:///memory.db."),
             host: str = typer.Option(None, help="Interface to bind (default 127.0.0.1; loopback only without keys)."),
             port: int = typer.Option(50051, help="Port (0 picks a free one)."),
             config: Path = typer.Option(None, "--config", help="Config file; also LOREGRAPH_CONFIG."),
             qdrant_path: str = typer.Option(None, help="Project blocks into Qdrant (local mode) at this directory."),
             ) -> None:
    """Run the gRPC knowledge interface (spec 001) alone, with reflection and the health service."""
    from loregraph.api.grpc.server import start_server
    from loregraph.assembly.service import run_grpc

    raise typer.Exit(run_grpc(start_server, config_file=config, db=db, host=host, grpc_port=port,
                              qdrant_path=qdrant_path))


@app.command("mcp")
def mcp_cmd(db: str = typer.Option(None, help=DB_HELP + " Required (flag, LOREGRAPH_DB, .env or config file)."),
            group: list[str] = typer.Option(None, "--group", "-g",
                                            help="A group the local user may use (repeat; default: every group)."),
            config: Path = typer.Option(None, "--config", help="Config file; also LOREGRAPH_CONFIG."),
            ) -> None:
    """Serve the MCP tools over stdio (for MCP clients that start a local server). Over HTTP, `loregraph serve`
    mounts them at /mcp with the same API keys as REST."""
    from loregraph.api.mcp.server import stdio_server
    from loregraph.assembly.service import run_mcp_stdio

    raise typer.Exit(run_mcp_stdio(stdio_server, config_file=config, db=db, mcp_groups=group or None))


@app.command("worker")
def worker_cmd(db: str = typer.Option(None, help=DB_HELP + " Default: sqlite:///memory.db."),
               config: Path = typer.Option(None, "--config", help="Config file; also LOREGRAPH_CONFIG."),
               ) -> None:
    """Run only the job worker (no HTTP). On PostgreSQL any number of worker processes share the queue; jobs of
    one group still run one at a time, in order."""
    from loregraph.assembly.service import run_worker

    raise typer.Exit(run_worker(config_file=config, db=db))


# ---- models -----------------------------------------------------------------------------------
@models_app.command("prepare")
def models_prepare(model_dir: Path = typer.Option(None, help="A local sentence-transformers model folder."),
                   no_quantize: bool = typer.Option(False, "--no-quantize", help="Keep fp32 instead of int8."),
                   check: bool = typer.Option(False, "--check", help="Only say whether the model is ready (exit 1 "
                                                                    "if not); export nothing.")) -> None:
    """Export the local embedding model to ONNX once (needs the 'export' extra: torch)."""
    _setup(not check)
    from loregraph.models.embedder import prepare_model

    if check:
        from loregraph.models.model_files import DEFAULT_MODEL_NAME, existing_onnx, export_dir, resolve_model_dir

        name = str(model_dir) if model_dir else DEFAULT_MODEL_NAME
        ready = existing_onnx(export_dir(name, resolve_model_dir(name, model_dir)), not no_quantize)
        if ready is None:
            _fail("the embedding model is not exported yet: run `loregraph models prepare`")
        console.print(f"model ready: {ready}")
        return

    try:
        path = prepare_model(model_dir=model_dir, quantize=not no_quantize) if model_dir else \
            prepare_model(quantize=not no_quantize)
    except Exception as exc:
        _fail(str(exc))
    console.print(f"model ready: {path}")


def main() -> None:  # pragma: no cover
    app()
