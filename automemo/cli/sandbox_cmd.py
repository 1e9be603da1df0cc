"""`automemo sandbox build` (the guest image, offline, idempotent) and `automemo sandbox check`
(does each backend work here: engine, image, bubblewrap, a ping round trip, network blocked)."""

from __future__ import annotations

import time

from automemo.cli import UserError

PROBE_PROGRAM = """
import socket
from automemo.contract import MemoProgram, MemoryPayload

class Memo(MemoProgram):
    def update(self, episode):
        pass

    def retrieve(self, task):
        try:
            socket.create_connection(("1.1.1.1", 53), timeout=2).close()
            network = "OPEN"
        except OSError as exc:
            network = "blocked (" + type(exc).__name__ + ")"
        return MemoryPayload(text=network)
"""


def register(sub) -> None:
    parser = sub.add_parser("sandbox", help="build the sandbox image or check the sandbox backends")
    actions = parser.add_subparsers(dest="sandbox_action", metavar="ACTION", required=True)
    build = actions.add_parser("build", help="build the guest rootfs and Docker image (offline, cached)")
    build.add_argument("--force", action="store_true", help="rebuild even if the cache is current")
    build.add_argument("--no-docker", action="store_true",
                       help="only the rootfs (for bubblewrap); skip `docker import`")
    build.set_defaults(func=run_build)
    check = actions.add_parser("check", help="report for each backend whether it works here")
    check.add_argument("--backend", action="append", choices=["docker", "bwrap", "unsafe"],
                       help="check only this backend (repeatable); default: all")
    check.set_defaults(func=run_check)


def run_build(args) -> int:
    from automemo import terminal

    from automemo.sandbox import image

    console = terminal.console()
    defn = image.load_definition()
    docker_import = not args.no_docker and _docker_answers()
    if not args.no_docker and not docker_import:
        console.print("[yellow]no Docker engine answers: building the rootfs only (bwrap)[/]")
    started = time.monotonic()
    with console.status("checking the cache") as status:
        def on_step(step: str) -> None:
            console.print(f"[dim]{time.monotonic() - started:6.1f}s[/] {step}")
            status.update(step)

        try:
            image.build(force=args.force, docker_import=docker_import, on_step=on_step, defn=defn)
        except image.ImageBuildError as exc:
            raise UserError(str(exc)) from None
    console.print(f"rootfs: {image.rootfs_path(defn)}")
    if docker_import:
        console.print(f"image:  {defn.tag} (also {image.IMAGE_REPOSITORY}:latest)")
    console.print(f"[green]done[/] in {time.monotonic() - started:.1f}s")
    return 0


def _docker_answers() -> bool:
    try:
        import docker

        docker.from_env().ping()
        return True
    except Exception:
        return False


def run_check(args) -> int:
    from automemo import terminal
    from rich.table import Table

    names = args.backend or ["docker", "bwrap", "unsafe"]
    table = Table(title="sandbox backends")
    for column in ("backend", "available", "open", "ping", "network", "note"):
        table.add_column(column)
    failures = 0
    for name in names:
        row = check_backend(name)
        failures += row[1] != "yes" or row[4].startswith("OPEN") and name != "unsafe"
        table.add_row(name, *row[1:])
    terminal.console().print(table)
    return 1 if failures else 0


def check_backend(name: str) -> tuple[str, str, str, str, str, str]:
    from automemo.contract import PartialRecorder
    from automemo.sandbox import SandboxError, get_sandbox

    try:
        backend = get_sandbox(name)
    except SandboxError as exc:
        return name, "no", "-", "-", "-", str(exc)
    task = PartialRecorder(task_id="check", benchmark="check", instruction="check").to_dict()
    try:
        started = time.monotonic()
        with backend.open(PROBE_PROGRAM) as session:
            opened = time.monotonic() - started
            started = time.monotonic()
            session.call("ping", {})
            ping = time.monotonic() - started
            network = session.call("retrieve", {"task": task})["text"]
    except SandboxError as exc:
        return name, "no", "-", "-", "-", f"[{exc.kind}] {exc}"
    note = "no isolation: --sandbox unsafe only" if name == "unsafe" else ""
    return name, "yes", f"{opened * 1000:.0f} ms", f"{ping * 1000:.1f} ms", network, note
