"""Local models (embeddings). Importing this package does not import torch."""

from loregraph.models.embedder import (
    DEFAULT_MODEL_NAME,
    Embedder,
    EmbedderUnavailable,
    OnnxEmbedder,
    get_default_embedder,
    prepare_model,
)

__all__ = [
    "DEFAULT_MODEL_NAME",
    "Embedder",
    "EmbedderUnavailable",
    "OnnxEmbedder",
    "get_default_embedder",
    "prepare_model",
]
