#!/usr/bin/env bash
# Set up (if needed) and run the linter, the type checker, the layers check and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --with-tests
. .venv/bin/activate
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
ruff check src tests
mypy                 # src/, settings in pyproject.toml
lint-imports         # the layers of DESIGN.md (pyproject.toml [tool.importlinter])
python -m pytest "$@"
