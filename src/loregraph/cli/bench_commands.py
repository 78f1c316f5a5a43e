"""``loregraph bench ...``: each benchmark prints a ratio against a baseline measured in the same run."""

from __future__ import annotations

from pathlib import Path

import typer

from loregraph.cli.app import DB_HELP, bench_app, console, err, fail, run, setup


# ---- bench ------------------------------------------------------------------------------------
@bench_app.command("communities")
def bench_communities(sizes: str = typer.Option("10000,100000", help="Entity counts, comma-separated."),
                      seed: int = typer.Option(7),
                      drift: str = typer.Option("0.05,0.1,0.25,0.5",
                                                help="Shares of entities placed incrementally (at the first size); "
                                                     "empty: skip.")) -> None:
    """Planted-cluster recovery (ARI vs the planted blocks) and build time vs connected components."""
    setup()
    from loregraph.bench.communities import run_communities_bench

    try:
        ns = [int(x) for x in sizes.split(",") if x.strip()]
        shares = [float(x) for x in drift.split(",") if x.strip()]
    except ValueError:
        fail("--sizes: comma-separated integers; --drift: comma-separated fractions")
    if not ns or any(n < 100 for n in ns) or any(not 0 < s < 1 for s in shares):
        fail("--sizes: each at least 100; --drift: each between 0 and 1")
    run_communities_bench(ns, seed, console, shares)


@bench_app.command("search")
def bench_search(facts: int = typer.Option(100000, min=100), queries: int = typer.Option(200, min=10),
                 db: str = typer.Option(None, help=DB_HELP + " Also postgresql://... (the bench builds and then "
                                             "deletes a group of its own). Default: a new temporary database."),
                 seed: int = typer.Option(7),
                 compare_sqlite: bool = typer.Option(False, "--compare-sqlite",
                                                     help="With a PostgreSQL --db: also run on a new temporary "
                                                          "SQLite file in the same run (one line per backend)."),
                 reuse: bool = typer.Option(False, "--reuse",
                                            help="Keep the group built (in --db, and in an SQLite file of the "
                                                 "temporary directory) and search it again, without building it, "
                                                 "in later runs with the same --facts and --seed."),
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
    setup()
    if compare_pg:
        if not db:
            fail("--compare-pg needs --db (the Citus coordinator's URL)")
        from loregraph.bench.cluster import run_cluster_bench

        run(run_cluster_bench(db=db, baseline=compare_pg, groups=groups, group_facts=group_facts, facts=facts,
                               queries=queries, clients=clients, seed=seed, console=err))
        return
    from loregraph.bench.search import run_search_bench

    run(run_search_bench(facts=facts, queries=queries, db=db, seed=seed, console=err,
                          compare_sqlite=compare_sqlite, reuse=reuse))


@bench_app.command("pg-vectors")
def bench_pg_vectors(db: str = typer.Option(..., help="postgresql://... of a server where a throw-away database "
                                                      "lg_vecbench_<pid> may be created and dropped"),
                     queries: int = typer.Option(200, min=10), scale: float = typer.Option(1.0, min=0.01,
                                                                                         help="multiply every "
                                                                                              "group size"),
                     inserts: int = typer.Option(2000, min=10)) -> None:
    """Group-filtered kNN on pgvector: exact scan vs a global HNSW index vs a partial index per group
    (recall@10 against exact, latency, build and insert cost). ~6 min at scale 1."""
    setup()
    from loregraph.bench.pg_vector_index import main as pg_vectors_main

    pg_vectors_main(["--db", db, "--queries", str(queries), "--scale", str(scale), "--inserts", str(inserts)])


@bench_app.command("locomo")
def bench_locomo(data: Path = typer.Option(None, help="locomo10.json (default: ../shared/bench/locomo/locomo10.json)"),
                 k: int = typer.Option(10, min=1, max=100), conversations: int = typer.Option(None, min=1),
                 questions: int = typer.Option(None, min=1, help="At most this many questions per conversation."),
                 db: str = typer.Option(None, help=DB_HELP + " Default: a new temporary database.")) -> None:
    """LoCoMo evidence recall@k vs BM25 and vector baselines over the raw turns (no LLM)."""
    setup()
    from loregraph.bench.locomo import run_locomo_bench

    run(run_locomo_bench(data=data, k=k, conversations=conversations, questions=questions, db=db, console=err))


@bench_app.command("locomo-extract")
def bench_locomo_extract(out: Path = typer.Option(..., help="Where to write the facts and entities (JSON lines; keep "
                                                           "it outside the repository)."),
                         data: Path = typer.Option(None, help="locomo10.json (default: "
                                                              "../shared/bench/locomo/locomo10.json)"),
                         conversations: int = typer.Option(None, min=1),
                         db: str = typer.Option(None, help=DB_HELP + " Default: a new temporary database.")) -> None:
    """Ingest LoCoMo's conversations and dump every new fact and entity with its source turn, to judge by hand."""
    setup()
    from loregraph.bench.locomo_extract import run_locomo_extract

    run(run_locomo_extract(data=data, out=out, conversations=conversations, db=db, console=err))


@bench_app.command("llm-cost")
def bench_llm_cost(data: Path = typer.Option(None, help="Gold JSONL (default: ../shared/bench/extraction/dev.jsonl)"),
                   graphiti_python: str = typer.Option(None, envvar="LOREGRAPH_GRAPHITI_PYTHON",
                                                       help="Python of another venv with graphiti-core, if not here."),
                   preprocessing: str = typer.Option(None, help="Preprocessing prompt for our side (e.g. "
                                                                "default-session-turn.md)."),
                   limit: int = typer.Option(None, min=1, help="Only the first N messages.")) -> None:
    """LLM calls and prompt tokens per message: LLMExtractor vs graphiti-core, same scripted answers."""
    setup()
    from loregraph.bench.llm_cost import run_llm_cost_bench

    run(run_llm_cost_bench(data=data, graphiti_python=graphiti_python, console=err, preprocessing=preprocessing,
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
    setup()
    if structured_output not in ("auto", "json_schema", "json_object", "none"):
        fail(f"--structured-output: {structured_output!r} is not auto, json_schema, json_object or none")
    from loregraph.bench.llm_real import run_llm_real_bench

    run(run_llm_real_bench(base_url=base_url, model=model, console=err, data=data or None, api_key=api_key,
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
    setup()
    from loregraph.bench.documents import run_documents_bench

    run(run_documents_bench(chunks=chunks, ingest_docs=documents, queries=queries, db=db, seed=seed, console=err))


@bench_app.command("writes")
def bench_writes(db: str = typer.Option(..., help="postgresql://... measured (e.g. a Citus coordinator)"),
                 compare_pg: str = typer.Option(..., "--compare-pg", help="The baseline (plain PostgreSQL) measured "
                                                                         "in the same run."),
                 messages: int = typer.Option(200, min=10, help="Message-shaped writes (one transaction each)."),
                 bulk: int = typer.Option(2000, min=10, help="Facts in the one bulk write."),
                 seed: int = typer.Option(7)) -> None:
    """Store write latency (message-shaped writes, one bulk write) on --db next to --compare-pg: the ratio."""
    setup()
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
    setup()
    from loregraph.bench.cluster_vectors import run_cluster_vectors_bench

    run_cluster_vectors_bench(db=db, small=small, small_rows=small_rows, big=big, big_rows=big_rows, queries=queries)


@bench_app.command("cluster-queue")
def bench_cluster_queue(db: str = typer.Option(..., help="A Citus coordinator's postgresql://... (a throw-away "
                                                        "schema lg_clq_<pid> is created and dropped)"),
                        jobs: int = typer.Option(5000, min=10), groups: int = typer.Option(100, min=1),
                        batch: int = typer.Option(10, min=1, help="Jobs per enqueue call."),
                        cycles: int = typer.Option(500, min=10, help="Claim cycles timed.")) -> None:
    """The job queue's table on Citus: coordinator-local against distributed by group (group-filtered claims)."""
    setup()
    from loregraph.bench.cluster_queue import run_cluster_queue_bench

    run_cluster_queue_bench(db=db, jobs=jobs, groups=groups, batch=batch, cycles=cycles)


@bench_app.command("ingest")
def bench_ingest(messages: int = typer.Option(300, min=10),
                 db: str = typer.Option(None, help=DB_HELP + " Default: a new temporary database.")) -> None:
    """Messages per second through the full pipeline with the local extractor."""
    setup()
    from loregraph.bench.ingest import run_ingest_bench

    run(run_ingest_bench(messages=messages, db=db, console=err))


@bench_app.command("api")
def bench_api(messages: int = typer.Option(400, min=20), clients: int = typer.Option(8, min=1, max=64),
              db: str = typer.Option(None, help=DB_HELP + " Default: a new temporary database.")) -> None:
    """REST POST /messages acceptance rate and p95 latency (concurrent clients), end-to-end messages/s."""
    setup()
    from loregraph.bench.api import run_api_bench

    run(run_api_bench(messages=messages, clients=clients, db=db, console=err))


@bench_app.command("soak")
def bench_soak(minutes: float = typer.Option(5.0, min=0.1, help="How long the soak runs."),
               clients: int = typer.Option(8, min=1, max=64), groups: int = typer.Option(20, min=1),
               search_share: float = typer.Option(0.5, min=0.0, max=1.0, help="Share of requests that search."),
               max_requests: int = typer.Option(1_000_000, min=10, help="Stop after this many requests."),
               sample_s: float = typer.Option(2.0, min=0.2, help="Seconds between RSS samples.")) -> None:
    """Mixed ingestion and search against a real server: throughput, p95, RSS slope per 10k requests."""
    setup()
    from loregraph.bench.soak import run_soak_bench

    run(run_soak_bench(minutes=minutes, clients=clients, search_share=search_share, groups=groups,
                        max_requests=max_requests, sample_s=sample_s, console=err))


@bench_app.command("grpc")
def bench_grpc(entities: int = typer.Option(10000, min=100, help="People, each with a description block (the issue's "
                                                                "full scale is 100000)."),
               batch: int = typer.Option(250, min=1, help="Entities per UpsertGraphDelta request."),
               queries: int = typer.Option(200, min=10),
               db: str = typer.Option(None, help=DB_HELP + " Default: a new temporary database.")) -> None:
    """gRPC UpsertGraphDelta records/s and FindEntityCandidates p50 vs the same code in process (same run)."""
    setup()
    from loregraph.bench.grpc import run_grpc_bench

    run(run_grpc_bench(entities=entities, batch=batch, queries=queries, db=db, console=err))
