"""One-time export of a sentence-transformers model to ONNX with torch, int8 quantisation checked against the
reference model, written atomically into the cache (``loregraph models prepare``). Only this module needs torch."""

from __future__ import annotations

import contextlib
import inspect
import json
import logging
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from loregraph.errors import ModelUnavailableError
from loregraph.models.model_files import (
    _EXPORT_RECIPE,
    _FP32_FILE,
    _INT8_FILE,
    _OPSET,
    DEFAULT_MAX_SEQ_LENGTH,
    DEFAULT_MODEL_NAME,
    existing_onnx,
    export_dir,
    file_lock,
    read_json,
    read_pooling,
    resolve_model_dir,
)
from loregraph.models.onnx_runtime import OnnxRunner, pool_and_normalize

logger = logging.getLogger("loregraph.models")
_MIN_INT8_COSINE = 0.98

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
        raise ModelUnavailableError(
            f"The ONNX model is not prepared and torch is not installed. {_EXPORT_HINT}") from exc
    return torch


def _reference_encoder(model_dir: Path, torch: Any, hf_model: Any, pooling: str) -> Callable[[list[str]], np.ndarray]:
    """sentence-transformers' own encode when installed, else the same math on the torch model."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        SentenceTransformer = None  # type: ignore[misc, assignment]

    if SentenceTransformer is not None:
        st = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)

        def encode_st(texts: list[str]) -> np.ndarray:
            vecs = st.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
            return np.asarray(vecs, dtype=np.float32)

        return encode_st

    from transformers import AutoTokenizer

    hf_tok = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    max_len = int(read_json(model_dir / "sentence_bert_config.json").get("max_seq_length", 256))

    def encode_hf(texts: list[str]) -> np.ndarray:
        batch = hf_tok(texts, padding=True, truncation=True, max_length=max_len, return_tensors="pt")
        with torch.no_grad():
            hidden = hf_model(**batch).last_hidden_state.numpy()
        return pool_and_normalize(hidden, batch["attention_mask"].numpy(), pooling)

    return encode_hf


def _min_cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.min(np.sum(a * b, axis=1)))


def _candidate_cosine(path: Path, model_dir: Path, max_len: int, pooling: str, ref: np.ndarray) -> float:
    runner = OnnxRunner(path, model_dir, max_len, pooling)
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
    src = resolve_model_dir(model_name, model_dir)
    target_dir = export_dir(model_name, src)
    if not force:
        existing = existing_onnx(target_dir, quantize)
        if existing is not None:
            return existing
    target_dir.mkdir(parents=True, exist_ok=True)
    with file_lock(target_dir / ".lock"):
        if not force:  # another process may have finished the export while we waited
            existing = existing_onnx(target_dir, quantize)
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
        raise ModelUnavailableError(f"transformers is required to export the ONNX model. {_EXPORT_HINT}") from exc

    with contextlib.suppress(Exception):  # no "Loading weights" progress bars in CLI output
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    pooling = read_pooling(src)
    max_len = int(read_json(src / "sentence_bert_config.json").get("max_seq_length", DEFAULT_MAX_SEQ_LENGTH))
    # Eager attention traces to plain MatMul/Softmax (no sdpa control flow baked into the graph).
    model = AutoModel.from_pretrained(str(src), local_files_only=True, attn_implementation="eager").eval()
    use_token_types = "token_type_ids" in inspect.signature(model.forward).parameters

    class _Wrapper(torch.nn.Module):  # type: ignore[name-defined]
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
            raise ModelUnavailableError(f"ONNX export of {model_name} disagrees with the model (cosine {fp32_cos:.4f})")

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

