"""Full-text terms from several threads at once (Memory runs reads in parallel): the stemmer keeps state per word,
so a shared one mixed words up or raised IndexError under a multi-client benchmark."""

from __future__ import annotations

import threading

from loregraph.store.text import terms


def test_terms_are_the_same_from_eight_threads_at_once():
    text = "running jumps easily happiness organizational connected generously " * 20
    want = terms(text)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(300):
                assert terms(text) == want
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
