"""Canonical schema: types, inheritance, property, edge and cardinality rules."""

from loregraph.schema.schema import (
    CardinalityRule,
    Schema,
    SchemaError,
    SchemaViolationError,
    Violation,
)

__all__ = ["CardinalityRule", "Schema", "SchemaError", "SchemaViolationError", "Violation"]
