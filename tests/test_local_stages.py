"""The local extractor's stages, one construction per test, with the real spaCy model and the real local
embedder. Every sentence and name here is written for these tests (none comes from a gold set)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from extraction_support import rels as speaker_rels
from loregraph.extract.base import SPEAKER, CandidateEntity, CandidateFact, Extraction, ExtractionContext
from loregraph.extract.local import LocalExtractor, kinds
from loregraph.extract.local.meaning import END, NONE, PhraseLibrary, load_examples
from loregraph.extract.local.words import _DATA as WORDS_FILE
from loregraph.schema import Schema

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def ctx(candidates: tuple[CandidateEntity, ...] = (), facts: tuple[CandidateFact, ...] = ()) -> ExtractionContext:
    return ExtractionContext(group_id="g", reference_time=NOW, role_type="user",
                             candidates=list(candidates), candidate_facts=list(facts))


def names(x: Extraction) -> dict[str, str]:
    return {e.name: e.type for e in x.entities}


def rels(x: Extraction) -> set[tuple[str, str, str]]:
    return speaker_rels(x, speaker="USER")


def ends(x: Extraction) -> set[tuple[str | None, str | None, str | None]]:
    name = {e.ref: e.name for e in x.entities} | {SPEAKER: "USER"}
    return {(name.get(e.source), e.type, name.get(e.target)) for e in x.endings if e.fact_id is None}


# ---------------------------------------------------------------------------------------------
# data: word classes and type names
# ---------------------------------------------------------------------------------------------


def test_type_names_come_from_the_schema() -> None:
    schema = Schema.default()
    for rtype in (kinds.USES, kinds.PREFERS, kinds.DECIDED, kinds.WORKS_ON, kinds.WORKS_WITH, kinds.KNOWS,
                  kinds.DEPENDS_ON, kinds.PART_OF):
        assert rtype in schema.edge_types
    assert set(kinds.ENTITY_TYPES) <= set(schema.node_types)


def test_word_classes_and_phrase_library_are_data() -> None:
    classes = json.loads(WORDS_FILE.read_text(encoding="utf-8"))
    assert {"role_nouns", "use_verbs", "org_suffixes", "people_nouns"} <= set(classes)
    rows = load_examples()
    labels = {r.label for r in rows}
    assert {kinds.USES, kinds.PREFERS, kinds.WORKS_ON, kinds.PART_OF, kinds.WORKS_WITH, END, NONE} <= labels
    # many phrasings per relation type, not a handful
    assert sum(r.label == kinds.USES for r in rows) >= 50


# ---------------------------------------------------------------------------------------------
# stage 1: mentions
# ---------------------------------------------------------------------------------------------


def test_versions_are_kept_whole(ex: LocalExtractor) -> None:
    x = ex.extract("We rebuilt the site on Svelte 5 last week.", ctx())
    assert names(x) == {"Svelte 5": "tool"}
    assert "Svelte" in x.entities[0].aliases
    assert ("USER", "USES", "Svelte 5") in rels(x)


def test_a_count_after_a_name_is_not_a_version(ex: LocalExtractor) -> None:
    x = ex.extract("I used Airtable 2 weeks ago for the guest list.", ctx())
    assert "Airtable" in names(x) and not any(n.startswith("Airtable ") for n in names(x))


def test_aliases_resolve_to_one_canonical_name(ex: LocalExtractor) -> None:
    x = ex.extract("I write everything in VS Code and the dashboard runs on Vue.js.", ctx())
    assert names(x) == {"Visual Studio Code": "tool", "Vue": "tool"}


def test_organisation_names_through_possessive_and_of(ex: LocalExtractor) -> None:
    x = ex.extract("Mattias is a lecturer at the University of Corvena.", ctx())
    assert names(x).get("University of Corvena") == "organization"
    assert ("Mattias", "PART_OF", "University of Corvena") in rels(x)
    y = ex.extract("I'm a physiotherapist at Saint Aldric's Hospital.", ctx())
    assert names(y) == {"Saint Aldric's Hospital": "organization"}
    assert ("USER", "PART_OF", "Saint Aldric's Hospital") in rels(y)


def test_lowercase_name_with_a_work_item_appositive(ex: LocalExtractor) -> None:
    x = ex.extract("I maintain marlowe, a small Zig crate for parsing feeds.", ctx())
    assert names(x).get("marlowe") == "project"
    assert ("USER", "WORKS_ON", "marlowe") in rels(x)


# ---------------------------------------------------------------------------------------------
# stage 2: entity typing
# ---------------------------------------------------------------------------------------------


def test_role_after_a_comma(ex: LocalExtractor) -> None:
    x = ex.extract("My accountant, Philippa Drummond, keeps everything in Airtable.", ctx())
    assert names(x)["Philippa Drummond"] == "person"
    assert {("USER", "WORKS_WITH", "Philippa Drummond"), ("Philippa Drummond", "USES", "Airtable")} <= rels(x)


def test_a_friend_of_mine_is_known(ex: LocalExtractor) -> None:
    x = ex.extract("A friend of mine, Teodora, runs a bakery downtown.", ctx())
    assert ("USER", "KNOWS", "Teodora") in rels(x)


def test_the_speakers_own_name_is_not_a_second_person(ex: LocalExtractor) -> None:
    x = ex.extract("I'm Tavish, a landscape architect at Brightwell Studio.", ctx())
    assert "Tavish" not in names(x)
    assert x.notes.get("speaker_name") == "Tavish"
    assert ("USER", "PART_OF", "Brightwell Studio") in rels(x)


def test_a_possessed_work_noun_types_a_project(ex: LocalExtractor) -> None:
    x = ex.extract("Most of my week goes into Quiverly, our booking app.", ctx())
    assert names(x) == {"Quiverly": "project"}
    assert ("USER", "WORKS_ON", "Quiverly") in rels(x)


# ---------------------------------------------------------------------------------------------
# stage 3: clauses
# ---------------------------------------------------------------------------------------------


def test_a_subjectless_diary_sentence_is_the_speakers(ex: LocalExtractor) -> None:
    x = ex.extract("Stopped using Evernote last month.", ctx())
    assert ("USER", "USES", "Evernote") in ends(x)
    assert not rels(x)


def test_would_take_x_over_y_is_a_preference_not_a_plan(ex: LocalExtractor) -> None:
    x = ex.extract("I'd take Inkscape over Krita any day.", ctx())
    assert rels(x) == {("USER", "PREFERS", "Inkscape")}


def test_a_real_plan_stays_hypothetical(ex: LocalExtractor) -> None:
    x = ex.extract("I might take Inkscape for a spin next month.", ctx())
    assert not rels(x)


def test_fan_fragment(ex: LocalExtractor) -> None:
    x = ex.extract("Big fan of Logseq for daily notes.", ctx())
    assert rels(x) == {("USER", "PREFERS", "Logseq")}


# ---------------------------------------------------------------------------------------------
# stage 4: relations typed by meaning (the phrase library, embedded with the local model)
# ---------------------------------------------------------------------------------------------


def test_library_reads_idioms_and_keeps_near_misses_out() -> None:
    lib = PhraseLibrary()
    assert lib.classify("can not live without", "tool").label == kinds.USES  # type: ignore[union-attr]
    assert lib.classify("swear by", "tool").label == kinds.PREFERS  # type: ignore[union-attr]
    assert lib.classify("be heads down on", "project").label == kinds.WORKS_ON  # type: ignore[union-attr]
    assert lib.classify("hear about", "tool").label == NONE  # type: ignore[union-attr]
    verdict = lib.classify("mentor", "me")
    assert verdict is not None and verdict.label == kinds.WORKS_WITH and 0.7 <= verdict.confidence <= 0.9


def test_meaning_types_a_verb_outside_the_lists(ex: LocalExtractor) -> None:
    x = ex.extract("Fennimore coaches me on weekends.", ctx())
    assert rels(x) == {("USER", "WORKS_WITH", "Fennimore")}
    assert x.relations[0].trace.startswith("meaning:")


def test_preference_idiom(ex: LocalExtractor) -> None:
    x = ex.extract("Honestly I swear by Procreate.", ctx())
    assert rels(x) == {("USER", "PREFERS", "Procreate"), ("USER", "USES", "Procreate")}  # a taste that says use


def test_generic_subjects_are_the_speakers_work(ex: LocalExtractor) -> None:
    x = ex.extract("Our invoices go through Wrike and the roadmap lives in Lucidchart.", ctx())
    assert {("USER", "USES", "Wrike"), ("USER", "USES", "Lucidchart")} <= rels(x)


def test_people_nouns_are_not_the_speaker(ex: LocalExtractor) -> None:
    x = ex.extract("The students use Todoist for homework.", ctx())
    assert not rels(x)


def test_team_decision(ex: LocalExtractor) -> None:
    x = ex.extract("The team picked SQLite in the end.", ctx())
    assert rels(x) == {("USER", "DECIDED", "SQLite")}


def test_hearing_about_a_tool_is_no_use(ex: LocalExtractor) -> None:
    x = ex.extract("Godric keeps asking about Todoist.", ctx())
    assert not rels(x)


def test_co_subjects_share_the_work(ex: LocalExtractor) -> None:
    x = ex.extract("Godric and I are rewriting Pennywhistle together.", ctx())
    assert {("USER", "WORKS_WITH", "Godric"), ("USER", "WORKS_ON", "Pennywhistle"),
            ("Godric", "WORKS_ON", "Pennywhistle")} <= rels(x)


def test_co_founding(ex: LocalExtractor) -> None:
    x = ex.extract("I co-founded Sablework with Okonkwo.", ctx())
    assert names(x).get("Sablework") == "organization"
    assert ("USER", "PART_OF", "Sablework") in rels(x)


def test_every_relation_has_a_trace(ex: LocalExtractor) -> None:
    x = ex.extract("Godric and I are rewriting Pennywhistle together; we host it on Heroku.", ctx())
    assert x.relations and all(r.trace for r in x.relations)


# ---------------------------------------------------------------------------------------------
# stage 5: endings and changes
# ---------------------------------------------------------------------------------------------


def test_left_x_for_y_ends_x_and_starts_y(ex: LocalExtractor) -> None:
    x = ex.extract("We left Heroku for Vercel in the spring.", ctx())
    assert ("USER", None, "Heroku") in ends(x)
    assert ("USER", "USES", "Vercel") in rels(x)


def test_x_is_history(ex: LocalExtractor) -> None:
    x = ex.extract("Trello is history for us.", ctx())
    assert ("USER", None, "Trello") in ends(x)
    assert not rels(x)


def test_still_using_is_not_an_ending(ex: LocalExtractor) -> None:
    x = ex.extract("We still use Trello for the grocery list.", ctx())
    assert not ends(x)
    assert ("USER", "USES", "Trello") in rels(x)


def test_moving_to_an_organisation_ends_the_old_membership(ex: LocalExtractor) -> None:
    sol = CandidateEntity(id="p1", name="Solenne", type="person")
    old = CandidateEntity(id="o1", name="Brightwell Studio", type="organization")
    fact = CandidateFact(id="f1", source_id="p1", source_name="Solenne", type="PART_OF", target_id="o1",
                         target_name="Brightwell Studio", fact="Solenne is part of Brightwell Studio")
    x = ex.extract("Solenne joined Corvena Labs last month.", ctx(candidates=(sol, old), facts=(fact,)))
    assert ("Solenne", "PART_OF", "Corvena Labs") in rels(x)
    assert any(e.fact_id == "f1" for e in x.endings)


def test_a_person_who_quits_is_no_longer_a_colleague(ex: LocalExtractor) -> None:
    x = ex.extract("My designer Ottoline quit last week.", ctx())
    assert ("USER", "WORKS_WITH", "Ottoline") in ends(x)


def test_meaning_types_an_unknown_name_in_object_position(ex: LocalExtractor) -> None:
    x = ex.extract("I'm heads-down on Quiverly this month.", ctx())
    assert names(x) == {"Quiverly": "project"}
    assert rels(x) == {("USER", "WORKS_ON", "Quiverly")}
    assert x.entities[0].attributes.get("typed_by") == "meaning"


def test_places_are_not_entities(ex: LocalExtractor) -> None:
    x = ex.extract("Teodora is moving to the Lisbon office next month.", ctx())
    assert "Lisbon" not in names(x)
    assert not any(t == "Lisbon" for _, _, t in rels(x))


def test_co_founding_with_a_person(ex: LocalExtractor) -> None:
    x = ex.extract("I co-founded Quillmark with Teodora back in 2020.", ctx())
    assert {("USER", "PART_OF", "Quillmark"), ("USER", "WORKS_WITH", "Teodora")} <= rels(x)


def test_a_new_role_holder_prefers_for_themself(ex: LocalExtractor) -> None:
    x = ex.extract("Our new CFO Philippa prefers Airtable.", ctx())
    assert ("Philippa", "PREFERS", "Airtable") in rels(x)
    assert ("USER", "PREFERS", "Airtable") not in rels(x)


def test_working_with_me_and_helping_us(ex: LocalExtractor) -> None:
    x = ex.extract("Mattias maintains Pennywhistle with me.", ctx())
    assert {("USER", "WORKS_WITH", "Mattias"), ("Mattias", "WORKS_ON", "Pennywhistle")} <= rels(x)
    y = ex.extract("Godric from accounting is helping us build a new invoice tracker in Airtable.", ctx())
    assert ("USER", "WORKS_WITH", "Godric") in rels(y)


def test_role_appositive_holds_in_a_clause_about_wants(ex: LocalExtractor) -> None:
    x = ex.extract("My editor, Philippa Drummond, wants every draft checked twice.", ctx())
    assert rels(x) == {("USER", "WORKS_WITH", "Philippa Drummond")}
