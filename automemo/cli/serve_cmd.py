"""`automemo serve DIR`: run an exported memo program as a memory service. MCP over stdio (for
desktop and IDE agents) or over streamable HTTP at /mcp, with a REST API on the same HTTP server
(POST /v1/recall, POST /v1/remember, GET /v1/manifest, GET /healthz, /openapi.json). Every
user's memory starts empty (--shared-experience: from the search's update episodes); a call
that names no user acts on the user "default". Every acknowledged remember is kept in the
--state folder and replayed on start."""

from __future__ import annotations

import sys
from pathlib import Path

from automemo.cli import UserError
from automemo.cli.adapt_flags import SERVE_FLAGS, Renamed, adapt_config, given_adapt_flags
from automemo.cli.flags import NO_SANDBOX, add_sandbox_flag, sandbox_choice
from automemo.serve.access import AccessConfigError, TokenTable, token_table
from automemo.serve.defaults import (DEFAULT_USER, HOST, MAX_OPEN_NAMESPACES, PORT, RATE_LIMIT, RAY_REPLICAS,
                                     SNAPSHOT_EVERY)
from automemo.serve.http.policy import HttpPolicy, is_loopback

TOKEN_ENV = "AUTOMEMO_SERVE_TOKEN"


def register(sub) -> None:
    p = sub.add_parser("serve", help="serve an exported memo program over MCP and HTTP", description=__doc__)
    p.add_argument("folder", type=Path, metavar="DIR",
                   help="an exported folder (`automemo export ... --out DIR`), or a program to serve with no "
                        "search run first: discovered (the discovered default), a seed name or a program file")
    p.add_argument("--transport", choices=("stdio", "http"), default="http",
                   help="stdio: MCP on stdin/stdout for one local agent; http (default): MCP at /mcp and REST")
    p.add_argument("--host", default=HOST,
                   help=f"address to bind (default {HOST}; any other needs a token, see --token-env)")
    p.add_argument("--port", type=int, default=PORT, help=f"port to bind (default {PORT})")
    p.add_argument("--shared-experience", action="store_true",
                   help="every user's memory starts from the search's update episodes (for conversation "
                        "data: other people's conversations), built once and snapshotted; without it "
                        f"each user starts empty. A call naming no user acts on the user {DEFAULT_USER!r}")
    p.add_argument("--state", type=Path, metavar="DIR",
                   help="folder of the episode log and working store (default: DIR-state next to the export)")
    p.add_argument("--token-env", action="append", metavar="NAME[=USER,...]",
                   help=f"environment variable holding a bearer token clients must send (default {TOKEN_ENV}); "
                        f"NAME=ana,bob binds that token to those users' memories (without, it may use every "
                        f"one); repeatable; a token is required when binding anything but loopback")
    p.add_argument("--tokens", type=Path, metavar="FILE",
                   help='JSON file {"tokens": [{"token": "...", "namespaces": ["ana"] or ["*"]}]}, '
                        'readable by its owner only')
    p.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                   help="a host name clients use to reach the server (the Host header), besides the bind "
                        "address and, on loopback, localhost/127.0.0.1/[::1]; repeatable")
    p.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN",
                   help="a web page origin (https://app.example) that may call the server from a browser; "
                        "adds CORS for exactly these; repeatable (default: none)")
    p.add_argument("--rate-limit", type=int, metavar="N",
                   help=f"requests a minute per token (per client address without tokens), with a short "
                        f"burst; 0 turns it off (default: {RATE_LIMIT} with tokens, none without, "
                        f"where every caller is a local process; /healthz is not counted)")
    p.add_argument("--max-open-users", type=int, default=MAX_OPEN_NAMESPACES, metavar="N",
                   help=f"users (namespaces) whose memory is open at once, each in its own sandbox session "
                        f"(default {MAX_OPEN_NAMESPACES}); the least recently used is snapshotted and closed")
    p.add_argument("--snapshot-every", type=int, default=SNAPSHOT_EVERY, metavar="N",
                   help=f"snapshot a user's memory after N remembers (default {SNAPSHOT_EVERY}; also when it "
                        f"closes): a restart replays at most that many")
    p.add_argument("--engine", choices=("single", "ray"), default="single",
                   help="single (default): one process holds every user's memory; ray: a Ray Serve application "
                        "whose replicas share the users (HTTP only; see docs/serve.md)")
    p.add_argument("--address", metavar="ADDR",
                   help="--engine ray: the Ray cluster to join (as `ray.init(address=...)`: auto, or "
                        "ray://head:10001); default: start a local one")
    p.add_argument("--replicas", type=int, default=RAY_REPLICAS, metavar="N",
                   help=f"--engine ray: memory replicas, each holding up to --max-open-users users "
                        f"(default {RAY_REPLICAS})")
    p.add_argument("--adapt", nargs="?", const="per-user", choices=("per-user", "pooled"), metavar="MODE",
                   help="improve each user's program from its own history in the background (per-user, the "
                        "default MODE), or one program for all users from every history pooled (pooled: only "
                        "constants pass between users): a label-free search at the lowest CPU priority, its "
                        "selection swapped in only when it wins a paired race with the live program "
                        "(docs/serve.md, Adaptation)")
    p.add_argument("--adapt-cpu-seconds", type=float, metavar="N",
                   help="CPU seconds one adaptation round may use (default: automemo/adapt/config.py)")
    p.add_argument("--adapt-parallel", type=int, metavar="N", help="adaptation rounds at once (default 1)")
    p.add_argument("--adapt-run-config", type=Path, metavar="FILE",
                   help="a run-config TOML the rounds' searches read (LLM roles, pseudo-question and search keys "
                        "as in automemo/presets/default.toml); with the pseudo-question LLM role configured, "
                        "that LLM writes the questions")
    p.add_argument("--adapt-config", action=Renamed, now="--adapt-run-config",
                   why="a run-config TOML for the rounds' searches, not the adaptation's settings")
    p.add_argument("--adapt-steps", type=int, metavar="N", help="search steps of one adaptation round "
                                                                "(default: automemo/adapt/config.py)")
    add_sandbox_flag(p)
    p.set_defaults(func=run)


def http_tokens(host: str, env_specs: list[str] | None, tokens_file: Path | None) -> TokenTable:
    """The token table from the flags; an open bind (not loopback) without a token is refused."""
    try:
        tokens = token_table(env_specs or [TOKEN_ENV], tokens_file)
    except AccessConfigError as exc:
        raise UserError(str(exc)) from None
    if not tokens.required and not is_loopback(host):
        names = ", ".join(spec.partition("=")[0] for spec in env_specs or [TOKEN_ENV])
        raise UserError(
            f"refusing to bind {host} without a token: anyone who can reach it could read and write this "
            f"memory. Set a secret in the environment variable {names} (clients send `Authorization: "
            f"Bearer <token>`), pass --tokens FILE, or bind {HOST}"
        )
    return tokens


def _rate_limit(flag: int | None, tokens: TokenTable) -> int:
    """--rate-limit, or its default: a limit per token on a server with tokens, shared by several
    clients; none on a server without, which only binds loopback, so that every caller is a local
    process of someone who may read and write the whole memory anyway (a limit there would only
    slow the user's own harness or tests)."""
    if flag is not None:
        return flag
    return RATE_LIMIT if tokens.required else 0


def _host_name(value: str) -> str:
    name = value.strip().lower()
    if not name or any(c in name for c in "/@ ,") or name == "*":
        raise UserError(f"--allowed-host {value!r} is not a host name; give a name clients use, such as "
                        f"memory.example or memory.example:8765 (no scheme, no path, no wildcard)")
    return name


def _origin(value: str) -> str:
    """An origin as browsers send it: scheme://host[:port], lower case, no path."""
    from urllib.parse import urlsplit

    origin = value.strip().rstrip("/").lower()
    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path or parts.query or "*" in origin:
        raise UserError(f"--cors-origin {value!r} is not an origin; give one like https://app.example or "
                        f"http://localhost:3000 (scheme, host and port only, no wildcard)")
    return origin


def _check_port_free(host: str, port: int) -> None:
    """Before the memory loads: a taken port is a sentence, not a server that dies after warming up."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise UserError(f"cannot bind {host}:{port} ({exc.strerror}); pass another --port or --host") from None


def _export_named(name: Path, state: Path) -> Path:
    """`automemo serve discovered` (or a seed name, or a program file): the program exported next
    to the state folder, with no run behind it, so a user with no data yet is served it."""
    from automemo.export import ExportError, export_program

    out = state.with_name(state.name + "-program")
    try:
        export_program(str(name), out)
    except ExportError as exc:
        raise UserError(f"{name} is no exported folder, and {exc}") from None
    print(f"serving {name}: exported to {out}", file=sys.stderr)
    return out


def run(args) -> int:
    backend = sandbox_choice(args) or "auto"
    if args.max_open_users < 1 or args.snapshot_every < 1:
        raise UserError("--max-open-users and --snapshot-every must be at least 1")
    if not 0 < args.port < 65536:
        raise UserError(f"--port must be between 1 and 65535, got {args.port}")
    if args.rate_limit is not None and args.rate_limit < 0:
        raise UserError(f"--rate-limit must be 0 (no limit) or a number of requests a minute, got {args.rate_limit}")
    _adapt_config(args)  # refused before anything loads
    tokens = http_tokens(args.host, args.token_env, args.tokens) if args.transport == "http" else TokenTable()
    policy = HttpPolicy(bind_host=args.host, allowed_hosts=tuple(map(_host_name, args.allowed_host)),
                        cors_origins=tuple(map(_origin, args.cors_origin)),
                        rate_per_minute=_rate_limit(args.rate_limit, tokens))
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise UserError("automemo serve needs the MCP SDK: pip install 'automemo[serve]'") from None
    if args.engine == "ray" and args.transport != "http":
        raise UserError("--engine ray serves over HTTP only; drop --transport stdio (or use --engine single)")
    if args.engine != "ray" and (args.address or args.replicas != RAY_REPLICAS):
        raise UserError("--address and --replicas belong to --engine ray; add --engine ray or drop them")
    if args.replicas < 1:
        raise UserError(f"--replicas must be at least 1, got {args.replicas}")
    if args.transport == "http" and not args.address:  # a cluster's proxy binds on its own nodes
        _check_port_free(args.host, args.port)
    folder = args.folder
    state = args.state or folder.resolve().with_name(folder.resolve().name + "-state")
    if not folder.is_dir():
        folder = _export_named(folder, state)

    from automemo.deploy import DeployError
    from automemo.serve.requests import RequestLimits
    from automemo.serve.service import MemoryService

    say = _stderr_printer()
    if args.engine == "ray":
        adapter = _adapter(args, folder, state, backend, say)
        try:
            return _serve_ray(args, folder, state, backend, tokens, policy, say, adapting=adapter is not None)
        finally:
            if adapter is not None:
                adapter.stop()
    try:
        # the replay's progress bar draws on stdout, which is the protocol's under stdio
        service = MemoryService(folder, state, sandbox=backend, unsafe=backend == NO_SANDBOX,
                                progress=args.transport == "http" and sys.stdout.isatty(),
                                max_open=args.max_open_users, snapshot_every=args.snapshot_every,
                                shared_experience=args.shared_experience)
    except DeployError as exc:
        raise UserError(str(exc)) from None
    start = service.start
    say(f"memory of node {(service.manifest.get('node') or {}).get('id')} ready in {start.seconds:.1f} s "
        + (f"({start.shipped_episodes} shipped episodes as every user's base, " if start.shared_experience
           else "(every user starts empty, ")
        + f"{start.users} users; "
        f"{'snapshots' if start.snapshots else 'no snapshots: restarts replay'}; state {state})")
    limits = RequestLimits()
    adapter = _adapter(args, folder, state, backend, say)
    if adapter is not None:
        service.health_extras = lambda: {"adapt": adapter.status()}
    try:
        if args.transport == "stdio":
            _serve_stdio(service, limits)
        else:
            _serve_http(service, args.port, tokens, policy, limits, say)
    finally:
        if adapter is not None:
            adapter.stop()
        service.close()
    return 0


def _adapter(args, folder: Path, state: Path, backend: str, say):
    """`--adapt`'s background rounds, started (None without the flag)."""
    config = _adapt_config(args)
    if config is None:
        return None
    from automemo.adapt.supervisor import Adapter

    return Adapter(state.resolve(), folder.resolve(), args.adapt, sandbox=backend, config=config, say=say).start()


def _adapt_config(args):
    """The adaptation settings the flags ask for (None: no --adapt); a bad one is refused."""
    if args.adapt is None:
        given = given_adapt_flags(args, SERVE_FLAGS)
        if given:
            raise UserError(f"{', '.join(given)} belong to --adapt; add --adapt or drop them")
        return None
    return adapt_config(args, SERVE_FLAGS)


def _serve_ray(args, folder: Path, state: Path, backend: str, tokens: TokenTable, policy: HttpPolicy, say, *,
               adapting: bool) -> int:
    from automemo.deploy import DeployError
    from automemo.serve.cluster.engine import serve_on_ray
    from automemo.serve.requests import RequestLimits

    try:
        serve_on_ray(folder, state, address=args.address, replicas=args.replicas, port=args.port,
                     max_open=args.max_open_users, limits=RequestLimits(), policy=policy, tokens=tokens, say=say,
                     sandbox=backend, unsafe=backend == NO_SANDBOX, snapshot_every=args.snapshot_every,
                     progress=sys.stdout.isatty(), shared_experience=args.shared_experience, adapting=adapting)
    except DeployError as exc:
        raise UserError(str(exc)) from None
    return 0


def _serve_stdio(service, limits) -> None:
    import anyio

    from automemo.serve.access import LOCAL
    from automemo.serve.mcp_face import build_mcp

    # the client is the user's own process: it may use every user's memory, as on the state folder
    anyio.run(build_mcp(service, limits, allow_paths=True, caller=LOCAL).run_stdio_async)


def _serve_http(service, port: int, tokens: TokenTable, policy: HttpPolicy, limits, say) -> None:
    import uvicorn

    from automemo.serve.http.app import build_app

    app = build_app(service, limits=limits, policy=policy, tokens=tokens)
    host = policy.bind_host
    shown = f"[{host}]" if ":" in host else host
    say(f"serving on http://{shown}:{port}: MCP at /mcp, REST at /v1/recall and /v1/remember, "
        f"schema at /openapi.json" + (f" ({len(tokens.entries)} bearer token(s) required)" if tokens.required else ""))
    say(f"answering Host names {', '.join(policy.host_names()) or '(none: pass --allowed-host NAME)'}; "
        + (f"CORS for {', '.join(policy.cors_origins)}; " if policy.cors_origins else "no CORS; ")
        + (f"at most {policy.rate_per_minute} requests a minute per "
           + ("token" if tokens.required else "client address") if policy.rate_per_minute else "no rate limit"))
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)).run()


def _stderr_printer():
    # stdout belongs to the MCP protocol under --transport stdio: everything for people goes to stderr
    def say(message: str) -> None:
        print(f"automemo serve: {message}", file=sys.stderr, flush=True)
    return say
