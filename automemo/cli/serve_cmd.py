"""`automemo serve DIR`: run an exported memo program as a memory service. MCP over stdio (for
desktop and IDE agents) or over streamable HTTP at /mcp, with a REST API on the same HTTP server
(POST /v1/recall, POST /v1/remember, GET /v1/manifest, GET /healthz, /openapi.json). Every
acknowledged remember is kept in the --state folder and replayed on start."""

from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path

from automemo.cli import UserError
from automemo.serve.defaults import MAX_OPEN_NAMESPACES, SNAPSHOT_EVERY

SANDBOXES = ("auto", "docker", "bwrap")
TOKEN_ENV = "AUTOMEMO_SERVE_TOKEN"


def register(sub) -> None:
    p = sub.add_parser("serve", help="serve an exported memo program over MCP and HTTP", description=__doc__)
    p.add_argument("folder", type=Path, metavar="DIR", help="an exported folder (`automemo export ... --out DIR`)")
    p.add_argument("--transport", choices=("stdio", "http"), default="http",
                   help="stdio: MCP on stdin/stdout for one local agent; http (default): MCP at /mcp and REST")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1; any other needs a token, see --token-env)")
    p.add_argument("--port", type=int, default=8765, help="port to bind (default 8765)")
    p.add_argument("--state", type=Path, metavar="DIR",
                   help="folder of the episode log and working store (default: DIR-state next to the export)")
    p.add_argument("--token-env", default=TOKEN_ENV, metavar="NAME",
                   help=f"environment variable holding the bearer token clients must send (default {TOKEN_ENV}); "
                        f"required when binding anything but loopback")
    p.add_argument("--max-open-users", type=int, default=MAX_OPEN_NAMESPACES, metavar="N",
                   help=f"users (namespaces) whose memory is open at once, each in its own sandbox session "
                        f"(default {MAX_OPEN_NAMESPACES}); the least recently used is snapshotted and closed")
    p.add_argument("--snapshot-every", type=int, default=SNAPSHOT_EVERY, metavar="N",
                   help=f"snapshot a user's memory after N remembers (default {SNAPSHOT_EVERY}; also when it "
                        f"closes): a restart replays at most that many")
    p.add_argument("--sandbox", default="auto", choices=SANDBOXES)
    p.add_argument("--unsafe-no-sandbox", action="store_true",
                   help="run the program as a plain local process: only for programs you trust")
    p.set_defaults(func=run)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bearer_token(host: str, env_name: str) -> str | None:
    """The token from `env_name`, or None on loopback without one; an open bind is refused."""
    token = os.environ.get(env_name, "").strip() or None
    if token is None and not is_loopback(host):
        raise UserError(
            f"refusing to bind {host} without a token: anyone who can reach it could read and write this "
            f"memory. Set a secret in the environment variable {env_name} (clients send `Authorization: "
            f"Bearer <token>`), or bind 127.0.0.1"
        )
    return token


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


def run(args) -> int:
    if args.unsafe_no_sandbox and args.sandbox != "auto":
        raise UserError(f"--unsafe-no-sandbox and --sandbox {args.sandbox} contradict each other; pass only one")
    if args.max_open_users < 1 or args.snapshot_every < 1:
        raise UserError("--max-open-users and --snapshot-every must be at least 1")
    if not 0 < args.port < 65536:
        raise UserError(f"--port must be between 1 and 65535, got {args.port}")
    token = bearer_token(args.host, args.token_env) if args.transport == "http" else None
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise UserError("automemo serve needs the MCP SDK: pip install 'automemo[serve]'") from None
    if args.transport == "http":
        _check_port_free(args.host, args.port)
    folder = args.folder
    state = args.state or folder.resolve().with_name(folder.resolve().name + "-state")

    from automemo.deploy import DeployError
    from automemo.serve.requests import RequestLimits
    from automemo.serve.service import MemoryService

    say = _stderr_printer()
    try:
        # the replay's progress bar draws on stdout, which is the protocol's under stdio
        service = MemoryService(folder, state, sandbox=args.sandbox, unsafe=args.unsafe_no_sandbox,
                                progress=args.transport == "http" and sys.stdout.isatty(),
                                max_open=args.max_open_users, snapshot_every=args.snapshot_every)
    except DeployError as exc:
        raise UserError(str(exc)) from None
    start = service.start
    say(f"memory of node {(service.manifest.get('node') or {}).get('id')} ready in {start.seconds:.1f} s "
        f"({start.shipped_episodes} shipped episodes as every user's base, {start.users} users; "
        f"{'snapshots' if start.snapshots else 'no snapshots: restarts replay'}; state {state})")
    limits = RequestLimits()
    try:
        if args.transport == "stdio":
            _serve_stdio(service, limits)
        else:
            _serve_http(service, args.host, args.port, token, limits, say)
    finally:
        service.close()
    return 0


def _serve_stdio(service, limits) -> None:
    import anyio

    from automemo.serve.mcp_face import build_mcp

    anyio.run(build_mcp(service, limits, allow_paths=True).run_stdio_async)


def _serve_http(service, host: str, port: int, token: str | None, limits, say) -> None:
    import uvicorn

    from automemo.serve.http_face import build_app

    app = build_app(service, host=host, token=token, limits=limits, allow_paths=is_loopback(host) and token is None)
    shown = f"[{host}]" if ":" in host else host
    say(f"serving on http://{shown}:{port}: MCP at /mcp, REST at /v1/recall and /v1/remember, "
        f"schema at /openapi.json" + (" (bearer token required)" if token else ""))
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)).run()


def _stderr_printer():
    # stdout belongs to the MCP protocol under --transport stdio: everything for people goes to stderr
    def say(message: str) -> None:
        print(f"automemo serve: {message}", file=sys.stderr, flush=True)
    return say
