"""Every hostile or broken program of tests/adversarial/ runs in both isolating backends.

Each program says in its header what must happen (`# expect-kind:` one or more SandboxError
kinds, or "ok"; `# expect-message:` a regex the error must match; `# expect-absent:` text that
must not appear in anything the guest returns; `# expect-alive: yes` when the session must
survive). The test asserts exactly that, that the host's API key never reaches the guest, that
nothing was written outside the state dir, and that a NEXT session of the same backend works.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PIL import Image

from automemo.contract import EpisodeRecorder, PartialRecorder
from automemo.episode_store import EpisodeStore
from automemo.paths import PACKAGE_DIR
from automemo.sandbox import Limits, ProgramLoadError, SandboxError
from sandboxtools import ISOLATING, sandbox

pytestmark = pytest.mark.timeout(180)

CORPUS = Path(__file__).parent / "adversarial"
PROGRAMS = sorted(CORPUS.glob("*.py"))
CANARY = "sk-secret-canary"
LIMITS = Limits(memory_mb=256, pids=64, call_timeout_s=3.0, update_timeout_s=3.0, retrieve_timeout_s=3.0)

NEXT_PROGRAM = """
from automemo.contract import MemoProgram, MemoryPayload
class Memo(MemoProgram):
    def update(self, episode):
        self.last = episode.task_id
    def retrieve(self, task):
        return MemoryPayload(text=self.last)
"""


def expectations(path: Path) -> dict[str, str]:
    found = dict(re.findall(r"^# expect-([a-z]+): (.*)$", path.read_text(), flags=re.M))
    assert "kind" in found, f"{path.name} does not say what must happen (# expect-kind:)"
    return found


def test_corpus_covers_the_threats():
    names = {p.stem for p in PROGRAMS}
    assert {"tcp_connect", "dns_lookup", "read_shadow", "read_home", "leak_environment",
            "write_outside_state", "fork_bomb", "memory_hog", "infinite_loop_update",
            "huge_payload", "non_serialisable_payload", "wrong_result_type", "sys_exit", "os_exit",
            "segfault", "import_error", "syntax_error"} <= names


@pytest.fixture
def store(tmp_path):
    store = EpisodeStore(tmp_path / "store")
    store.put_image(Image.new("RGB", (4, 4), (1, 2, 3)))
    return store


@pytest.mark.parametrize("backend_name", ISOLATING)
@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_hostile_program_is_contained(backend_name, program, store, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    expect = expectations(program)
    kinds = set(expect["kind"].split("|"))
    backend = sandbox(backend_name)
    store_before = sorted(p.relative_to(store.root) for p in store.root.rglob("*"))
    episode = EpisodeRecorder(task_id="e1", benchmark="adv", instruction="go").to_dict()
    task = PartialRecorder(task_id="q1", benchmark="adv", instruction="recall").to_dict()

    outcome, seen = run(backend, program.read_text(), store.root, episode, task, expect)

    assert outcome.kind in kinds, f"{program.stem}: expected {kinds}, got {outcome.kind}: {outcome}"
    if "message" in expect:
        assert re.search(expect["message"], str(outcome)), f"{program.stem}: message was {outcome}"
    for text in (CANARY, expect.get("absent", CANARY)):
        assert text not in seen, f"{program.stem}: {text!r} reached the guest"
    assert not (PACKAGE_DIR / "pwned.py").exists()
    assert sorted(p.relative_to(store.root) for p in store.root.rglob("*")) == store_before

    with backend.open(NEXT_PROGRAM, LIMITS, store_root=store.root) as session:
        session.call("update", {"episode": episode})
        assert session.call("retrieve", {"task": task})["text"] == "e1"


class Outcome:
    def __init__(self, kind: str, text: str) -> None:
        self.kind, self.text = kind, text

    def __str__(self) -> str:
        return self.text


def run(backend, source, store_root, episode, task, expect) -> tuple[Outcome, str]:
    """Open, update, retrieve; return what happened and everything the guest sent back."""
    try:
        session = backend.open(source, LIMITS, store_root=store_root)
    except ProgramLoadError as exc:
        return Outcome(exc.kind, str(exc)), str(exc) + exc.traceback
    with session:
        try:
            session.call("update", {"episode": episode})
            result = session.call("retrieve", {"task": task})
            return Outcome("ok", "ok"), json.dumps(result)
        except SandboxError as exc:
            seen = str(exc) + exc.traceback
            if expect.get("alive") == "yes":
                assert session.call("ping", {}) == "pong", "the session died after a program error"
                seen += json.dumps(session.call("describe", {}))
            return Outcome(exc.kind, str(exc)), seen
