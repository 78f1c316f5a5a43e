"""Optional projection of blocks into an external vector index (spec 001's Qdrant projection).

The embedded default keeps block vectors in the store, in the same transaction as the graph: no projection is
needed. Users who keep an external index configure ``QdrantProjection`` (``qdrant-client``; ``path`` for its local
on-disk mode, ``":memory:"`` for tests, or ``url`` for a server). One collection per group; point id = block id;
payload ``block_id, universe_id, root_entity_id, user_id, visibility, text, block_level``.

``snapshot`` → ``upsert`` → (graph commit) is the write; ``restore(snapshot)`` is the compensation: points that did
not exist before are deleted, points that did get their previous vector and payload back.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

log = logging.getLogger("loregraph.projection")


@dataclass
class BlockPoint:
    id: str
    vector: list[float]
    payload: dict[str, Any] = field(default_factory=dict)


class BlockProjection(Protocol):
    def snapshot(self, group_id: str, ids: list[str]) -> dict[str, BlockPoint | None]:
        """The current point of each id (None where there is none)."""
        ...

    def upsert(self, group_id: str, points: list[BlockPoint]) -> None: ...
    def restore(self, group_id: str, before: dict[str, BlockPoint | None]) -> None:
        """Undo an upsert: delete points that were new, put back the previous vector and payload of the rest."""
        ...

    def get(self, group_id: str, ids: list[str]) -> dict[str, BlockPoint]: ...
    def search(self, group_id: str, vector: list[float], limit: int,
               user_id: str) -> list[tuple[dict[str, Any], float]]:
        """Nearest blocks the user may see (own or SHARED): (payload, cosine similarity), best first."""
        ...

    def close(self) -> None: ...


class QdrantProjection:
    """Blocks projected into Qdrant (local mode with ``path``/``":memory:"``, or a server with ``url``)."""

    def __init__(self, dim: int, *, path: str | None = None, url: str | None = None, prefix: str = "loregraph_blocks"):
        from qdrant_client import QdrantClient

        if url:
            self.client = QdrantClient(url=url)
        elif path and path != ":memory:":
            self.client = QdrantClient(path=path)
        else:
            self.client = QdrantClient(location=":memory:")
        self.dim = dim
        self.prefix = prefix
        self._ready: set[str] = set()

    def collection(self, group_id: str) -> str:
        """One collection per group (the name is a digest: group ids may hold characters names may not)."""
        return f"{self.prefix}_{hashlib.sha256(group_id.encode()).hexdigest()[:24]}"

    def _ensure(self, group_id: str) -> str:
        from qdrant_client import models

        name = self.collection(group_id)
        if name not in self._ready:
            if not self.client.collection_exists(name):
                self.client.create_collection(name, vectors_config=models.VectorParams(
                    size=self.dim, distance=models.Distance.COSINE))
            self._ready.add(name)
        return name

    def get(self, group_id: str, ids: list[str]) -> dict[str, BlockPoint]:
        if not ids:
            return {}
        name = self._ensure(group_id)
        found = self.client.retrieve(name, ids=ids, with_payload=True, with_vectors=True)
        out: dict[str, BlockPoint] = {}
        for p in found:
            vec = p.vector if isinstance(p.vector, list) else []
            out[str(p.id)] = BlockPoint(str(p.id), [float(x) for x in vec], dict(p.payload or {}))  # type: ignore[arg-type]
        return out

    def snapshot(self, group_id: str, ids: list[str]) -> dict[str, BlockPoint | None]:
        got = self.get(group_id, ids)
        return {i: got.get(i) for i in ids}

    def upsert(self, group_id: str, points: list[BlockPoint]) -> None:
        from qdrant_client import models

        if not points:
            return
        name = self._ensure(group_id)
        self.client.upsert(name, points=[models.PointStruct(id=p.id, vector=p.vector, payload=p.payload)
                                         for p in points], wait=True)

    def restore(self, group_id: str, before: dict[str, BlockPoint | None]) -> None:
        from qdrant_client import models

        name = self._ensure(group_id)
        new = [i for i, p in before.items() if p is None]
        old = [p for p in before.values() if p is not None]
        if new:
            self.client.delete(name, points_selector=models.PointIdsList(points=list(new)), wait=True)
        if old:
            self.upsert(group_id, old)
        log.info("projection restored: deleted=%d restored=%d", len(new), len(old))

    def search(self, group_id: str, vector: list[float], limit: int,
               user_id: str) -> list[tuple[dict[str, Any], float]]:
        from qdrant_client import models

        name = self._ensure(group_id)
        visible = models.Filter(should=[
            models.FieldCondition(key="user_id", match=models.MatchValue(value=user_id)),
            models.FieldCondition(key="visibility", match=models.MatchValue(value="SHARED"))])
        res = self.client.query_points(name, query=vector, limit=limit, query_filter=visible, with_payload=True)
        return [(dict(p.payload or {}), float(p.score)) for p in res.points]

    def close(self) -> None:
        self.client.close()


__all__ = ["BlockPoint", "BlockProjection", "QdrantProjection"]
