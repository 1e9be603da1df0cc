"""One adaptation round: a served namespace's history (or every eligible namespace's, pooled)
searched without labels, the selection raced against the live program, and installed as a new
version only on a paired win (docs/serve.md, "Adaptation").

    history ─▶ sessions file ─▶ label-free search rooted at the live program ─▶ candidate
            ─▶ paired race on held-out pseudo-questions ─▶ won? ─▶ version folder + snapshot
            ─▶ (every episode it read still remembered?) ─▶ install: one rename, one pointer

Nothing is installed until the last step, which is one rename and one pointer write under the
namespace's versions lock: a round killed anywhere leaves the version that served before, whole.
The work folder (the sessions file, the search's run, the race) holds copies of the history; it
is deleted when the round ends, and by any forget in the meantime (`serve.storage.versions`).

Per user, the search fits on that user's history alone. Pooled, the histories are written under
opaque names (u1, u2, ...), the search runs the offline meta agent only, the race is on users the
search held out, the candidate must have a shape that carries numbers and the package's own names
only (`privacy.refusal`), and each version's record and evidence hold only the race's figures and
keyed tags of what it read: no node summary, no other user's key or sequence numbers.

Before an install the round checks, under the namespace's versions lock, that every namespace it
read is the same life it read (`state_folder.incarnation`: a forget all and a new remember
restart the sequence numbers at 1) and still holds every episode it read."""

from __future__ import annotations

import contextlib
import fcntl
import shutil
import time
import uuid
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from automemo.adapt import privacy
from automemo.adapt.config import PER_USER, POOLED, AdaptConfig
from automemo.adapt.feedback_questions import MIN_FEEDBACK, feedback_recalls, write_questions
from automemo.adapt.history import History, read_history, still_live, write_sessions
from automemo.adapt.round_log import ROUNDS, Outcome, RoundResult, append_round, eligible, not_grown
from automemo.adapt.search_race import Proposal, Race, race, round_config, search
from automemo.adapt.version_build import prebuild_snapshot, write_program
from automemo.config import RunConfig
from automemo.deploy import read_manifest
from automemo.export import PROGRAM
from automemo.serve.storage.recall_log import RECALLS, RecallLog
from automemo.serve.storage.state_folder import USERS, StateFolder, incarnation
from automemo.serve.storage.trials import TrialPointer
from automemo.serve.storage.versions import (SHIPPED, WORK, NamespaceGone, NamespaceVersions, VersionRecord, now,
                                     pooled_used)

ROUND_LOCK = ".round-lock"         # held by the one round on a namespace (versions/.round-lock)
POOLED_LOCK = ".adapt-pooled-lock"  # held by the one pooled round (STATE/.adapt-pooled-lock)
# Why a round kept the live program when its search proposed nothing: the search is held to the
# live program (its root) and nothing beat it by the win rule (automemo.search.win_rule).
# Why a round on feedback put no candidate on trial: it behaves as the live program does.
SAME_ANSWERS = "it scored as the live program on every raced question: a trial could not tell them apart"
KEPT_BY_SEARCH = ("the search kept the live program: no candidate won on the scored questions by a paired "
                  "SE without losing on a guard kind by more than one")


@dataclass(frozen=True)
class Served:
    """What a round needs of the server: the export it serves and how it runs programs."""

    export: Path
    sandbox: str
    shared_experience: bool


def adapt_user(state: StateFolder, served: Served, user: str, config: AdaptConfig, *, force: bool = False,
               say: Callable[[str], None] = lambda m: None) -> RoundResult:
    """One per-user round on `user`'s namespace."""
    return adapt_namespace(state, served, state.user_dir(user).name, config, force=force, say=say)


def adapt_namespace(state: StateFolder, served: Served, key: str, config: AdaptConfig, *, force: bool = False,
                    say: Callable[[str], None] = lambda m: None) -> RoundResult:
    """One per-user round on the namespace whose folder is `users/<key>` (what the server's
    rounds are given: a user id never goes on a command line, where /proc shows it)."""
    started = time.monotonic()
    folder = state.root / USERS / key
    if not folder.is_dir():
        return RoundResult(PER_USER, Outcome.SKIPPED, "this user has no memory (forgotten, or never used)", (key,))
    versions = NamespaceVersions(folder)
    versions.sweep_staging()
    history = read_history(folder)
    figures = {"sessions": history.sessions, "turns": history.turns}

    def result(outcome: Outcome, reason: str, **kw: Any) -> RoundResult:
        done = RoundResult(PER_USER, outcome, reason, (key,), history=figures,
                           seconds=round(time.monotonic() - started, 1), **kw)
        append_round(versions.root / ROUNDS, done.to_dict())
        return done

    why = eligible(history, config) or (None if force else not_grown(versions.root / ROUNDS, history, config))
    if why:
        return result(Outcome.SKIPPED, why)
    with one_round(versions.root / ROUND_LOCK) as alone:
        if not alone:
            return RoundResult(PER_USER, Outcome.SKIPPED, "another round on this user is running", (key,))
        shutil.rmtree(folder / WORK, ignore_errors=True)  # a killed round's copy of the history
        return _adapt_user(served, config, folder, versions, history, result, say)


@dataclass(frozen=True)
class _Read:
    """What a round reads: each history under its name in the sessions file (per user
    "history"; pooled opaque names u1, u2, ...: no user id reaches the files), with its folder
    (where the agent's feedback on its recalls is logged)."""

    histories: tuple[tuple[str, History, Path], ...]
    pooled: bool
    blocks: int | None   # per user: sessions a conversation of the split; pooled: a user is one

    def said(self) -> str:
        if self.pooled:
            return f"{len(self.histories)} users' histories"
        (_, history, _), = self.histories
        return f"{history.sessions} sessions ({history.turns} turns)"

    def search_record(self, proposal: Proposal) -> dict[str, Any]:
        return _aggregate(proposal) if self.pooled else dict(proposal.search)


@dataclass(frozen=True)
class _Chosen:
    proposal: Proposal
    run: Race
    on_trial: bool   # a round on the agent's feedback: the candidate goes on trial, not in service


def _search_and_race(read: _Read, served: Served, config: AdaptConfig, live: Path, work: Path,
                     result: Callable[..., RoundResult], say: Callable[[str], None]) -> _Chosen | RoundResult:
    """What a round per user and a pooled one share: the histories as a sessions file, the search
    rooted at the live program (on the agent's feedback when enough recalls carry it, else
    without labels), the pooled shape check, and the race of its proposals in turn. The
    candidate chosen, or the round's result when the live program stays."""
    sessions = work / "sessions.jsonl"
    write_sessions(sessions, [(history, name) for name, history, _ in read.histories])
    # pooled, the agents' feedback of every user is pooled as their histories are: what is fitted
    # on it crosses users as numbers only (a pooled candidate's shape, `privacy`)
    feedback = _feedback_questions(work, [(history, name, folder) for name, history, folder in read.histories])
    steps = f"{config.steps} step{'s' if config.steps != 1 else ''}"
    whose = "their agents'" if read.pooled else "the agent's"
    say(f"searching {read.said()} " + (f"on {whose} feedback, {steps}" if feedback else f"without labels, {steps}"))
    live_source = live.read_text()
    proposals = search(work, _config(served, sessions, config, read.blocks, root=live, pooled=read.pooled,
                                     feedback=feedback),
                       live_source, config.race_candidates, when_kept=feedback is not None)
    if not proposals:
        return result(Outcome.KEPT, KEPT_BY_SEARCH)
    if read.pooled:
        clean = [p for p in proposals if privacy.refusal(p.source, live_source) is None]
        if not clean:
            return result(Outcome.REFUSED, f"no candidate ({len(proposals)}) may be pooled: "
                                           f"{privacy.refusal(proposals[0].source, live_source)}",
                          search=_aggregate(proposals[0]))
        proposals = clean
    proposal, run, why = _first_winner(work, proposals,
                                       _race_configs(served, sessions, config, read.blocks, pooled=read.pooled,
                                                     feedback=feedback),
                                       live_source, config, say, pooled=read.pooled, on_trial=feedback is not None)
    if proposal is None:
        return result(Outcome.KEPT, why, race=run.summary() if run else {}, search=read.search_record(proposals[0]))
    return _Chosen(proposal, run, on_trial=feedback is not None)


def _adapt_user(served: Served, config: AdaptConfig, folder: Path,
                versions: NamespaceVersions, history: History, result: Callable[..., RoundResult],
                say: Callable[[str], None]) -> RoundResult:
    live_version = versions.current()
    live = _program_file(served.export, versions, live_version)
    work = folder / WORK / uuid.uuid4().hex[:12]
    try:
        read = _Read((("history", history, folder),), pooled=False, blocks=_block_sessions(history.sessions, config))
        chosen = _search_and_race(read, served, config, live, work, result, say)
        if isinstance(chosen, RoundResult):
            return chosen
        proposal, run = chosen.proposal, chosen.run
        say("the candidate " + ("goes on trial" if chosen.on_trial else "won") + "; rebuilding this memory on it")
        record = VersionRecord(version=0, created=now(), program_sha256="", source=PER_USER, parent=live_version,
                               used={folder.name: history.seqs}, race=run.summary(), search=dict(proposal.search))
        evidence = {"race": {**run.summary(), "per_question": run.per_question},
                    "questions": dict(run.texts), "search": dict(proposal.search)}
        trial = new_trial(PER_USER, folder) if chosen.on_trial else None
        installed = _install(versions, served, history, proposal, record, evidence,
                             adapted={"summary": proposal.summary, "source": PER_USER}, trial=trial)
        if installed is None:
            return result(Outcome.DISCARDED, "an episode the round read was forgotten meanwhile; nothing installed",
                          race=run.summary(), search=dict(proposal.search))
        if trial is not None:
            return result(Outcome.TRIAL, f"version {installed} is on trial beside the live program: {_raced(run)}",
                          versions={folder.name: installed}, race=run.summary(), search=dict(proposal.search))
        return result(Outcome.INSTALLED, f"version {installed} serves: {_won(run)}", versions={folder.name: installed},
                      race=run.summary(), search=dict(proposal.search))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        _leave_no_folder(folder)


def _leave_no_folder(folder: Path) -> None:
    """When the user was forgotten whole during the round, the folders the round made again on
    its way (its work folder's parents) go, empty as they are; never a folder with anything in
    it (a new claim of the same user may have begun)."""
    if (folder / "user.json").is_file():
        return
    for empty in (folder / WORK, folder / "versions", folder):
        try:
            empty.rmdir()
        except OSError:
            pass


def adapt_pooled(state: StateFolder, served: Served, config: AdaptConfig, *, users: Sequence[str] | None = None,
                 say: Callable[[str], None] = lambda m: None) -> RoundResult:
    """One pooled round over every namespace (or `users`) that serves the exported program and
    has enough history."""
    started = time.monotonic()
    histories: list[tuple[str, History]] = []
    for user in users if users is not None else state.users():
        folder = state.user_dir(user)
        if NamespaceVersions(folder).current() != SHIPPED:
            continue  # adapted on its own already: pooled adaptation adapts the exported program
        history = read_history(folder)
        if eligible(history, config) is None:
            histories.append((user, history))
    figures = {"users": len(histories), "sessions": sum(h.sessions for _, h in histories),
               "turns": sum(h.turns for _, h in histories)}

    def result(outcome: Outcome, reason: str, **kw: Any) -> RoundResult:
        done = RoundResult(POOLED, outcome, reason, tuple(u for u, _ in histories), history=figures,
                           seconds=round(time.monotonic() - started, 1), **kw)
        append_round(state.root / f"adapt-{ROUNDS}", done.to_dict(with_users=False))
        return done

    if len(histories) < config.min_blocks:
        return result(Outcome.SKIPPED, f"{len(histories)} users have enough history; pooled adaptation needs "
                                       f"{config.min_blocks} (some to search on, some to race on)")
    with one_round(state.root / POOLED_LOCK) as alone:
        if not alone:
            return RoundResult(POOLED, Outcome.SKIPPED, "another pooled round is running")
        shutil.rmtree(state.root / WORK, ignore_errors=True)  # a killed round's copy of the histories
        return _adapt_pooled(state, served, config, histories, result, say)


def _adapt_pooled(state: StateFolder, served: Served, config: AdaptConfig, histories: list[tuple[str, History]],
                  result: Callable[..., RoundResult], say: Callable[[str], None]) -> RoundResult:
    live = served.export / PROGRAM
    work = state.root / WORK / uuid.uuid4().hex[:12]
    try:
        read = _Read(tuple((f"u{i + 1}", history, state.user_dir(user)) for i, (user, history) in enumerate(histories)),
                     pooled=True, blocks=None)
        chosen = _search_and_race(read, served, config, live, work, result, say)
        if isinstance(chosen, RoundResult):
            return chosen
        proposal, run = chosen.proposal, chosen.run
        used = pooled_used(state.tag, {history.key: history.seqs for _, history in histories})
        installed: dict[str, int] = {}
        trial_id = new_trial(POOLED, None).trial  # one trial in every user: decided on all their counts
        for user, history in histories:
            say(f"rebuilding one user's memory on the pooled candidate ({len(installed) + 1}/{len(histories)})")
            versions = NamespaceVersions(state.user_dir(user))
            record = VersionRecord(version=0, created=now(), program_sha256="", source=POOLED, parent=SHIPPED,
                                   used=used, race=run.summary(), search=_aggregate(proposal))
            try:
                trial = new_trial(POOLED, versions.user_dir, trial_id) if chosen.on_trial else None
                version = _install(versions, served, history, proposal, record, {"race": run.summary()},
                                   adapted={"source": POOLED},
                                   also_live=[(state.user_dir(u), h) for u, h in histories], trial=trial)
            except NamespaceGone:
                version = None  # this user was forgotten whole during the round
            if version is not None:
                installed[history.key] = version
        if not installed:
            return result(Outcome.DISCARDED, "an episode the round read was forgotten meanwhile; nothing installed",
                          race=run.summary(), search=_aggregate(proposal))
        if chosen.on_trial:
            return result(Outcome.TRIAL, f"the pooled candidate is on trial in {len(installed)} user(s): {_raced(run)}",
                          versions=installed, race=run.summary(), search=_aggregate(proposal))
        return result(Outcome.INSTALLED, f"{len(installed)} user(s) serve the pooled candidate: {_won(run)}",
                      versions=installed, race=run.summary(), search=_aggregate(proposal))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def sweep_stale_work(state: StateFolder) -> int:
    """Delete the work a killed round left (its copies of histories, its search run, a version it
    was building), wherever no round holds the lock; returns how many folders went. Run when a
    server starts adapting."""
    swept = 0
    places = [(state.root / POOLED_LOCK, state.root / WORK)]
    places += [(NamespaceVersions(state.user_dir(u)).root / ROUND_LOCK, state.user_dir(u) / WORK) for u in state.users()]
    for user in state.users():
        NamespaceVersions(state.user_dir(user)).sweep_staging()
    for lock, work in places:
        if not work.exists():
            continue
        with one_round(lock) as alone:
            if alone:
                shutil.rmtree(work, ignore_errors=True)
                swept += 1
    return swept


# --- the steps -------------------------------------------------------------------------------


@contextlib.contextmanager
def one_round(path: Path) -> Iterator[bool]:
    """Whether this is the only round holding `path` (a round a killed server left running, or
    an operator's beside the server's, finds it held and stops)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True


def _first_winner(work: Path, proposals: Sequence[Proposal], configs: tuple[list[RunConfig], list[RunConfig]],
                  live: str, config: AdaptConfig, say: Callable[[str], None],
                  pooled: bool = False, on_trial: bool = False) -> tuple[Proposal | None, Race | None, str]:
    """Race the proposals in turn; the first that wins, its race and "" (else None, the last
    race, and why none won). Pooled, what is said names the node only: its summary can quote a
    stage fitted on the users' questions, and the round's log is outside every user's folder.
    `on_trial` (a round on the agent's feedback): the first proposal that does not answer as the
    live program does, its race recorded but not a gate. Logged feedback labels only what the live program showed, so neither the race on it nor
    the guard kinds can credit what only the candidate shows; the interleaved trial can, and it
    decides (`adapt.trial`; docs/serve.md, "Trials", for what the offline gates cost)."""
    runs: list[str] = []
    run = None
    for proposal in proposals:
        said = "" if pooled else f" ({proposal.summary})"
        say(f"racing #{proposal.node_id}{said} against the live program" + (" (for the record)" if on_trial else ""))
        run = race(work / f"race-{proposal.node_id}", *configs, live, proposal.source, config.z)
        if run.won or (on_trial and not run.same_answers):
            return proposal, run, ""
        runs.append(f"#{proposal.node_id}: " + (SAME_ANSWERS if on_trial else _lost(run)))
    return None, run, f"no candidate won its race ({len(runs)} raced): " + "; ".join(runs)


def _install(versions: NamespaceVersions, served: Served, history: History, proposal: Proposal,
             record: VersionRecord, evidence: dict[str, Any], *, adapted: dict[str, Any],
             also_live: Sequence[tuple[Path, History]] = (), trial: TrialPointer | None = None) -> int | None:
    """Build the version in a staging folder, then, under the namespace's versions lock, install
    it if every namespace it read is the life it read and still holds every episode it read (else
    None, and nothing stays). A forget sweeps the staging folder (it holds a snapshot of the
    memory): the build then fails on the missing folder, and nothing is installed either."""
    try:
        staged = versions.stage()
    except NamespaceGone:
        return None
    try:
        sha = write_program(served.export, proposal.source, staged, adapted)
        prebuild_snapshot(staged, history, sandbox=served.sandbox, shared_experience=served.shared_experience,
                          program_sha256=sha)
        with versions.locked():
            read = [(versions.user_dir, history), *also_live]
            if not staged.is_dir() or not all(still_live(folder, h.seqs, h.incarnation) for folder, h in read):
                return None
            version = versions.next_version()
            record = VersionRecord(**{**asdict(record), "version": version, "program_sha256": sha})
            if trial is None:
                return versions.install(staged, record, evidence)
            # on trial: installed, but current.json stays; the trial pointer names it (`serve.storage.trials`)
            replaced = TrialPointer.read(versions.root)
            versions.install(staged, record, evidence, serve=False)
            replace(trial, version=version).write(versions.root)
        if replaced is not None:  # a newer trial replaces an older one still open
            versions.retire(lambda r: r.version == replaced.version, "its trial was replaced by a newer round's")
        return version
    except (FileNotFoundError, NamespaceGone):
        return None  # swept by a forget, or the user was forgotten whole: what it built is gone
    finally:
        shutil.rmtree(staged, ignore_errors=True)


def _config(served: Served, sessions: Path, config: AdaptConfig, blocks: int | None, *,
            root: Path | None = None, pseudo_seed: int = 0, kinds: dict[str, float] | None = None,
            pooled: bool = False, feedback: Path | None = None) -> RunConfig:
    """A run config of the round: the search's (rooted at `root`, the live program) or a race
    draw's (its own pseudo-question seed, and for the guard its kinds); with `feedback`, scored on
    the questions from the agent's feedback instead (older in train, newer in test)."""
    return round_config(sessions, read_manifest(served.export), config, blocks=blocks, sandbox=served.sandbox,
                        root=root, pseudo_seed=pseudo_seed, kinds=kinds,
                        pooled=pooled, feedback=feedback)


def _feedback_questions(work: Path, read: Sequence[tuple[History, str, Path]]) -> Path | None:
    """The questions file of the agent's feedback on the namespaces' recalls (each history under
    its conversation name), or None when fewer than `MIN_FEEDBACK` recalls carry feedback: then
    the round searches without labels. The file is in the round's work folder, removed with it."""
    recalls = [r for history, name, folder in read
               for r in feedback_recalls(history, RecallLog(folder / RECALLS).entries(), name)]
    if len(recalls) < MIN_FEEDBACK:
        return None
    path = work / "feedback.jsonl"
    return path if write_questions(path, recalls) >= MIN_FEEDBACK else None


def _race_configs(served: Served, sessions: Path, config: AdaptConfig,
                  blocks: int | None, pooled: bool = False, feedback: Path | None = None) -> tuple[list[RunConfig], list[RunConfig]]:
    """The race's draws: on the scored kind (with `feedback`: the newer recalls with feedback, the
    search fitted on the older ones), and on the guard kinds (pseudo-questions either way)."""
    seeds = [config.race_seed + draw for draw in range(config.race_draws)]
    if feedback is not None:
        scored = [_config(served, sessions, config, blocks, pooled=pooled, feedback=feedback)]
    else:
        scored = [_config(served, sessions, config, blocks, pseudo_seed=seed, pooled=pooled) for seed in seeds]
    guarded = [_config(served, sessions, config, blocks, pseudo_seed=seed, kinds=config.guard_kinds, pooled=pooled)
               for seed in seeds] if config.guard_kinds else []
    return scored, guarded


def _program_file(export: Path, versions: NamespaceVersions, version: int) -> Path:
    return export / PROGRAM if version == SHIPPED else versions.program_folder(version) / PROGRAM


def _block_sessions(sessions: int, config: AdaptConfig) -> int:
    """Blocks of sessions the search splits by: at most `block_sessions`, at least `min_blocks`."""
    return max(2, min(config.block_sessions, sessions // config.min_blocks))


def _aggregate(proposal: Proposal) -> dict[str, Any]:
    """A pooled search's record without its summary's words (a node summary can quote a stage
    fitted on the users' questions)."""
    return {k: v for k, v in proposal.search.items() if k != "summary"}


def _lost(run: Race) -> str:
    if run.cleared and "holds" in run.guard:
        return (f"the candidate won on the scored kind ({run.difference:+.3f} ± {run.se:.3f}) but lost on the "
                f"guard kinds: {run.guard['difference']:+.3f} ± {run.guard['se']:.3f} on {run.guard['questions']} "
                f"questions (it may lose by no more than {run.z:g} SE)")
    return (f"the candidate did not win its race: {run.difference:+.3f} ± {run.se:.3f} on {run.questions} "
            f"held-out questions (it needs more than {run.z:g} SE above 0)")


def new_trial(source: str, folder: Path | None, trial_id: str | None = None) -> TrialPointer:
    """A trial's pointer, its version filled in at install (`_install`)."""
    return TrialPointer(version=0, trial=trial_id or uuid.uuid4().hex, source=source,
                        incarnation=(incarnation(folder) or "") if folder is not None else "", opened=now())


def _raced(run: Race) -> str:
    guard = run.guard
    said = (f"; guard kinds {guard['difference']:+.3f} ± {guard['se']:.3f}" if "difference" in guard else "")
    return (f"offline on the newer feedback {run.live_mean:.3f} -> {run.candidate_mean:.3f} "
            f"({run.difference:+.3f} ± {run.se:.3f}, {run.questions} questions{said}); the trial decides")


def _won(run: Race) -> str:
    return f"{run.live_mean:.3f} -> {run.candidate_mean:.3f} ({run.difference:+.3f} ± {run.se:.3f}, {run.questions} questions)"
