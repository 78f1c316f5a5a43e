"""Collection rules: names, descriptions, the ``metadata_schema`` shape and metadata checked against it."""

from __future__ import annotations

import json
import re
from typing import Any

from loregraph.errors import InvalidInputError
from loregraph.graph.messages import valid_text

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _\-.:]{0,99}$")
FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "number": (int, float), "integer": (int,), "boolean": (bool,), "array": (list,),
    "object": (dict,),
}
SYSTEM_FIELDS = frozenset({"source_url", "crawled_at", "crawl_root", "content_type", "depth"})


def text(field: str, value: object, *, max_chars: int | None = None) -> str:
    """A string every backend can store (valid Unicode, no NUL), or InvalidInputError naming the field."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{field}: must be a string")
    try:
        valid_text(value)
    except ValueError as exc:
        raise InvalidInputError(f"{field}: {exc}") from None
    if max_chars is not None and len(value) > max_chars:
        raise InvalidInputError(f"{field}: at most {max_chars} characters (got {len(value)})")
    return value


def storable_json(field: str, value: Any) -> Any:
    """JSON every backend can store: no NaN/infinity, no NUL characters, valid Unicode."""
    try:
        dumped = json.dumps(value, ensure_ascii=False, allow_nan=False)
        valid_text(dumped)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{field}: must be JSON without NaN, infinities or invalid text ({exc})") from None
    if "\\u0000" in dumped:
        raise InvalidInputError(f"{field}: must not contain NUL characters")
    return value


def validate_name(name: object, field: str = "collection") -> str:
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise InvalidInputError(f"{field}: must be 1-100 characters of letters, digits, space, '_', '-', '.' or ':', "
                                f"starting with a letter or digit (got {name!r})")
    return name


def validate_description(description: object) -> str:
    if not isinstance(description, str) or not description.strip():
        raise InvalidInputError("description: is required and must not be empty")
    text("description", description)
    if len(description) > 2000:
        raise InvalidInputError("description: must be at most 2000 characters")
    return description.strip()


def _field_spec(name: str, spec: Any) -> dict[str, Any]:
    """A custom field's spec: a type name, or {"type": ..., "required"?: bool, "enum"?: [...], "description"?}."""
    where = f"metadata_schema.custom.{name}"
    if isinstance(spec, str):
        spec = {"type": spec}
    if not isinstance(spec, dict):
        raise InvalidInputError(f"{where}: must be a type name or an object with 'type'")
    unknown = set(spec) - {"type", "required", "enum", "description"}
    if unknown:
        raise InvalidInputError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: type, required, enum, "
                                "description")
    if spec.get("type") not in FIELD_TYPES:
        raise InvalidInputError(f"{where}.type: must be one of {sorted(FIELD_TYPES)} (got {spec.get('type')!r})")
    if "required" in spec and not isinstance(spec["required"], bool):
        raise InvalidInputError(f"{where}.required: must be true or false")
    if "enum" in spec and (not isinstance(spec["enum"], list) or not spec["enum"]):
        raise InvalidInputError(f"{where}.enum: must be a non-empty list")
    return spec


def validate_metadata_schema(schema: object) -> dict[str, Any]:
    """``{"custom": {field: spec}, "system": [field, ...]}``; None gives the empty default."""
    if schema is None:
        return {"custom": {}, "system": []}
    storable_json("metadata_schema", schema)
    if not isinstance(schema, dict):
        raise InvalidInputError('metadata_schema: must be an object {"custom": {...}, "system": [...]}')
    if set(schema) != {"custom", "system"}:
        raise InvalidInputError(f'metadata_schema: must have exactly the keys "custom" and "system" '
                                f"(got {sorted(schema)})")
    custom, system = schema["custom"], schema["system"]
    if not isinstance(custom, dict):
        raise InvalidInputError("metadata_schema.custom: must be an object of field name → type")
    if not isinstance(system, list) or not all(isinstance(s, str) for s in system):
        raise InvalidInputError("metadata_schema.system: must be a list of field names")
    bad = [s for s in system if s not in SYSTEM_FIELDS]
    if bad:
        raise InvalidInputError(f"metadata_schema.system: unknown system field(s) {bad}; known: "
                                f"{sorted(SYSTEM_FIELDS)}")
    fields = {}
    for name, spec in custom.items():
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,63}", name):
            raise InvalidInputError(f"metadata_schema.custom: field name {name!r} must be an identifier")
        if name in SYSTEM_FIELDS:
            raise InvalidInputError(f"metadata_schema.custom.{name}: is a system field name")
        fields[name] = _field_spec(name, spec)
    return {"custom": fields, "system": list(system)}


def validate_metadata(metadata: object, schema: dict[str, Any], *, system: dict[str, Any] | None = None,
                      ) -> dict[str, Any]:
    """Check document metadata against a collection's schema: declared custom fields typed, required ones present;
    with declared fields, undeclared keys are refused. System fields are loregraph's own (added, never taken)."""
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise InvalidInputError("metadata: must be an object")
    storable_json("metadata", metadata)
    custom: dict[str, Any] = schema.get("custom", {})
    for key in metadata:
        if key in SYSTEM_FIELDS:
            raise InvalidInputError(f"metadata.{key}: is a system field, set by loregraph")
        if custom and key not in custom:
            raise InvalidInputError(f"metadata.{key}: not declared in the collection's metadata_schema.custom "
                                    f"(declared: {sorted(custom)})")
    for name, spec in custom.items():
        if name not in metadata:
            if spec.get("required"):
                raise InvalidInputError(f"metadata.{name}: is required by the collection's metadata_schema")
            continue
        value = metadata[name]
        types = FIELD_TYPES[spec["type"]]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise InvalidInputError(f"metadata.{name}: must be of type {spec['type']} (got {type(value).__name__})")
        if "enum" in spec and value not in spec["enum"]:
            raise InvalidInputError(f"metadata.{name}: must be one of {spec['enum']} (got {value!r})")
    return {**metadata, **(system or {})}


__all__ = ["validate_description", "validate_metadata", "validate_metadata_schema", "validate_name"]
