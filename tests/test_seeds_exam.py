"""Every seed passes the quick exam in both isolating sandboxes (Docker and bubblewrap) on the
fixture episodes, which mix web episodes (steps, screenshots, rewards) and conversation sessions:
the seeds import only what the guest image carries and stay inside the budget there."""

from __future__ import annotations


import pytest

from automemo.cli.exam_cmd import load_inputs
from automemo.paths import EXAMPLE_EPISODES_DIR
from automemo.exam import CHECKS, quick_exam
from automemo.meta.source.tunables import parse_tunables
from automemo.paths import SEEDS_DIR
from automemo.toolkit.services import MemoServices
from sandboxtools import ISOLATING, sandbox
from seedtools import encoders

STORE = EXAMPLE_EPISODES_DIR
EPISODES, PARTIALS = load_inputs(STORE, "update", "retrieve", 5)
SEEDS = sorted(p.stem for p in SEEDS_DIR.glob("*.py") if not p.name.startswith("_"))


def test_every_seed_of_the_task_is_present():
    assert {"no_memory", "trajectory_retrieval", "reasoning_bank", "g_memory", "xskill", "m2",
            "acgm", "ontology_memory", "murag", "bm25_rag", "hybrid_rag"} <= set(SEEDS)


@pytest.mark.parametrize("seed", [s for s in SEEDS if s != "no_memory"])
def test_seed_declares_tunables_the_mutator_can_read(seed):
    source = (SEEDS_DIR / f"{seed}.py").read_text()
    tunables = parse_tunables(source)
    assert len(tunables) >= 3, f"{seed} gives the offline mutator too little to turn"
    assert source.lstrip().startswith('"""'), f"{seed} must open with its header docstring"


@pytest.mark.parametrize("backend", ISOLATING)
@pytest.mark.parametrize("seed", SEEDS)
def test_seed_passes_the_quick_exam(seed, backend):
    services = MemoServices(encoders(), None, STORE)
    report = quick_exam((SEEDS_DIR / f"{seed}.py").read_text(), sandbox(backend), EPISODES, PARTIALS,
                        services=services, store_root=STORE)
    assert report.passed, report.for_prompt()
    assert report.passed_checks == tuple(CHECKS)
