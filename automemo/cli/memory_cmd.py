"""`automemo memory users|export|import|forget STATE`: a served memory's users, read, moved and
forgotten on its state folder (`automemo serve --state STATE`), with the server stopped.

What the server's REST routes do (GET /v1/export, POST /v1/import, POST /v1/forget), on disk: an
import is logged and replayed when the user's memory next opens; a forget is a tombstone, and
the episode's text, images and embeddings leave the folder at once."""

from __future__ import annotations

import sys
from pathlib import Path

from automemo.cli import UserError
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
    p.set_defaults(func=run)


def run(args) -> int:
    from automemo.serve.state_folder import StateFolder
    from automemo.serve.user_memory import UserMemory

    state = StateFolder(args.state)
    held = state.lock(None)  # a StateError says why the folder cannot be used
    try:
        if args.verb == "users":
            for user in state.users():
                print(f"{user}\t{len(UserMemory(user, state, None).episodes())} episodes")
            return 0
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
        print(f"wrote {text.count(chr(10))} episodes to {out}", file=sys.stderr)
    return 0


def _import(memory, state, file: Path) -> int:
    from automemo.serve.requests import BadRequest, RequestLimits
    from automemo.serve.transfer import read_lines

    try:
        text = sys.stdin.read() if str(file) == "-" else file.read_text()
    except OSError as exc:
        raise UserError(f"cannot read {file}: {exc.strerror}") from None
    try:
        episodes = read_lines(text, RequestLimits(), state.benchmark(), user=memory.user)
    except BadRequest as exc:
        raise UserError(f"{file}: {exc}") from None
    memory.add_logged(episodes)
    print(f"imported {len(episodes)} episodes for {memory.user}; the server replays them when "
          f"this memory next opens", file=sys.stderr)
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
