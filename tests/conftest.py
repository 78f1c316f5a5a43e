from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture(scope="session")
def embedder():
    """The real local embedding model, loaded once per test session."""
    from loregraph.models.embedder import get_default_embedder

    return get_default_embedder()


@pytest.fixture
def open_memory(tmp_path, embedder):
    """Factory: a Memory on a real SQLite file in tmp_path (closed at teardown)."""
    from loregraph.memory import Memory

    opened = []

    async def factory(name: str = "memory.db", **kwargs):
        kwargs.setdefault("embedder", embedder)
        m = await Memory.open(f"sqlite:///{tmp_path / name}", **kwargs)
        opened.append(m)
        return m

    yield factory
    import asyncio

    for m in opened:
        if not m._closed:
            asyncio.run(m.close()) if not _loop_running() else None


def _loop_running() -> bool:
    import asyncio

    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        return False
