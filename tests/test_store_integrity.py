"""A damaged SQLite file is named at open, with what to do, instead of a traceback deep in a later query (issue 19
item 6). SQLite-only: a PostgreSQL server checks its own files."""

from __future__ import annotations

import os
import sqlite3

import pytest

from loregraph.errors import StoreError
from loregraph.graph.types import Entity, GraphDelta
from loregraph.schema import Schema
from loregraph.store import open_store
from rest_support import serve_once


def _filled_database(path) -> None:
    store = open_store(path)
    schema = Schema.default()
    for i in range(40):
        ents = [Entity(group_id="g", name=f"Thing {i}-{j} " + "x" * 200, type="entity") for j in range(20)]
        store.apply(GraphDelta(group_id="g", entities=ents), schema)
    store.checkpoint()
    store.close()


def _damage_page(path, page_no: int) -> None:
    page = sqlite3.connect(path).execute("PRAGMA page_size").fetchone()[0]
    with open(path, "r+b") as f:
        f.seek(page * page_no)
        f.write(os.urandom(page))


def test_a_file_that_is_not_a_database_is_named(tmp_path):
    path = tmp_path / "memory.db"
    path.write_bytes(b"this is a text file, not a database" * 200)
    with pytest.raises(StoreError, match=r"damaged or not a database.*\.recover"):
        open_store(path)


def test_damage_in_the_middle_of_the_file_is_found_at_open(tmp_path):
    path = tmp_path / "memory.db"
    _filled_database(path)
    pages = path.stat().st_size // sqlite3.connect(path).execute("PRAGMA page_size").fetchone()[0]
    _damage_page(path, pages // 2)
    with pytest.raises(StoreError, match="damaged"):
        open_store(path)


def test_an_intact_file_opens_and_reports_ok(tmp_path):
    path = tmp_path / "memory.db"
    _filled_database(path)
    store = open_store(path)
    try:
        assert store.integrity == "ok"
    finally:
        store.close()


def test_the_service_exits_with_what_to_fix(tmp_path):
    path = tmp_path / "memory.db"
    _filled_database(path)
    _damage_page(path, 1)
    proc = serve_once(tmp_path, "--db", str(path), "--port", "0")
    assert proc.returncode == 1
    assert "damaged" in proc.stderr and ".recover" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) < 10
