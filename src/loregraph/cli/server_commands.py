"""The long-running processes: ``serve`` (REST, MCP over HTTP, optionally gRPC), ``grpc``, ``mcp`` (stdio),
``worker``."""

from __future__ import annotations

from pathlib import Path

import typer

from loregraph.cli.app import DB_HELP, app


# ---- serve ------------------------------------------------------------------------------------
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
