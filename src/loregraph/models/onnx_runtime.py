"""ONNX Runtime inference: tokenizer → session → pooling → L2 normalisation (no torch)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

BATCH_SIZE = 32


def _ort_threads() -> int:
    """Intra-op threads of the session: ``LOREGRAPH_ORT_THREADS``, else one. Measured on the 2-core machine, a
    second thread made every call slower (a message 2.2 -> 1.8 ms, three names 2.3 -> 1.9 ms, 32 document chunks no
    faster; bench ingest CPU per message 13.1 -> 11.8 ms); vectors are the same whatever the count."""
    env = os.environ.get("LOREGRAPH_ORT_THREADS")
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    return 1


class OnnxRunner:
    """Tokenize → ONNX forward → pooling → L2 normalize, batched by length. No caching here."""

    def __init__(self, onnx_path: Path, model_dir: Path, max_seq_length: int, pooling: str) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=max_seq_length)
        pad = tokenizer.padding or {}
        pad_token = pad.get("pad_token") or "[PAD]"
        pad_id = pad.get("pad_id")
        if pad_id is None:
            pad_id = tokenizer.token_to_id(pad_token) or 0
        tokenizer.enable_padding(pad_id=pad_id, pad_token=pad_token)  # pad to the longest in each batch
        self.tokenizer = tokenizer
        padding = tokenizer.padding or {}
        self.pad_id = int(padding.get("pad_id", pad_id))
        self.pad_type_id = int(padding.get("pad_type_id", 0))

        options = ort.SessionOptions()
        options.intra_op_num_threads = _ort_threads()
        options.inter_op_num_threads = 1
        # Idle ORT workers otherwise spin after each call and starve spaCy on a 2-core machine
        # (measured: bench ingest 42 -> 77 messages/s with spinning off).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self.input_names = {i.name for i in self.session.get_inputs()}
        self.pooling = pooling

    def __call__(self, texts: Sequence[str], batch_size: int = BATCH_SIZE) -> np.ndarray:
        dim_out: np.ndarray | None = None
        # Sort by length so each padded batch holds similar lengths (less wasted compute).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            vecs = self._forward([texts[i] for i in idx])
            if dim_out is None:
                dim_out = np.empty((len(texts), vecs.shape[1]), dtype=np.float32)
            dim_out[idx] = vecs
        assert dim_out is not None
        return dim_out

    def encode(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Token ids, attention mask and token type ids of ``texts``, padded on the right to the longest: what the
        tokenizer's ``encode_batch`` gives, but each text encoded on this thread (``encode_batch`` hands its work to
        the tokenizer's thread pool, whose sleeping workers cost more to wake than tokenizing a few short texts)."""
        encodings = [self.tokenizer.encode(t) for t in texts]
        width = max((len(e.ids) for e in encodings), default=0)
        ids = np.full((len(encodings), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        type_ids = np.full((len(encodings), width), self.pad_type_id, dtype=np.int64)
        for row, e in enumerate(encodings):
            n = len(e.ids)
            ids[row, :n] = e.ids
            mask[row, :n] = e.attention_mask
            type_ids[row, :n] = e.type_ids
        return ids, mask, type_ids

    def _forward(self, texts: list[str]) -> np.ndarray:
        ids, mask, type_ids = self.encode(texts)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = type_ids
        feeds = {k: v for k, v in feeds.items() if k in self.input_names}
        hidden = self.session.run(None, feeds)[0].astype(np.float32, copy=False)
        return pool_and_normalize(hidden, mask, self.pooling)


def pool_and_normalize(hidden: np.ndarray, mask: np.ndarray, pooling: str) -> np.ndarray:
    """Same math as sentence-transformers' Pooling(mean|cls) followed by Normalize."""
    if pooling == "cls":
        pooled = hidden[:, 0, :]
    else:
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)

