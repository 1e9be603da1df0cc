"""`automemo memory users|export|import|forget|versions|rollback|adapt STATE`: a served memory's
users, read, moved, forgotten and adapted on its state folder (`automemo serve --state STATE`).
`versions` and `rollback` may run beside a server (a serving namespace follows its version
pointer on its next call); the others need it stopped.

What the server's REST routes do (GET /v1/export, POST /v1/import, POST /v1/forget), on disk: an
import is logged and replayed when the user's memory next opens; a forget is a tombstone, and
the episode's text, images and embeddings leave the folder at once."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from automemo.cli import UserError
from automemo.cli.flags import add_sandbox_flag, sandbox_choice
from automemo.serve.defaults import DEFAULT_USER


def register(sub) -> None:
    p = sub.add_parser("memory", help="list, export, import or forget users' memories in a serve state folder",
                       description=__doc__)
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)

    def verb(name: str, help: str, *, per_user: bool = True):
        parser = verbs.add_parser(name, help=help)
        parser.add_argument("state", type=Path, metavar="STATE", help="the server's --state folder")
        if per_user:
            parser.add_argument("--user", default=DEFAULT_USER, metavar="USER",
                                help=f"whose memory (default {DEFAULT_USER!r}: the memory of calls that name no user)")
        return parser

    verb("users", "every user with a memory, and how many episodes it holds", per_user=False)
    export = verb("export", "a user's episodes as JSON lines, images inline")
    export.add_argument("--out", type=Path, metavar="FILE", help="write here (default: standard output)")
    imported = verb("import", "add JSON lines of episodes (an export) to a user's memory")
    imported.add_argument("file", type=Path, metavar="FILE", help="JSON lines, one episode a line ('-': stdin)")
    forget = verb("forget", "forget a user's episode (--task-id) or the whole user (--all)")
    # one of the two is required, as over REST and MCP: a bare forget must not erase a memory
    target = forget.add_mutually_exclusive_group(required=True)
    target.add_argument("--task-id", metavar="ID", help="the episode's task_id (remember answered it)")
    target.add_argument("--all", action="store_true", help="everything of --user: every episode, image and "
                                                           "cache entry")
    verb("versions", "a user's program versions: which serves, where each came from, the race it won")
    rollback = verb("rollback", "serve another of a user's versions (0: the exported program)")
    rollback.add_argument("--to", type=int, required=True, metavar="V", help="the version to serve")
    adapt = verb("adapt", "run one adaptation round in the foreground: a label-free search of the history, "
                          "installed only if it wins a paired race with the live program")
    adapt.add_argument("--pooled", action="store_true", help="one round over every user with enough history "
                                                             "(carries only constants between users)")
    adapt.add_argument("--cpu-seconds", type=float, metavar="N", help="stop the round past this much CPU")
    adapt.add_argument("--steps", type=int, metavar="N", help="search steps of the round")
    adapt.add_argument("--export", type=Path, metavar="DIR",
                       help="the served export (default: where the server last served it from)")
    adapt.add_argument("--config", type=Path, metavar="FILE",
                       help="a run-config TOML for the round's search (keys as in automemo/presets/default.toml): "
                            "with the pseudo-question LLM role configured (llm.meta by default), the LLM writes "
                            "the questions")
    adapt.add_argument("--force", action="store_true", help="adapt even if the history did not grow since the "
                                                            "last round")
    add_sandbox_flag(adapt, default="auto")
    # the server's own rounds: it holds the folder, this round runs inside its lock; it names the
    # user by their folder's key (a user id on a command line is readable by anyone in /proc)
    adapt.add_argument("--server-pid", type=int, help=argparse.SUPPRESS)
    adapt.add_argument("--namespace", metavar="KEY", help=argparse.SUPPRESS)
    # the server's whole `AdaptConfig` (`AdaptConfig.to_json`), in place of the flags above
    adapt.add_argument("--adapt-config-json", metavar="JSON", help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def run(args) -> int:
    from automemo.serve.storage.state_folder import StateFolder
    from automemo.serve.user_memory import UserMemory

    state = StateFolder(args.state)
    if args.verb in ("versions", "rollback"):
        return _versions(state, args)
    if args.verb == "adapt" and args.server_pid:
        return _adapt(state, args)
    held = state.lock(None)  # a StateError says why the folder cannot be used
    try:
        if args.verb == "users":
            for user in state.users():
                print(f"{user}\t{len(UserMemory(user, state, None).episodes())} episodes")
            return 0
        if args.verb == "adapt":
            return _adapt(state, args)
        memory = UserMemory(args.user or DEFAULT_USER, state, None)
        if args.verb == "export":
            return _export(memory, args.out)
        if args.verb == "import":
            return _import(memory, state, args.file)
        return _forget(memory, state, args.task_id, all=args.all)
    finally:
        held.close()


def _export(memory, out: Path | None) -> int:
    from automemo.serve.transfer import episode_lines

    text = "".join(line + "\n" for line in episode_lines(memory))
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text)
        print(f"wrote {text.count(chr(10))} lines (episodes, then recalls) to {out}", file=sys.stderr)
    return 0


def _import(memory, state, file: Path) -> int:
    from automemo.serve.requests import BadRequest, RequestLimits
    from automemo.serve.transfer import read_lines

    try:
        text = sys.stdin.read() if str(file) == "-" else file.read_text()
    except OSError as exc:
        raise UserError(f"cannot read {file}: {exc.strerror}") from None
    try:
        imported = read_lines(text, RequestLimits(), state.benchmark(), user=memory.user)
    except BadRequest as exc:
        raise UserError(f"{file}: {exc}") from None
    memory.add_logged(imported.episodes)
    recalls = memory.recalls.add_lines(imported.recalls) if imported.recalls else 0
    print(f"imported {len(imported.episodes)} episodes" + (f" and {recalls} recalls" if recalls else "")
          + f" for {memory.user}; the server replays them when this memory next opens", file=sys.stderr)
    return 0


def _forget(memory, state, task_id: str | None, *, all: bool) -> int:
    user = memory.user
    if all:
        found = state.drop(user)
        print(f"forgot {'every episode of' if found else 'nothing: there is no memory of'} {user}",
              file=sys.stderr)
        return 0
    count = memory.forget(task_id)
    if not count:
        raise UserError(f"{user} has no remembered episode with task_id {task_id!r}; "
                        f"`automemo memory export` lists them")
    print(f"forgot {count} episode(s) {task_id!r} of {user}", file=sys.stderr)
    return 0


def _versions(state, args) -> int:
    from automemo.serve.storage.recall_log import RECALLS, RecallLog
    from automemo.serve.storage.trials import TrialPointer, trial_counts
    from automemo.serve.storage.versions import SHIPPED, NamespaceVersions, VersionError

    if not (state.root / "program.json").is_file():
        raise UserError(f"{state.root} is not the state folder of `automemo serve` (no program.json)")
    user = args.user or DEFAULT_USER
    versions = NamespaceVersions(state.user_dir(user))
    if args.verb == "rollback":
        try:
            with versions.locked():
                versions.set_current(args.to)
        except VersionError as exc:
            raise UserError(str(exc)) from None
        print(f"{user} serves version {args.to} (a running server follows on this user's next call)", file=sys.stderr)
        return 0
    current = versions.current()
    trial = TrialPointer.read(versions.root)
    print(f"{'*' if current == SHIPPED else ' '} 0\tshipped\tthe exported program")
    for r in versions.records():
        race = r.race or {}
        said = (f"retired: {r.retired}" if r.retired else
                f"from {r.parent}: {race.get('live_mean', 0):.3f} -> {race.get('candidate_mean', 0):.3f} "
                f"({race.get('difference', 0):+.3f} +- {race.get('se', 0):.3f} on {race.get('questions', 0)} "
                f"pseudo-questions)")
        mark = "*" if r.version == current else "~" if trial and r.version == trial.version else " "
        print(f"{mark} {r.version}\t{r.source}\t{r.created}\t{said}")
    if trial is not None:  # `~`: beside the one serving, its results interleaved into recalls
        counts = trial_counts(RecallLog(versions.user_dir / RECALLS).entries(), trial.trial)
        print(f"~ version {trial.version} is on trial since {trial.opened}: {counts.recalls} interleaved recalls, "
              f"{counts.wins} won, {counts.losses} lost, {counts.ties} tied (a running `serve --adapt` decides it)")
    return 0


def _adapt(state, args) -> int:
    from automemo.adapt.config import AdaptConfig
    from automemo.adapt.cpu import CpuBudget
    from automemo.adapt.round import Served, adapt_namespace, adapt_pooled, adapt_user
    from automemo.cli.adapt_flags import MEMORY_ADAPT_FLAGS, adapt_config, given_adapt_flags

    export = args.export or state.identity().get("export")
    if not export or not (Path(export) / "manifest.json").is_file():
        raise UserError(f"which export does {state.root} serve? pass --export DIR (the folder given to "
                        f"`automemo serve`)")
    if args.pooled and args.user != DEFAULT_USER:
        raise UserError("--pooled adapts every user with enough history; drop --user, or drop --pooled")
    if args.adapt_config_json is not None:  # a server's round: its whole config, nothing else
        if given_adapt_flags(args, MEMORY_ADAPT_FLAGS):
            raise UserError("a server's round takes its whole config from the server; drop "
                            f"{', '.join(given_adapt_flags(args, MEMORY_ADAPT_FLAGS))}")
        config = AdaptConfig.from_json(args.adapt_config_json)
    else:
        config = adapt_config(args, MEMORY_ADAPT_FLAGS)
    served = Served(Path(export).resolve(), sandbox_choice(args) or "auto",
                    bool(state.identity().get("shared_experience")))

    def say(message: str) -> None:
        print(f"automemo adapt: {message}", file=sys.stderr, flush=True)

    with CpuBudget(config.cpu_seconds):
        if args.pooled:
            result = adapt_pooled(state, served, config, say=say)
        elif args.namespace:
            result = adapt_namespace(state, served, args.namespace, config, force=args.force, say=say)
        else:
            result = adapt_user(state, served, args.user or DEFAULT_USER, config, force=args.force, say=say)
    print(f"{result.outcome.value}: {result.reason}")
    return 0
