"""An adaptation round's CPU (automemo/adapt/cpu.py): what a process tree used, read from /proc,
and the lowest priority Linux has."""

from __future__ import annotations

import subprocess
import sys

import pytest

from automemo.adapt.cpu import lowest_priority

BURN = "import time\nend = time.process_time() + 1.5\nwhile time.process_time() < end: pass\ninput()"

# Run in a process of its own: a test worker's tree holds other tests' processes, which come and
# go, so its readings are no baseline.
PROBE = f"""
import os, subprocess, sys, time
from automemo.adapt.cpu import descendants, tree_cpu_seconds
before = tree_cpu_seconds()
child = subprocess.Popen([sys.executable, "-c", {BURN!r}], stdin=subprocess.PIPE, text=True)
deadline = time.monotonic() + 60
while tree_cpu_seconds(child.pid) < 1.5 and time.monotonic() < deadline:  # burning, then waiting
    time.sleep(0.2)
alone = tree_cpu_seconds(child.pid)
print(child.pid in descendants(os.getpid()), alone, tree_cpu_seconds() - before)
child.communicate("\\n", timeout=30)
print(tree_cpu_seconds() - before)  # reaped: still counted
"""


def test_the_tree_counts_a_live_childs_cpu_and_a_reaped_ones():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    live, reaped = out.stdout.splitlines()
    found, alone, grown = live.split()
    assert found == "True"
    assert float(alone) >= 1.5
    assert float(grown) >= float(alone)  # the tree holds the live child
    assert float(reaped) >= float(alone)  # and, once reaped, its time


def test_a_round_process_runs_idle_in_a_group_of_its_own():
    probe = ("import os\nprint(os.sched_getscheduler(0) == os.SCHED_IDLE, os.getpriority(os.PRIO_PROCESS, 0), "
             "os.getpgrp() == os.getpid())")
    out = subprocess.run([sys.executable, "-c", probe], preexec_fn=lowest_priority, capture_output=True, text=True)
    assert out.stdout.split() == ["True", "19", "True"]


def test_a_round_and_what_it_starts_leave_one_core_to_the_server():
    import os

    from automemo.adapt.cpu import round_cpus

    probe = ("import os, subprocess, sys\nprint(sorted(os.sched_getaffinity(0)))\n"
             "print(subprocess.run([sys.executable, '-c', 'import os; print(sorted(os.sched_getaffinity(0)), "
             "os.sched_getscheduler(0) == os.SCHED_IDLE)'], capture_output=True, text=True).stdout)")
    out = subprocess.run([sys.executable, "-c", probe], preexec_fn=lowest_priority, capture_output=True, text=True)
    own, child = out.stdout.strip().splitlines()[:2]
    assert own == str(sorted(round_cpus())) and child.startswith(own) and child.endswith("True")
    if len(os.sched_getaffinity(0)) > 1:
        assert min(os.sched_getaffinity(0)) not in round_cpus()


# A round's bubblewrap guest, reporting from inside the sandbox its policy and cores; the round
# (this probe, started as the server starts a round) reads the guest's CPU group from the host.
GUEST_PROBE = '''
import json, os, sys
from pathlib import Path
from automemo.contract import PartialRecorder
from automemo.sandbox import get_sandbox
from automemo.sandbox.cgroups import CGROUP_ROOT, GROUP_PREFIX, IDLE_PREFIX
source = """
import os
from automemo.contract import MemoProgram, MemoryPayload
class Memo(MemoProgram):
    def update(self, episode): pass
    def retrieve(self, task):
        return MemoryPayload(metadata={"idle": os.sched_getscheduler(0) == os.SCHED_IDLE,
                                       "cores": sorted(os.sched_getaffinity(0)), "evidence": []})
"""
task = PartialRecorder(task_id="q", benchmark="t", instruction="what?").to_dict()
with get_sandbox("bwrap").open(source) as session:
    seen = session.call("retrieve", {"task": task})["metadata"]
    cpu = CGROUP_ROOT / "cpu" if (CGROUP_ROOT / "cpu").is_dir() else CGROUP_ROOT
    def used(prefix):
        return [d for d in (cpu / prefix).glob(f"s-{os.getpid()}-*") if (d / "cgroup.procs").read_text().split()]
    seen["groups"] = [(d / "cpu.idle").read_text().strip() for d in used(IDLE_PREFIX)]
    seen["parent_idle"] = (cpu / IDLE_PREFIX / "cpu.idle").read_text().strip() if seen["groups"] else None
    seen["default_weight_groups"] = len(used(GROUP_PREFIX))
print(json.dumps(seen))
'''


@pytest.mark.bwrap
def test_a_rounds_bubblewrap_guest_runs_idle_on_the_rounds_cores_in_an_idle_cpu_group():
    """SCHED_IDLE and the cores are inherited through bwrap; the guest's CPU group is idle too
    (a group of the default weight would take a core from the server like a nice-0 task)."""
    import json
    import os

    from automemo.adapt.cpu import round_cpus
    from automemo.sandbox.cgroups import CGROUP_ROOT
    from tests.sandboxtools import sandbox

    sandbox("bwrap")  # the image, built once
    out = subprocess.run([sys.executable, "-c", GUEST_PROBE], preexec_fn=lowest_priority, capture_output=True,
                         text=True, timeout=300, cwd=os.getcwd())
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["idle"] is True and seen["cores"] == sorted(round_cpus())
    assert seen["default_weight_groups"] == 0
    if os.geteuid() == 0 and (CGROUP_ROOT / "cpu" / "cpu.idle").exists():  # this project's machines
        assert seen["groups"] == ["1"] and seen["parent_idle"] == "1"


def test_a_docker_guest_of_a_round_asks_for_the_least_weight_and_the_rounds_cores():
    """Docker's daemon starts the container: it inherits nothing of the round, so it is asked for."""
    import json

    probe = ("import json\nfrom automemo.sandbox.docker_backend import idle_container_options\n"
             "print(json.dumps(idle_container_options()))")
    idle = subprocess.run([sys.executable, "-c", probe], preexec_fn=lowest_priority, capture_output=True, text=True)
    normal = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    from automemo.adapt.cpu import round_cpus

    assert json.loads(idle.stdout) == {"cpu_shares": 2, "cpuset_cpus": ",".join(map(str, sorted(round_cpus())))}
    assert json.loads(normal.stdout) == {}
