"""An adaptation round's CPU (automemo/adapt/cpu.py): what a process tree used, read from /proc,
and the lowest priority Linux has."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from automemo.adapt.cpu import descendants, lowest_priority, tree_cpu_seconds

BURN = "import time\nend = time.process_time() + 1.5\nwhile time.process_time() < end: pass\ninput()"


def test_the_tree_counts_a_live_childs_cpu():
    before = tree_cpu_seconds()
    child = subprocess.Popen([sys.executable, "-c", BURN], stdin=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while tree_cpu_seconds(child.pid) < 1.5 and time.monotonic() < deadline:  # burning, then waiting
            time.sleep(0.2)
        assert child.pid in descendants(os.getpid())
        alone = tree_cpu_seconds(child.pid)
        assert alone >= 1.5
        assert tree_cpu_seconds() - before >= alone  # this process's tree holds it
    finally:
        child.communicate("\n", timeout=30)


def test_a_round_process_runs_idle_in_a_group_of_its_own():
    probe = ("import os\nprint(os.sched_getscheduler(0) == os.SCHED_IDLE, os.getpriority(os.PRIO_PROCESS, 0), "
             "os.getpgrp() == os.getpid())")
    out = subprocess.run([sys.executable, "-c", probe], preexec_fn=lowest_priority, capture_output=True, text=True)
    assert out.stdout.split() == ["True", "19", "True"]
