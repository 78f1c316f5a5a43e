"""Stage 4c (``extract/local/in_use.py``): a tool the speaker's setup names, with no "use" verb: a tool at work
in the present ("Sentry catches our crashes"), a tool as the instrument of the speaker's work ("invoices are
through QuickBooks", "timesheets are submitted via Harvest"), a list of tools and their tasks ("Jira for
tickets, Slack for everything else"); and a sentence that opens with its verb ("Switched from Trello to
Asana."). Real spaCy model and local embedder; every sentence was written for these tests."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from extraction_support import rels
from loregraph.extract.base import ExtractionContext
from loregraph.extract.local import LocalExtractor
from loregraph.extract.local.state import named_for_a_task

NOW = datetime(2024, 6, 12, 15, 30, tzinfo=UTC)


def ctx() -> ExtractionContext:
    return ExtractionContext(group_id="g", reference_time=NOW, role_type="user", role="user")


@pytest.mark.parametrize(("text", "tool"), [
    ("Sentry catches most of our crashes now.", "Sentry"),
    ("Terraform handles all the infra, and Vault keeps the secrets.", "Vault"),
    ("Grafana has been brilliant for the on-call rota.", "Grafana"),
    ("Docker keeps crashing on my laptop.", "Docker"),
    ("Redis sits in front of the database as a cache.", "Redis"),
])
def test_a_tool_at_work_in_the_present_is_used(ex: LocalExtractor, text: str, tool: str) -> None:
    got = ex.extract(text, ctx())
    assert ("ME", "USES", tool) in rels(got)
    assert any(r.trace.startswith(("in use:", "construction:")) for r in got.relations)


@pytest.mark.parametrize(("text", "tool"), [
    ("Invoices are through QuickBooks.", "QuickBooks"),
    ("Support tickets are all via Zendesk now.", "Zendesk"),
    ("Timesheets are submitted via Harvest.", "Harvest"),
    ("The newsletter is assembled in Ghost.", "Ghost"),
])
def test_a_tool_that_the_speakers_work_goes_through_is_used(ex: LocalExtractor, text: str, tool: str) -> None:
    assert ("ME", "USES", tool) in rels(ex.extract(text, ctx()))


@pytest.mark.parametrize(("text", "tools"), [
    ("Jira for tickets, Slack for everything else.", {"Jira", "Slack"}),
    ("Backups: Restic for the laptops.", {"Restic"}),
])
def test_a_list_of_tools_and_their_tasks_names_tools_in_use(ex: LocalExtractor, text: str, tools: set[str]) -> None:
    got = ex.extract(text, ctx())
    assert {e.name for e in got.entities if e.type == "tool"} >= tools
    assert {("ME", "USES", t) for t in tools} <= rels(got)


def test_a_tool_named_with_its_routine_is_used(ex: LocalExtractor) -> None:
    got = rels(ex.extract("Photoshop all day, plus Lightroom when I need something quick.", ctx()))
    assert {("ME", "USES", "Photoshop"), ("ME", "USES", "Lightroom")} <= got
    assert not rels(ex.extract("Tom all day, every day.", ctx()))


@pytest.mark.parametrize("text", [
    "Linear looks nice.",
    "Notion costs far too much.",
    "Sentry will catch those crashes.",
    "Does Sentry catch those crashes?",
    "I prefer Kotlin over Swift.",
    "Strava is annoying me with the paywall, so I've stopped using it.",
    "Their bookings go through Fresha.",
    "Tom for the frontend, Priya for the API.",
    "Jenkins runs the client's builds.",
    "Sentry catches all my sister's crashes at her startup.",
    "Sentry catches everything, but we don't use it.",
    "They say Sentry catches everything.",
    "We're evaluating Datadog. Datadog monitors the whole stack.",
    "Notion has been a disaster for schools.",
    "My sister's invoices are through Xero.",
])
def test_a_tool_described_planned_asked_about_compared_ended_or_someone_elses_is_not_used(
        ex: LocalExtractor, text: str) -> None:
    got = rels(ex.extract(text, ctx()))
    assert not any(s == "ME" and t == "USES" and o in ("Linear", "Notion", "Sentry", "Swift", "Strava", "Fresha",
                                                       "Jenkins", "Datadog", "Xero")
                   for s, t, o in got)
    assert not any(o in ("Tom", "Priya") and t == "USES" for _, t, o in got)


@pytest.mark.parametrize("text", ["Thanks for the help!", "Check for updates first.",
                                  "Paris for the weekend, then home.", "Called Mum for a chat.",
                                  "Mum for the school run, Dad for pickups.",
                                  "Weekend: Lisbon for the food, Porto for the wine."])
def test_a_word_for_a_purpose_that_is_no_tool_names_nothing(ex: LocalExtractor, text: str) -> None:
    assert not [e for e in ex.extract(text, ctx()).entities if e.type == "tool"]


def test_named_for_a_task_needs_an_opening_a_name_with_no_verb_and_a_task(ex: LocalExtractor) -> None:
    doc = ex._parse("Jira for tickets, Slack for everything else, and we use Linear for ages.")
    names = {t.text: t.i for t in doc if t.text in ("Jira", "Slack", "Linear")}
    assert named_for_a_task(doc, names["Jira"], names["Jira"] + 1)
    assert named_for_a_task(doc, names["Slack"], names["Slack"] + 1)
    assert not named_for_a_task(doc, names["Linear"], names["Linear"] + 1)  # an object, and "for ages"


@pytest.mark.parametrize(("text", "new", "old"), [
    ("Switched from Trello to Asana.", "Asana", "Trello"),
    ("Moved from Basecamp to Linear in May.", "Linear", "Basecamp"),
])
def test_a_sentence_that_opens_with_its_past_verb_has_the_speaker_as_subject(
        ex: LocalExtractor, text: str, new: str, old: str) -> None:
    got = ex.extract(text, ctx())
    names = {e.ref: e.name for e in got.entities}
    assert ("ME", "USES", new) in rels(got)
    assert any(names.get(e.target) == old for e in got.endings)
