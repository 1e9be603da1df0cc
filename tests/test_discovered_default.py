"""The discovered default the package ships (discovered/discovered.py; docs/label-free.md): its provenance
says what it was found on and how, and it scores as recorded on the sample's test split; the
bench that finds it again chooses what holds across conversations, cheapest within one SE."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from automemo.measurements.discovered_default import Candidate, by_conversation, choose, data_digest
from automemo.paths import shipped_data
from automemo.programs import discovered_path, read_provenance

PROVENANCE = read_provenance(discovered_path().read_text())


def test_the_shipped_file_says_where_it_comes_from():
    for key in ("what", "data", "data_sha256", "chosen_on", "command", "commit", "draws", "steps",
                "validation", "validation_lead", "test", "test_hand_design", "test_lead", "test_lead_se", "cost"):
        assert key in PROVENANCE, key
    assert PROVENANCE["data"] == "@mem-gallery-sample"
    assert PROVENANCE["data_sha256"] == data_digest(Path(shipped_data("@mem-gallery-sample")))
    assert PROVENANCE["command"].startswith("automemo bench discovered-default")
    assert "train conversations" in PROVENANCE["chosen_on"]
    assert set(PROVENANCE["validation_lead_by_conversation"])
    assert len(PROVENANCE["commit"].removesuffix("+dirty")) == 40
    # Chosen to beat the best hand design on conversations it never saw, and it did when found.
    assert PROVENANCE["test"] - PROVENANCE["test_hand_design"] == pytest.approx(PROVENANCE["test_lead"], abs=1e-5)
    assert {"discovered", "hand_design"} <= set(PROVENANCE["cost"])


@pytest.mark.slow
def test_it_scores_as_recorded_on_the_samples_test_split(tmp_path):
    out = tmp_path / "eval.json"
    done = subprocess.run([sys.executable, "-m", "automemo", "eval", "discovered", "--preset", "memgallery-sample",
                           "--split", "test", "--sandbox", "bwrap", "--out", str(out), "--workdir", str(tmp_path / "w")],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["program_kind"] == "discovered"
    assert doc["table"]["score"]["mean"] == pytest.approx(PROVENANCE["test"], abs=1e-6)


def _candidate(node, leads, recall_ms, hand=False):
    return Candidate(0, node, f"#{node}", f"source {node}", 0.8, dict(enumerate(leads)), {"recall_cpu_ms": recall_ms},
                     hand)


def test_choose_prefers_what_holds_on_every_conversation_then_the_cheapest_within_one_se():
    steady = _candidate(1, [0.05, 0.06, 0.05, 0.06], recall_ms=9.0)      # lead .055, SE .0029: bound .0521
    lucky = _candidate(2, [0.30, -0.05, -0.04, 0.03], recall_ms=1.0)     # lead .06, SE .08: bound < 0
    cheap = _candidate(3, [0.045, 0.06, 0.05, 0.06], recall_ms=2.0)      # lead .054 (bound .050): within one SE
    hand = _candidate(4, [0, 0, 0, 0], recall_ms=0.5, hand=True)
    leader, chosen = choose([steady, lucky, cheap, hand])
    assert leader is steady
    assert chosen is cheap
    # Nothing holds across conversations: the hand design is the leader and is chosen.
    leader, chosen = choose([lucky, hand])
    assert leader is hand and chosen is hand


def test_leads_are_taken_per_conversation():
    bar = {"a/Q1": 0.5, "a/Q2": 0.5, "b/Q1": 1.0}
    assert by_conversation({"a/Q1": 1.0, "a/Q2": 0.0, "b/Q1": 1.0, "c/Q9": 1.0}, bar) == {"a": 0.0, "b": 0.0}


@pytest.mark.slow
def test_the_bench_finds_and_writes_a_default_with_its_provenance(tmp_path):
    from automemo.programs import defines_memo

    out = tmp_path / "found.py"
    done = subprocess.run([sys.executable, "-m", "automemo", "bench", "discovered-default", "--draws", "1", "--steps", "2",
                           "--sandbox", "bwrap", "--out", str(out), "--workdir", str(tmp_path / "w")],
                          capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    source = out.read_text()
    provenance = read_provenance(source)
    assert provenance["command"] == "automemo bench discovered-default --draws=1 --steps=2"
    assert provenance["data_sha256"] == PROVENANCE["data_sha256"]
    assert 0.0 <= provenance["test"] <= 1.0 and "hand_design" in provenance["cost"]
    assert defines_memo(source) == ""
    assert "test split (350 questions no draw read)" in done.stdout
    # The runs never swept the default being found again.
    config = json.loads((tmp_path / "w" / "runs" / "draw-0" / "config.json").read_text())
    assert config["search"]["sweep_discovered"] is False
