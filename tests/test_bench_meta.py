"""`automemo bench meta` runs end to end against the fake server and reports the ratio the
issue's target is stated in (diff vs rewrite completion tokens per valid child)."""

from __future__ import annotations

import json

from automemo.cli import main


def test_bench_meta_measures_both_modes_on_the_same_parents(tmp_path, capsys):
    out = tmp_path / "meta.json"
    assert main(["bench", "meta", "--parents", "murag,trajectory_retrieval", "--out", str(out)]) == 0
    figures = json.loads(out.read_text())
    for mode in ("diff", "rewrite"):
        f = figures[mode]
        assert f["proposals"] == 2 and f["generate_calls"] == 2
        assert f["valid_children"] == 2 and f["failures"] == []
    assert 0 < figures["ratio_diff_to_rewrite"] <= 0.40
    assert "meets the target" in capsys.readouterr().out


def test_bench_meta_with_a_small_declared_context_measures_the_compact_profile(tmp_path):
    out = tmp_path / "meta.json"
    assert main(["bench", "meta", "--parents", "murag", "--context-tokens", "8192", "--out", str(out)]) == 0
    figures = json.loads(out.read_text())
    for mode in ("diff", "rewrite"):
        f = figures[mode]
        assert f["valid_children"] == 1 and f["analysis_completion_tokens"] == 0, "one call, no analysis"
    assert figures["diff"]["prompt_tokens_per_valid_child"] < 3000
    assert 0 < figures["ratio_diff_to_rewrite"] <= 0.40
