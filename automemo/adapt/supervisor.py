"""`automemo serve --adapt`: adaptation rounds in the background of a running server.

Every `check_every_s` the supervisor looks for namespaces whose history is large enough and grew
since their last round (per user), or for enough such users (pooled), and starts a round for
each as `automemo memory adapt ... --server-pid`: a process of its own, in a process group of its
own, at the lowest CPU priority (SCHED_IDLE), within its CPU-seconds budget; at most
`max_parallel` at once. The round installs a version on disk (`serve.storage.versions`); the serving
namespace follows it on its next call. The server never waits for a round, and stopping the
server stops its rounds (an unfinished round installs nothing)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Callable

from automemo.adapt.config import POOLED, AdaptConfig
from automemo.adapt.cpu import ROUND_THREAD_ENV, lowest_priority
from automemo.adapt.round import sweep_stale_work
from automemo.adapt.round_log import pooled_due, user_due
from automemo.adapt.trial import decide_trials
from automemo.episode_store import atomic_write
from automemo.serve.storage.state_folder import LOG, StateFolder
from automemo.serve.storage.versions import ADAPT_STATUS, NamespaceVersions

# What each round said (progress; its stderr, tracebacks included): a user's round logs into the
# user's own folder (`users/<key>/versions/round.log`), so it leaves with a forget all; the pooled
# round into STATE/adapt-logs/pooled.log (it names no user and quotes no node summary).
LOGS = "adapt-logs"
ROUND_LOG = "round.log"
PACKAGE_PARENT = Path(__file__).resolve().parents[2]
REAP_EVERY_S = 2.0   # how often a server with rounds running looks whether one ended


class Adapter:
    def __init__(self, state_root: Path, export: Path, mode: str, *, sandbox: str, config: AdaptConfig = AdaptConfig(),
                 say: Callable[[str], None] = lambda m: None) -> None:
        self.state = StateFolder(state_root)
        self.export = Path(export).resolve()
        self.mode = mode
        self.sandbox = sandbox
        self.config = config
        self.say = say
        self.running: dict[str, subprocess.Popen] = {}
        self.started_rounds = 0
        self._log_sizes: dict[str, int] = {}   # a namespace's log size when last looked at
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="automemo-adapt")

    # --- life ----------------------------------------------------------------------------------

    def start(self) -> Adapter:
        swept = sweep_stale_work(self.state)
        self._publish()
        if swept:
            self.say(f"removed the work of {swept} adaptation round(s) a stop cut short")
        self._thread.start()
        self.say(f"adapting {'all users pooled' if self.mode == POOLED else 'each user'} in the background: a "
                 f"round once a history holds {self.config.min_sessions} sessions and {self.config.min_turns} "
                 f"turns, at most {self.config.max_parallel} at once, {self.config.cpu_seconds:g} CPU s each")
        return self

    def stop(self) -> None:
        self._stop.set()
        for proc in list(self.running.values()):
            _kill_group(proc)
        self._thread.join(timeout=5)
        (self.state.root / ADAPT_STATUS).unlink(missing_ok=True)

    def status(self) -> dict[str, Any]:
        self._reap()
        return {"mode": self.mode, "running": len(self.running), "rounds_started": self.started_rounds}

    def _publish(self) -> None:
        """The status into STATE/adapt-status.json, for a /healthz served by another process
        (`--engine ray`'s ingress): written at start and after every look."""
        atomic_write(self.state.root / ADAPT_STATUS, json.dumps(self.status()).encode())

    # --- the loop ------------------------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
                self._publish()
            except Exception as exc:  # noqa: BLE001 - a failed look must never stop the server
                self.say(f"adaptation: looking for users to adapt failed ({exc}); trying again later")
            # while rounds run, look often: the next one starts as soon as one ends
            self._stop.wait(REAP_EVERY_S if self.running else self.config.check_every_s)

    def tick(self) -> list[str]:
        """Start the rounds that are due (as many as there is room for); returns what started.
        A namespace is looked at again only once its log changed since it was last decided
        (started, or found not due), so a look costs a stat per namespace."""
        self._reap()
        self._decide_trials()
        room = self.config.max_parallel - len(self.running)
        if room <= 0:
            return []
        if self.mode == POOLED:
            return self._tick_pooled()
        started: list[str] = []
        for user in self.state.users():
            if len(started) >= room:
                break
            size = self._log_size(user)
            if user in self.running or self._log_sizes.get(user) == size:
                continue
            if user_due(self.state, user, self.config):
                self._launch(user)
                started.append(user)
            self._log_sizes[user] = size
        return started

    def _decide_trials(self) -> None:
        """Promote or retire the trials their feedback decides (`adapt.trial`): numbers read from
        each user's recall log, cheap enough for every look."""
        for decision in decide_trials(self.state, self.config.z):
            self.say(f"adaptation: a {decision.source} trial was {decision.verdict} in {decision.users} user(s): "
                     f"{decision.reason}")

    def _tick_pooled(self) -> list[str]:
        if POOLED in self.running:
            return []
        sizes = {u: self._log_size(u) for u in self.state.users()}
        if sizes == self._log_sizes:
            return []
        due = pooled_due(self.state, self.config)
        if due:
            self._launch(POOLED)
        self._log_sizes = sizes
        return [POOLED] if due else []

    def _log_size(self, user: str) -> int:
        try:
            return (self.state.user_dir(user) / LOG).stat().st_size
        except OSError:
            return -1

    def _launch(self, key: str) -> None:
        command = [sys.executable, "-m", "automemo", "memory", "adapt", str(self.state.root),
                   "--export", str(self.export), "--sandbox", self.sandbox, "--server-pid", str(os.getpid()),
                   "--adapt-config-json", self.config.to_json()]   # the whole config crosses
        # a user by their folder's key, never their id: a command line is readable in /proc
        command += ["--pooled"] if key == POOLED else ["--namespace", self.state.user_dir(key).name]
        if key == POOLED:
            log_path = self.state.root / LOGS / f"{POOLED}.log"
        else:
            log_path = NamespaceVersions(self.state.user_dir(key)).root / ROUND_LOG
        log_path.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **ROUND_THREAD_ENV,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE_PARENT), os.environ.get("PYTHONPATH")]))}
        with open(log_path, "ab") as log:
            self.running[key] = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                                 preexec_fn=lowest_priority, env=env)
        self.started_rounds += 1

    def _reap(self) -> None:
        for key, proc in list(self.running.items()):
            if proc.poll() is not None:
                del self.running[key]


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait(timeout=10)
