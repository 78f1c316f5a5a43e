"""The parts a ``Memory`` is made of, picked in one place: store (by URL scheme), schema, embedder, extractor.

Defaults: the bundled schema, the local ONNX embedder, and the offline ``LocalExtractor`` — or the one-call
``LLMExtractor`` when a model is configured in the environment (``LOREGRAPH_LLM_MODEL``), or a plug-in named in
settings (``extractor: "module:callable"``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loregraph.errors import ConfigError
from loregraph.extract.base import Extractor
from loregraph.extract.llm import LLMExtractor
from loregraph.ingest.pipeline import RateLimits
from loregraph.models.embedder import Embedder, get_default_embedder
from loregraph.models.llm import LLMConfig
from loregraph.schema import Schema
from loregraph.store import Store, open_store


@dataclass
class Components:
    """Everything ``Memory`` needs, ready to use (the store open and checked against the embedder)."""

    store: Store
    schema: Schema
    embedder: Embedder
    extractor: Extractor
    limits: RateLimits | None = None


def default_extractor() -> Extractor:
    """``LLMExtractor`` when a model is configured (``LOREGRAPH_LLM_MODEL``, see ``LLMConfig.from_env``), else the
    offline ``LocalExtractor``."""
    cfg = LLMConfig.from_env()
    if cfg is not None:
        return LLMExtractor(cfg)
    from loregraph.extract.local import LocalExtractor  # loads spaCy: only when it is the one chosen

    return LocalExtractor()


def load_object(spec: str, what: str) -> Any:
    """Import ``'module:attribute'`` (for plug-ins named in settings)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"{what}: expected 'module:callable', got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise ConfigError(f"{what}: cannot import module {module_name!r} ({exc})") from exc
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ConfigError(f"{what}: module {module_name!r} has no attribute {attr!r}") from None


def plugin_extractor(spec: str) -> Extractor:
    """The extractor named by a ``'module:callable'`` setting: the object itself, or what calling it returns."""
    factory = load_object(spec, "extractor")
    try:
        extractor = factory() if callable(factory) and not hasattr(factory, "extract") else factory
    except Exception as exc:
        raise ConfigError(f"extractor: {spec} failed to build an extractor ({exc})") from exc
    if not hasattr(extractor, "extract"):
        raise ConfigError(f"extractor: {spec} did not give an object with an extract() method")
    return extractor


def load_schema(schema: Schema | str | Path | None) -> Schema:
    if schema is None:
        return Schema.default()
    if isinstance(schema, Schema):
        return schema
    return Schema.load(schema)


def build_components(url: str | Path, *, schema: Schema | str | Path | None = None, embedder: Embedder | None = None,
                     extractor: Extractor | str | None = None, limits: RateLimits | None = None) -> Components:
    """Open (and migrate) the store at ``url`` and pick every part not given. ``extractor`` may be an object or a
    ``'module:callable'`` plug-in name. A database built with another embedding model is refused."""
    schema_obj = load_schema(schema)
    emb = embedder if embedder is not None else get_default_embedder()
    if isinstance(extractor, str):
        ext = plugin_extractor(extractor)
    else:
        ext = extractor if extractor is not None else default_extractor()
    store = open_store(url)
    try:
        store.ensure_embedder(emb.name, emb.dim)
    except Exception:
        store.close()
        raise
    return Components(store, schema_obj, emb, ext, limits)


__all__ = ["Components", "build_components", "default_extractor", "load_object", "load_schema", "plugin_extractor"]
