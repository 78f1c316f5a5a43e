"""Helpers shared by the extractor's unit tests: an extraction's relations as readable triples."""

from __future__ import annotations

from loregraph.extract.base import SPEAKER, Extraction


def rels(x: Extraction, speaker: str = "ME") -> set[tuple[str, str, str]]:
    """(source name, type, target name) of every relation of ``x``; the speaker is called ``speaker``."""
    name = {e.ref: e.name for e in x.entities} | {SPEAKER: speaker}
    return {(name[r.source], r.type, name[r.target]) for r in x.relations}
