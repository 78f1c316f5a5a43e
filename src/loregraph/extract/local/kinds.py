"""Entity and relation type names, taken from the default schema (an unknown name fails at import)."""

from __future__ import annotations

from typing import Final

from loregraph.schema import Schema

_SCHEMA = Schema.default()
_EDGES = set(_SCHEMA.edge_types)
_NODES = set(_SCHEMA.node_types)


def _edge(name: str) -> str:
    if name not in _EDGES:
        raise RuntimeError(f"relation type {name} is not in the default schema")
    return name


USES: Final = _edge("USES")
PREFERS: Final = _edge("PREFERS")
DECIDED: Final = _edge("DECIDED")
WORKS_ON: Final = _edge("WORKS_ON")
WORKS_WITH: Final = _edge("WORKS_WITH")
KNOWS: Final = _edge("KNOWS")
DEPENDS_ON: Final = _edge("DEPENDS_ON")
PART_OF: Final = _edge("PART_OF")
RELATED_TO: Final = _edge("RELATED_TO")  # the generic relation: the speaker's pet (context "pet")



def _node(name: str) -> str:
    if name not in _NODES:
        raise RuntimeError(f"entity type {name} is not in the default schema")
    return name


ENTITY: Final = _node("entity")  # the generic type: named things of no other type ("pet" as its kind)
PERSON: Final = _node("person")
PROJECT: Final = _node("project")
TOOL: Final = _node("tool")
CONCEPT: Final = _node("concept")
ORGANIZATION: Final = _node("organization")
ENTITY_TYPES: Final = (PERSON, PROJECT, TOOL, CONCEPT, ORGANIZATION)
