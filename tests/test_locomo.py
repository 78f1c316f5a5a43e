"""LoCoMo benchmark: date parsing, and a smoke run on one conversation (reads ../shared; skips without it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conftest import SHARED
from loregraph.bench.locomo import data_candidates, locate_data, parse_session_time

DATA = SHARED / "bench" / "locomo" / "locomo10.json"


@pytest.mark.parametrize(("text", "expected"), [
    ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ("12:09 am on 13 September, 2023", datetime(2023, 9, 13, 0, 9, tzinfo=UTC)),
    ("12:30 pm on 1 Jan, 2024", datetime(2024, 1, 1, 12, 30, tzinfo=UTC)),
])
def test_session_times_parse(text, expected):
    assert parse_session_time(text) == expected


def test_bad_session_time_is_a_clear_error():
    with pytest.raises(ValueError, match="session date-time"):
        parse_session_time("yesterday")


@pytest.mark.skipif(not DATA.exists(), reason="reads ../shared/bench/locomo/locomo10.json, absent here")
def test_locomo_smoke_run_on_one_conversation(tmp_path):
    out = subprocess.run([sys.executable, "-m", "loregraph.cli", "bench", "locomo", "--conversations", "1",
                          "--questions", "40", "--db", str(tmp_path / "l.db")],
                         capture_output=True, text=True, timeout=600, check=True)
    lines = out.stdout.strip().splitlines()
    assert re.fullmatch(r"locomo recall_at_k=[\d.]+ bm25_recall_at_k=[\d.]+ vector_recall_at_k=[\d.]+ "
                        r"k=10 questions=\d+", lines[-2]), lines[-2]  # the line kept from before issue 16
    last = lines[-1]
    m = re.fullmatch(r"locomo recall_at_k=([\d.]+) bm25_recall_at_k=([\d.]+) vector_recall_at_k=([\d.]+) "
                     r"k=10 questions=(\d+) paper_recall_at_5=([\d.]+) paper_recall_at_10=([\d.]+) "
                     r"paper_recall_at_25=([\d.]+)", last)
    assert m, last
    recall, bm25, vector, n = float(m[1]), float(m[2]), float(m[3]), int(m[4])
    paper5, paper10, paper25 = float(m[5]), float(m[6]), float(m[7])
    assert 0 < paper5 <= paper10 <= paper25 <= 1  # the paper's aggregate: all five categories, k = 5/10/25
    err = " ".join(out.stderr.split())
    assert "paper aggregate (all five categories" in err and "adversarial" in err
    # measured on this slice (conversation 0, 40 questions): loregraph 0.635, BM25 0.558, vector 0.427
    assert n > 10 and recall >= 0.58 and recall > bm25 > vector
    dates = re.search(r"session dates in valid_at: (\d+)/(\d+)", out.stderr.replace("\n", " "))
    assert dates and dates[1] == dates[2]  # every checked turn carries its session's date-time


def test_data_is_found_from_the_current_directory(tmp_path):
    """Without --data, ../shared/bench/locomo/locomo10.json is looked for from where the command runs."""
    data = tmp_path / "shared" / "bench" / "locomo" / "locomo10.json"
    data.parent.mkdir(parents=True)
    data.write_text("[]")
    (tmp_path / "checkout").mkdir()
    path, missing = locate_data(None, cwd=tmp_path / "checkout")
    assert path == data.resolve() and not missing


def test_an_explicit_data_path_that_is_absent_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="--data: no file at"):
        locate_data(tmp_path / "nope.json")


def test_the_checkout_root_is_a_candidate_when_run_from_elsewhere(tmp_path):
    """Run from any directory, a source checkout still finds its sibling ../shared."""
    root = Path(__file__).resolve().parents[1]
    assert (root / ".." / "shared" / "bench" / "locomo" / "locomo10.json").resolve() in data_candidates(tmp_path)


def test_bench_without_data_skips_with_the_places_it_looked(tmp_path):
    """The CLI run from a directory with no ../shared and a copy of the package outside any checkout: a clear
    message, exit 0 (how CI's smoke test behaves without the data)."""
    import shutil

    pkg = tmp_path / "site" / "loregraph"
    shutil.copytree(Path(__file__).resolve().parents[1] / "src" / "loregraph", pkg,
                    ignore=shutil.ignore_patterns("__pycache__"))
    work = tmp_path / "x" / "y"
    work.mkdir(parents=True)
    out = subprocess.run([sys.executable, "-m", "loregraph.cli", "bench", "locomo", "--db", str(tmp_path / "l.db")],
                         capture_output=True, text=True, timeout=300, cwd=work,
                         env={**os.environ, "PYTHONPATH": str(tmp_path / "site")})
    assert out.returncode == 0, out.stderr
    err = " ".join(out.stderr.split())
    assert "LoCoMo data not found at" in err and "--data" in err and "skipping" in err
