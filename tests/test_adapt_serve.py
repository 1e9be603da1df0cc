"""Adaptation as a served memory runs it (automemo/adapt/supervisor.py, cpu.py, `serve --adapt`,
`memory adapt`): a kill at any point leaves one whole version serving; a round past its CPU
budget installs nothing; `serve --adapt` swaps while every recall is answered; the flags are
checked and a server adapts only when asked. Real processes, bubblewrap, MiniLM."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from adapttools import ROOT, chat_sessions, served_state
from automemo.adapt.config import AdaptConfig, AdaptConfigRefused
from automemo.deploy import read_manifest
from automemo.serve.storage.versions import NamespaceVersions
from killtools import kill_when
from servetools import Server, call


def _recall(server: Server, user: str, text: str) -> dict:
    status, answer = call(server.url + "/v1/recall", {"user": user, "instruction": text})
    assert status == 200, answer
    return answer


def _adapt_command(state, *extra: str, steps: int = 3) -> list[str]:
    return [sys.executable, "-m", "automemo", "memory", "adapt", str(state.root), "--user", "ana", "--steps",
            str(steps), "--sandbox", "bwrap", "--force", *extra]


@pytest.mark.slow
def test_a_kill_at_any_point_of_a_round_leaves_one_whole_version_serving(tmp_path):
    export, state = served_state(tmp_path, {"ana": chat_sessions("ana")})
    folder = state.user_dir("ana")
    versions = NamespaceVersions(folder)
    log = (folder / "episodes.jsonl").read_bytes()
    searching = lambda: any((folder / "adapt-work").glob("*/runs/*/tree.db"))  # noqa: E731
    installing = lambda: any(versions.root.glob(".staging-*/*"))  # noqa: E731 - a version half built
    for point in (searching, installing):
        kill_when(_adapt_command(state, steps=1), point, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
        current = versions.current()
        if current:  # the pointer names a version only once it is whole
            read_manifest(versions.program_folder(current))
        assert (folder / "episodes.jsonl").read_bytes() == log  # nothing acknowledged is touched
    assert list(versions.root.glob(".staging-*"))  # the kill left a half-built version behind
    done = subprocess.run(_adapt_command(state, steps=1), cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("installed"), done.stdout + done.stderr
    current = versions.current()
    read_manifest(versions.program_folder(current))  # whole
    assert versions.record(current).retired is None
    assert not list(versions.root.glob(".staging-*"))  # the killed round's half-built version was swept
    work = folder / "adapt-work"
    assert not work.exists() or not any(work.iterdir())  # and its copy of the history


def test_a_round_past_its_cpu_budget_is_stopped_and_installs_nothing(tmp_path):
    export, state = served_state(tmp_path, {"ana": chat_sessions("ana")})
    done = subprocess.run(_adapt_command(state, "--cpu-seconds", "3"), cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode != 0
    assert "past its budget of 3" in done.stderr
    assert NamespaceVersions(state.user_dir("ana")).current() == 0


@pytest.mark.slow
def test_serve_adapt_swaps_in_the_background_while_every_recall_is_answered(tmp_path):
    histories = {"ana": chat_sessions("ana")}
    export, state = served_state(tmp_path, histories)
    server = Server(export, state.root, "--adapt", "--adapt-steps", "1")
    word = histories["ana"][5].steps[2].observation.split()[2]
    answered, versions_seen = 0, set()
    try:
        deadline = time.time() + 240
        while time.time() < deadline and 1 not in versions_seen:
            answer = _recall(server, "ana", word)  # asserts 200: every recall is answered
            answered += 1
            versions_seen.add(answer["version"])
            time.sleep(0.5)
        health = call(server.url + "/healthz")[1]
    finally:
        server.stop()
    assert versions_seen == {0, 1}, f"no swap after {answered} recalls"
    assert health["adapt"]["mode"] == "per-user" and health["adapt"]["rounds_started"] >= 1
    # counts only (it answers without a token): no namespace, not even by a digest of its id
    assert health["versions"].get("1") == 1 and state.user_dir("ana").name not in json.dumps(health)
    rounds = [json.loads(line) for line in (state.user_dir("ana") / "versions" / "rounds.jsonl").read_text().splitlines()]
    assert rounds[-1]["outcome"] == "installed"
    # the round's log (stderr, tracebacks) is in her folder, so it leaves with a forget all
    assert (state.user_dir("ana") / "versions" / "round.log").is_file() and not (state.root / "adapt-logs").exists()


@pytest.mark.parametrize("flags, said", [(["--adapt-steps", "3"], "belong to --adapt"),
                                         (["--adapt", "--adapt-cpu-seconds", "0"], "--adapt-cpu-seconds must be above 0"),
                                         (["--adapt", "--adapt-steps", "0"], "--adapt-steps must be at least 1"),
                                         (["--adapt", "--adapt-config", "x.toml"], "is now --adapt-run-config"),
                                         (["--adapt", "--adapt-run-config", "missing.toml"], "no such file")])
def test_adapt_flags_are_checked(tmp_path, flags, said):
    export, state = served_state(tmp_path, {})
    done = subprocess.run([sys.executable, "-m", "automemo", "serve", str(export), "--state", str(state.root),
                           "--port", "1", *flags], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode != 0 and said in done.stderr


def test_a_server_adapts_only_when_asked():
    import argparse

    from automemo.cli import serve_cmd

    parser = argparse.ArgumentParser()
    serve_cmd.register(parser.add_subparsers())
    assert serve_cmd._adapt_config(parser.parse_args(["serve", "memo"])) is None
    asked = serve_cmd._adapt_config(parser.parse_args(["serve", "memo", "--adapt", "--adapt-steps", "4"]))
    assert asked.steps == 4 and asked.max_parallel == AdaptConfig().max_parallel


def test_memory_adapt_refuses_what_serve_refuses_with_its_own_flag(tmp_path):
    export, state = served_state(tmp_path, {})
    done = subprocess.run([sys.executable, "-m", "automemo", "memory", "adapt", str(state.root), "--export", str(export),
                           "--steps", "0"], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and "--steps must be at least 1" in done.stderr


def test_a_rounds_child_gets_the_servers_whole_config(tmp_path, monkeypatch):
    from automemo.adapt import supervisor

    export, state = served_state(tmp_path, {"ana": chat_sessions("ana")})
    started = {}

    class Popen:
        def __init__(self, command, **kw):
            started.update(command=command)

        def poll(self):
            return 0

    monkeypatch.setattr(supervisor.subprocess, "Popen", Popen)
    config = AdaptConfig(steps=7, cpu_seconds=42.0, race_draws=2, guard_kinds={"refer": 1.0}, regrow=0.25)
    supervisor.Adapter(state.root, export, "per-user", sandbox="bwrap", config=config)._launch("ana")
    command = started["command"]
    assert AdaptConfig.from_json(command[command.index("--adapt-config-json") + 1]) == config
    with pytest.raises(AdaptConfigRefused, match="is not a setting"):
        AdaptConfig.from_json('{"steps": 3, "stpes": 4}')


def test_a_round_is_started_with_the_users_key_never_their_id_and_at_idle_on_a_core_of_its_own(tmp_path, monkeypatch):
    from automemo.adapt import supervisor
    from automemo.adapt.cpu import ROUND_THREAD_ENV, round_cpus

    export, state = served_state(tmp_path, {"ana@example.com": chat_sessions("ana")})
    started = {}

    class Popen:
        def __init__(self, command, **kw):
            started.update(command=command, env=kw["env"], log=kw["stdout"].name)

        def poll(self):
            return 0

    monkeypatch.setattr(supervisor.subprocess, "Popen", Popen)
    supervisor.Adapter(state.root, export, "per-user", sandbox="bwrap")._launch("ana@example.com")
    assert "ana@example.com" not in " ".join(started["command"])          # /proc shows a command line
    assert state.user_dir("ana@example.com").name in started["command"]
    assert started["log"] == str(state.user_dir("ana@example.com") / "versions" / "round.log")
    assert all(started["env"][k] == v for k, v in ROUND_THREAD_ENV.items())
    import os as _os
    if len(_os.sched_getaffinity(0)) > 1:
        assert min(_os.sched_getaffinity(0)) not in round_cpus()   # one core is never a round's
