"""Full-text terms stem each distinct word once (the pure-Python Snowball stemmer was the largest cost of writing a
record's index rows) and give exactly the stems Snowball gives."""

from __future__ import annotations

import snowballstemmer

from loregraph.store.text import MAX_TERM_CHARS, STOPWORDS, stem, terms


def test_terms_are_snowball_stems_of_the_words_that_are_not_stop_words():
    text = "The organisers were running late; connected generously, happiness jumps! " + "x" * 150
    words = [w for w in text.casefold().replace(";", " ").replace(",", " ").replace("!", " ").split()
             if w not in STOPWORDS]
    want = snowballstemmer.stemmer("english").stemWords([w[:MAX_TERM_CHARS] for w in words])
    assert terms(text) == want


def test_a_word_seen_before_is_not_stemmed_again():
    terms("quarterly reconciliations")
    before = stem.cache_info()
    assert terms("reconciliations quarterly reconciliations") == ["reconcili", "quarter", "reconcili"]
    after = stem.cache_info()
    assert after.misses == before.misses
    assert after.hits == before.hits + 3
