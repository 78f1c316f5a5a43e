"""Name lists used by the local extractor: well-known tools, organisations, concepts and aliases.

Everything here is data shipped under ``extract/data`` (see the header of each file for its source):

* ``tools.txt``, ``organizations.txt``, ``concepts.txt`` — curated lists (general knowledge);
* ``packages.txt`` — brand-like package names generated from registry download ranks by
  ``scripts/build_lexicon.py``;
* ``aliases.txt`` — groups of names for the same thing ("PostgreSQL = Postgres").

A trailing ``*`` on a curated line (or on one name of an alias line: "DaVinci Resolve = Resolve *")
marks a name that is also an ordinary word or a first name ("Rust", "Notion", "Stan"): it only matches
when written capitalised, and context may override it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent / "data"

_FILES = (("tools.txt", "tool"), ("organizations.txt", "organization"), ("concepts.txt", "concept"))


@dataclass(frozen=True, slots=True)
class LexEntry:
    name: str  # spelling as listed (the matched surface form's canonical spelling)
    type: str  # tool | organization | concept
    ambiguous: bool  # also an ordinary word or first name: needs capitalisation, context may override
    exact_case: bool  # short or all-caps names ("uv", "SRE") only match with the listed case
    aliases: tuple[str, ...] = ()  # other names of the same thing (from aliases.txt)
    source: str = "curated"  # curated | packages
    canonical: str = ""  # the display name of its alias group ("PostgreSQL" for "Postgres"); "" = name


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.casefold()).strip()


def _lines(path: Path) -> list[str]:
    if not path.exists():
        return []
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def _exact_case(name: str) -> bool:
    letters = [c for c in name if c.isalpha()]
    return len(name) <= 3 or (len(letters) >= 2 and all(c.isupper() for c in letters))


class Lexicon:
    """Case-aware lookup of known names (longest match is the caller's job)."""

    def __init__(self, data_dir: Path | None = None) -> None:
        data_dir = data_dir or DATA_DIR
        self.entries: dict[str, LexEntry] = {}
        self.max_words = 1
        groups: dict[str, tuple[str, ...]] = {}
        ambiguous_names: set[str] = set()
        for line in _lines(data_dir / "aliases.txt"):
            if "=" not in line:
                continue
            head, rest = line.split("=", 1)
            marked = [n.strip() for n in [head, *rest.split(",")] if n.strip()]
            names = tuple(n[:-2].strip() if n.endswith(" *") else n for n in marked)
            ambiguous_names.update(_norm(n) for n, m in zip(names, marked, strict=True) if m != n)
            for n in names:
                groups.setdefault(_norm(n), names)
        listed: list[tuple[str, str, bool]] = []
        for fname, etype in _FILES:
            for line in _lines(data_dir / fname):
                amb = line.endswith(" *")
                name = line[:-2].strip() if amb else line
                if amb:
                    ambiguous_names.add(_norm(name))
                listed.append((name, etype, amb))
        for name, etype, amb in listed:
            self._add(name, etype, amb, groups, "curated")
        # aliases of a listed name are entries too (same type)
        for key, names in groups.items():
            if key in self.entries:
                continue
            base = next((self.entries[_norm(n)] for n in names if _norm(n) in self.entries), None)
            if base is None:
                continue
            spelled = next(n for n in names if _norm(n) == key)
            self._add(spelled, base.type, key in ambiguous_names, groups, "curated")
        for line in _lines(data_dir / "packages.txt"):
            if _norm(line) not in self.entries:
                self._add(line, "tool", False, groups, "packages")

    def _add(self, name: str, etype: str, amb: bool, groups: dict[str, tuple[str, ...]], src: str) -> None:
        key = _norm(name)
        if key in self.entries:
            return
        group = groups.get(key, ())
        aliases = tuple(n for n in group if _norm(n) != key)
        canonical = group[0] if group else name
        self.entries[key] = LexEntry(name, etype, amb, _exact_case(name), aliases, src, canonical)
        self.max_words = max(self.max_words, len(re.split(r"[\s\-/.]+", key)) + 2)

    def get(self, surface: str) -> LexEntry | None:
        """The entry for ``surface`` if its case fits the entry's rules (see module docstring)."""
        e = self.entries.get(_norm(surface))
        if e is None:
            return None
        s = surface.strip()
        if e.exact_case and s.replace(" ", "") != e.name.replace(" ", ""):
            # all-caps/short names: exact case, or all-caps variant of a short mixed name ("UV" no)
            return None
        if e.ambiguous and not (s[:1].isupper() or s[:1] in ".#+" or any(c.isdigit() for c in s)):
            return None
        return e

    def any_case(self, surface: str) -> LexEntry | None:
        """The entry for ``surface`` whatever its case (the caller decides whether the context allows it)."""
        e = self.entries.get(_norm(surface))
        return None if e is None or e.exact_case else e

    def aliases_of(self, name: str) -> tuple[str, ...]:
        e = self.entries.get(_norm(name))
        return e.aliases if e else ()


@cache
def default_lexicon() -> Lexicon:
    return Lexicon()
