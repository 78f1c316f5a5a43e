"""The offline extractor as stages over one spaCy parse (see ``extractor.LocalExtractor``).

Stages, in order: ``mentions`` (names and noun phrases), ``entity_types`` (votes, refs), ``clauses``
(subject, verbs, flags), ``relations`` (typing each subject–object pair), ``endings`` (typed events
that end offered facts), ``collector`` (one relation per key, fact sentences). Word classes are data
(``extract/data/word_classes.json``); type names come from the schema (``kinds``).
"""

from loregraph.extract.local.extractor import DEFAULT_SPACY_MODEL, LocalExtractor

__all__ = ["DEFAULT_SPACY_MODEL", "LocalExtractor"]
