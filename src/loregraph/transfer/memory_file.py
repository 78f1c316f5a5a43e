"""Memory that moves: a group's (or every group's) records as versioned JSON lines, and back into any store.

The file is one header line, then one record per line, each with its ``kind``::

    {"kind": "header", "format": "loregraph-memory", "version": 1, "embedding_model": "...", "embedding_dim": 384,
     "embeddings": true, "groups": ["alice"], "exported_at": "..."}
    {"kind": "episode", "id": "...", "group_id": "alice", "content": "...", "valid_at": "...", ...}

Per group the kinds come in ``EXPORT_KINDS`` order (blocks before the facts that may point at them; every
document followed by its chunks). Export reads page by page (keyset pages, constant memory). Import goes through
the one write path: records are checked against their model (errors name the line and the field), gathered into
batches of one group, and each batch is one transaction (``Store.transaction``: a ``GraphDelta`` through
``Store.apply`` plus its collections and documents). Every write is an upsert or skips what exists, so an
interrupted import run again completes without duplicates.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from loregraph.errors import ConflictError, EmbedderMismatchError, InvalidInputError
from loregraph.graph.documents import Chunk, Collection, Document
from loregraph.graph.types import Block, Community, DuplicateLink, Entity, Episode, Fact, GraphDelta, Mention
from loregraph.ingest.pipeline import embedding_input
from loregraph.models.embedder import Embedder
from loregraph.schema import Schema
from loregraph.store.base import EXPORT_KEYS, EXPORT_KINDS, ExportKind, Store

log = logging.getLogger("loregraph.transfer")

FORMAT = "loregraph-memory"
VERSION = 1
PAGE_SIZE = 1000
BATCH_SIZE = 500

MODELS: dict[str, type[BaseModel]] = {
    "episode": Episode, "entity": Entity, "block": Block, "fact": Fact, "mention": Mention,
    "duplicate": DuplicateLink, "community": Community, "collection": Collection, "document": Document,
    "chunk": Chunk,
}
# the GraphDelta list each graph kind goes into
DELTA_FIELDS = {"episode": "episodes", "entity": "entities", "block": "blocks", "fact": "facts",
                "mention": "mentions", "duplicate": "duplicates", "community": "communities"}

Progress = Callable[[str, int], None]
"""Called with (what is being done, records done since the last call)."""


class Header(BaseModel):
    """The first line of a memory file."""

    kind: str = "header"
    format: str
    version: int
    embedding_model: str | None = None
    embedding_dim: int | None = None
    embeddings: bool
    groups: list[str] | None = None
    exported_at: datetime


# ---- export -----------------------------------------------------------------------------------
def _line(kind: str, record: BaseModel) -> str:
    data = record.model_dump(mode="json", exclude={"embedding"} if getattr(record, "embedding", None) is None
                             else set())
    return json.dumps({"kind": kind, **data}, ensure_ascii=False, separators=(",", ":"))


def _pages(store: Store, kind: ExportKind, group_id: str, embeddings: bool, page_size: int,
           document_id: str | None = None) -> Iterator[list[Any]]:
    after: list[str] | None = None
    while True:
        page = store.export_records(kind, group_id, after, page_size, embeddings=embeddings, document_id=document_id)
        if not page:
            return
        yield page
        if len(page) < page_size:
            return
        after = [getattr(page[-1], k) for k in EXPORT_KEYS[kind]]


def export_lines(store: Store, *, groups: Sequence[str] | None = None, embeddings: bool = True,
                 page_size: int = PAGE_SIZE, progress: Progress | None = None) -> Iterator[str]:
    """The memory file of ``groups`` (every group when None), line by line (no newline at the ends)."""
    model = store.embedding_model()
    chosen = list(dict.fromkeys(groups)) if groups else store.groups()
    header = Header(format=FORMAT, version=VERSION, embedding_model=model[0] if model else None,
                    embedding_dim=model[1] if model else None, embeddings=embeddings and model is not None,
                    groups=list(groups) if groups else None, exported_at=datetime.now(UTC))
    yield header.model_dump_json()
    with_vectors = header.embeddings
    for gid in chosen:
        for kind in EXPORT_KINDS:
            if kind == "chunk":
                continue  # with their documents
            for page in _pages(store, kind, gid, with_vectors, page_size):
                for rec in page:
                    yield _line(kind, rec)
                    if kind == "document":
                        n = 0
                        for chunks in _pages(store, "chunk", gid, with_vectors, page_size, document_id=rec.id):
                            for ch in chunks:
                                yield _line("chunk", ch)
                            n += len(chunks)
                        if progress and n:
                            progress(f"{gid}: chunk", n)
                if progress:
                    progress(f"{gid}: {kind}", len(page))
        log.info("exported group %s", gid)


def export_memory(store: Store, out: Any, *, groups: Sequence[str] | None = None, embeddings: bool = True,
                  progress: Progress | None = None) -> int:
    """Write the memory file to the text stream ``out``; returns the number of records written."""
    n = -1
    for line in export_lines(store, groups=groups, embeddings=embeddings, progress=progress):
        out.write(line + "\n")
        n += 1
    out.flush()
    return n


# ---- import -----------------------------------------------------------------------------------
@dataclass
class ImportReport:
    """What an import wrote (records counted per kind; re-applied records count again)."""

    records: dict[str, int] = field(default_factory=dict)
    batches: int = 0
    lines: int = 0
    embedded: int = 0
    skipped_documents: int = 0


@dataclass
class _Batch:
    group_id: str
    first_line: int
    delta: GraphDelta
    collections: list[Collection] = field(default_factory=list)
    documents: list[tuple[Document, list[Chunk]]] = field(default_factory=list)
    size: int = 0
    last_line: int = 0


def _field_error(n: int, kind: str, exc: ValidationError) -> InvalidInputError:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "record"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return InvalidInputError(f"line {n} ({kind}): field {where!r}: {first.get('msg', 'invalid')}{more}")


def parse_header(line: str) -> Header:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"line 1: not valid JSON ({exc.msg}); a memory file starts with its header") from exc
    if not isinstance(obj, dict) or obj.get("kind") != "header" or obj.get("format") != FORMAT:
        raise InvalidInputError(f"line 1: field 'format': must be a header line with format {FORMAT!r}")
    try:
        header = Header.model_validate(obj)
    except ValidationError as exc:
        raise _field_error(1, "header", exc) from exc
    if header.version > VERSION:
        raise InvalidInputError(f"line 1: field 'version': {header.version} is newer than this loregraph reads "
                                f"({VERSION}); upgrade loregraph")
    return header


def parse_record(n: int, line: str) -> tuple[str, BaseModel]:
    """One record line: its kind and the checked record; errors name the line and the field."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"line {n}: not valid JSON ({exc.msg} at column {exc.colno})") from exc
    if not isinstance(obj, dict):
        raise InvalidInputError(f"line {n}: must be a JSON object")
    kind = obj.pop("kind", None)
    if kind not in MODELS:
        raise InvalidInputError(f"line {n}: field 'kind': must be one of {', '.join(MODELS)} (got {kind!r})")
    try:
        return kind, MODELS[kind].model_validate(obj)
    except ValidationError as exc:
        raise _field_error(n, kind, exc) from exc


def check_embedding_model(store: Store, header: Header, embedder: Embedder | None) -> None:
    """The target's model (recorded, else the configured one) must be the file's when the file carries vectors;
    vectors are computed with ``embedder`` when it carries none."""
    if embedder is not None:
        store.ensure_embedder(embedder.name, embedder.dim)
    if not header.embeddings:
        if embedder is None:
            raise InvalidInputError("embeddings: the file carries no vectors; an embedding model is needed to "
                                    "compute them")
        return
    if header.embedding_model is None or header.embedding_dim is None:
        raise InvalidInputError("line 1: field 'embedding_model': required when the file carries embeddings")
    try:
        store.ensure_embedder(header.embedding_model, header.embedding_dim)
    except EmbedderMismatchError as exc:
        target = store.embedding_model()
        raise EmbedderMismatchError(
            f"the file's vectors were made by {header.embedding_model!r} (dim {header.embedding_dim}); the target "
            f"database uses {target[0] if target else '?'!r} (dim {target[1] if target else '?'}). Export again "
            "with --no-embeddings to have them computed by the target's model.") from exc


class _Importer:
    def __init__(self, store: Store, schema: Schema, embedder: Embedder | None, compute: bool, batch_size: int,
                 progress: Progress | None):
        self.store, self.schema, self.embedder = store, schema, embedder
        self.compute, self.batch_size, self.progress = compute, batch_size, progress
        self.report = ImportReport()
        self.batch: _Batch | None = None
        # soft-deleted entities read so far: a fact in a later batch may still point at one (written while it was
        # live); the write path finds live endpoints only, so the entity goes again with that fact (same record)
        self.deleted: dict[tuple[str, str], Any] = {}

    def add(self, n: int, kind: str, rec: Any) -> None:
        gid = rec.group_id
        b = self.batch
        if kind == "chunk":
            if b is None or not b.documents or b.group_id != gid or b.documents[-1][0].id != rec.document_id:
                raise InvalidInputError(f"line {n} (chunk): field 'document_id': the chunk must follow its document "
                                        f"({rec.document_id}) in the same group")
            b.documents[-1][1].append(rec)
            b.size += 1
            b.last_line = n
            self.report.records[kind] = self.report.records.get(kind, 0) + 1
            return
        if b is not None and (b.group_id != gid or b.size >= self.batch_size):
            self.flush()
        if self.batch is None:
            self.batch = _Batch(gid, n, GraphDelta(group_id=gid))
        b = self.batch
        if kind in DELTA_FIELDS:
            getattr(b.delta, DELTA_FIELDS[kind]).append(rec)
            if kind == "entity" and rec.deleted_at is not None:
                self.deleted[(gid, rec.id)] = rec
        elif kind == "collection":
            b.collections.append(rec)
        else:
            b.documents.append((rec, []))
        b.size += 1
        b.last_line = n
        self.report.records[kind] = self.report.records.get(kind, 0) + 1

    def _embed(self, b: _Batch) -> None:
        todo: list[tuple[Any, str]] = []
        d = b.delta
        todo += [(r, embedding_input(r)) for r in d.entities if r.embedding is None]
        todo += [(r, embedding_input(r)) for r in d.facts if r.embedding is None]
        todo += [(r, embedding_input(r)) for r in d.episodes if r.embedding is None and r.content]
        todo += [(r, r.text) for r in d.blocks if r.embedding is None]
        todo += [(r, embedding_input(r)) for r in d.communities if r.embedding is None]
        todo += [(ch, ch.content) for _, chunks in b.documents for ch in chunks if ch.embedding is None]
        if not todo or self.embedder is None:
            return
        vectors = self.embedder.embed([t for _, t in todo])
        for (rec, _), vec in zip(todo, vectors, strict=True):
            rec.embedding = [float(x) for x in vec]
        self.report.embedded += len(todo)

    def flush(self) -> None:
        b, self.batch = self.batch, None
        if b is None:
            return
        d = b.delta
        have = {e.id for e in d.entities}
        for end in dict.fromkeys(x for f in d.facts for x in (f.source_id, f.target_id)):
            if end not in have and (b.group_id, end) in self.deleted:
                d.entities.append(self.deleted[(b.group_id, end)])
        if self.compute:
            self._embed(b)
        try:
            self._write(b)
        except InvalidInputError as exc:  # a record the store refuses (schema rules): its batch wrote nothing
            raise InvalidInputError(f"lines {b.first_line}-{b.last_line} (group {b.group_id}): {exc}") from exc
        self.report.batches += 1
        if self.progress:
            self.progress(f"{b.group_id}: batch", b.size)

    def _write(self, b: _Batch) -> None:
        store = self.store
        with store.transaction(b.group_id):
            if not b.delta.is_empty():
                store.apply(b.delta, self.schema)
            for col in b.collections:
                have = store.get_collection(col.group_id, col.name)
                if have is None:
                    store.create_collection(col)
                elif have.id != col.id:
                    raise ConflictError(f"line {b.first_line}+: collection {col.name!r} exists in group "
                                        f"{col.group_id} with another id ({have.id}, the file has {col.id})")
            for doc, chunks in b.documents:
                if store.get_documents(doc.group_id, [doc.id]):
                    self.report.skipped_documents += 1
                    continue
                store.put_document(doc, chunks)


def import_lines(store: Store, lines: Iterable[str], *, schema: Schema, embedder: Embedder | None = None,
                 batch_size: int = BATCH_SIZE, progress: Progress | None = None) -> ImportReport:
    """Apply a memory file (an iterable of its lines) to ``store``. On a bad line nothing of its batch is written;
    the batches before it are, and running the import again (fixed) completes it without duplicates."""
    it = iter(lines)
    first = next((ln for ln in it if ln.strip()), None)
    if first is None:
        raise InvalidInputError("line 1: the file is empty; a memory file starts with its header")
    header = parse_header(first)
    check_embedding_model(store, header, embedder)
    importer = _Importer(store, schema, embedder, not header.embeddings, batch_size, progress)
    importer.report.lines = 1
    build = store.build_vector_indexes
    store.build_vector_indexes = False  # built once at the end (checkpoint), not row by row
    try:
        for n, line in enumerate(it, 2):
            importer.report.lines = n
            if not line.strip():
                continue
            kind, rec = parse_record(n, line)
            importer.add(n, kind, rec)
        importer.flush()
    finally:
        store.build_vector_indexes = build
    store.checkpoint()
    log.info("imported %d records in %d batches", sum(importer.report.records.values()), importer.report.batches)
    return importer.report


def migrate(source: Store, target: Store, *, schema: Schema, groups: Sequence[str] | None = None,
            embedder: Embedder | None = None, embeddings: bool = True,
            progress: Progress | None = None) -> ImportReport:
    """Export from ``source`` piped into an import to ``target``, in process (streamed, constant memory)."""
    return import_lines(target, export_lines(source, groups=groups, embeddings=embeddings), schema=schema,
                        embedder=embedder, progress=progress)


__all__ = ["FORMAT", "VERSION", "Header", "ImportReport", "export_lines", "export_memory", "import_lines", "migrate",
           "parse_header", "parse_record"]
