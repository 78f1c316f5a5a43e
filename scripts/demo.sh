#!/usr/bin/env bash
# Set up (if needed) and run the offline demo: ingest a conversation, show the graph, answer questions.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
. .venv/bin/activate
HF_HUB_OFFLINE=1 loregraph demo "$@"
