#!/usr/bin/env bash
# Score the working tree's offline extractor on the blind set (bench/extraction/blind/README.md), or on the set
# given (SET.jsonl with SET.final.json beside it, e.g. bench/extraction/open/probeset6.jsonl): a fresh database,
# `loregraph extract`, then the shared scorer's summary lines only. Needs ../shared beside the checkout.
set -euo pipefail
cd "$(dirname "$0")/../.."
scorer=../shared/bench/extraction/score_extraction.py
if [ ! -f "$scorer" ]; then
  echo "score-blind: $scorer is not here (the shared benchmark folder sits beside the checkout); nothing scored" >&2
  exit 0
fi
set_file="${1:-bench/extraction/blind/probeset5.jsonl}"
[ -f "$set_file" ] || { echo "score-blind: no such set: $set_file" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
PYTHONPATH=src HF_HUB_OFFLINE=1 .venv/bin/python -m loregraph extract "$set_file" --db "$work/set.db" > "$work/report.jsonl"
python3 "$scorer" "$set_file" "$work/report.jsonl" --final "${set_file%.jsonl}.final.json" | tail -8
