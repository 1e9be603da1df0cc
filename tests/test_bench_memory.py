"""`automemo bench memory`: a program (seed name, .py file or export) fed a synthetic life, its
figures per size written as JSON; the restored memory answers as the original."""

from __future__ import annotations

import json

import pytest

from automemo.cli import UserError
from automemo.cli import main as cli_main
from automemo.measurements.life import TURNS, Life
from automemo.measurements.memory import program_source
from automemo.paths import SEEDS_DIR


def test_bench_memory_writes_figures_per_size(tmp_path):
    out = tmp_path / "figures.json"
    assert cli_main(["bench", "memory", "hybrid_rag", "--sizes", "60,200", "--queries", "3",
                     "--sandbox", "unsafe", "--out", str(out)]) == 0
    figures = json.loads(out.read_text())
    # whole 20-turn sessions up to each size; the 3 one-turn remembers of each size count after it
    assert [row["units"] for row in figures["sizes"]] == [60, 203]
    for row in figures["sizes"]:
        assert row["restored_equal"] is True and row["snapshot_mb"] > 0 and row["rss_kb"] > 0
        assert row["retrieve_p95_ms"] >= row["retrieve_p50_ms"] > 0
    assert figures["p50_ratio_1e5_1e4"] is None  # neither 10^4 nor 10^5 was measured


def test_program_source_reads_seeds_files_and_refuses_the_rest(tmp_path):
    assert program_source("bm25_rag") == ("bm25_rag", (SEEDS_DIR / "bm25_rag.py").read_text())
    mine = tmp_path / "mine.py"
    mine.write_text("# a program")
    assert program_source(str(mine)) == ("mine", "# a program")
    with pytest.raises(UserError, match="neither a seed"):
        program_source("no_such_seed")
    with pytest.raises(UserError, match="not an exported memo program"):
        program_source(str(tmp_path))


def test_a_life_is_sessions_of_several_users_and_is_deterministic():
    a, b = Life(seed=3), Life(seed=3)
    sessions = [a.session() for _ in range(4)]
    assert [s.to_dict() for s in sessions] == [b.session().to_dict() for _ in range(4)]
    assert all(len(s.steps) == TURNS for s in sessions)
    assert len({s.metadata["user"] for s in sessions}) == 4
    assert a.remember().steps[0].observation != a.remember().steps[0].observation
