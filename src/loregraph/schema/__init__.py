"""Canonical schema: types, inheritance, property, edge and cardinality rules."""

from loregraph.errors import SchemaError, SchemaViolationError, Violation
from loregraph.schema.schema import CardinalityRule, Schema

__all__ = ["CardinalityRule", "Schema", "SchemaError", "SchemaViolationError", "Violation"]
