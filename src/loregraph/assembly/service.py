"""Settings → a started service: the ``Memory`` (models loaded and warmed, store schema checked), its job queue
and worker; and the ``serve`` / ``worker`` processes. Every interface (REST today, MCP and gRPC next) is built on
a ``Service``; anything wrong at start-up is a ``StartupError`` whose message says what to fix (spec 002)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loregraph.assembly.worker import Worker
from loregraph.config import Settings, is_loopback, load_settings
from loregraph.documents.web import CrawlLimits
from loregraph.errors import ConfigError, SchemaError, StartupError, StoreError
from loregraph.extract.base import ExtractionContext
from loregraph.graph.types import utcnow
from loregraph.jobs.base import JobQueue
from loregraph.memory import Memory

log = logging.getLogger("loregraph.service")


def open_memory(settings: Settings) -> Memory:
    """Open the store (migrating it), load and warm the models: a missing model fails here, not on the first job."""
    try:
        memory = Memory.open_sync(settings.db, schema=settings.schema_file, extractor=settings.extractor)
    except (StoreError, SchemaError) as exc:
        raise StartupError(f"cannot open the store {settings.db}: {exc} (set --db, LOREGRAPH_DB or 'db' in the "
                           f"config file)") from exc
    except FileNotFoundError as exc:
        raise StartupError(f"file not found: {exc.filename} (check schema_file / LOREGRAPH_SCHEMA_FILE)") from exc
    try:
        memory.embedder.embed_one("warm up")
        memory.extractor.extract("Warm up the extractor.",
                                 ExtractionContext(group_id="warmup", reference_time=utcnow(), role_type="user"))
    except Exception as exc:
        close_quietly(memory)
        raise StartupError(f"cannot load the models: {type(exc).__name__}: {exc}") from exc
    return memory


def crawl_limits(settings: Settings) -> CrawlLimits:
    """ingest_url's budgets and SSRF allow-list from settings."""
    return CrawlLimits(max_pages=settings.crawl_max_pages, max_seconds=settings.crawl_max_seconds,
                       max_page_bytes=settings.crawl_max_page_bytes,
                       allow_networks=tuple(settings.crawl_allow_networks))


def configure_documents(memory: Memory, settings: Settings) -> None:
    """Settings on a Memory: document chunk size and overlap, ingest_url's budgets and SSRF allow-list, the search
    relevance floor."""
    memory.crawl_limits = crawl_limits(settings)
    memory.searcher.min_relevance = settings.min_relevance  # the relevance floor of searches that name none
    memory.documents.chunk_chars = settings.chunk_chars
    memory.documents.overlap_chars = settings.chunk_overlap


def close_quietly(memory: Memory) -> None:
    with contextlib.suppress(Exception):
        asyncio.run(memory.close())


@dataclass
class Service:
    """A ready Memory with its durable job queue and worker: what every network interface serves."""

    memory: Memory
    queue: JobQueue
    worker: Worker
    settings: Settings
    schema_version: int = 0
    last_store_failure: float | None = None
    """Monotonic time of the last request the store could not serve (an interface records it)."""

    DEGRADED_FOR_S = 30.0  # how long one failed store request keeps the service reported as degraded

    @property
    def degraded(self) -> bool:
        """Writes are failing for a storage reason (disk full, read-only, unreachable): health says so."""
        if self.worker.degraded_since is not None:
            return True
        return self.last_store_failure is not None and time.monotonic() - self.last_store_failure < self.DEGRADED_FOR_S

    def note_store_failure(self) -> None:
        self.last_store_failure = time.monotonic()

    @classmethod
    async def start(cls, settings: Settings, memory: Memory | None = None) -> Service:
        """Open what is not given, recover the queue and start the worker (unless ``settings.worker`` is off)."""
        mem = memory if memory is not None else await asyncio.to_thread(open_memory, settings)
        configure_documents(mem, settings)
        version = await mem.schema_version()
        queue = await asyncio.to_thread(mem.store.open_queue, max_attempts=settings.job_max_attempts)
        worker = Worker(mem, queue, max_attempts=settings.job_max_attempts)
        if settings.worker:
            await worker.start()
        return cls(mem, queue, worker, settings, version)

    @property
    def worker_state(self) -> str:
        if self.worker.running:
            return "started"
        return "disabled" if not self.settings.worker else "runs in another process"

    async def stop(self) -> None:
        """The running job finishes (up to ``shutdown_timeout_s``), the rest stays pending for the next start."""
        await self.worker.stop(self.settings.shutdown_timeout_s)
        self.queue.close()
        await self.memory.close()
        log.info("loregraph stopped")


# ---- processes -------------------------------------------------------------------------------------
def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def process_settings(config_file: str | Path | None, overrides: dict[str, Any]) -> Settings | None:
    """Offline model loading, settings and logging for a service process; None (after saying why) on bad settings."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        settings = load_settings(config_file=config_file, **overrides)
    except ConfigError as exc:
        say(f"error: {exc}")
        return None
    logging.basicConfig(level=settings.log_level.upper(), stream=sys.stderr, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return settings


def listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on such sockets, and without it every response
    # (headers and body written separately) waits ~40 ms for the client's delayed ACK
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
        return sock
    except OSError as exc:
        sock.close()
        raise StartupError(f"cannot listen on {host}:{port}: {exc.strerror or exc} (set --host/--port, "
                           f"LOREGRAPH_HOST/LOREGRAPH_PORT)") from exc


AppFactory = Callable[..., Any]
"""``make_app(settings, memory, url=..., announce=...)`` → an ASGI application serving the Service."""


def serving_host(settings: Settings) -> str:
    """The interface to bind: the configured one, or loopback only when no API keys are configured."""
    host = settings.host
    if settings.auth_enabled:
        return host
    if not is_loopback(host):
        say(f"warning: no API keys configured, so the service binds to 127.0.0.1 only (not {host}); "
            f"configure api_keys (LOREGRAPH_API_KEYS) to serve other hosts")
        return "127.0.0.1"
    say("warning: no API keys configured: every request is allowed; serving on loopback only")
    return host


def open_memory_or_say(settings: Settings) -> Memory | None:
    """``open_memory``, or None after saying what to fix."""
    try:
        return open_memory(settings)
    except (StartupError, ConfigError) as exc:
        say(f"error: {exc}")
        return None


def run_serve(make_app: AppFactory, *, config_file: str | Path | None = None,
              grpc_server: GrpcServerFactory | None = None, **overrides: Any) -> int:
    """Serve ``make_app``'s ASGI application until SIGINT/SIGTERM (and, with ``grpc_port`` set, ``grpc_server``'s
    gRPC service beside it); returns the process exit code."""
    settings = process_settings(config_file, overrides)
    if settings is None:
        return 1
    host = serving_host(settings)
    try:
        sock = listen(host, settings.port)
    except StartupError as exc:
        say(f"error: {exc}")
        return 1
    memory = open_memory_or_say(settings)
    if memory is None:
        sock.close()
        return 1
    import uvicorn

    bound = sock.getsockname()
    shown = f"[{bound[0]}]" if sock.family == socket.AF_INET6 else bound[0]
    app = make_app(settings, memory, url=f"http://{shown}:{bound[1]}", announce=say)
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on",
                            timeout_graceful_shutdown=max(1, int(settings.shutdown_timeout_s)),
                            limit_concurrency=settings.max_connections)
    server = _graceful_server(uvicorn.Server)(config)
    if settings.grpc_port is None or grpc_server is None:
        server.run(sockets=[sock])
    else:  # the gRPC knowledge interface beside REST, on the same event loop and Memory
        try:
            attach_projection(memory, settings)
        except StartupError as exc:
            say(f"error: {exc}")
            close_quietly(memory)
            sock.close()
            return 1

        async def both() -> None:
            grpc_srv, grpc_port = await grpc_server(memory, host=host, port=settings.grpc_port,
                                                    keys=settings.api_keys)
            say(f"gRPC knowledge interface on {host}:{grpc_port}")
            grace = max(1.0, settings.shutdown_timeout_s)

            async def stop_grpc() -> None:
                say(f"stopping the gRPC knowledge interface (in-flight calls finish within {grace:g} s)")
                await grpc_srv.stop(grace=grace)

            server.before_app_shutdown = stop_grpc
            try:
                await server.serve(sockets=[sock])
            finally:
                await grpc_srv.stop(grace=None)  # already stopped after a signal; at once after a failed start

        asyncio.run(both())
    if not server.started:
        say("error: the service did not start (see the log above)")
        return 1
    return 0


def _graceful_server(base: type[Any]) -> type[Any]:
    """uvicorn's ``Server`` for ``serve``: SIGINT/SIGTERM shut it down gracefully and the process then exits with
    status 0 (uvicorn re-raises the signal it handled, so the process would die of it), and a server beside it
    (``before_app_shutdown``, the gRPC interface) stops — its in-flight calls finishing — while HTTP connections
    drain, before the application's shutdown closes the Memory they use."""

    class GracefulServer(base):
        before_app_shutdown: Callable[[], Any] | None = None

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            original = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            if self.before_app_shutdown is None:
                await super().shutdown(sockets)
                return
            stopping = asyncio.ensure_future(self.before_app_shutdown())
            app_shutdown = self.lifespan.shutdown

            async def after_the_other_server() -> None:
                await stopping
                await app_shutdown()

            self.lifespan.shutdown = after_the_other_server
            try:
                await super().shutdown(sockets)
            finally:
                await stopping

    return GracefulServer


GrpcServerFactory = Callable[..., Any]
"""``await start_server(memory, host=..., port=..., keys=...)`` → (a started grpc.aio server, the bound port)."""


def attach_projection(memory: Memory, settings: Settings) -> None:
    """Project blocks into Qdrant when ``qdrant_path`` or ``qdrant_url`` is set (the embedded default needs none)."""
    if not (settings.qdrant_path or settings.qdrant_url):
        return
    from loregraph.store.projection import QdrantProjection

    try:
        projection = QdrantProjection(memory.embedder.dim, path=settings.qdrant_path, url=settings.qdrant_url)
    except Exception as exc:
        raise StartupError(f"cannot open the Qdrant projection ({type(exc).__name__}: {exc}); check qdrant_path / "
                           f"qdrant_url") from exc
    memory.set_block_projection(projection)

    async def close_projection() -> None:
        projection.close()

    memory.on_close(close_projection)


def run_grpc(grpc_server: GrpcServerFactory, *, config_file: str | Path | None = None, **overrides: Any) -> int:
    """Serve the gRPC knowledge interface alone (``grpc_port``, default 50051) until SIGINT/SIGTERM."""
    settings = process_settings(config_file, overrides)
    if settings is None:
        return 1
    host = serving_host(settings)
    memory = open_memory_or_say(settings)
    if memory is None:
        return 1
    try:
        attach_projection(memory, settings)
    except (StartupError, ConfigError) as exc:
        say(f"error: {exc}")
        close_quietly(memory)
        return 1

    async def main() -> int:
        try:
            server, port = await grpc_server(memory, host=host, port=50051 if settings.grpc_port is None
                                             else settings.grpc_port, keys=settings.api_keys)
        except Exception as exc:
            say(f"error: cannot listen on {host}:{settings.grpc_port}: {exc} (set --host/--port)")
            await memory.close()
            return 1
        say(f"loregraph gRPC knowledge interface on {host}:{port} (reflection and health enabled)")
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        grace = max(1.0, settings.shutdown_timeout_s)
        say(f"stopping the gRPC knowledge interface (in-flight calls finish within {grace:g} s)")
        await server.stop(grace=grace)
        await memory.close()
        log.info("loregraph stopped")
        return 0

    return asyncio.run(main())


def run_worker(*, config_file: str | Path | None = None, **overrides: Any) -> int:
    """Only the job worker, no network interface (PostgreSQL: any number of them share the queue; SQLite: one per
    database file). Runs until SIGINT/SIGTERM; the running job finishes, the rest stays pending."""
    settings = process_settings(config_file, overrides)
    if settings is None:
        return 1
    memory = open_memory_or_say(settings)
    if memory is None:
        return 1

    async def main() -> int:
        try:
            service = await Service.start(settings.model_copy(update={"worker": False}), memory)
        except Exception as exc:
            say(f"error: cannot open the job queue: {exc}")
            await memory.close()
            return 1
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        code = 0
        if await service.worker.start():
            say(f"loregraph worker running (pid {os.getpid()})")
            await stop.wait()
        else:
            say("error: another process runs this database's worker (SQLite allows one)")
            code = 1
        await service.stop()
        return code

    return asyncio.run(main())


McpServerFactory = Callable[[Memory, Settings], Any]
"""``make_server(memory, settings)`` → an MCP server whose ``run_stdio_async()`` serves the Memory over stdio."""


def run_mcp_stdio(make_server: McpServerFactory, *, config_file: str | Path | None = None, **overrides: Any) -> int:
    """Serve MCP over stdin/stdout as the local user (``mcp_groups``) until the client closes the pipe. Fails fast
    (spec 002): no database configured, an unusable database or missing models exit 1 with what to fix."""
    settings = process_settings(config_file, overrides)
    if settings is None:
        return 1
    if "db" not in settings.model_fields_set:
        say("error: no configuration: set the database with --db, LOREGRAPH_DB, 'db' in .env or in the config file")
        return 1
    memory = open_memory_or_say(settings)
    if memory is None:
        return 1
    configure_documents(memory, settings)

    async def main() -> None:
        try:
            server = make_server(memory, settings)
            say(f"loregraph MCP server on stdio (database {memory.store.label})")
            await server.run_stdio_async()
        finally:
            await memory.close()

    asyncio.run(main())
    return 0


__all__ = ["Service", "attach_projection", "close_quietly", "configure_documents", "crawl_limits", "listen",
           "open_memory", "process_settings", "run_grpc", "run_mcp_stdio", "run_serve", "run_worker", "say"]
