"""``loregraph serve``: validate the configuration, open the store and check its schema, load the models,
then serve. Anything wrong exits 1 with a message that says what to fix (spec 002 start-up flow)."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
from pathlib import Path
from typing import Any

from loregraph.config import ConfigError, Settings, is_loopback, load_object, load_settings

log = logging.getLogger("loregraph.api")

REQUIRED_SCHEMA_VERSION = 3  # migration 0003 adds the jobs table


class StartupError(RuntimeError):
    """Start-up cannot continue; the message says what to fix."""


def _extractor(settings: Settings) -> Any:
    if not settings.extractor:
        return None
    factory = load_object(settings.extractor, "extractor")
    try:
        extractor = factory() if callable(factory) and not hasattr(factory, "extract") else factory
    except Exception as exc:
        raise ConfigError(f"extractor: {settings.extractor} failed to build an extractor ({exc})") from exc
    if not hasattr(extractor, "extract"):
        raise ConfigError(f"extractor: {settings.extractor} did not give an object with an extract() method")
    return extractor


def open_memory(settings: Settings) -> Any:
    """Open the store (migrating it), check its schema, load and warm the models."""
    from loregraph.extract.base import ExtractionContext
    from loregraph.graph.types import utcnow
    from loregraph.memory import Memory
    from loregraph.schema import SchemaError
    from loregraph.store import StoreError

    extractor = _extractor(settings)
    try:
        memory = Memory.open_sync(settings.db, schema=settings.schema_file, extractor=extractor)
    except (StoreError, SchemaError) as exc:
        raise StartupError(f"cannot open the store {settings.db}: {exc} (set --db, LOREGRAPH_DB or 'db' in the "
                           f"config file)") from exc
    except FileNotFoundError as exc:
        raise StartupError(f"file not found: {exc.filename} (check schema_file / LOREGRAPH_SCHEMA_FILE)") from exc
    store = memory.store
    try:
        version = getattr(store, "schema_version", None)
        # SQLite numbering (its migration 0003 adds the jobs table); PostgreSQL has it from its first migration
        if getattr(store, "path", None) is not None and version is not None and version < REQUIRED_SCHEMA_VERSION:
            raise StartupError(f"store {settings.db} has schema version {version}; this service needs "
                               f"{REQUIRED_SCHEMA_VERSION} or newer")
        if getattr(store, "path", None) is None and not str(getattr(store, "url", "")).startswith("postgres"):
            raise StartupError(f"the REST service's durable queue needs an SQLite or PostgreSQL store; "
                               f"{settings.db} is neither")
        # load the models now: a missing model fails here, not on the first job
        memory.embedder.embed_one("warm up")
        memory.extractor.extract("Warm up the extractor.",
                                 ExtractionContext(group_id="warmup", reference_time=utcnow(), role_type="user"))
    except StartupError:
        _close_quietly(memory)
        raise
    except Exception as exc:
        _close_quietly(memory)
        raise StartupError(f"cannot load the models: {type(exc).__name__}: {exc}") from exc
    return memory


def _close_quietly(memory: Any) -> None:
    import asyncio

    with contextlib.suppress(Exception):
        asyncio.run(memory.close())


def _listen(host: str, port: int) -> socket.socket:
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


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _start(config_file: str | Path | None, overrides: dict[str, Any]) -> Any:
    """Offline model loading, settings and logging for a service process; None (after saying why) on bad settings."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        settings = load_settings(config_file=config_file, **overrides)
    except ConfigError as exc:
        _say(f"error: {exc}")
        return None
    logging.basicConfig(level=settings.log_level.upper(), stream=sys.stderr, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return settings


def run_serve(*, config_file: str | Path | None = None, **overrides: Any) -> int:
    """Run the service until SIGINT/SIGTERM; returns the process exit code."""
    settings = _start(config_file, overrides)
    if settings is None:
        return 1
    host = settings.host
    if not settings.auth_enabled:
        if not is_loopback(host):
            _say(f"warning: no API keys configured, so the service binds to 127.0.0.1 only (not {host}); "
                 f"configure api_keys (LOREGRAPH_API_KEYS) to serve other hosts")
            host = "127.0.0.1"
        else:
            _say("warning: no API keys configured: every request is allowed; serving on loopback only")
    try:
        sock = _listen(host, settings.port)
        memory = open_memory(settings)
    except (StartupError, ConfigError) as exc:
        _say(f"error: {exc}")
        return 1
    import uvicorn

    from loregraph.api.rest.app import create_app

    bound = sock.getsockname()
    shown = f"[{bound[0]}]" if sock.family == socket.AF_INET6 else bound[0]
    app = create_app(settings, memory, url=f"http://{shown}:{bound[1]}", announce=_say)
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on",
                            timeout_graceful_shutdown=max(1, int(settings.shutdown_timeout_s)))
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    if not server.started:
        _say("error: the service did not start (see the log above)")
        return 1
    return 0


def run_worker(*, config_file: str | Path | None = None, **overrides: Any) -> int:
    """``loregraph worker``: only the job worker, no HTTP (PostgreSQL: any number of them share the queue; SQLite:
    one per database file). Runs until SIGINT/SIGTERM; the running job finishes, the rest stays pending."""
    import asyncio
    import signal

    settings = _start(config_file, overrides)
    if settings is None:
        return 1
    try:
        memory = open_memory(settings)
    except (StartupError, ConfigError) as exc:
        _say(f"error: {exc}")
        return 1

    async def main() -> int:
        from loregraph.jobs import Worker, open_queue

        try:
            queue = await asyncio.to_thread(open_queue, memory.store, max_attempts=settings.job_max_attempts)
        except Exception as exc:
            _say(f"error: cannot open the job queue: {exc}")
            await memory.close()
            return 1
        worker = Worker(memory, queue, max_attempts=settings.job_max_attempts)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        code = 0
        if await worker.start():
            _say(f"loregraph worker running (pid {os.getpid()})")
            await stop.wait()
            await worker.stop(settings.shutdown_timeout_s)
        else:
            _say("error: another process runs this database's worker (SQLite allows one)")
            code = 1
        queue.close()
        await memory.close()
        return code

    return asyncio.run(main())
