"""`automemo bench meta` runs end to end against the fake server: both modes on the same parents,
and the figures it reports follow from the ledger's counts. The diff/rewrite ratio itself is a
measurement of a model, not of the fake (whose answers fix it): docs/llm.md gives the command."""

from __future__ import annotations

import json

import pytest

from automemo.cli import main


def test_bench_meta_measures_both_modes_on_the_same_parents(tmp_path, capsys):
    out = tmp_path / "meta.json"
    assert main(["bench", "meta", "--parents", "murag,trajectory_retrieval", "--out", str(out)]) == 0
    figures = json.loads(out.read_text())
    for mode in ("diff", "rewrite"):
        f = figures[mode]
        assert f["proposals"] == 2 and f["generate_calls"] == 2
        assert f["valid_children"] == 2 and f["failures"] == []
        assert f["completion_tokens_per_valid_child"] == pytest.approx(
            f["generate_completion_tokens"] / f["valid_children"])
    assert figures["ratio_diff_to_rewrite"] == pytest.approx(
        figures["diff"]["completion_tokens_per_valid_child"]
        / figures["rewrite"]["completion_tokens_per_valid_child"])
    printed = capsys.readouterr().out
    # Against the built-in fake the ratio is shown, never judged against the target.
    assert f"{figures['ratio_diff_to_rewrite']:.2f}" in printed and "target" not in printed
    assert "not a measurement" in printed


def test_bench_meta_with_a_small_declared_context_measures_the_compact_profile(tmp_path):
    out = tmp_path / "meta.json"
    assert main(["bench", "meta", "--parents", "murag", "--context-tokens", "8192", "--out", str(out)]) == 0
    figures = json.loads(out.read_text())
    for mode in ("diff", "rewrite"):
        f = figures[mode]
        assert f["valid_children"] == 1 and f["analysis_completion_tokens"] == 0, "one call, no analysis"
    assert figures["diff"]["prompt_tokens_per_valid_child"] < 3000
