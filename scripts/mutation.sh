#!/usr/bin/env bash
# Mutation testing (mutmut) of one module: plants small bugs in its code one at a time and runs the tests that
# reach the mutated function; a mutant no test notices "survives". Not part of CI (too slow on two cores).
#
#   scripts/mutation.sh auth|schema|ingest|search|store-sql     run one module (resumes where it stopped)
#   scripts/mutation.sh MODULE --fresh                          start that module again from scratch
#   scripts/mutation.sh MODULE --show                           the summary of the last run, no new run
#   scripts/mutation.sh MODULE --survivors [TEXT]               test the last run's survivors again (after new
#                                                               tests), only those whose name contains TEXT if given
#   scripts/mutation.sh ingest/knowledge.py ...                 one file of ingest/ or search/ (the module's tests,
#                                                               its own copy .mutation/ingest-knowledge): a run that
#                                                               can finish on a busy machine
#   scripts/mutation.sh MODULE --sample [N]                     run a random sample of N (100) mutants not run yet;
#                                                               the summary then estimates the whole module's score
#   MUTATION_WORKERS=2 scripts/mutation.sh ...                  more worker processes (default 1)
#
# Cost: mutmut runs, for each mutant, only the listed tests that reached the mutated function (recorded in a first
# pass), stops at the first failure (-x), and forks each run from one server process that has already imported
# pytest, the tests and loregraph (forkserver, "collect" warm-up), so a mutant pays only for its tests.
#
# Each module runs in its own copy of src/ and tests/ under .mutation/MODULE (git-ignored) with only the test
# files listed below, so runs of different modules do not share state. Prints killed / total and the survivors;
# `cd .mutation/MODULE && mutmut show NAME` prints the diff of one survivor.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
MODULE=${1:?usage: scripts/mutation.sh auth|schema|ingest|search|store-sql [--fresh|--show]}
MODE=${2:-}
ONLY=${3:-}
FILE=
case "$MODULE" in  # one file of a module: ingest/knowledge.py -> module ingest, file knowledge.py
  ingest/*.py|search/*.py) FILE=${MODULE#*/}; MODULE=${MODULE%%/*} ;;
esac

case "$MODULE" in
  auth)      MUTATE='src/loregraph/api/rest/auth.py'
             TESTS='tests/test_auth_keys.py tests/test_rest_auth.py' ;;
  schema)    MUTATE='src/loregraph/schema/*'
             TESTS='tests/test_schema_rules.py tests/test_schema.py tests/test_knowledge_schema.py' ;;
  ingest)    MUTATE='src/loregraph/ingest/*'
             TESTS='tests/test_pipeline.py tests/test_knowledge_behaviour.py tests/test_semantics.py tests/test_time_and_rules.py tests/test_turns.py tests/test_grpc.py'
             TESTS+=" tests/test_grpc_projection.py::test_blocks_are_projected_with_the_spec_payload tests/test_grpc_projection.py::test_compensation_at_each_failure_point tests/test_grpc_projection.py::test_candidates_search_the_projection_with_the_same_scores" ;;
  search)    MUTATE='src/loregraph/search/*'
             TESTS='tests/test_search.py tests/test_search_behaviour.py tests/test_ranking.py tests/test_semantics.py tests/test_isolation.py tests/test_grpc.py'
             TESTS+=" tests/test_grpc_projection.py::test_blocks_are_projected_with_the_spec_payload tests/test_grpc_projection.py::test_compensation_at_each_failure_point tests/test_grpc_projection.py::test_candidates_search_the_projection_with_the_same_scores" ;;
  store-sql) MUTATE='src/loregraph/store/sql.py'
             TESTS='tests/test_store.py tests/test_store_blocks.py tests/test_store_integrity.py tests/test_isolation.py tests/test_time_and_rules.py tests/test_store_tenant_ids.py tests/test_delete_locks.py' ;;
  *) echo "unknown module '$MODULE' (auth, schema, ingest, search, store-sql)" >&2; exit 2 ;;
esac

NAME=$MODULE
if [ -n "$FILE" ]; then
  [ -f "src/loregraph/$MODULE/$FILE" ] || { echo "no such file: src/loregraph/$MODULE/$FILE" >&2; exit 2; }
  MUTATE="src/loregraph/$MODULE/$FILE"; NAME="$MODULE-${FILE%.py}"
fi

PY=${PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || PY=python3
"$PY" -c 'import mutmut' 2>/dev/null || { echo "mutmut is missing: pip install -e '.[mutation]'" >&2; exit 2; }

WORK=$ROOT/.mutation/$NAME
if [ "$MODE" = "--fresh" ]; then rm -rf "$WORK"; fi
if [ "$MODE" != "--show" ]; then
  mkdir -p "$WORK"
  # a fresh copy of the code and the tests; mutmut keeps its results under $WORK/mutants and re-tests only
  # the functions whose code changed since the last run
  rm -rf "$WORK/src" "$WORK/tests"
  cp -a "$ROOT/src" "$ROOT/tests" "$WORK/"
  "$PY" - "$ROOT/pyproject.toml" "$WORK/pyproject.toml" "$MUTATE" $TESTS <<'EOF'
import re, sys
src, dst, mutate, *tests = sys.argv[1:]
text = open(src).read()
text = re.sub(r"(?ms)^\[tool\.mutmut\].*?(?=^\[|\Z)", "", text)
quoted = lambda xs: "[" + ", ".join(f'"{x}"' for x in xs) + "]"
text += f"""
[tool.mutmut]
source_paths = ["src/loregraph"]
only_mutate = {quoted([mutate])}
pytest_add_cli_args_test_selection = {quoted(tests)}
pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "-x"]
process_isolation = "forkserver"
forkserver_warmup = "collect"
"""
open(dst, "w").write(text)
EOF
  cd "$WORK"
  # the tests import loregraph from mutants/src (mutmut puts it first in the test process); servers a test
  # starts as subprocesses run the unmutated copy, so only in-process tests kill mutants
  export PYTHONPATH=$WORK/src:$WORK/tests HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false OMP_NUM_THREADS=1
  NAMES=()
  if [ "$MODE" = "--survivors" ]; then
    mapfile -t NAMES < <("$PY" - "$ONLY" "$ROOT/scripts" <<'EOF'
import json, pathlib, sys
from mutmut.stats import status_by_exit_code
sys.path.insert(0, sys.argv[2])
from mutation_report import bodies, case_only_sql  # equivalent survivors are not run again
for meta in sorted(pathlib.Path("mutants").rglob("*.meta")):
    funcs = bodies(meta.with_suffix(""))
    for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
        if (status_by_exit_code[code] in ("survived", "no tests", "suspicious") and sys.argv[1] in name
                and not case_only_sql(name, funcs)):
            print(name)
EOF
)
    echo "testing ${#NAMES[@]} survivor(s) again"
  elif [ "$MODE" = "--sample" ]; then
    # a uniform random sample of the mutants not run yet (fixed seed, added to mutants/sample.txt): an unbiased
    # estimate of the score of what a run in mutmut's order (fastest first) did not reach
    if ! find mutants -name '*.meta' 2>/dev/null | grep -q .; then
      "$PY" -m mutmut run --max-children 1 "no-such-mutant-*" >/dev/null 2>&1 || true  # generate, record coverage
    fi
    mapfile -t NAMES < <("$PY" - "${ONLY:-100}" <<'EOF'
import json, pathlib, random, sys
from mutmut.stats import status_by_exit_code
todo = sorted(name for meta in pathlib.Path("mutants").rglob("*.meta")
              for name, code in json.loads(meta.read_text())["exit_code_by_key"].items()
              if status_by_exit_code[code] == "not checked")
sample_file = pathlib.Path("mutants/sample.txt")
taken = set(sample_file.read_text().split()) if sample_file.exists() else set()
todo = [n for n in todo if n not in taken]
picked = random.Random(23 + len(taken)).sample(todo, min(int(sys.argv[1]), len(todo)))
with sample_file.open("a") as f:
    f.writelines(n + "\n" for n in picked)
print("\n".join(picked))
EOF
)
    echo "testing a random sample of ${#NAMES[@]} mutant(s) not run yet"
  fi
  [ "$MODE" = "--survivors" -o "$MODE" = "--sample" ] && [ ${#NAMES[@]} -eq 0 ] || "$PY" -m mutmut run --max-children "${MUTATION_WORKERS:-1}" "${NAMES[@]}" || echo "(mutmut run stopped: status $?)"
fi

cd "$WORK"
"$PY" "$ROOT/scripts/mutation_report.py"
