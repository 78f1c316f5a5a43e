"""Summary of a mutmut run (scripts/mutation.sh): survivors, counts and the score, run from the run's directory.

A survivor that only changes the letter case of SQL text is reported as equivalent (keywords and unquoted names are
case-insensitive in SQLite and PostgreSQL) and the score is printed with and without those."""

from __future__ import annotations

import json
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


def main() -> None:
    counts: dict[str, int] = {}
    survivors: list[str] = []
    equivalent = 0
    for meta in sorted(pathlib.Path("mutants").rglob("*.meta")):
        funcs = bodies(meta.with_suffix(""))
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            status = status_by_exit_code[code]
            counts[status] = counts.get(status, 0) + 1
            if status not in KILLED | NOT_RUN:
                if status == "survived" and case_only_sql(name, funcs):
                    equivalent += 1
                    status = "equivalent (SQL case)"
                survivors.append(f"{status:10} {name}")
    ran = sum(n for s, n in counts.items() if s not in NOT_RUN)
    killed = sum(n for s, n in counts.items() if s in KILLED)
    total = sum(counts.values())
    print("\n".join(survivors))
    print(json.dumps(counts, sort_keys=True))
    print(f"mutation score: {killed} killed / {ran} run ({100 * killed / max(ran, 1):.1f}%); "
          f"{total - ran} not run of {total}; {equivalent} survivors only change the case of SQL text "
          f"(equivalent): {killed} / {ran - equivalent} = {100 * killed / max(ran - equivalent, 1):.1f}% without them")


if __name__ == "__main__":
    main()
