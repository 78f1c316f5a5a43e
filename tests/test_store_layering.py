"""Backends are private to the storage package (issue 11): the name rule the resolver and the store share lives
in ``loregraph.graph.names``, the stored time format in ``loregraph.store.timefmt``; no module outside
``loregraph/store`` imports a concrete backend module (``store.sql``, ``store.sqlite``, ``store.postgres``)."""

from __future__ import annotations

import ast
from pathlib import Path

import loregraph

SRC = Path(loregraph.__file__).resolve().parent
BACKENDS = {"loregraph.store.sql", "loregraph.store.sqlite", "loregraph.store.postgres"}


def _imports(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


def test_no_module_outside_the_store_imports_a_backend_module():
    offenders = {}
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC)
        if rel.parts[0] == "store":
            continue
        bad = sorted(m for m in _imports(path) if m in BACKENDS or any(m.startswith(b + ".") for b in BACKENDS))
        if bad:
            offenders[str(rel)] = bad
    assert offenders == {}


def test_the_shared_rules_live_in_neutral_modules():
    from datetime import UTC, datetime

    from loregraph.graph.names import normalize_name
    from loregraph.store.timefmt import parse_ts, ts

    assert normalize_name("  Ada   LOVELACE!! ") == "ada lovelace"
    t = datetime(2025, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    assert ts(t) == "2025-01-02T03:04:05.000006Z" and parse_ts(ts(t)) == t and ts(None) is None


def test_no_test_hook_or_dead_code_in_the_store():
    import inspect

    from loregraph.store.sql import SQLStore
    from loregraph.store.sqlite import SQLiteStore

    source = "".join(inspect.getsource(m) for m in (inspect.getmodule(SQLStore), inspect.getmodule(SQLiteStore)))
    assert "fail_before_commit" not in source  # failures are injected with apply_hook or in the database
    assert not hasattr(SQLStore, "duplicates_of")  # (embedding_model is back: export names the vectors' model)
    assert "include_deleted" not in inspect.signature(SQLStore.get_entities).parameters
    assert "create" not in inspect.signature(SQLiteStore.__init__).parameters
