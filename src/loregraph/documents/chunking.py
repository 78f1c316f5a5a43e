"""Hierarchical chunking: headings, then paragraphs, then lines, sentences and words (langchain-text-splitters'
recursive splitter with a heading-first separator list)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from loregraph.errors import InvalidInputError

DEFAULT_CHUNK_CHARS = 1000
DEFAULT_OVERLAP_CHARS = 200
SHORT_CHARS = 100
SEPARATORS = ["\n# ", "\n## ", "\n### ", "\n#### ", "\n\n", "\n", ". ", "? ", "! ", "; ", ", ", " ", ""]


@lru_cache(maxsize=8)
def _splitter(size: int, overlap: int) -> Any:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap, separators=SEPARATORS,
                                          keep_separator="start", strip_whitespace=True)


def chunk_text(text: str, size: int = DEFAULT_CHUNK_CHARS, overlap: int = DEFAULT_OVERLAP_CHARS) -> list[str]:
    """Split ``text`` into chunks of at most ``size`` characters, neighbours sharing up to ``overlap``."""
    if size < 100:
        raise InvalidInputError(f"chunk_size: must be at least 100 characters (got {size})")
    if not 0 <= overlap < size:
        raise InvalidInputError(f"chunk_overlap: must be at least 0 and less than chunk_size {size} (got {overlap})")
    pieces = [c for c in _splitter(size, overlap).split_text(text) if c.strip()]
    out: list[str] = []
    carry = ""
    for piece in pieces:  # a lone heading (short) travels with the text under it
        if carry and len(carry) + 1 + len(piece) <= size + overlap:
            piece = f"{carry}\n{piece}"
        elif carry:
            out.append(carry)
        carry = ""
        if len(piece) < SHORT_CHARS and piece.lstrip().startswith("#"):
            carry = piece
        else:
            out.append(piece)
    if carry:
        out.append(carry)
    return out


__all__ = ["DEFAULT_CHUNK_CHARS", "DEFAULT_OVERLAP_CHARS", "chunk_text"]
