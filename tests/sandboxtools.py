"""Helpers shared by the sandbox test files: backend parameters and a cached image build.

Docker and bubblewrap tests always run (CI starts dockerd and has bubblewrap); they are marked so
that a run can select them, never skipped. The first run on a machine builds the guest image
(about a minute and a half); later runs find it cached.
"""

from __future__ import annotations

import functools

import pytest

from automemo.sandbox import Sandbox, get_sandbox
from automemo.sandbox import image

ISOLATING = [
    pytest.param("docker", marks=pytest.mark.docker, id="docker"),
    pytest.param("bwrap", marks=pytest.mark.bwrap, id="bwrap"),
]
ALL_BACKENDS = ISOLATING + [pytest.param("unsafe", id="unsafe")]


@functools.lru_cache(maxsize=None)
def sandbox(name: str) -> Sandbox:
    if name in ("docker", "bwrap"):
        image.build(docker_import=name == "docker")
    return get_sandbox(name)


# A memo program that answers with the metadata keys its retrieve task carried: what a test of
# "what may retrieve see" reads back out of the sandbox.
METADATA_PROBE = '''
from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def update(self, episode):
        pass

    def retrieve(self, task):
        return MemoryPayload(metadata={"seen": sorted(task.metadata), "evidence": []})
'''
