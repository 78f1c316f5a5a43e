"""The structure DESIGN.md asks for, checked: layers only import downwards, no module imports itself back through
others, and the one assembly is the only place defaults are picked."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module_graph() -> grimp.ImportGraph:
    # imports under `if TYPE_CHECKING:` name a type for the checker and never run: they cannot form a circle
    return grimp.build_graph("loregraph", include_external_packages=False, exclude_type_checking_imports=True)


def test_layers_contract_holds():
    """`lint-imports` (import-linter) with the layers declared in pyproject.toml."""
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    proc = subprocess.run([exe, "--config", str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]


def find_import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Every cycle of module imports, as a chain from a module back to itself (one per module pair)."""
    cycles, seen = [], set()
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if (imported, module) in seen:
                continue
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back is not None:
                seen.add((module, imported))
                cycles.append([module, *back])
    return cycles


def test_no_module_imports_itself_back():
    assert find_import_cycles(_module_graph()) == []


def test_the_cycle_finder_finds_a_planted_cycle():
    graph = _module_graph()
    graph.add_import(importer="loregraph.graph.types", imported="loregraph.memory")  # memory → ... → graph.types
    cycles = find_import_cycles(graph)
    assert any(c[0] == "loregraph.graph.types" and c[1] == "loregraph.memory" for c in cycles)


@pytest.mark.parametrize("lower, higher", [
    ("loregraph.memory", "loregraph.assembly.service"),
    ("loregraph.store.sqlite", "loregraph.ingest.pipeline"),
    ("loregraph.graph.types", "loregraph.schema.schema"),
])
def test_the_layers_contract_refuses_an_upward_import(tmp_path, lower, higher):
    """The contract can fail: the same check on a copy of the package with one upward import added."""
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "loregraph", copy / "loregraph", ignore=shutil.ignore_patterns("__pycache__"))
    target = copy / Path(*lower.split(".")).with_suffix(".py")
    target.write_text(target.read_text(encoding="utf-8") + f"\nimport {higher}  # planted\n", encoding="utf-8")
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    env = {"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([exe, "--config", str(ROOT / "pyproject.toml"), "--no-cache"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode != 0 and "BROKEN" in proc.stdout, proc.stdout[-2000:]
