"""`automemo bench adapt`: does a served memory improve from its own history, and what does that
cost its users?

    automemo bench adapt --benchmark memgallery --option path=DIR [--mode per-user|pooled] --out X.json

1. The hand design (`--program`, hybrid_rag: the best seed on the development data) is exported and
   served (`automemo serve`, a real process). The benchmark's test conversations are remembered
   through REST, one user per conversation, session by session, as their applications would;
   one user's conversation carries a planted secret.
2. before: every labelled test question is asked through `/v1/recall` as its user, and scored
   by the turns the answer cites (Recall@k, as the benchmark scores). The recall latency of one
   user is measured idle.
3. The server restarts on the same state with `--adapt MODE`; while its rounds run, that user's
   recall latency is measured again; once every round has ended, after is scored as before.
4. lost: acknowledged remembers missing from `/v1/export`; leaks: files of another user's folder,
   or recalls of another user, holding the secret.

With `--forget-during-round`, while a round runs the bench forgets one user's episode and another
user whole, re-imports an edited export of that user and remembers once more, then counts
`forgotten_returned` and `leftovers` (`measurements.adaptation.forget`). With `--burner 0,2`, both latency
phases are measured under each load: that many CPU-bound processes beside the server
(`measurements.adaptation.load`), idle and adapting alike, and the ratio is reported per load.

The JSON has before, after, lost, leaks and recall_p95_ratio (p95 during adaptation over idle),
with the command that produced it."""

from __future__ import annotations

import json
import os
import shlex
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from automemo.cli import UserError
from automemo.cli.flags import add_sandbox_flag, sandbox_choice
from automemo.measurements.rest import get_json, post_json

SECRET = "zqxvermilionheron"   # planted in the first user's conversation; never anyone else's to see
PROBE = "what did we talk about last time"
# Both phases probe recall with this pause between calls: on this machine's VM an idle core halts,
# and a recall after a pause pays its wake-up (idle p95 2.3 ms back to back, 5.2-7.4 ms paused),
# so a back-to-back idle phase against a paused adapting one made up most of the p95 ratio.
PROBE_PAUSE_S = 0.2


def add_arguments(parser) -> None:
    parser.add_argument("--benchmark", required=True, help="memgallery, locomo, longmemeval or conversations")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="benchmark option, e.g. path=DIR (repeatable)")
    parser.add_argument("--mode", choices=("per-user", "pooled"), default="per-user", help="serve --adapt MODE")
    parser.add_argument("--program", default="hybrid_rag", metavar="PROGRAM",
                        help="the served program: a seed name (default hybrid_rag), discovered (the discovered "
                             "default), or a program file")
    parser.add_argument("--steps", type=int, default=20, help="search steps of a round (default 20)")
    parser.add_argument("--cpu-seconds", type=float, default=900.0, help="CPU seconds of a round (default 900)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="wait at most this long for the rounds")
    parser.add_argument("--out", type=Path, help="the JSON (default: printed only)")
    parser.add_argument("--workdir", type=Path, help="keep the export and state here (default: a temporary folder)")
    parser.add_argument("--engine", choices=("single", "ray"), default="single",
                        help="serve --engine (ray: a local cluster, 2 replicas)")
    parser.add_argument("--kill", action="store_true",
                        help="kill -9 the server once while a round runs, then start it again (lost and leaks "
                             "then count what a crash mid-adaptation did)")
    parser.add_argument("--forget-during-round", action="store_true",
                        help="while a round runs: forget one user's episode, forget another user whole, re-import "
                             "an edited export of them and remember once more; report forgotten_returned and "
                             "leftovers")
    parser.add_argument("--burner", default="0", metavar="N[,N...]",
                        help="CPU-bound processes beside the server while latency is measured, idle and adapting "
                             "alike; several loads (0,2) are measured in turn, each with its own ratio (default 0)")
    parser.add_argument("--idle-seconds", type=float, default=40.0,
                        help="idle latency per load, one recall each 0.2 s as while adapting (default 40)")
    parser.add_argument("--feedback", action="store_true",
                        help="play an agent on each user: ask the first half of the user's questions in their order "
                             "through recall and report as used the returned items that hold the question's evidence "
                             "(/v1/feedback); the second half, never asked before, is scored before and after")
    parser.add_argument("--feedback-miss", type=float, default=0.0, metavar="P",
                        help="with --feedback: the share of used items the agent fails to report (default 0)")
    parser.add_argument("--feedback-false", type=float, default=0.0, metavar="P",
                        help="with --feedback: the share of unused shown items it reports as used (default 0)")
    parser.add_argument("--trial-wait", type=float, default=150.0, metavar="S",
                        help="with --feedback: wait at most this long for the server to decide a trial after its "
                             "recalls (default 150; the adaptation loop looks every 30 s)")
    add_sandbox_flag(parser, default="bwrap")


def run(args) -> int:
    from automemo.assembly import llm_client, load_benchmark
    from automemo.resolution import load_run_config

    options = dict(_option(o) for o in args.option)
    config = load_run_config(None, None, {"benchmark": {"name": args.benchmark, "options": options}})
    with tempfile.TemporaryDirectory(prefix="automemo-bench-adapt-") as tmp:
        work = (args.workdir or Path(tmp)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        benchmark = load_benchmark(config, llm_client(config), work / "bench-store")
        users, questions = _conversations(benchmark, work / "bench-store")
        if len(users) < 1:
            raise UserError(f"{args.benchmark}'s test split holds no conversation with sessions")
        report = _measure(args, benchmark, users, questions, work)
    report["command"] = " ".join(shlex.quote(a) for a in sys.argv)
    text = json.dumps(report, indent=2, default=str)
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


def _option(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep:
        raise UserError(f"--option {text!r}: give KEY=VALUE")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def _conversations(benchmark: Any, store: Any) -> tuple[dict[str, list[dict]], list[Any]]:
    """The test split's sessions as REST episodes by user (images left out: captions stay in the
    text), the first user's first session carrying the secret; and its labelled questions."""
    from automemo.episode_store import EpisodeStore

    split = benchmark.split("test")
    users: dict[str, list[dict]] = {}
    for task in split.update:
        episode = benchmark.run_episode(task, None, None, EpisodeStore(store)).to_dict()
        for step in episode["steps"]:
            step.pop("screenshot", None)
        user = str(episode["metadata"]["user"])
        if not users:
            episode["steps"][0]["observation"] += f" (the code word is {SECRET})"
        users.setdefault(user, []).append(episode)
    return users, [t for t in split.retrieve if t.data.get("clues") and not t.data.get("refusal")]


def _measure(args, benchmark: Any, users: dict[str, list[dict]], questions: list[Any], work: Path) -> dict[str, Any]:
    import shutil

    from automemo.measurements.stand_ins.serve_export import write_export
    from automemo.programs import ProgramNotFound, resolve_program

    try:
        source = resolve_program(args.program).source
    except ProgramNotFound as exc:
        raise UserError(f"--program: {exc}") from None
    export = write_export(work / "export", source, [], benchmark=benchmark.name)
    state = work / "state"
    shutil.rmtree(state, ignore_errors=True)
    sandbox = sandbox_choice(args) or "bwrap"
    first = next(iter(users))
    engine = ["--engine", "ray", "--replicas", "2"] if args.engine == "ray" else []
    # idle on the same engine as adapting: Ray's proxy and ingress hops are its own latency, not
    # adaptation's (2026-11-29, pooled: idle measured on the single engine gave 8.2 -> 49.9 ms, a
    # ratio of 6.1; on Ray itself idle is 39.1 ms, and 52.5 ms while adapting: 1.34)
    from automemo.measurements.adaptation.forget import ForgetScenario, round_running
    from automemo.measurements.adaptation.load import LoadCycle, parse_loads

    loads = parse_loads(args.burner)
    noise, asked, trialled = None, [], []
    if args.feedback:  # the first half of each user's questions is asked with feedback, the second scored
        from automemo.measurements.adaptation.agent_feedback import FeedbackNoise, halves, round_and_trial

        try:
            noise = FeedbackNoise(args.feedback_miss, args.feedback_false)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        asked, questions = halves(questions)
        # the older part of the first half before the round, the newer part after it (a trial's recalls)
        asked, trialled = round_and_trial(asked)
    elif args.feedback_miss or args.feedback_false:
        raise UserError("--feedback-miss and --feedback-false set the agent of --feedback; add --feedback")
    played = None
    scenario = ForgetScenario()
    if args.forget_during_round:
        scenario.plant(users)
    with _served(export, state, sandbox, *engine) as server:
        url = server.url
        acked = _remember_all(url, users)
        before = _score(url, benchmark, questions)
        if noise is not None:
            from automemo.measurements.adaptation.agent_feedback import play

            played = play(lambda path, body: _post(url + path, body), asked, noise)
        idle = LoadCycle(loads).measure(lambda: _recall(url, first, PROBE)[0], seconds=args.idle_seconds,
                                        pause=PROBE_PAUSE_S)
    adapting = [*engine, "--adapt", args.mode, "--adapt-steps", str(args.steps),
                "--adapt-cpu-seconds", str(args.cpu_seconds)]
    killed = 0
    phase_started = time.monotonic()

    def forget_now(url: str) -> None:
        scenario.run(url, state, args.mode, users, _post, _export_lines, phase_started)
        for user, count in _reexpected(scenario, users).items():
            acked[user] = count
    if args.kill:  # a crash while a round works: the restarted server must have lost nothing
        with _served(export, state, sandbox, *adapting) as server:
            _until_a_round_runs(server.url, first, state, args.timeout)
            time.sleep(5)
            if args.forget_during_round:
                forget_now(server.url)
                time.sleep(2)
            server.kill9()
            killed = 1
    with _served(export, state, sandbox, *adapting) as server:
        url = server.url
        if args.forget_during_round and not args.kill:
            _until_a_round_runs(url, first, state, args.timeout)
            time.sleep(5)  # into the round's search: it has read the histories it will install from
            forget_now(url)
        busy = LoadCycle(loads).measure(lambda: _recall(url, first, PROBE)[0], seconds=args.timeout,
                                        until=lambda: _rounds_done(state, args.mode, users),
                                        at_least=20, pause=PROBE_PAUSE_S)
        trial = None
        if noise is not None:  # the trial phase: the newer asked questions, answered interleaved while one is open
            from automemo.measurements.adaptation.trial import run_trial_phase

            trial = run_trial_phase(url, state, users, trialled, noise, _post, timeout=args.trial_wait)
        after = _score(url, benchmark, questions)
        lost = sum(max(0, acked[u] - _exported(url, u)) for u in users)
        leaks = _leaks(url, state, users, first)
        versions = {u: _recall(url, u, PROBE)[1].get("version") for u in users}
        forgetting = (scenario.report(state, url, users, _recall, own=[work]) if args.forget_during_round else {})
    rounds = _rounds(state, users)
    by_load = {str(load): {"idle_ms": _p95(idle[load]), "adapting_ms": _p95(busy[load]),
                           "ratio": _p95(busy[load]) / _p95(idle[load]) if idle[load] and busy[load] else None,
                           "recalls": [len(idle[load]), len(busy[load])]} for load in loads}
    idle, busy = idle[loads[0]], busy[loads[0]]
    return {
        **forgetting, "recall_p95_by_load": by_load, "still_running_after_rounds": round_running(state),
        "benchmark": benchmark.name, "mode": args.mode, "program": args.program, "users": len(users),
        "questions": len(questions), "before": before["all"], "after": after["all"],
        **({"feedback": {"miss": noise.miss, "false": noise.false, "asked": played.recalls,
                         "recalls_with_feedback": played.with_feedback, "items_reported": played.used,
                         "scored": "the second half of each user's questions, never asked before"}}
           if played is not None else {}),
        **({"trial": trial} if trial is not None else {}),
        "gain": after["all"] - before["all"], "lost": lost,
        "per_user": {u: {"before": before.get(u), "after": after.get(u), "version": versions[u]} for u in users},
        "leaks": leaks, "rounds": rounds, "engine": args.engine, "killed": killed,
        "recall_p95_idle_ms": _p95(idle), "recall_p95_adapting_ms": _p95(busy), "burner": args.burner,
        "recall_p95_ratio": _p95(busy) / _p95(idle) if idle and busy else None,
    }


class _served:
    """A real `automemo serve` process over the state folder, for one phase (its log in the
    work folder: a pipe nobody reads would stall it)."""

    def __init__(self, export: Path, state: Path, sandbox: str, *extra: str) -> None:
        self.command = [sys.executable, "-m", "automemo", "serve", str(export), "--state", str(state),
                        "--sandbox", sandbox, *extra]
        self.log_path = state.parent / "serve.log"

    def __enter__(self) -> _served:
        import socket
        import subprocess

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.log = open(self.log_path, "a")
        self.proc = subprocess.Popen([*self.command, "--port", str(port)], stderr=self.log, stdout=self.log,
                                     start_new_session=True)
        url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise UserError(f"the server failed to start; see {self.log_path}")
            try:
                _get(url + "/healthz")
                self.url = url
                return self
            except OSError:
                time.sleep(0.2)
        raise UserError(f"the server did not answer within 300 s; see {self.log_path}")

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(120)
        self.log.close()

    def kill9(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)  # the server and what it started (a Ray cluster's own)
        self.proc.wait(60)


def _get(url: str) -> dict:
    return get_json(url)


def _post(url: str, body: Any) -> tuple[int, dict]:
    return post_json(url, body)


def _remember_all(url: str, users: dict[str, list[dict]]) -> dict[str, int]:
    acked = {}
    for user, episodes in users.items():
        acked[user] = 0
        for episode in episodes:
            status, answer = _post(url + "/v1/remember", {"user": user, "episode": episode})
            if status != 200:
                raise RuntimeError(f"remember refused ({status}): {answer}")
            acked[user] += 1
    return acked


def _recall(url: str, user: str, text: str) -> tuple[float, dict]:
    started = time.perf_counter()
    status, answer = _post(url + "/v1/recall", {"user": user, "instruction": text})
    if status != 200:
        raise RuntimeError(f"recall failed ({status}): {answer}")
    return (time.perf_counter() - started) * 1000, answer


def _score(url: str, benchmark: Any, questions: list[Any]) -> dict[str, float]:
    """Recall@k of every counted question through `/v1/recall` as its user: the mean over all
    questions ("all") and per user."""
    from automemo.benchmarks.evidence_score import evidence_score
    from automemo.contract import MemoryPayload

    scores: dict[str, list[float]] = {}
    for task in questions:
        user = str(task.data["user"])
        _, answer = _recall(url, user, task.instruction)
        payload = MemoryPayload(text=answer["text"], metadata={"evidence": answer["evidence"]})
        result = evidence_score(payload, task.data["clues"], benchmark.options.k, benchmark.data.aliases)
        if result.counted:
            scores.setdefault(user, []).append(result.value)
    every = [v for values in scores.values() for v in values]
    return {"all": statistics.fmean(every) if every else 0.0, **{u: statistics.fmean(v) for u, v in scores.items()}}


def _until_a_round_runs(url: str, user: str, state: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not _round_running(state):
        _recall(url, user, PROBE)
        time.sleep(0.5)


def _round_running(state: Path) -> bool:
    from automemo.measurements.adaptation.forget import round_running

    return round_running(state)


def _export_lines(url: str, user: str) -> list[str]:
    import urllib.request

    request = urllib.request.Request(url + "/v1/export", data=json.dumps({"user": user}).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as answer:
        return [line for line in answer.read().decode().splitlines() if line.strip()]


def _reexpected(scenario: Any, users: dict[str, list[dict]]) -> dict[str, int]:
    """What each user's export must hold after the forgets: one fewer for A; for B, the edited
    import (one fewer) and the one more remember."""
    a, b = scenario.forgotten[0].user, scenario.forgotten[1].user
    return {a: len(users[a]) - 1, b: len(users[b])}


def _rounds_done(state: Path, mode: str, users: dict[str, list[dict]]) -> bool:
    from automemo.adapt.config import AdaptConfig
    from automemo.adapt.history import read_history
    from automemo.adapt.round_log import ROUNDS, eligible
    from automemo.serve.storage.state_folder import StateFolder

    if _round_running(state):
        return False
    folder = StateFolder(state)
    if mode == "pooled":
        return (state / f"adapt-{ROUNDS}").is_file()
    due = [u for u in users if eligible(read_history(folder.user_dir(u)), AdaptConfig()) is None]
    return all((folder.user_dir(u) / "versions" / ROUNDS).is_file() for u in due)


def _rounds(state: Path, users: dict[str, list[dict]]) -> list[dict[str, Any]]:
    """Every round's record (outcome, reason, race), per user and pooled."""
    from automemo.adapt.round_log import ROUNDS
    from automemo.serve.storage.state_folder import StateFolder

    files = [StateFolder(state).user_dir(u) / "versions" / ROUNDS for u in users] + [state / f"adapt-{ROUNDS}"]
    return [json.loads(line) for f in files if f.is_file() for line in f.read_text().splitlines() if line.strip()]


def _exported(url: str, user: str) -> int:
    """The episodes a user's export holds (its recall lines, which follow them, left out)."""
    return sum(1 for line in _export_lines(url, user) if "recall" not in json.loads(line))


def _leaks(url: str, state: Path, users: dict[str, list[dict]], owner: str) -> int:
    from automemo.serve.storage.state_folder import StateFolder

    folder = StateFolder(state)
    leaks = 0
    for user in users:
        if user == owner:
            continue
        leaks += sum(1 for p in folder.user_dir(user).rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes())
        leaks += SECRET in json.dumps(_recall(url, user, f"what is the code word {SECRET}")[1])
    return leaks


def _p95(values: list[float]) -> float:
    return sorted(values)[int(0.95 * (len(values) - 1))] if values else 0.0
