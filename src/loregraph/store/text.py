"""Full-text terms: one tokenizer and stemmer for indexing and querying, shared by every backend.

Each indexed term is prefixed with the group's token, so every group has its own term space: a query
reads only its group's posting lists (no intersection with a group filter), and BM25 statistics are
per group.
"""

from __future__ import annotations

import hashlib
import re
import threading
from functools import lru_cache

import snowballstemmer

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STEMMERS = threading.local()  # a snowball stemmer keeps its word in itself: one per thread (reads run in parallel)
# Very common words carry no signal and make posting lists long.
STOPWORDS = frozenset(
    "a an and are as at be been but by did do does for from had has have he her him his how i if in into is "
    "it its me my of on or our she so that the their them then there they this to was we were what when "
    "where which who whom why will with would you your".split()
)
GROUP_TOKEN_LEN = 13
# Words longer than this are cut to it, in indexing and querying alike (a query for the whole word still finds
# it). PostgreSQL refuses a tsvector lexeme over 2047 bytes, which made a record with one ~2,000-character word
# fail to index forever; 100 characters is at most 400 bytes of UTF-8 and no real word is longer.
MAX_TERM_CHARS = 100
STEM_CACHE_WORDS = 65_536  # distinct words whose stems are kept (~150 bytes each)
BM25_K1, BM25_B = 1.2, 0.75  # FTS5's bm25() defaults, PostgreSQL's store too


@lru_cache(maxsize=4096)
def group_token(group_id: str) -> str:
    """Fixed-width alphanumeric prefix that stands for a group inside the full-text index."""
    return "g" + hashlib.sha1(group_id.encode("utf-8")).hexdigest()[:GROUP_TOKEN_LEN - 1]


@lru_cache(maxsize=STEM_CACHE_WORDS)
def stem(word: str) -> str:
    """The English Snowball stem of one lower-cased word (cached: the pure-Python stemmer is the slow part of
    indexing, and a conversation repeats its words)."""
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(word))


def terms(text: str) -> list[str]:
    """Lower-cased, stop-word-free, stemmed words of ``text``, in order (each cut to ``MAX_TERM_CHARS``)."""
    return [stem(w[:MAX_TERM_CHARS]) for w in _WORD.findall(text.casefold()) if w not in STOPWORDS]


def index_body(group_id: str, text: str) -> str:
    gt = group_token(group_id)
    return " ".join(gt + t for t in terms(text))


def query_terms(group_id: str, text: str, max_terms: int = 24) -> list[str]:
    """Distinct group-scoped terms of a query, in order of appearance."""
    gt = group_token(group_id)
    return [gt + t for t in dict.fromkeys(terms(text))][:max_terms]
