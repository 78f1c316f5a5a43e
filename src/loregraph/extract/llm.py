"""LLMExtractor: one structured-output call per message (spec 004).

The pipeline offers a bounded context (previous episodes, candidate entities and their current facts);
this extractor bounds it again (counts and lengths), so the prompt never grows with the graph. Candidate
entities and facts are shown under short handles (E1.., F1..) that are mapped back to ids here; the
model never sees or returns raw ids. Its answer is validated item by item with pydantic: a malformed
item is dropped and counted, the rest is kept. Handles the model made up are passed on unchanged so the
pipeline rejects and counts them like any unknown id; unknown types are rejected there too.

When the model cannot be reached or never answers with usable JSON (after one retry), the extraction
step is skipped: the episode is still stored, with no LLM entities, and the result says why
(``extraction_notes["degraded"]``).
"""

from __future__ import annotations

import logging
import re
import time
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from loregraph.extract.base import (
    SPEAKER,
    CandidateEntity,
    CandidateFact,
    ExtractedEnding,
    ExtractedEntity,
    ExtractedRelation,
    Extraction,
    ExtractionContext,
)
from loregraph.extract.noise import filter_noise
from loregraph.extract.prompts import (
    ExtractionConfig,
    TemplateResolver,
    builtin_text,
    compose_instructions,
    preprocessing_label,
    resolve_preprocessing,
)
from loregraph.graph.types import as_utc
from loregraph.models.llm import METRICS, LLMClient, LLMConfig, LLMError, Usage

log = logging.getLogger("loregraph.extract.llm")

MAX_CANDIDATES = 10
MAX_CANDIDATE_FACTS = 20
MAX_PREVIOUS = 3
PREVIOUS_CHARS = 240
SUMMARY_CHARS = 80
FACT_CHARS = 120
MAX_MESSAGE_CHARS = 12000
_SPEAKER_WORDS = {"speaker", "user", "me", "i"}


# ---- the answer's shape -------------------------------------------------------------------------------
class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True)


class LLMEntity(_Loose):
    ref: str = ""
    name: str = Field(min_length=1, max_length=200)
    type: str = "entity"
    existing: str | None = None
    aliases: list[str] = Field(default_factory=list)
    attributes: dict[str, str | int | float | bool | None] = Field(default_factory=dict)
    confidence: float = Field(0.8, ge=0, le=1)

    @field_validator("aliases", mode="before")
    @classmethod
    def _aliases(cls, v: Any) -> Any:
        if v is None:
            return []
        return [v] if isinstance(v, str) else v

    @field_validator("attributes", mode="before")
    @classmethod
    def _attrs(cls, v: Any) -> Any:
        return v or {}


class LLMRelation(_Loose):
    source: str = Field(min_length=1)
    type: str = Field(min_length=1)
    target: str = Field(min_length=1)
    fact: str = ""
    valid_at: str | None = None
    invalid_at: str | None = None
    confidence: float = Field(0.8, ge=0, le=1)


class LLMEnding(_Loose):
    fact: str | None = None
    source: str | None = None
    type: str | None = None
    target: str | None = None
    reason: str = "ended"


class LLMAnswer(_Loose):
    """The whole answer; items are validated one by one (see ``LLMExtractor._parse``)."""

    entities: list[LLMEntity] = Field(default_factory=list)
    relations: list[LLMRelation] = Field(default_factory=list)
    ended: list[LLMEnding] = Field(default_factory=list)


MAX_ENTITIES = 8
MAX_RELATIONS = 8
MAX_ENDED = 5


def output_schema(entity_types: list[str] | tuple[str, ...] = (), relation_types: list[str] | tuple[str, ...] = (),
                  entity_handles: list[str] | None = None, fact_handles: list[str] | None = None) -> dict[str, Any]:
    """The answer's JSON schema, small enough for small local models and for grammar-constrained decoding
    (llama.cpp turns it into a grammar): only the keys the prompt asks for, types as enums when given, and
    bounded lists and strings, so a model that starts repeating itself stops at a valid, complete answer.
    Shared parts are ``$defs`` to keep it short (providers count the schema as prompt tokens). The validator
    (``LLMAnswer``) is more tolerant than this: it also reads ``aliases``, ``confidence``, ``attributes``,
    endings given as source/type/target, and nulls, which models answering without a grammar may send.

    With ``entity_handles`` / ``fact_handles`` (the E#/F# offered in the prompt) ``existing`` and ``ended``
    accept only those, and are left out when none was offered: a constrained model cannot make up ids."""
    s, e, r = {"$ref": "#/$defs/s"}, {"$ref": "#/$defs/e"}, {"$ref": "#/$defs/r"}
    entity: dict[str, Any] = {"ref": s, "name": s, "type": e}
    if entity_handles is None:
        entity["existing"] = s
    elif entity_handles:
        entity["existing"] = {"enum": list(entity_handles)}
    ended = {"enum": list(fact_handles)} if fact_handles else s

    def items(props: dict[str, Any], required: list[str], n: int) -> dict[str, Any]:
        item: dict[str, Any] = {"type": "object", "properties": props}
        if required:
            item["required"] = required
        return {"type": "array", "maxItems": n, "items": item}

    def kind(values: list[str] | tuple[str, ...]) -> dict[str, Any]:
        return {"enum": list(values)} if values else {"type": "string", "maxLength": 40}

    return {
        "type": "object",
        "$defs": {"s": {"type": "string", "minLength": 1, "maxLength": 60}, "e": kind(entity_types),
                  "r": kind(relation_types)},
        "properties": {
            "entities": items(entity, ["ref", "name", "type"], MAX_ENTITIES),
            "relations": items({"source": s, "type": r, "target": s, "fact": {"type": "string", "maxLength": 120},
                                "valid_at": s, "invalid_at": s}, ["source", "type", "target", "fact"], MAX_RELATIONS),
            "ended": items({"fact": ended}, ["fact"], MAX_ENDED if fact_handles is None or fact_handles else 0),
        },
        "required": ["entities", "relations", "ended"],
    }


OUTPUT_SCHEMA: dict[str, Any] = output_schema()
"""The schema without enums (the extractor sends one with the context's types and the offered handles)."""


def _check_shape(data: dict[str, Any]) -> None:
    """Whole-answer check used by the client's retry: the lists must be lists (items are checked later)."""
    for key in ("entities", "relations", "ended"):
        if key in data and not isinstance(data[key], list):
            raise ValueError(f"{key} is not a list")
    if not any(k in data for k in ("entities", "relations", "ended")):
        raise ValueError("no known key")


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _parse_time(value: str | None) -> tuple[datetime | None, bool]:
    if value is None or not str(value).strip() or str(value).strip().lower() in ("null", "none", "unknown"):
        return None, True
    v = str(value).strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
        v += "T00:00:00+00:00"
    try:
        return as_utc(datetime.fromisoformat(v.replace("Z", "+00:00"))), True
    except ValueError:
        return None, False


class LLMExtractor:
    """Implements the ``Extractor`` protocol with one model call per message."""

    name = "llm"

    def __init__(self, llm: LLMClient | LLMConfig, config: ExtractionConfig | None = None, *,
                 resolver: TemplateResolver | None = None, max_candidates: int = MAX_CANDIDATES,
                 max_candidate_facts: int = MAX_CANDIDATE_FACTS, max_previous: int = MAX_PREVIOUS,
                 max_message_chars: int = MAX_MESSAGE_CHARS, noise_filter: bool = False):
        self.llm = llm if isinstance(llm, LLMClient) else LLMClient(llm)
        self.config = config or ExtractionConfig()
        self.resolver = resolver or TemplateResolver()
        self.max_candidates = max_candidates
        self.max_candidate_facts = max_candidate_facts
        self.max_previous = max_previous
        self.max_message_chars = max_message_chars
        self.noise_filter = noise_filter
        self.system_prompt = builtin_text("extract-system.md").strip()

    # ---- prompt -------------------------------------------------------------------------------
    def instructions(self, context: ExtractionContext) -> tuple[str | None, dict[str, Any]]:
        """Preprocessing (per-episode override first) joined with custom instructions, and a note of it."""
        value = context.preprocessing_prompt if context.preprocessing_prompt is not None \
            else self.config.preprocessing_prompt
        resolved = resolve_preprocessing(value, self.resolver)
        note = {"requested": preprocessing_label(value), "applied": resolved is not None,
                "source": resolved.source if resolved else None,
                "override": context.preprocessing_prompt is not None}
        custom = compose_instructions(self.config.custom_instructions, context.custom_instructions, "prepend")
        text = compose_instructions(resolved.text if resolved else None, custom, self.config.preprocessing_mode)
        return text, note

    def build_messages(self, content: str, context: ExtractionContext
                       ) -> tuple[list[dict[str, str]], dict[str, str], dict[str, str], dict[str, Any]]:
        """Chat messages plus the handle maps (E# → entity id, F# → fact id) and notes."""
        notes: dict[str, Any] = {}
        cands: list[CandidateEntity] = context.candidates[: self.max_candidates]
        ent_handles = {f"E{i}": c.id for i, c in enumerate(cands, 1)}
        by_id = {c.id: h for h, c in zip(ent_handles, cands, strict=True)}
        facts: list[CandidateFact] = context.candidate_facts[: self.max_candidate_facts]
        fact_handles = {f"F{i}": f.id for i, f in enumerate(facts, 1)}
        excluded = set(context.excluded_entity_types)
        etypes = [t for t in context.entity_types if t not in excluded]

        lines = [f"Time: {context.reference_time.isoformat(timespec='seconds')}",
                 f"Entity types: {', '.join(etypes)}",
                 f"Relation types: {', '.join(context.relation_types)}"]
        if cands:
            lines.append("Known entities:")
            for h, c in zip(ent_handles, cands, strict=True):
                aka = f" aka {', '.join(_clip(a, 40) for a in c.aliases[:3])}" if c.aliases else ""
                summ = f" - {_clip(c.summary, SUMMARY_CHARS)}" if c.summary else ""
                lines.append(f"{h} {_clip(c.name, 60)} ({c.type}){aka}{summ}")
        if facts:
            lines.append("Known facts:")
            for h, f in zip(fact_handles, facts, strict=True):
                src = by_id.get(f.source_id, _clip(f.source_name, 40))
                dst = by_id.get(f.target_id, _clip(f.target_name, 40))
                lines.append(f"{h} {src} {f.type} {dst}: {_clip(f.fact, FACT_CHARS)}")
        prev = context.previous_episodes[-self.max_previous:] if self.max_previous else []
        if prev:
            lines.append("Earlier messages (context only):")
            lines.extend(f"- {p.role_type or 'message'}: {_clip(p.content, PREVIOUS_CHARS)}" for p in prev)
        instructions, note = self.instructions(context)
        notes["preprocessing"] = note
        if instructions:
            lines.append("Instructions:\n" + instructions)
        text = content
        if self.noise_filter:
            cleaned = filter_noise(text)
            text = cleaned.text
            if cleaned.stats:
                notes["noise_filtered"] = cleaned.stats
        if len(text) > self.max_message_chars:
            notes["message_clipped_chars"] = len(text) - self.max_message_chars
            text = text[: self.max_message_chars]
        who = context.role or ("the user" if context.role_type in (None, "user") else context.role_type)
        text = text.replace("</message>", "</ message>")
        lines.append(f"Message from {who}" + (f" ({context.role_type})" if context.role_type else "") +
                     f":\n<message>\n{text}\n</message>")
        messages = [{"role": "system", "content": self.system_prompt}, {"role": "user", "content": "\n".join(lines)}]
        return messages, ent_handles, fact_handles, notes

    @staticmethod
    def schema(context: ExtractionContext, ent_handles: dict[str, str] | None = None,
               fact_handles: dict[str, str] | None = None) -> dict[str, Any]:
        """The answer schema for one request: the context's entity and relation types, and the offered handles
        (see :meth:`build_messages`), as enums."""
        excluded = set(context.excluded_entity_types)
        return output_schema([t for t in context.entity_types if t not in excluded], list(context.relation_types),
                             None if ent_handles is None else list(ent_handles),
                             None if fact_handles is None else list(fact_handles))

    # ---- extraction ---------------------------------------------------------------------------
    def extract(self, content: str, context: ExtractionContext) -> Extraction:
        messages, ent_handles, fact_handles, notes = self.build_messages(content, context)
        notes["extractor"] = self.name
        t0 = time.perf_counter()
        try:
            res = self.llm.complete_json(messages, self.schema(context, ent_handles, fact_handles),
                                         name="graph_update", validate=_check_shape)
        except LLMError as exc:
            METRICS.incr(degraded=1)
            notes["degraded"] = exc.kind
            notes["usage"] = exc.usage.as_dict()
            notes["llm_ms"] = round((time.perf_counter() - t0) * 1000, 1)
            log.warning("llm extraction skipped for group=%s (%s after %d call(s), %.0f ms); storing the episode "
                        "without it", context.group_id, exc.kind, exc.usage.calls, notes["llm_ms"])
            return Extraction(notes=notes)
        notes["llm_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        notes["usage"] = res.usage.as_dict()
        notes["mode"] = res.mode
        if res.partial:
            notes["partial"] = True
        out = self._map(res.data, context, ent_handles, fact_handles, notes)
        log.info("llm extraction group=%s: entities=%d relations=%d endings=%d calls=%d prompt_tokens=%d "
                 "completion_tokens=%d dropped=%d ms=%.0f", context.group_id, len(out.entities), len(out.relations),
                 len(out.endings), res.usage.calls, res.usage.prompt_tokens, res.usage.completion_tokens,
                 notes.get("dropped_items", 0), notes["llm_ms"])
        return out

    @staticmethod
    def _items(data: dict[str, Any], key: str, model: type[BaseModel], notes: dict[str, Any]) -> list[Any]:
        raw = data.get(key) or []
        out = []
        for item in raw if isinstance(raw, list) else []:
            try:
                out.append(model.model_validate(item))
            except ValidationError:
                notes["dropped_items"] = notes.get("dropped_items", 0) + 1
        return out

    def _map(self, data: dict[str, Any], context: ExtractionContext, ent_handles: dict[str, str],
             fact_handles: dict[str, str], notes: dict[str, Any]) -> Extraction:
        cands = {c.id: c for c in context.candidates}
        etypes = {t.lower(): t for t in context.entity_types}
        rtypes = {t.lower(): t for t in context.relation_types}
        entities: list[ExtractedEntity] = []
        refs: set[str] = set()
        for i, e in enumerate(self._items(data, "entities", LLMEntity, notes), 1):
            ref = e.ref.strip() or f"n{i}"
            if ref in refs or ref.upper() == SPEAKER:
                ref = f"{ref}#{i}"
            refs.add(ref)
            existing = None
            if e.existing and e.existing.strip():
                h = e.existing.strip()
                existing = ent_handles.get(h.upper(), h)  # unknown handles go on, for the pipeline to reject
            etype = etypes.get(e.type.strip().lower(), e.type.strip())
            entities.append(ExtractedEntity(ref=ref, name=e.name.strip(), type=etype,
                                            confidence=e.confidence, aliases=[a for a in e.aliases if a.strip()],
                                            attributes={k: v for k, v in e.attributes.items() if v is not None},
                                            existing_id=existing))
        # a relation may point straight at an offered entity: give it an entity entry (existing_id checked)
        implied: dict[str, str] = {}

        def endpoint(value: str | None) -> str | None:
            if value is None:
                return None
            v = value.strip()
            if v in refs:
                return v
            if v.upper() == SPEAKER or v.lower() in _SPEAKER_WORDS:
                return SPEAKER
            h = v.upper()
            if h in ent_handles:
                if h not in implied:
                    cid = ent_handles[h]
                    for x in entities:  # the model already listed it
                        if x.existing_id == cid:
                            implied[h] = x.ref
                            break
                    else:
                        c = cands[cid]
                        entities.append(ExtractedEntity(ref=h, name=c.name, type=c.type, confidence=0.9,
                                                        existing_id=cid))
                        refs.add(h)
                        implied[h] = h
                return implied[h]
            notes["unknown_refs"] = notes.get("unknown_refs", 0) + 1
            return v  # unresolvable: the pipeline skips and counts it

        relations: list[ExtractedRelation] = []
        for r in self._items(data, "relations", LLMRelation, notes):
            valid_at, ok1 = _parse_time(r.valid_at)
            invalid_at, ok2 = _parse_time(r.invalid_at)
            if not (ok1 and ok2):
                notes["bad_dates"] = notes.get("bad_dates", 0) + 1
            src, dst = endpoint(r.source), endpoint(r.target)
            assert src is not None and dst is not None
            rtype = rtypes.get(r.type.strip().lower(), r.type.strip())
            relations.append(ExtractedRelation(source=src, type=rtype, target=dst,
                                               fact=r.fact.strip(), confidence=r.confidence, valid_at=valid_at,
                                               invalid_at=invalid_at))
        endings: list[ExtractedEnding] = []
        for x in self._items(data, "ended", LLMEnding, notes):
            if x.fact and x.fact.strip():
                h = x.fact.strip()
                endings.append(ExtractedEnding(fact_id=fact_handles.get(h.upper(), h), reason=x.reason or "ended"))
            elif x.source:
                etype = rtypes.get(x.type.strip().lower(), x.type.strip()) if x.type and x.type.strip() else None
                endings.append(ExtractedEnding(source=endpoint(x.source), type=etype, target=endpoint(x.target),
                                               reason=x.reason or "ended"))
            else:
                notes["dropped_items"] = notes.get("dropped_items", 0) + 1
        return Extraction(entities=entities, relations=relations, endings=endings, notes=notes)


__all__ = ["OUTPUT_SCHEMA", "LLMAnswer", "LLMExtractor", "Usage", "output_schema"]
