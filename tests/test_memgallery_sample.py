"""The embedded real example: ten Mem-Gallery scenarios shipped in the package (`@mem-gallery-sample`),
the `memgallery-sample` preset that searches them, and the plain-words comparison with the best
hand design on the held-out test split that ends the search."""

from __future__ import annotations

from pathlib import Path

import pytest

from automemo.paths import SHIPPED_DATA_DIR, shipped_data
from automemo.search.heldout import paired_difference, sentences


def test_the_sample_ships_ten_scenarios_with_their_licence_and_source():
    folder = Path(shipped_data("@mem-gallery-sample"))
    assert folder == SHIPPED_DATA_DIR / "mem-gallery-sample"
    assert len(list(folder.glob("*.json"))) == 10
    assert "MIT License" in (folder / "LICENSE").read_text()
    assert "Mem-Gallery" in (folder / "SOURCE.txt").read_text()
    assert shipped_data("/some/release") == "/some/release"  # a plain path is left alone
    with pytest.raises(FileNotFoundError, match="@mem-gallery-sample"):
        shipped_data("@nothing-like-it")


def test_the_preset_searches_the_sample_and_compares_on_test(capsys):
    from automemo.resolution import load_run_config
    from automemo.benchmarks import load

    config = load_run_config("memgallery-sample", None, {})
    assert config.benchmark.name == "memgallery" and config.benchmark.options["path"] == "@mem-gallery-sample"
    assert config.search.heldout_test and config.search.seed_sweep
    assert config.evaluation.retrieve_fraction == 1.0  # exact: the confirmation applies
    bench = load(config.benchmark.name, config.benchmark.options)
    split = bench.describe()["conversations"]
    assert (len(split["train"]), len(split["test"])) == (5, 5)
    with pytest.raises(ValueError, match="no shipped data set"):
        load("memgallery", {"path": "@missing"})


def test_the_search_flag_keeps_a_shipped_name_as_it_is():
    from automemo.cli.flags import benchmark_options

    assert benchmark_options(["path=@mem-gallery-sample"]) == {"path": "@mem-gallery-sample"}


def _doc(kept: bool, d: float, se: float) -> dict:
    programs = {"selection": {"node_id": 3 if kept else 14, "summary": "murag" if kept else "multi-view hybrid",
                              "validation": 0.6, "test": 0.55 if kept else 0.55 + d},
                "hand_design": {"node_id": 3, "summary": "murag", "validation": 0.6, "test": 0.55}}
    doc = {"kept_hand_design": kept, "programs": programs, "questions": 402}
    if kept:
        programs["best_candidate"] = {"node_id": 14, "summary": "multi-view hybrid", "validation": 0.61,
                                      "test": 0.55 + d}
        doc["best_candidate_vs_hand_design"] = {"difference": d, "se": se, "tasks": 402}
    else:
        doc["selection_vs_hand_design"] = {"difference": d, "se": se, "tasks": 402}
    return doc


def test_the_last_lines_say_in_plain_words_how_the_selection_compares():
    won = "\n".join(sentences(_doc(False, 0.023, 0.008)))
    assert "402 questions the search never saw" in won and "+0.023 ± 0.008" in won
    assert "the selected program beats the best hand design" in won
    close = "\n".join(sentences(_doc(False, 0.004, 0.008)))
    assert "does not beat the best hand design by more than one paired SE" in close
    kept = "\n".join(sentences(_doc(True, 0.01, 0.005)))
    assert "kept the best hand design #3 (murag): 0.550" in kept and "#14 (multi-view hybrid) scores 0.560" in kept


def test_the_paired_test_difference_by_hand():
    a = {"q1": 1.0, "q2": 1.0, "q3": 0.0, "q4": 1.0}
    b = {"q1": 1.0, "q2": 0.0, "q3": 0.0, "q4": 0.0, "q9": 1.0}
    d = paired_difference(a, b)  # diffs (0, 1, 0, 1): mean .5, sd sqrt(1/3), SE .2887
    assert d["tasks"] == 4 and d["difference"] == pytest.approx(0.5) and d["se"] == pytest.approx(0.288675, abs=1e-6)
