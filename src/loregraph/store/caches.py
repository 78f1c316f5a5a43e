"""Bounded per-process caches of the stores: what a long-running server keeps must not grow with every group
and term it has ever seen (issue 19 item 7)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """A mapping of at most ``maxsize`` keys; the least recently used key is evicted first."""

    def __init__(self, maxsize: int):
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, got {maxsize}")
        self.maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        if key not in self._data:
            return None
        self._data.move_to_end(key)
        return self._data[key]

    def put(self, key: K, value: V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self.maxsize:
            self._data.popitem(last=False)

    def pop(self, key: K) -> V | None:
        return self._data.pop(key, None)

    def clear(self) -> None:
        self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


class TermStats:
    """Document frequencies of full-text terms, grouped by (table, group token) so a group's terms can be
    dropped at once when its rows change; at most ``max_terms`` terms in all, the least recently used group's
    going first (within one oversized group, its oldest terms)."""

    def __init__(self, max_terms: int):
        if max_terms < 1:
            raise ValueError(f"max_terms must be at least 1, got {max_terms}")
        self.max_terms = max_terms
        self._groups: OrderedDict[tuple[str, str], dict[str, int]] = OrderedDict()
        self._size = 0

    def get(self, key: tuple[str, str], term: str) -> int | None:
        terms = self._groups.get(key)
        if terms is None:
            return None
        self._groups.move_to_end(key)
        return terms.get(term)

    def put(self, key: tuple[str, str], term: str, df: int) -> None:
        terms = self._groups.setdefault(key, {})
        self._groups.move_to_end(key)
        if term not in terms:
            self._size += 1
        terms[term] = df
        while self._size > self.max_terms:
            oldest = next(iter(self._groups))
            if oldest == key:  # this group alone is left (it was just moved to the end): drop its oldest term
                del terms[next(iter(terms))]
                self._size -= 1
            else:
                self._size -= len(self._groups.pop(oldest))

    def forget(self, key: tuple[str, str]) -> None:
        self._size -= len(self._groups.pop(key, {}))

    def clear(self) -> None:
        self._groups.clear()
        self._size = 0

    def __len__(self) -> int:
        return self._size


__all__ = ["LRU", "TermStats"]
