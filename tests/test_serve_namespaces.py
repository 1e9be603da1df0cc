"""Many users on one served memory, through a real `automemo serve` and a real HTTP client:
isolation by construction, forgetting, export and import, snapshots, the bound on open
namespaces, and a randomized run with kill -9 at random points."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import urllib.request

import pytest

from automemo.serve.storage.state_folder import SNAPSHOT, StateFolder
from servetools import PNG, Server, call, data_url, make_export

# Shares every user's memory, as a program with `SCOPE = "all"` would: isolation must not rely on it.
SHARED_MEMORY = '''
from automemo.contract import MemoProgram, MemoryPayload


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.items = []

    def update(self, episode):
        text = " ".join([episode.instruction] + [s.observation for s in episode.steps])
        pictures = [s.screenshot for s in episode.steps if s.screenshot]
        self.items.append((episode.task_id, text, pictures))

    def retrieve(self, task):
        words = set(task.instruction.lower().split())
        ranked = sorted(self.items, key=lambda item: -len(words & set(item[1].lower().split())))
        top = ranked[:4]
        return MemoryPayload(text="\\n".join(f"[{tid}] {t}" for tid, t, _ in top),
                             images=tuple(p for _, _, ps in top for p in ps)[:1],
                             metadata={"evidence": [tid for tid, _, _ in top], "n_memories": len(self.items)})
'''


def chat(user: str, text: str, task_id: str | None = None, images: list[str] | None = None) -> dict:
    message = {"role": "user", "content": text, **({"images": images} if images else {})}
    return {"messages": [message], "user": user, **({"task_id": task_id} if task_id else {})}


def recall(server: Server, user: str, text: str) -> dict:
    status, answer = call(server.url + "/v1/recall", {"instruction": text, "user": user})
    assert status == 200, answer
    return answer


@pytest.fixture()
def export(tmp_path):
    return make_export(tmp_path / "export", program=SHARED_MEMORY)


@pytest.mark.bwrap
def test_isolation_forget_and_export_survive_kill9(export, tmp_path):
    state = tmp_path / "state"
    server = Server(export, state)
    try:
        assert call(server.url + "/v1/remember", chat("ana", "My locker code is 5521", "locker"))[0] == 200
        assert call(server.url + "/v1/remember", chat("ana", "My bike is red", "bike", [data_url(PNG)]))[0] == 200
        assert call(server.url + "/v1/remember", chat("bob", "My locker code is 7788"))[0] == 200
        bob = recall(server, "bob", "what is my locker code")
        assert "7788" in bob["text"] and "5521" not in bob["text"]  # the program shares; the service does not
        assert "5521" not in recall(server, "", "what is my locker code")["text"]
        # export, then forget the episode and the whole of bob
        export_call = urllib.request.Request(server.url + "/v1/export", data=json.dumps({"user": "ana"}).encode(),
                                             headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(export_call, timeout=30) as answer:
            exported = answer.read().decode()
        assert len(exported.splitlines()) == 2 and "5521" in exported
        status, forgot = call(server.url + "/v1/forget", {"user": "ana", "task_id": "locker"})
        assert status == 200 and forgot["forgotten"] == 1
        assert "5521" not in recall(server, "ana", "what is my locker code")["text"]
        bare = call(server.url + "/v1/forget", {"user": "bob"})  # names neither task_id nor all: refused
        assert bare[0] == 400 and '"all": true' in bare[1]["error"] and "nothing was forgotten" in bare[1]["error"]
        assert "7788" in recall(server, "bob", "what is my locker code")["text"]
        assert call(server.url + "/v1/forget", {"user": "bob", "all": True})[1]["forgotten"] == "namespace"
        assert "7788" not in recall(server, "bob", "what is my locker code")["text"]
        bad = call(server.url + "/v1/forget", {"user": "ana", "task_id": ""})
        assert bad[0] == 400 and "task_id" in bad[1]["error"]
        server.kill9()
    finally:
        server.stop()
    # nothing forgotten is left on disk: not in a log, not in a snapshot
    for path in state.rglob("*"):
        if path.is_file() and path.suffix in (".jsonl", ".bin", ".json"):
            assert b"5521" not in path.read_bytes() and b"7788" not in path.read_bytes(), path
    server = Server(export, state)
    try:
        ana = recall(server, "ana", "what is my locker code or my bike")
        assert "5521" not in ana["text"] and "bike is red" in ana["text"]
        assert data_url(PNG).split(",")[1] in ana["images"][0]["data_url"]  # the bike's picture is kept
        assert "7788" not in recall(server, "bob", "what is my locker code")["text"]
        # what was exported imports into another user, images included
        request = urllib.request.Request(server.url + "/v1/import?user=carla", data=exported.encode(),
                                         headers={"Content-Type": "application/x-ndjson"}, method="POST")
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert json.loads(answer.read())["imported"] == 2
        carla = recall(server, "carla", "what is my locker code")
        assert "5521" in carla["text"] and carla["evidence"][0] == "locker"
        assert "5521" not in recall(server, "ana", "what is my locker code")["text"]
    finally:
        server.stop()


@pytest.mark.slow
@pytest.mark.bwrap
def test_snapshot_restart_equals_replay_and_open_namespaces_are_bounded(export, tmp_path):
    state = tmp_path / "state"
    server = Server(export, state, "--max-open-users", "2", "--snapshot-every", "3")
    users = ["u1", "u2", "u3", "u4"]
    questions = ["what colour is the boat", "where is the key", "who called"]
    try:
        for i in range(5):
            for user in users:
                text = f"{user} note {i}: the boat is colour{i} and the key is under pot{i}, jo called"
                assert call(server.url + "/v1/remember", chat(user, text))[0] == 200
        health = call(server.url + "/healthz")[1]
        assert health["open_namespaces"] <= 2 and health["max_open"] == 2 and health["snapshots"]
        before = {(u, q): recall(server, u, q) for u in users for q in questions}
        assert all(u in a["text"] and not any(o in a["text"] for o in users if o != u)
                   for (u, _), a in before.items())
        server.kill9()
    finally:
        server.stop()
    folder = StateFolder(state)
    assert all((folder.user_dir(u) / SNAPSHOT).is_file() for u in users)  # evicted ones were snapshotted

    def answers(server: Server) -> dict:
        return {(u, q): (a["text"], a["evidence"], a["metadata"]["n_memories"])
                for (u, q), a in ((k, recall(server, *k)) for k in before)}

    server = Server(export, state, "--max-open-users", "2")
    try:
        from_snapshots = answers(server)
    finally:
        server.stop()
    for user in users:  # the same memory rebuilt by replaying every log from the shipped episodes
        folder.remove_snapshot(folder.user_dir(user))
    server = Server(export, state, "--max-open-users", "2")
    try:
        assert answers(server) == from_snapshots
    finally:
        server.stop()
    assert from_snapshots == {k: (a["text"], a["evidence"], a["metadata"]["n_memories"]) for k, a in before.items()}


@pytest.mark.slow
@pytest.mark.bwrap
def test_randomized_users_forgets_and_kill9_never_leak(export, tmp_path):
    """8 users, 2,000 operations, kill -9 at random points: no recall ever shows another user's
    episode or a forgotten one."""
    rng = random.Random(29)
    state = tmp_path / "state"
    users = [f"user{k}" for k in range(8)]
    live: dict[str, set[str]] = {u: set() for u in users}   # acknowledged, not forgotten
    gone: set[str] = set()                                   # forgotten or of a dropped namespace
    kills = set(rng.sample(range(200, 2000), 3))
    server = Server(export, state, "--max-open-users", "8", "--snapshot-every", "25")
    leaks, recalls = [], 0
    try:
        for op in range(2000):
            if op in kills:
                server.kill9()
                server.stop()
                server = Server(export, state, "--max-open-users", "8", "--snapshot-every", "25")
            user, roll = rng.choice(users), rng.random()
            if roll < 0.45:
                token = f"tok{op}x{user}"
                status, ack = call(server.url + "/v1/remember", chat(user, f"remember {token} shared words", token))
                assert status == 200 and ack["applied"], ack
                live[user].add(token)
            elif roll < 0.52 and live[user]:
                token = rng.choice(sorted(live[user]))
                assert call(server.url + "/v1/forget", {"user": user, "task_id": token})[1]["forgotten"] == 1
                live[user].discard(token)
                gone.add(token)
            elif roll < 0.53:
                assert call(server.url + "/v1/forget", {"user": user, "all": True})[0] == 200
                gone |= live[user]
                live[user] = set()
            else:
                answer = recall(server, user, "remember shared words")
                recalls += 1
                for tid in answer["evidence"]:
                    if tid.startswith("tok") and (tid in gone or tid not in live[user]):
                        leaks.append((op, user, tid))
    finally:
        server.stop()
    assert recalls > 500 and not leaks


def memory_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "automemo", "memory", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.slow
@pytest.mark.bwrap
def test_memory_commands_on_a_state_folder(export, tmp_path):
    state = tmp_path / "state"
    server = Server(export, state)
    try:
        call(server.url + "/v1/remember", chat("ana", "My locker code is 5521", "locker"))
        call(server.url + "/v1/remember", chat("ana", "My bike is red", "bike", [data_url(PNG)]))
        busy = memory_cli("users", str(state))
        assert busy.returncode == 2 and "another process" in busy.stderr  # the server holds the folder
    finally:
        server.stop()
    assert memory_cli("users", str(state)).stdout.splitlines() == ["ana\t2 episodes", "default\t0 episodes"]
    exported = memory_cli("export", str(state), "--user", "ana")
    assert exported.returncode == 0 and len(exported.stdout.splitlines()) == 2
    (tmp_path / "ana.jsonl").write_text(exported.stdout)
    assert memory_cli("import", str(state), "--user", "bo", str(tmp_path / "ana.jsonl")).returncode == 0
    assert memory_cli("forget", str(state), "--user", "ana", "--task-id", "locker").returncode == 0
    missing = memory_cli("forget", str(state), "--user", "ana", "--task-id", "locker")
    assert missing.returncode == 2 and "no remembered episode" in missing.stderr
    good_then_bad = exported.stdout.splitlines()[1] + "\n" + '{"messages": []}\n'
    (tmp_path / "bad.jsonl").write_text(good_then_bad)  # a good line with an image, then a bad one
    before = sorted(p for p in state.rglob("*") if p.is_file() and p.name != ".lock")
    bad = memory_cli("import", str(state), "--user", "cy", str(tmp_path / "bad.jsonl"))
    assert bad.returncode == 2 and "line 2" in bad.stderr and "nothing of this import" in bad.stderr
    assert "Traceback" not in bad.stderr
    assert sorted(p for p in state.rglob("*") if p.is_file() and p.name != ".lock") == before  # all or nothing
    bare = memory_cli("forget", str(state), "--user", "")
    assert bare.returncode == 2 and "--task-id --all is required" in bare.stderr
    assert memory_cli("forget", str(state), "--user", "", "--all").returncode == 0
    server = Server(export, state)
    try:
        assert "5521" not in recall(server, "ana", "what is my locker code")["text"]
        bo = recall(server, "bo", "what is my locker code and bike")
        assert "5521" in bo["text"] and data_url(PNG).split(",")[1] in bo["images"][0]["data_url"]
    finally:
        server.stop()
    assert memory_cli("users", str(tmp_path / "nowhere")).returncode == 2
