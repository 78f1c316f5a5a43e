"""Deletes take their group's write lock (issue 23): a delete waits for a write transaction of its own group that
is open, then runs; on PostgreSQL a delete in another group does not wait (the lock is per group). Real stores on
both backends, two threads with a store each (as two processes would have); every wait is on state (an event, the
server's lock table), never a sleep, and nothing is timed."""

from __future__ import annotations

import threading
from collections.abc import Callable

import psycopg
import pytest

from loregraph.graph.documents import Chunk, Collection, Document
from loregraph.store import open_store
from test_store import SCHEMA, small_graph

DEADLINE_S = 120.0  # how long a test waits for a state before it fails (never reached when the code is right)


def _store(url: str):
    s = open_store(url)
    s.ensure_embedder("test-model", 8)
    return s


def _waiting_on_an_advisory_lock(url: str) -> int:
    """Sessions of this database waiting for an advisory lock (the group write lock) right now."""
    with psycopg.connect(url, autocommit=True) as c:
        return c.execute("SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
                         "WHERE l.locktype = 'advisory' AND NOT l.granted AND d.datname = current_database()"
                         ).fetchone()[0]


def _wait_until(check: Callable[[], bool], what: str) -> None:
    done = threading.Event()
    for _ in range(int(DEADLINE_S * 20)):
        if check():
            return
        done.wait(0.05)  # a polling interval of a state check with a deadline, not synchronisation by sleep
    pytest.fail(f"gave up waiting for: {what}")


def _put_document(store, group: str) -> str:
    """A collection with one two-chunk document in ``group``; its id."""
    collection = Collection(group_id=group, name="manuals", description="manuals")
    store.create_collection(collection)
    doc = Document(group_id=group, collection_id=collection.id, title="pump", chars=30)
    store.put_document(doc, [Chunk(group_id=group, collection_id=collection.id, document_id=doc.id, ordinal=i,
                                   content=text, embedding=[0.1 * (i + 1)] * 8)
                             for i, text in enumerate(["the pump needs oil", "replace the seals"])])
    return doc.id


@pytest.mark.parametrize("delete", ["fact", "episode", "document"])
def test_a_delete_waits_for_an_open_write_transaction_of_its_group(db_url, delete):
    holder, deleter = _store(db_url), _store(db_url)
    try:
        g, h = small_graph("g", "alpha"), small_graph("h", "beta", seed=10)
        holder.apply(g, SCHEMA)
        holder.apply(h, SCHEMA)
        documents = {group: _put_document(holder, group) for group in ("g", "h")}
        held, release, started, finished = (threading.Event() for _ in range(4))
        errors: list[BaseException] = []
        results: list[object] = []

        def hold() -> None:
            with holder.transaction("g"):
                held.set()
                release.wait(DEADLINE_S)

        def remove(store, group: str, delta) -> None:
            started.set()
            try:
                if delete == "fact":
                    results.append(store.delete_fact(group, delta.facts[0].id))
                elif delete == "document":
                    results.append(store.delete_document(group, documents[group]))
                else:
                    results.append(store.delete_episode(group, delta.episodes[0].id))
            except BaseException as exc:  # asserted below
                errors.append(exc)
            finished.set()

        a = threading.Thread(target=hold)
        a.start()
        assert held.wait(DEADLINE_S)
        on_postgres = db_url.startswith("postgres")
        if on_postgres:  # the lock is per group: a delete in another group runs now
            other = threading.Thread(target=remove, args=(deleter, "h", h))
            other.start()
            other.join(DEADLINE_S)
            assert finished.is_set() and errors == [] and a.is_alive()  # while g's transaction is still open
            finished.clear()
        b = threading.Thread(target=remove, args=(deleter, "g", g))
        b.start()
        assert started.wait(DEADLINE_S)
        if on_postgres:  # the delete is queued behind the open transaction of its group
            _wait_until(lambda: finished.is_set() or _waiting_on_an_advisory_lock(db_url) > 0,
                        "the delete to wait for the group's write lock, or to finish")
            assert not finished.is_set(), "the delete ran while a write transaction of its group was open"
        release.set()
        a.join(DEADLINE_S)
        b.join(DEADLINE_S)
        assert finished.is_set() and errors == []
        if delete == "fact":
            assert results[-1] == 1 and holder.get_facts("g", [g.facts[0].id]) == []
        elif delete == "document":
            assert results[-1] == {"documents": 1, "chunks": 2, "facts": 0, "entities": 0}
            assert holder.get_documents("g", [documents["g"]]) == []
        else:
            assert results[-1] == {"episodes": 1, "facts": 1, "entities": 2}
            assert holder.count("g")["episodes"] == 0
        if delete == "document":
            assert len(holder.get_documents("h", [documents["h"]])) == (0 if on_postgres else 1)
        else:
            assert holder.count("h")["facts"] == (0 if on_postgres else 1)  # SQLite: h was not deleted from
    finally:
        release.set()
        holder.close()
        deleter.close()
