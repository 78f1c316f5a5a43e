"""Summary of a mutmut run (scripts/mutation.sh): survivors, counts and the score, run from the run's directory.

A survivor that only changes the letter case of SQL text is reported as equivalent (keywords and unquoted names are
case-insensitive in SQLite and PostgreSQL) and the score is printed with and without those."""

from __future__ import annotations

import json
import math
import pathlib
import re

from mutmut.stats import status_by_exit_code

KILLED = {"killed", "timeout", "caught by type check", "segfault"}
NOT_RUN = {"not checked", "check was interrupted by user", "skipped"}
SQL = re.compile(r"\b(select|insert|update|delete|from|where|join|order by|group by|count|coalesce)\b| = \?", re.I)


def bodies(path: pathlib.Path) -> dict[str, list[str]]:
    """Mutant / original function name -> its body lines (def line left out), from mutmut's mutated copy."""
    out: dict[str, list[str]] = {}
    name, indent = None, 0
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        m = re.match(r"(\s*)def (\S+?__mutmut_(?:orig|\d+))\(", line)
        if m:
            name, indent = m.group(2), len(m.group(1))
            out[name] = []
        elif name and line.strip() and len(line) - len(line.lstrip()) <= indent:
            name = None
        elif name:
            out[name].append(line)
    return out


def case_only_sql(name: str, funcs: dict[str, list[str]]) -> bool:
    """The mutant only changes the letter case of lines of SQL text."""
    short = name.rsplit(".", 1)[-1]
    orig, mutant = funcs.get(re.sub(r"__mutmut_\d+$", "__mutmut_orig", short)), funcs.get(short)
    if orig is None or mutant is None or len(orig) != len(mutant):
        return False
    changed = [(a, b) for a, b in zip(orig, mutant, strict=True) if a != b]
    return bool(changed) and all(a.lower() == b.lower() and SQL.search(a) for a, b in changed)


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% confidence interval of a proportion k / n."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def main() -> None:
    counts: dict[str, int] = {}
    survivors: list[str] = []
    equivalent = 0
    sample_file = pathlib.Path("mutants/sample.txt")
    sample = set(sample_file.read_text().split()) if sample_file.exists() else set()
    in_sample = {"killed": 0, "run": 0, "equivalent": 0}
    for meta in sorted(pathlib.Path("mutants").rglob("*.meta")):
        funcs = bodies(meta.with_suffix(""))
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            status = status_by_exit_code[code]
            counts[status] = counts.get(status, 0) + 1
            sampled = name in sample and status not in NOT_RUN
            in_sample["run"] += sampled
            in_sample["killed"] += sampled and status in KILLED
            if status not in KILLED | NOT_RUN:
                if status == "survived" and case_only_sql(name, funcs):
                    equivalent += 1
                    in_sample["equivalent"] += sampled
                    status = "equivalent (SQL case)"
                survivors.append(f"{status:10} {name}{'  (sample)' if sampled else ''}")
    ran = sum(n for s, n in counts.items() if s not in NOT_RUN)
    killed = sum(n for s, n in counts.items() if s in KILLED)
    total = sum(counts.values())
    print("\n".join(survivors))
    print(json.dumps(counts, sort_keys=True))
    print(f"mutation score: {killed} killed / {ran} run ({100 * killed / max(ran, 1):.1f}%); "
          f"{total - ran} not run of {total}; {equivalent} survivors only change the case of SQL text "
          f"(equivalent): {killed} / {ran - equivalent} = {100 * killed / max(ran - equivalent, 1):.1f}% without them")
    if in_sample["run"]:
        k, n = in_sample["killed"], in_sample["run"] - in_sample["equivalent"]
        lo, hi = wilson(k, n)
        not_run = total - ran
        # the sample stands for itself and the mutants still not run; the rest were run and are counted exactly
        exact_k, exact_n = killed - k, ran - in_sample["run"] - (equivalent - in_sample["equivalent"])
        pool = n + not_run
        est = [(exact_k + k + p * not_run) / max(exact_n + pool, 1) for p in (k / max(n, 1), lo, hi)]
        print(f"random sample of the mutants not run in mutmut's order: {k} killed / {n} run "
              f"({100 * k / max(n, 1):.1f}%, 95% CI {100 * lo:.1f}-{100 * hi:.1f}%, SQL-case equivalents left out); "
              f"estimated score of all {total} mutants: {100 * est[0]:.1f}% (95% CI {100 * est[1]:.1f}-"
              f"{100 * est[2]:.1f}%)")


if __name__ == "__main__":
    main()
