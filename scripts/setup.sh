#!/usr/bin/env bash
# Create .venv and install loregraph with its local models. Idempotent: re-runs only when pyproject changes.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$PY" -m venv .venv
fi
. .venv/bin/activate
stamp=.venv/.loregraph-setup
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing loregraph and its local models into .venv (first run: a few minutes; later runs skip this)" >&2
  python -m pip install --quiet --upgrade pip
  # torch first, pinned, so pip takes the local CPU wheel instead of CUDA packages (only used to export ONNX once)
  python -m pip install --quiet torch==2.13.0
  python -m pip install --quiet -e '.[export,test]'
  echo "$want" > "$stamp"
fi
# Export the bundled embedding model to ONNX once (cached under ~/.cache/loregraph); no network needed.
if ! HF_HUB_OFFLINE=1 loregraph models prepare --check >/dev/null 2>&1; then
  echo "setup: exporting the embedding model to ONNX (once, ~20 s)" >&2
fi
HF_HUB_OFFLINE=1 loregraph models prepare >/dev/null
