"""What a stored entity is, across turns: a name known as a pet stays a pet when a later turn names it with no cue
("Max loves the beach" after "our dog Max"), and a name stored as a person becomes a pet when a turn calls it one
("my dog Buddy" after "Buddy and I went for a walk"). Person-only relations (knowing, working with) never reach a
pet. Pure functions over the records the resolver loads; nothing here reads or writes the store."""

from __future__ import annotations

from typing import Any

from loregraph.extract.base import ExtractedEntity
from loregraph.graph.types import Entity

PET = "pet"
GENERIC = "entity"
PERSON = "person"
PERSON_ONLY_RELATIONS = frozenset({"KNOWS", "WORKS_WITH"})


def is_pet(ent: Entity | ExtractedEntity, etype: str | None = None) -> bool:
    """A named animal: the generic type with the kind "pet"."""
    return (etype or ent.type) == GENERIC and ent.attributes.get("kind") == PET


def settle_type(ent: Entity, x: ExtractedEntity, etype: str) -> None:
    """Merge the type of an extracted mention ``x`` (typed ``etype``) into the stored entity ``ent``: a specific type
    beats the generic one, except that a pet stays a pet; a person (not a speaker) called a pet becomes one."""
    if is_pet(ent):
        return  # "our dog Max" before: a later "Max" the name finder calls a person is still the dog
    if is_pet(x, etype) and ent.type == PERSON and not ent.attributes.get("is_speaker"):
        ent.type = GENERIC
        ent.attributes["kind"] = PET
        ent.attributes.pop("role", None)
        return
    if ent.type == GENERIC and etype != GENERIC:
        ent.type = etype


def reaches_a_pet(rtype: str, ends: list[Any]) -> bool:
    """Whether a person-only relation (KNOWS, WORKS_WITH) would join a pet (``ends``: the loaded entities)."""
    return rtype in PERSON_ONLY_RELATIONS and any(e is not None and is_pet(e) for e in ends)


__all__ = ["PERSON_ONLY_RELATIONS", "is_pet", "reaches_a_pet", "settle_type"]
