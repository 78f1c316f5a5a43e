"""A scripted stand-in for a remote model's extraction output (the one test double the project allows).

It answers by matching message content against a script and records every context it was given.
"""

from __future__ import annotations

from collections.abc import Callable

from loregraph.extract.base import Extraction, ExtractionContext


class ScriptedExtractor:
    name = "scripted"

    def __init__(self, script: dict[str, Callable[[ExtractionContext], Extraction]] | None = None):
        self.script = script or {}
        self.calls: list[tuple[str, ExtractionContext]] = []

    def extract(self, content: str, context: ExtractionContext) -> Extraction:
        self.calls.append((content, context))
        for needle, answer in self.script.items():
            if needle in content:
                return answer(context)
        return Extraction()
