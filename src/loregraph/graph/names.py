"""Name rules the resolver and the store must agree on."""

from __future__ import annotations

import re

_SPACE = re.compile(r"\s+")


def normalize_name(name: str) -> str:
    """Case-folded, whitespace-collapsed, punctuation-trimmed name used for exact-match resolution."""
    return _SPACE.sub(" ", name.casefold()).strip(" \t\"'.,;:!?()[]{}")


__all__ = ["normalize_name"]
