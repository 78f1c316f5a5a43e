"""Constructions of a third party's wishes, of work given to someone and of a job at an organisation
(``extract/data/constructions.json``): "Rahul reckons we should switch to Grafana" (Rahul prefers Grafana),
"Marta's been put on the Kestrel migration", "Day job is line cook at the Brass Monkey", "I got promoted at
Kelso Foods"; and a name opening a sentence that general text does not know is someone, not the speaker's
plain noun. Real spaCy model and local embedder; every sentence was written for these tests."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from extraction_support import rels
from loregraph.extract.base import ExtractionContext
from loregraph.extract.local import LocalExtractor

NOW = datetime(2024, 6, 12, 15, 30, tzinfo=UTC)


def ctx() -> ExtractionContext:
    return ExtractionContext(group_id="g", reference_time=NOW, role_type="user", role="user")


@pytest.mark.parametrize(("text", "expected"), [
    ("Lena wants to move the team onto Linear.", ("Lena", "PREFERS", "Linear")),
    ("Rahul reckons we should switch to Grafana.", ("Rahul", "PREFERS", "Grafana")),
    ("Keira wants the invoices in FreeAgent.", ("Keira", "PREFERS", "FreeAgent")),
    ("Dana reckons we should try Linear.", ("Dana", "PREFERS", "Linear")),
    ("Priya recommends Terraform for the new stack.", ("Priya", "PREFERS", "Terraform")),
    ("Tom suggested we try Linear.", ("Tom", "PREFERS", "Linear")),
    ("Dan keeps pushing for Grafana.", ("Dan", "PREFERS", "Grafana")),
])
def test_a_named_person_who_wants_or_argues_for_a_tool_prefers_it(
        ex: LocalExtractor, text: str, expected: tuple[str, str, str]) -> None:
    got = rels(ex.extract(text, ctx()))
    assert expected in got
    assert ("ME", "USES", expected[2]) not in got  # a wish is no use of anyone's


@pytest.mark.parametrize("text", [
    "Bill wants to move away from Xero.", "Does Bill want to switch to Xero?", "Bill doesn't want to switch to Xero.",
    "Tom wants to spend less time on Slack.", "Tom wants to stop paying for Dropbox.",
    "Tom wants to report the bug in Jira.", "Tom wants a refund for Photoshop.", "Priya wants us to stop using Zoom.",
    "If Rahul wants to switch to Grafana he can pay for it.", "Reddit recommends Obsidian.",
])
def test_a_tool_left_asked_about_or_refused_is_not_preferred(ex: LocalExtractor, text: str) -> None:
    assert not any(t == "PREFERS" for _, t, _ in rels(ex.extract(text, ctx())))


def test_a_person_put_on_a_work_works_on_it(ex: LocalExtractor) -> None:
    got = rels(ex.extract("Marta's been put on the Kestrel migration with me.", ctx()))
    assert ("Marta", "WORKS_ON", "Kestrel migration") in got


@pytest.mark.parametrize(("text", "org"), [
    ("Day job is line cook at the Brass Monkey.", "Brass Monkey"),
    ("I got promoted at Kelso Foods.", "Kelso Foods"),
])
def test_the_speakers_job_at_an_organisation_makes_them_part_of_it(ex: LocalExtractor, text: str, org: str) -> None:
    assert ("ME", "PART_OF", org) in rels(ex.extract(text, ctx()))


@pytest.mark.parametrize("text", ["Her job is nurse at St Mary's.", "My old job was barista at Costa.",
                                  "The job is cashier at Tesco, twenty hours a week."])
def test_someone_elses_past_or_advertised_job_makes_the_speaker_no_member(ex: LocalExtractor, text: str) -> None:
    assert not any(s == "ME" for s, _, _ in rels(ex.extract(text, ctx())))


def test_someone_elses_promotion_is_theirs(ex: LocalExtractor) -> None:
    assert ("Tom", "PART_OF", "Halden") in rels(ex.extract("Tom got promoted at Halden.", ctx()))


def test_an_unknown_name_opening_a_sentence_is_not_the_speakers_plain_noun(ex: LocalExtractor) -> None:
    assert not any(s == "ME" for s, _, _ in rels(ex.extract("Tunde got moved onto Atlas last week.", ctx())))
    assert ("ME", "USES", "Xero") in rels(ex.extract("Invoices are done in Xero.", ctx()))
