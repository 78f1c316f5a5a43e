#!/usr/bin/env bash
# Create .venv and install loregraph with its local models. Idempotent: re-runs only when pyproject changes.
# `setup.sh` installs what the demo needs; `setup.sh --with-tests` adds the test tools and the real local LLM
# server of tests/test_llm_real.py (llama-cpp-python compiles llama.cpp: several minutes, once).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
extras="export"
if [ "${1:-}" = "--with-tests" ]; then
  extras="export,test,llm-test"
fi
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$PY" -m venv .venv
fi
. .venv/bin/activate
stamp=.venv/.loregraph-setup-${extras//,/-}
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing loregraph and its local models into .venv (first run: a few minutes; later runs skip this)" >&2
  # pip's own chatter (and warnings from a machine's pip configuration) goes to a log, shown only on failure
  log=.venv/setup-pip.log
  : > "$log"
  pip_quiet() {
    if ! python -m pip install --quiet "$@" >>"$log" 2>&1; then
      echo "setup: pip install $* failed; the last lines of $log:" >&2
      tail -n 30 "$log" >&2
      exit 1
    fi
  }
  pip_quiet --upgrade pip
  # torch first, pinned, so pip takes the local CPU wheel instead of CUDA packages (only used to export ONNX once)
  echo "setup: torch (CPU wheel, used once to export the embedding model)" >&2
  pip_quiet torch==2.13.0
  if [ "$extras" != "export" ]; then
    echo "setup: the test tools and llama-cpp-python (compiled once: several minutes)" >&2
  fi
  echo "setup: loregraph[$extras] and its dependencies" >&2
  pip_quiet -e ".[$extras]"
  echo "$want" > "$stamp"
fi
# Export the bundled embedding model to ONNX once (cached under ~/.cache/loregraph); no network needed.
if ! HF_HUB_OFFLINE=1 loregraph models prepare --check >/dev/null 2>&1; then
  echo "setup: exporting the embedding model to ONNX (once, ~20 s)" >&2
fi
HF_HUB_OFFLINE=1 loregraph models prepare >/dev/null
# The graph explorer's browser tests (tests/test_explorer_ui.py) drive Debian's chromium through Playwright; as root
# it is installed here, otherwise those tests skip and say why.
if [ "$extras" != "export" ] && ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian's chromium for the explorer's browser tests" >&2
    { DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1; }; } ||
      echo "setup: could not install chromium; the explorer's browser tests will skip" >&2
  else
    echo "setup: no chromium found: the explorer's browser tests will skip (as root: apt-get install -y chromium)" >&2
  fi
fi
