#!/usr/bin/env bash
# Regenerate the gRPC stubs of src/loregraph/api/grpc/knowledge.proto (checked in; tests/test_grpc_stubs.py fails
# when they are stale). Needs grpcio-tools (the `test` extra).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
"$PY" -m grpc_tools.protoc -I src --python_out=src --pyi_out=src --grpc_python_out=src \
  src/loregraph/api/grpc/knowledge.proto
