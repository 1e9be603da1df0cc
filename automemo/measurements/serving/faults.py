"""`automemo bench serve --faults`: many users' mixed calls while the server is killed with
SIGKILL at random points, then four counts, each with target 0:

- cross-user leaks: a recall or an export of one user that shows another user's secret;
- forgotten episodes recalled: a recall or export showing an episode whose forget was acknowledged;
- acknowledged remembers lost: an acknowledged, unforgotten episode missing from the user's export
  at the end (imports included);
- orphans: with the server stopped, an image file or an embedding cache entry of a user's store
  that no live log line names (`serve.storage.namespace_files`), and a refused import's episode anywhere.

Every episode carries a secret word unique to it, so what a recall or an export shows is checked
word by word. A call cut by a kill was never acknowledged: its effect may or may not be there, and
is not counted either way. The program is a seed served with the fast deterministic encoder, each
user's memory with its own embedding cache file (as served with MiniLM), so that cache entries
are real and checked."""

from __future__ import annotations

import base64
import http.client
import io
import json
import random
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

_SECRET = re.compile(r"\bs[0-9a-f]{10}\b")


@dataclass
class _User:
    name: str
    live: dict[str, str] = field(default_factory=dict)        # task_id -> secret, acknowledged
    forgotten: set[str] = field(default_factory=set)          # secrets whose forget was acknowledged
    unsure: set[str] = field(default_factory=set)             # secrets of calls a kill cut
    refused: set[str] = field(default_factory=set)            # secrets of imports refused whole


def faults(export: Path, state: Path, sandbox: str, *, users: int, ops: int, kills: int, seed: int) -> bool:
    from automemo.measurements.serving.load import Server

    rng = random.Random(seed)
    people = [_User(f"u{i:02d}") for i in range(users)]
    secrets_of = {}  # secret -> owner
    counts = {"leaks": 0, "forgotten recalled": 0}
    done, lock = [0], threading.Lock()
    # every user's memory stays open: the run is about faults, not about reopening 16 memories in 8 slots
    options = ("--encoder", "fast-cache", "--max-open-users", str(users))
    server = Server(export, state, sandbox, *options, timeout=300)
    kill_at = sorted(rng.sample(range(1, ops), min(kills, ops - 1)))

    def client(person: _User, k: int) -> None:
        local = random.Random(seed * 1000 + k)
        while True:
            with lock:
                if done[0] >= ops:
                    return
                done[0] += 1
            port = server.port
            try:
                _one_op(person, local, port, secrets_of, counts, lock)
            except (OSError, http.client.HTTPException, ValueError):
                _wait_for(lambda: server.port != port or _alive(server.port))

    threads = [threading.Thread(target=client, args=(p, i)) for i, p in enumerate(people)]
    for t in threads:
        t.start()
    for at in kill_at:
        while done[0] < at and any(t.is_alive() for t in threads):
            time.sleep(0.01)
        time.sleep(rng.random() * 0.2)
        server.kill()
        server = Server(export, state, sandbox, *options, timeout=300)
    for t in threads:
        t.join()
    lost, refused_found = _final_exports(server.port, people, secrets_of, counts)
    server.__exit__(None, None, None)
    orphans = _orphans(state)
    print(f"{users} users, {ops} mixed calls (remember with images, recall, forget, export, import), kill -9 "
          f"{len(kill_at)} times: {counts['leaks']} cross-user leaks, {counts['forgotten recalled']} forgotten "
          f"episodes shown, {lost} acknowledged remembers lost, {refused_found} episodes of refused imports kept, "
          f"{orphans} orphan files or cache entries (target 0 each)")
    return not (counts["leaks"] or counts["forgotten recalled"] or lost or refused_found or orphans)


def _one_op(person: _User, rng: random.Random, port: int, secrets_of: dict, counts: dict, lock) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        roll = rng.random()
        if roll < 0.45 or not person.live:
            secret, task_id = f"s{rng.getrandbits(40):010x}", f"t{rng.getrandbits(32):08x}"
            with lock:
                secrets_of[secret] = person.name
            person.unsure.add(secret)
            body = {"content": f"my note {secret} about the kettle", "user": person.name, "task_id": task_id}
            if rng.random() < 0.5:
                body["images"] = [_png(rng)]
            status, _ = _call(conn, "POST", "/v1/remember", body)
            if status == 200:
                person.live[task_id] = secret
                person.unsure.discard(secret)
        elif roll < 0.75:
            status, answer = _call(conn, "POST", "/v1/recall", {"query": "my note about the kettle", "user": person.name})
            if status == 200:
                _check_shown(person, answer.get("text", ""), secrets_of, counts, lock)
        elif roll < 0.87:
            task_id = rng.choice(sorted(person.live))
            secret = person.live.pop(task_id)
            person.unsure.add(secret)
            status, _ = _call(conn, "POST", "/v1/forget", {"user": person.name, "task_id": task_id})
            if status == 200:
                person.forgotten.add(secret)
                person.unsure.discard(secret)
        elif roll < 0.94:
            status, text = _call(conn, "POST", "/v1/export", {"user": person.name})
            if status == 200:
                _check_shown(person, text, secrets_of, counts, lock)
        else:
            _import(conn, person, rng, secrets_of, lock)
    finally:
        conn.close()


def _import(conn, person: _User, rng: random.Random, secrets_of: dict, lock) -> None:
    bad = rng.random() < 0.3  # a good line with an image, then a bad one: nothing of it may stay
    secret, task_id = f"s{rng.getrandbits(40):010x}", f"t{rng.getrandbits(32):08x}"
    with lock:
        secrets_of[secret] = person.name
    person.unsure.add(secret)
    lines = [json.dumps({"task_id": task_id, "instruction": f"imported {secret}",
                         "steps": [{"observation": f"imported note {secret}", "screenshot": _png(rng)}]})]
    if bad:
        lines.append('{"messages": []}')
    conn.request("POST", f"/v1/import?user={person.name}", "\n".join(lines) + "\n",
                 {"Content-Type": "application/x-ndjson"})
    answer = conn.getresponse()
    answer.read()
    if answer.status == 200:
        person.live[task_id] = secret
        person.unsure.discard(secret)
    elif answer.status == 400 and bad:
        person.refused.add(secret)
        person.unsure.discard(secret)


def _check_shown(person: _User, text: str, secrets_of: dict, counts: dict, lock) -> None:
    for secret in _SECRET.findall(text):
        with lock:
            if secrets_of.get(secret, person.name) != person.name:
                counts["leaks"] += 1
            elif secret in person.forgotten:
                counts["forgotten recalled"] += 1


def _final_exports(port: int, people: list[_User], secrets_of: dict, counts: dict) -> tuple[int, int]:
    lost = refused_found = 0
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    for person in people:
        status, text = _call(conn, "POST", "/v1/export", {"user": person.name})
        shown = set(_SECRET.findall(text if status == 200 else ""))
        _check_shown(person, text, secrets_of, counts, threading.Lock())
        lost += len(set(person.live.values()) - shown) if status == 200 else len(person.live)
        refused_found += len(person.refused & shown)
    conn.close()
    return lost, refused_found


def _orphans(state: Path) -> int:
    """Image files and cache entries no live log line names, in every user's store."""
    from automemo.serve.storage.episode_log import EpisodeLog, live_episodes
    from automemo.serve.storage.namespace_files import NamespaceFiles
    from automemo.serve.storage.state_folder import LOG, STORE, StateFolder

    folder, found = StateFolder(state), 0
    for user in folder.users():
        home = folder.user_dir(user)
        files = NamespaceFiles(home / STORE)
        files.count(live_episodes(EpisodeLog(home / LOG).read()))
        images = home / STORE / "images"
        found += sum(1 for p in images.rglob("*") if p.is_file()
                     and not files.kept(str(p.relative_to(home / STORE)))) if images.is_dir() else 0
        found += len(files.stray_keys())
    return found


def _call(conn: http.client.HTTPConnection, method: str, path: str, body: dict) -> tuple[int, object]:
    conn.request(method, path, json.dumps(body), {"Content-Type": "application/json"})
    answer = conn.getresponse()
    raw = answer.read()
    if answer.getheader("Content-Type", "").startswith("application/json"):
        return answer.status, json.loads(raw)
    return answer.status, raw.decode()


def _alive(port: int) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        conn.request("GET", "/healthz")
        return conn.getresponse().status == 200
    except OSError:
        return False


def _wait_for(ready, seconds: float = 300) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline and not ready():
        time.sleep(0.1)


def _png(rng: random.Random) -> str:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), tuple(rng.randrange(256) for _ in range(3))).save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
