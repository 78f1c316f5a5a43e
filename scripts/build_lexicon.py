#!/usr/bin/env python3
"""Generate ``src/loregraph/extract/data/packages.txt``: names of widely used software packages.

Source: package-registry metadata lists (one package per line, tab-separated):

* PyPI: ``name, version, month, rank_among_15000_most_downloaded, summary`` — packages whose
  download rank is at most ``--pypi-rank`` (default 4000);
* npm: ``name, version, downloads_a_month, summary`` — unscoped packages with at least
  ``--npm-downloads`` downloads a month (default 5,000,000).

Names that are ordinary English words or common proper names, or contain a proper name as a part
(checked case-insensitively against
the system word lists, e.g. Debian's ``wamerican``/``wbritish`` in ``/usr/share/dict``), very short
names, names made only of dictionary words joined by ``-``/``_``, typing stubs, plugins of other
packages and generic technical words are dropped: what is left are brand-like package names
("numpy", "pydantic", "lodash") that are safe to recognise as tools in free text.

usage: python scripts/build_lexicon.py [--pypi PATH] [--npm PATH] [--dict PATH ...] [--out PATH]
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PKG_DIR = Path("/work/.library/env/packages")
DEFAULT_DICTS = [Path("/usr/share/dict/american-english"), Path("/usr/share/dict/british-english")]
OUT = ROOT / "src" / "loregraph" / "extract" / "data" / "packages.txt"

# Generic technical words that are package names but not products worth an entity.
GENERIC = {
    "json", "yaml", "toml", "http", "https", "html", "xml", "csv", "uuid", "utils", "util", "core",
    "test", "tests", "testing", "api", "sdk", "cli", "async", "asyncio", "base", "common", "config",
    "debug", "error", "errors", "types", "typing", "logging", "setup", "tools", "helpers", "python",
    "node", "semver", "glob", "tslib", "jsonschema", "dotenv", "regex", "markdown", "docs", "lint",
    "path", "mime", "stream", "buffer", "events", "crypto", "proxy", "cache", "color", "colors",
    "prompt", "shell", "server", "client", "socket", "email", "parse", "chalk", "ansi", "wheel",
    "pip", "tqdm", "six", "mock", "nose", "idna", "zipp", "attrs", "jmespath", "mdurl", "ujson",
    "orjson", "docutils", "pytz", "tzdata", "urllib3", "certifi", "cffi", "pycparser", "decorator",
}
PLUGIN_PREFIXES = ("types-", "pytest-", "flake8-", "sphinx-", "mypy-", "jupyterlab-", "django-",
                   "flask-", "apache-airflow-providers", "google-", "azure-", "aws-", "opentelemetry-",
                   "eslint-", "babel-", "@", "is-", "has-", "get-", "p-", "es-", "lodash.", "jest-",
                   "webpack-", "postcss-", "rollup-", "vite-", "gatsby-", "grpcio-", "backports",
                   "mypy_", "ruamel", "jaraco", "zope", "sphinxcontrib", "nvidia-", "oslo")


PROPER: set[str] = set()  # capitalised dictionary entries: first names, places, myths


def load_words(paths: list[Path]) -> set[str]:
    words: set[str] = set()
    for p in paths:
        if p.exists():
            for line in p.read_text(encoding="utf-8", errors="ignore").splitlines():
                raw = line.strip()
                w = raw.casefold()
                if w.endswith("'s"):
                    w = w[:-2]
                if w:
                    words.add(w)
                    if raw[:1].isupper():
                        PROPER.add(w)
    if not words:
        sys.exit("no dictionary found: install a word list (Debian: apt-get install wamerican wbritish)")
    return words


def keep(name: str, words: set[str]) -> bool:
    n = name.casefold()
    if len(n) < 4 or n in GENERIC or n in words:
        return False
    if n.startswith(PLUGIN_PREFIXES) or "/" in n:
        return False
    if not re.fullmatch(r"[a-z][a-z0-9.\-_]*[a-z0-9]", n):
        return False
    parts = [p for p in re.split(r"[-_.]", n) if p]
    if any(p in PROPER for p in parts):
        return False  # "<name>-<suffix>": a person's or place's name would be mistaken for a tool
    if all(p in words or p.isdigit() or p in GENERIC or len(p) <= 2 for p in parts):
        return False
    # a plural or simple inflection of a dictionary word ("requests", "pluggy" stays)
    for suf in ("s", "es", "ed", "ing", "er", "ify", "ly", "y"):
        if n.endswith(suf) and n[: -len(suf)] in words and len(n) - len(suf) >= 3:
            return False
    return not (n.startswith("py") and n[2:] in words and len(n) <= 6)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pypi", type=Path, default=DEFAULT_PKG_DIR / "pypi.tsv")
    ap.add_argument("--npm", type=Path, default=DEFAULT_PKG_DIR / "npm.tsv")
    ap.add_argument("--pypi-rank", type=int, default=4000)
    ap.add_argument("--npm-downloads", type=int, default=5_000_000)
    ap.add_argument("--dict", type=Path, action="append", dest="dicts")
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args()
    words = load_words(a.dicts or DEFAULT_DICTS)
    csv.field_size_limit(10**7)

    names: dict[str, str] = {}
    with a.pypi.open(encoding="utf-8", errors="ignore") as f:
        r = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(r, None)
        for row in r:
            if len(row) < 4 or not row[3].strip().isdigit():
                continue
            if int(row[3]) <= a.pypi_rank and keep(row[0], words):
                names.setdefault(row[0].casefold(), "pypi")
    with a.npm.open(encoding="utf-8", errors="ignore") as f:
        r = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(r, None)
        for row in r:
            if len(row) < 3 or not row[2].strip().isdigit():
                continue
            if int(row[2]) >= a.npm_downloads and keep(row[0], words):
                names.setdefault(row[0].casefold(), "npm")

    header = [
        "# Widely used software packages (tool names), generated by scripts/build_lexicon.py.",
        f"# Source: PyPI download ranks (rank <= {a.pypi_rank}) and npm monthly downloads",
        f"# (>= {a.npm_downloads:,}) from package-registry metadata lists; English dictionary words,",
        "# common names, generic technical words and plugin/stub packages removed. Do not edit by hand.",
    ]
    a.out.write_text("\n".join(header + sorted(names)) + "\n", encoding="utf-8")
    print(f"wrote {len(names)} names to {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
