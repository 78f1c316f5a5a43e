"""Test-only support for the REST service tests: a real ``loregraph serve`` process on loopback, direct reads
of its SQLite file, and the extractor such a server can be started with.

``make_extractor`` (``LOREGRAPH_EXTRACTOR=rest_support:make_extractor``, with this folder on PYTHONPATH) is
the scripted stand-in for a remote model — the one test double the project allows. Markers in a message:

- ``FAIL!``      raises RuntimeError every time (a persistent model failure)
- ``FAILFILE!``  raises RuntimeError while the file named by LOREGRAPH_TEST_FAIL_FILE exists
- ``FLAKY!``     raises ConnectionError on the first call for that content (a transient failure)
- ``PARTIAL!``   returns an entity ("Zephyr", a tool) and no relation

Every call first waits LOREGRAPH_TEST_DELAY_MS (a remote model's latency). Other content goes to the real
``LocalExtractor`` when LOREGRAPH_TEST_INNER=local; otherwise "I use <Name>" yields the tool and a USES fact
from the speaker, and anything else nothing (fast: the queue tests measure the queue, not extraction).
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from loregraph.extract.base import SPEAKER, ExtractedEntity, ExtractedRelation, Extraction, ExtractionContext

TESTS = Path(__file__).resolve().parent
READY = re.compile(r"loregraph serving on (http://[^\s]+) ")
WORKER_READY = re.compile(r"loregraph worker running \(pid (\d+)\)")
USES = re.compile(r"\bI use ([A-Z][\w.+-]*)")


class TestModelExtractor:
    name = "test-model"

    def __init__(self) -> None:
        self.delay = float(os.environ.get("LOREGRAPH_TEST_DELAY_MS", "0")) / 1000
        self.fail_file = os.environ.get("LOREGRAPH_TEST_FAIL_FILE")
        self.inner: Any = None
        if os.environ.get("LOREGRAPH_TEST_INNER") == "local":
            from loregraph.extract.local import LocalExtractor

            self.inner = LocalExtractor()
        self.seen_flaky: set[str] = set()

    def extract(self, content: str, context: ExtractionContext) -> Extraction:
        if self.delay:
            time.sleep(self.delay)  # the latency of a remote model
        if "FAIL!" in content and "FAILFILE!" not in content:
            raise RuntimeError("the model failed")
        if "FAILFILE!" in content and self.fail_file and Path(self.fail_file).exists():
            raise RuntimeError("the model failed (fail file present)")
        if "FLAKY!" in content and content not in self.seen_flaky:
            self.seen_flaky.add(content)
            raise ConnectionError("the model's connection dropped")
        if "PARTIAL!" in content:
            return Extraction(entities=[ExtractedEntity("e1", "Zephyr", "tool", 0.9)])
        if self.inner is not None:
            return self.inner.extract(content, context)
        m = USES.search(content)
        if m:
            name = m.group(1)
            return Extraction(entities=[ExtractedEntity("e1", name, "tool", 0.9)],
                              relations=[ExtractedRelation(SPEAKER, "USES", "e1", f"User uses {name}", 0.9)])
        return Extraction()


def make_extractor() -> TestModelExtractor:
    return TestModelExtractor()


# ---- a real server process -------------------------------------------------------------------------
class Server:
    """``python -m loregraph.cli serve`` on 127.0.0.1 with a free port (port 0), output in a log file; with
    ``command="worker"``, ``loregraph worker`` (no HTTP, ``url`` stays empty). ``db``: a path or a database URL."""

    def __init__(self, workdir: Path, db: Path | str, *, env: dict[str, str] | None = None,
                 args: tuple[str, ...] = (), command: str = "serve"):
        self.command = command
        self.workdir = workdir
        self.db = db
        self.env = env or {}
        self.args = args
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""
        self.log_path = workdir / "server.log"
        self._log_offset = 0

    def environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("LOREGRAPH_") or k == "LOREGRAPH_CACHE_DIR"}
        env.update({"PYTHONPATH": os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
                    "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
                    "LOREGRAPH_EXTRACTOR": "rest_support:make_extractor"})
        env.update(self.env)
        return env

    def start(self, timeout: float = 120) -> Server:
        return self.spawn().wait_ready(timeout)

    def spawn(self) -> Server:
        """Start the process without waiting for it to be ready (several processes can start at once)."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        log = self.log_path.open("ab")
        port = ("--port", "0") if self.command == "serve" else ()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "loregraph.cli", self.command, "--db", str(self.db), *port, *self.args],
            cwd=self.workdir, env=self.environment(), stdout=log, stderr=subprocess.STDOUT)
        log.close()
        return self

    def wait_ready(self, timeout: float = 120) -> Server:
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = (READY if self.command == "serve" else WORKER_READY).search(self.log())
            if m:
                self.url = m.group(1) if self.command == "serve" else ""
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log()[-4000:]}")
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"server not ready within {timeout} s:\n{self.log()[-4000:]}")

    def log(self) -> str:
        """What this run of the server has logged so far."""
        if not self.log_path.exists():
            return ""
        with self.log_path.open("rb") as f:
            f.seek(self._log_offset)
            return f.read().decode("utf-8", "replace")

    def wait_log(self, pattern: str, timeout: float = 30) -> re.Match[str]:
        """The first match of ``pattern`` in this run's log, once it is there (lines follow the commit)."""
        return wait_until(lambda: re.search(pattern, self.log()), timeout, what=f"log line {pattern!r}")

    def stop(self, timeout: float = 60) -> int:
        """SIGTERM: graceful shutdown."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def kill(self) -> None:
        """SIGKILL: no shutdown at all."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)


def serve_once(workdir: Path, *args: str, env: dict[str, str] | None = None,
               timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``loregraph serve`` expecting it to exit by itself (start-up failures)."""
    srv = Server(workdir, workdir / "unused.db", env=env)
    return subprocess.run([sys.executable, "-m", "loregraph.cli", "serve", *args], cwd=workdir,
                          env=srv.environment(), capture_output=True, text=True, timeout=timeout)


# ---- reading the database directly -----------------------------------------------------------------
def rows(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(str(db), timeout=30)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def job_counts(db: Path, group_id: str | None = None) -> dict[str, int]:
    where, params = ("WHERE group_id = ?", (group_id,)) if group_id else ("", ())
    out = {"pending": 0, "running": 0, "done": 0, "failed": 0}
    out.update(dict(rows(db, f"SELECT status, COUNT(*) FROM jobs {where} GROUP BY status", params)))
    return out


def wait_until(predicate: Callable[[], Any], timeout: float = 60, interval: float = 0.02, what: str = "") -> Any:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or predicate}")
        time.sleep(interval)


def wait_idle(db: Path, group_id: str | None = None, timeout: float = 60) -> dict[str, int]:
    def idle() -> dict[str, int] | None:
        c = job_counts(db, group_id)
        return c if c["pending"] == 0 and c["running"] == 0 else None

    return wait_until(idle, timeout, what=f"the queue of {group_id or 'every group'} to drain")
