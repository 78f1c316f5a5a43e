"""Stage 2b (``extract/local/name_model.py``): the learned typer for names the rules leave undecided, its
shipped weights, and the script that trains them. Real spaCy model and local embedder; every sentence was
written for these tests."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from extraction_support import rels
from loregraph.extract.base import CandidateEntity, ExtractionContext
from loregraph.extract.local import LocalExtractor, name_model
from loregraph.extract.local.collector import Collector
from loregraph.extract.local.entity_types import type_mentions
from loregraph.extract.local.mentions import find_mentions
from loregraph.extract.local.name_model import NameTypeModel, name_features, needs_a_type, type_undecided_names
from loregraph.extract.local.state import Mention, Parse

NOW = datetime(2024, 6, 12, 15, 30, tzinfo=UTC)
ROOT = Path(__file__).resolve().parent.parent


def ctx() -> ExtractionContext:
    return ExtractionContext(group_id="g", reference_time=NOW, role_type="user", role="user")


@pytest.fixture(scope="module")
def ex_without_model() -> LocalExtractor:
    return LocalExtractor(use_name_model=False)


def test_probabilities_are_a_softmax_of_the_summed_feature_weights() -> None:
    model = NameTypeModel(["none", "person", "tool"], {"bias": [0.0, 0.0, 0.0], "prep=with": [0.0, -1.0, 2.0]})
    probs = model.probabilities({"bias": 1.0, "prep=with": 1.0, "unknown": 1.0})
    assert math.isclose(sum(probs.values()), 1.0)
    assert probs["tool"] > probs["none"] > probs["person"]
    assert math.isclose(probs["tool"], math.exp(2) / (1 + math.exp(-1) + math.exp(2)))


def test_the_shipped_weights_load_and_were_trained_on_the_projects_own_sets() -> None:
    data = json.loads(name_model.MODEL_FILE.read_text(encoding="utf-8"))
    assert {"none", "tool", "person", "organization"} <= set(data["classes"])
    assert data["trained_on"] and not any(n.startswith("dev") for n in data["trained_on"])
    model = name_model.default_model()
    assert model is not None and all(len(row) == len(model.classes) for row in model.weights.values())


def _typed_by_the_rules(ex: LocalExtractor, text: str) -> Parse:
    """The parse of ``text`` with its names found and typed by the rules (stages 1 and 2)."""

    doc = ex._parse(text)
    st = Parse(doc=doc, ctx=ctx(), lex=ex.lexicon, ner=ex._ner, out=Collector(speaker_ok=True, speaker_name="User"),
               speaker_ok=True, speaker_name="User", at=[-1] * len(doc))
    find_mentions(st)
    type_mentions(st)
    return st


def test_the_models_sure_types_become_entities_and_its_guesses_need_a_fact(ex: LocalExtractor) -> None:
    st = _typed_by_the_rules(ex, "I spent the morning in Draftly fixing the layouts.")
    draftly = next(m for m in st.mentions if m.name == "Draftly")
    assert needs_a_type(st, draftly)
    sure = NameTypeModel(["none", "tool"], {"bias": [0.0, -1.0], "prep=in": [0.0, 4.0]})  # p(tool) = 0.95
    type_undecided_names(st, sure)
    assert (draftly.type, draftly.guessed, draftly.thin) == ("tool", True, False)
    st = _typed_by_the_rules(ex, "I spent the morning in Draftly fixing the layouts.")
    draftly = next(m for m in st.mentions if m.name == "Draftly")
    unsure = NameTypeModel(["none", "tool"], {"bias": [0.0, -1.0], "prep=in": [0.0, 1.5]})  # p(tool) = 0.62
    type_undecided_names(st, unsure)
    assert (draftly.type, draftly.thin) == ("tool", True)
    st = _typed_by_the_rules(ex, "I spent the morning in Draftly fixing the layouts.")
    draftly = next(m for m in st.mentions if m.name == "Draftly")
    type_undecided_names(st, NameTypeModel(["none", "tool"], {"prep=in": [0.0, 0.1]}))  # p(tool) = 0.52
    assert not draftly.type


def test_an_unknown_name_the_shipped_model_calls_a_tool_lets_the_rules_relate_it(
        ex: LocalExtractor, ex_without_model: LocalExtractor) -> None:
    text = "My rota app is Shiftly."
    assert ("ME", "USES", "Shiftly") in rels(ex.extract(text, ctx()))
    assert "Shiftly" not in {e.name for e in ex_without_model.extract(text, ctx()).entities}


def test_a_guess_the_meaning_stage_can_read_better_is_retyped(ex: LocalExtractor) -> None:
    x = ex.extract("I'm heads-down on Quiverly this month.", ctx())
    assert rels(x) == {("ME", "WORKS_ON", "Quiverly")}
    assert [e.type for e in x.entities] == ["project"]


def test_the_short_form_of_a_known_name_is_left_to_the_later_stages(ex: LocalExtractor) -> None:
    doc = ex._parse("Vantor said Femi uses it too.")
    c = ctx()
    st = Parse(doc=doc, ctx=c, lex=ex.lexicon, ner=None, out=Collector(speaker_ok=True, speaker_name="User"),
               speaker_ok=True, speaker_name="User", at=[-1] * len(doc))
    femi, vantor = Mention(start=2, end=3, name="Femi"), Mention(start=0, end=1, name="Vantor")
    st.mentions = [vantor, femi]
    assert needs_a_type(st, femi) and needs_a_type(st, vantor)
    c.candidates = [CandidateEntity(id="p1", name="Femi Adebayo", type="person")]
    assert not needs_a_type(st, femi) and needs_a_type(st, vantor)  # known before
    c.candidates = []
    st.mentions.append(Mention(start=0, end=0, name="Femi Adebayo", source="candidate", type="person"))
    assert not needs_a_type(st, femi)  # named in full in the same message


def test_features_describe_the_name_and_its_context(ex: LocalExtractor) -> None:
    st = _typed_by_the_rules(ex, "Interviews get transcribed with Otterly now.")
    otterly = next(m for m in st.mentions if m.name == "Otterly")
    f = name_features(st, otterly)
    assert {"prev1=with", "prep=with", "dep=pobj", "ntok=1", "shape=title", "next1=now"} <= set(f)


def test_the_training_script_writes_weights_the_extractor_can_load(tmp_path: Path) -> None:
    lines = []
    texts = [("I spent the morning in Draftly fixing the layouts.", [("Draftly", "tool")]),
             ("My rota app is Shiftly.", [("Shiftly", "tool")]),
             ("We moved the newsletter onto Brevix last week.", [])]  # (a name that is no gold entity: none)
    for k, (text, ents) in enumerate(texts):
        lines.append(json.dumps({"conversation_id": "c", "user_id": "u", "message_id": f"m{k}", "role": "user",
                                 "timestamp": "2024-06-12T10:00:00Z", "content": text,
                                 "entities": [{"name": n, "type": t} for n, t in ents], "relations": []}))
    train = tmp_path / "mine.jsonl"
    train.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "weights.json"
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "extraction" / "train_name_types.py"), str(train),
                          "--out", str(out)], capture_output=True, text=True, timeout=600,
                         env={"PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    model = NameTypeModel.load(out)
    assert model.classes and model.weights
    assert json.loads(out.read_text())["trained_on"] == ["mine.jsonl"]
