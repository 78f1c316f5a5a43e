#!/usr/bin/env bash
# Score the working tree's offline extractor on the blind set (bench/extraction/blind/README.md): a fresh database,
# `loregraph extract`, then the shared scorer's summary lines only. Needs ../shared beside the checkout.
set -euo pipefail
cd "$(dirname "$0")/../.."
scorer=../shared/bench/extraction/score_extraction.py
if [ ! -f "$scorer" ]; then
  echo "score-blind: $scorer is not here (the shared benchmark folder sits beside the checkout); nothing scored" >&2
  exit 0
fi
set_dir=bench/extraction/blind
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
PYTHONPATH=src HF_HUB_OFFLINE=1 .venv/bin/python -m loregraph extract "$set_dir/probeset5.jsonl" --db "$work/blind.db" \
  > "$work/report.jsonl"
python3 "$scorer" "$set_dir/probeset5.jsonl" "$work/report.jsonl" --final "$set_dir/probeset5.final.json" | tail -8
