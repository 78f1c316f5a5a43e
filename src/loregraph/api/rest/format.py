"""Domain objects → response bodies."""

from __future__ import annotations

from loregraph.api.rest import models as m
from loregraph.graph.types import Entity, Episode, Fact
from loregraph.search.graph import Explanation, GraphAnswer, Provenance


def fact_result(f: Fact) -> m.FactResult:
    return m.FactResult(uuid=f.id, name=f.type, fact=f.fact, valid_at=f.valid_at, invalid_at=f.invalid_at,
                        created_at=f.created_at, expired_at=f.expired_at, source_node_uuid=f.source_id,
                        target_node_uuid=f.target_id, episodes=list(f.episodes))


def fact(f: Fact) -> m.Fact:
    return m.Fact(**fact_result(f).model_dump(), group_id=f.group_id, type=f.type, confidence=f.confidence,
                  attributes=dict(f.attributes))


def entity(e: Entity) -> m.Entity:
    return m.Entity(uuid=e.id, group_id=e.group_id, name=e.name, type=e.type, aliases=list(e.aliases),
                    summary=e.summary, attributes=dict(e.attributes), confidence=e.confidence,
                    mention_count=e.mention_count, created_at=e.created_at, updated_at=e.updated_at)


def entity_node(e: Entity) -> m.EntityNode:
    return m.EntityNode(uuid=e.id, name=e.name, group_id=e.group_id, labels=["Entity", e.type],
                        created_at=e.created_at, summary=e.summary, attributes=dict(e.attributes))


def episodic_node(ep: Episode) -> m.EpisodicNode:
    return m.EpisodicNode(uuid=ep.id, name=ep.name, group_id=ep.group_id, labels=["Episodic"],
                          created_at=ep.created_at, source=ep.source, source_description=ep.source_description,
                          content=ep.content, valid_at=ep.valid_at, entity_edges=list(ep.fact_ids))


def provenance(p: Provenance) -> m.Provenance:
    return m.Provenance(episode_uuid=p.episode_id, message_name=p.message_name, conversation_id=p.conversation_id,
                        valid_at=p.valid_at, source_description=p.source_description, content=p.content)


def graph_answer(a: GraphAnswer) -> m.GraphAnswer:
    return m.GraphAnswer(
        query=a.query, route=str(a.route), found=a.found, message=a.message, entity_type=a.entity_type,
        relationship_type=a.relationship_type, entities=[entity(e) for e in a.entities],
        relationships=[m.Relationship(fact=fact(r.fact), source=entity(r.source), target=entity(r.target),
                                      provenance=[provenance(p) for p in r.provenance]) for r in a.relationships])


def explanation(x: Explanation) -> m.Explanation:
    rec = x.record
    return m.Explanation(kind=x.kind, entity=entity(rec) if isinstance(rec, Entity) else None,
                         fact=fact(rec) if isinstance(rec, Fact) else None,
                         sources=[provenance(p) for p in x.sources], conversation_ids=x.conversation_ids,
                         ended_by=provenance(x.ended_by) if x.ended_by else None)
