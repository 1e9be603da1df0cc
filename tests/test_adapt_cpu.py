"""An adaptation round's CPU (automemo/adapt/cpu.py): what a process tree used, read from /proc,
and the lowest priority Linux has."""

from __future__ import annotations

import subprocess
import sys

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
