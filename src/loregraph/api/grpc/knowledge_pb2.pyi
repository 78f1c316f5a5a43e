from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Visibility(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VISIBILITY_UNSPECIFIED: _ClassVar[Visibility]
    PRIVATE: _ClassVar[Visibility]
    SHARED: _ClassVar[Visibility]
VISIBILITY_UNSPECIFIED: Visibility
PRIVATE: Visibility
SHARED: Visibility

class Universe(_message.Message):
    __slots__ = ("id", "name", "user_id", "visibility")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    user_id: str
    visibility: Visibility
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., user_id: _Optional[str] = ..., visibility: _Optional[_Union[Visibility, str]] = ...) -> None: ...

class Entity(_message.Message):
    __slots__ = ("id", "type_id", "properties", "universe_id", "user_id", "visibility")
    ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_ID_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    UNIVERSE_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    id: str
    type_id: str
    properties: _struct_pb2.Struct
    universe_id: str
    user_id: str
    visibility: Visibility
    def __init__(self, id: _Optional[str] = ..., type_id: _Optional[str] = ..., properties: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., universe_id: _Optional[str] = ..., user_id: _Optional[str] = ..., visibility: _Optional[_Union[Visibility, str]] = ...) -> None: ...

class Block(_message.Message):
    __slots__ = ("id", "type_id", "properties", "user_id", "visibility")
    ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_ID_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    id: str
    type_id: str
    properties: _struct_pb2.Struct
    user_id: str
    visibility: Visibility
    def __init__(self, id: _Optional[str] = ..., type_id: _Optional[str] = ..., properties: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., user_id: _Optional[str] = ..., visibility: _Optional[_Union[Visibility, str]] = ...) -> None: ...

class Edge(_message.Message):
    __slots__ = ("id", "edge_type", "source_id", "target_id", "properties", "user_id", "visibility")
    ID_FIELD_NUMBER: _ClassVar[int]
    EDGE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_ID_FIELD_NUMBER: _ClassVar[int]
    PROPERTIES_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    id: str
    edge_type: str
    source_id: str
    target_id: str
    properties: _struct_pb2.Struct
    user_id: str
    visibility: Visibility
    def __init__(self, id: _Optional[str] = ..., edge_type: _Optional[str] = ..., source_id: _Optional[str] = ..., target_id: _Optional[str] = ..., properties: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., user_id: _Optional[str] = ..., visibility: _Optional[_Union[Visibility, str]] = ...) -> None: ...

class UpsertGraphDeltaRequest(_message.Message):
    __slots__ = ("universes", "entities", "blocks", "edges")
    UNIVERSES_FIELD_NUMBER: _ClassVar[int]
    ENTITIES_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    EDGES_FIELD_NUMBER: _ClassVar[int]
    universes: _containers.RepeatedCompositeFieldContainer[Universe]
    entities: _containers.RepeatedCompositeFieldContainer[Entity]
    blocks: _containers.RepeatedCompositeFieldContainer[Block]
    edges: _containers.RepeatedCompositeFieldContainer[Edge]
    def __init__(self, universes: _Optional[_Iterable[_Union[Universe, _Mapping]]] = ..., entities: _Optional[_Iterable[_Union[Entity, _Mapping]]] = ..., blocks: _Optional[_Iterable[_Union[Block, _Mapping]]] = ..., edges: _Optional[_Iterable[_Union[Edge, _Mapping]]] = ...) -> None: ...

class UpsertGraphDeltaResponse(_message.Message):
    __slots__ = ("universes_upserted", "entities_upserted", "blocks_upserted", "edges_upserted")
    UNIVERSES_UPSERTED_FIELD_NUMBER: _ClassVar[int]
    ENTITIES_UPSERTED_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_UPSERTED_FIELD_NUMBER: _ClassVar[int]
    EDGES_UPSERTED_FIELD_NUMBER: _ClassVar[int]
    universes_upserted: int
    entities_upserted: int
    blocks_upserted: int
    edges_upserted: int
    def __init__(self, universes_upserted: _Optional[int] = ..., entities_upserted: _Optional[int] = ..., blocks_upserted: _Optional[int] = ..., edges_upserted: _Optional[int] = ...) -> None: ...

class InitializeUserGraphRequest(_message.Message):
    __slots__ = ("user_id", "name")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    name: str
    def __init__(self, user_id: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class InitializeUserGraphResponse(_message.Message):
    __slots__ = ("person_entity_id", "universe_id", "created")
    PERSON_ENTITY_ID_FIELD_NUMBER: _ClassVar[int]
    UNIVERSE_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    person_entity_id: str
    universe_id: str
    created: bool
    def __init__(self, person_entity_id: _Optional[str] = ..., universe_id: _Optional[str] = ..., created: _Optional[bool] = ...) -> None: ...

class FindEntityCandidatesRequest(_message.Message):
    __slots__ = ("names", "potential_type_ids", "short_description", "user_id", "limit")
    NAMES_FIELD_NUMBER: _ClassVar[int]
    POTENTIAL_TYPE_IDS_FIELD_NUMBER: _ClassVar[int]
    SHORT_DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    potential_type_ids: _containers.RepeatedScalarFieldContainer[str]
    short_description: str
    user_id: str
    limit: int
    def __init__(self, names: _Optional[_Iterable[str]] = ..., potential_type_ids: _Optional[_Iterable[str]] = ..., short_description: _Optional[str] = ..., user_id: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class EntityCandidate(_message.Message):
    __slots__ = ("entity_id", "entity_name", "described_by_text", "score", "matched_name", "matched_alias", "entity_type_id")
    ENTITY_ID_FIELD_NUMBER: _ClassVar[int]
    ENTITY_NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIBED_BY_TEXT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    MATCHED_NAME_FIELD_NUMBER: _ClassVar[int]
    MATCHED_ALIAS_FIELD_NUMBER: _ClassVar[int]
    ENTITY_TYPE_ID_FIELD_NUMBER: _ClassVar[int]
    entity_id: str
    entity_name: str
    described_by_text: str
    score: float
    matched_name: str
    matched_alias: str
    entity_type_id: str
    def __init__(self, entity_id: _Optional[str] = ..., entity_name: _Optional[str] = ..., described_by_text: _Optional[str] = ..., score: _Optional[float] = ..., matched_name: _Optional[str] = ..., matched_alias: _Optional[str] = ..., entity_type_id: _Optional[str] = ...) -> None: ...

class FindEntityCandidatesResponse(_message.Message):
    __slots__ = ("candidates",)
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    candidates: _containers.RepeatedCompositeFieldContainer[EntityCandidate]
    def __init__(self, candidates: _Optional[_Iterable[_Union[EntityCandidate, _Mapping]]] = ...) -> None: ...
