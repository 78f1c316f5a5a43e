"""The offline extractor as stages over one spaCy parse (see ``extractor.LocalExtractor``).

Stages, in order: ``mentions`` (names and noun phrases, canonical alias names, versions kept whole),
``entity_types`` (votes from context cues, refs; the speaker's own name is the speaker), ``name_model`` (a
learned typer for the names the cues leave undecided, weights in ``extract/data/name_types.json``), ``clauses``
(subject, verbs and flags per clause), ``relations`` (rules where they are precise), ``meaning``
(predicate phrases typed by their nearest example phrasings, embedded with the local model),
``in_use`` (a tool the speaker's setup names by structure alone: at work, an instrument, a list of tasks),
``endings`` (typed events that end offered facts) and ``collector`` (one relation per key, with its
fact sentence and the trace shown by ``loregraph extract --explain``). Word classes and the phrase
library are data (``extract/data/word_classes.json``, ``extract/data/relation_phrases.tsv``); type
names come from the schema (``kinds``).
"""

from loregraph.extract.local.extractor import DEFAULT_SPACY_MODEL, LocalExtractor

__all__ = ["DEFAULT_SPACY_MODEL", "LocalExtractor"]
