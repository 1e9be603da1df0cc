"""The guest runner: the process inside the sandbox that hosts one memo program.

Run as `python3 -m automemo.sandbox.runner SOCKET_PATH`. Stdlib + `automemo.contract` +
`automemo.toolkit.guest` only; numpy/faiss load only if the program uses them, so a session
opens in tens of milliseconds.

It connects to the host's socket and serves requests one at a time:
- "load" {source, state_dir, store_root, max_result_bytes}: compile the program, build
  `Memo(toolkit)`; failures are reported with kind "import" and the traceback tail;
- "update" {episode, flush?}, "retrieve" {task}: call the program (`flush`: batched embedding finished before the answer); retrieve's result is validated with
  `contract.payload_from_result` and refused past `max_result_bytes` (kind "bad-result");
- "save_state" / "read_state", "write_state" / "load_state": a snapshot of the program's state
  (its `save_state` bytes and the files under its state dir), out and in, in chunks;
- "ping", "describe": liveness and facts about the guest;
- "flush": finish work a program deferred across updates (memolib's batched embedding), so that
  it is charged to the updates and not to the first retrieve;
- "state_size": the bytes a snapshot of the program's state would take, without making one.
Every reply carries `cpu_ms`, the guest process's CPU time (its threads and reaped children,
user and system) spent on that request, host services it waited for not included: what the
evaluation charges a program per call (automemo.evaluation.cost).
A program exception (even `sys.exit`) is reported with kind "exception" and the session lives
on. The program's prints go to a bounded buffer, never to the channel.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import pickle
import resource
import shutil
import socket
import sys
import tarfile
import time
import traceback
import types
from pathlib import Path
from typing import Any

from automemo import contract
from automemo.errors import AutomemoError
from automemo.sandbox import protocol
from automemo.toolkit.api import ToolkitUnavailable

PROGRAM_FILENAME = "memo_program.py"
PROGRAM_METHODS = ("update", "retrieve", "save_state", "read_state", "write_state", "load_state", "flush",
                   "state_size")
TRACEBACK_CHARS = 4000
OUTPUT_TAIL_CHARS = 8000
HOST_MESSAGE_LIMIT = 1 << 30  # the host is trusted; this only guards against a broken channel


class OutputTail(io.TextIOBase):
    """Keeps the last few thousand characters the program printed (shown by "describe")."""

    def __init__(self, limit: int = OUTPUT_TAIL_CHARS) -> None:
        self.limit = limit
        self.text = ""

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        self.text = (self.text + str(s))[-self.limit:]
        return len(s)


class ByteCounter(io.RawIOBase):
    """A file that counts what is written to it and keeps none of it."""

    def __init__(self) -> None:
        self.count = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        size = memoryview(data).nbytes
        self.count += size
        return size


def cpu_seconds() -> float:
    """The guest's CPU time so far: every thread of this process and the children it reaped,
    user and system (a program's numpy threads and subprocesses are its cost too). From
    getrusage, which Linux keeps to the microsecond (os.times counts 10 ms clock ticks: a short
    call would read 0 or 10)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class CallFailed(AutomemoError):
    def __init__(self, kind: str, message: str, tb: str = "") -> None:
        super().__init__(message)
        self.kind, self.message, self.tb = kind, message, tb


class GuestChannel:
    """The guest's end of the socket: answers host requests, asks for host services."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.serving = False  # host services are answerable only while the host waits on a call
        self._next_id = 0

    def call_host(self, method: str, params: dict) -> Any:
        if not self.serving or os.getpid() != MAIN_PID:
            raise RuntimeError(
                f"toolkit.{method}: host services can be used only from update/retrieve/__init__, "
                "in the program's main thread"
            )
        self._next_id += 1
        msg_id = f"g{self._next_id}"
        try:
            protocol.send(self.sock, {"id": msg_id, "method": method, "params": params})
        except (TypeError, ValueError) as exc:
            raise TypeError(f"toolkit.{method}: arguments are not JSON-serialisable ({exc})") from None
        reply = protocol.recv(self.sock, HOST_MESSAGE_LIMIT)
        if reply.get("id") != msg_id:
            raise RuntimeError(f"toolkit.{method}: the host answered out of order")
        if "error" in reply:
            err = reply["error"]
            if err.get("kind") == "unavailable":
                raise ToolkitUnavailable(err.get("message", method))
            raise RuntimeError(f"host service {method!r} failed: {err.get('message', '')}")
        return reply.get("result")


class Runner:
    def __init__(self, channel: GuestChannel, output: OutputTail) -> None:
        self.channel = channel
        self.output = output
        self.memo: Any = None
        self.max_result_bytes = 4_000_000
        self.info: dict[str, Any] = {}
        self._outgoing = b""
        self._incoming = bytearray()

    def dispatch(self, method: str, params: dict) -> Any:
        handler = getattr(self, f"do_{method}", None)
        if handler is None:
            raise CallFailed("bad-request", f"unknown method {method!r}")
        if method in PROGRAM_METHODS and self.memo is None:
            raise CallFailed("bad-request", "no program is loaded")
        return handler(params)

    def do_ping(self, params: dict) -> str:
        return "pong"

    def do_describe(self, params: dict) -> dict[str, Any]:
        return {
            **self.info,
            "python": sys.version.split()[0],
            "pid": os.getpid(),
            "uid": os.getuid(),
            "gid": os.getgid(),
            "output_tail": self.output.text,
            "loaded_modules": sorted(m for m in ("numpy", "faiss", "networkx", "PIL")
                                     if m in sys.modules),
            "cpu_s": time.process_time(),  # the guest's CPU time so far: a program's cost under load
            **resident_memory_kb(),
        }

    def do_flush(self, params: dict) -> None:
        """Embed what memolib's dense indexes batched and have not embedded yet (the end of an
        evaluation's updates: the cost belongs to remembering, not to the first recall)."""
        dense = sys.modules.get("automemo.toolkit.memolib.dense")  # not imported: nothing batched
        if dense is not None:
            self._run_program(dense.flush_all)
        return None

    def do_state_size(self, params: dict) -> dict[str, Any]:
        """The bytes of the program's state as a snapshot holds it (its `save_state` and the
        files under its state dir), counted without keeping the snapshot in memory where the
        program pickles by default: a memory near the guest's limit must not double to be
        measured."""
        if type(self.memo).save_state is contract.MemoProgram.save_state:
            sink = ByteCounter()
            state = {name: value for name, value in vars(self.memo).items() if name != "toolkit"}
            self._run_program(lambda: pickle.Pickler(sink, protocol=pickle.HIGHEST_PROTOCOL).dump(state))
            memo_bytes = sink.count
        else:
            made = self._run_program(self.memo.save_state)
            if not isinstance(made, (bytes, bytearray)):
                raise CallFailed("bad-result", f"save_state() returned {type(made).__name__}, not bytes")
            memo_bytes = len(made)
        state_dir = Path(self.info["state_dir"])
        files = sum(p.stat().st_size for p in state_dir.rglob("*") if p.is_file() and not p.is_symlink()) \
            if state_dir.is_dir() else 0
        return {"bytes": memo_bytes + files, "program_bytes": memo_bytes, "file_bytes": files}

    def do_load(self, params: dict) -> dict[str, Any]:
        self.max_result_bytes = int(params.get("max_result_bytes", self.max_result_bytes))
        source = params["source"]
        from automemo.toolkit.guest import Toolkit

        toolkit = Toolkit(Path(params["state_dir"]), Path(params["store_root"]),
                          self.channel.call_host)
        try:
            code = compile(source, PROGRAM_FILENAME, "exec")
            module = types.ModuleType("memo_program")
            module.__file__ = PROGRAM_FILENAME
            sys.modules["memo_program"] = module
            exec(code, module.__dict__)
            memo_class = module.__dict__.get("Memo")
            if not isinstance(memo_class, type):
                raise CallFailed("import", "the program defines no class named Memo")
            missing = [m for m in ("update", "retrieve") if not callable(getattr(memo_class, m, None))]
            if missing:
                raise CallFailed("import", f"class Memo has no method(s) {', '.join(missing)}")
            self.memo = memo_class(toolkit)
        except CallFailed:
            raise
        except BaseException as exc:  # noqa: BLE001 - a broken program must not kill the runner
            raise CallFailed("import", describe_exception(exc), traceback_tail(exc)) from None
        self.info = {"memo_class": f"{type(self.memo).__module__}.{type(self.memo).__name__}",
                     "state_dir": params["state_dir"], "store_root": params["store_root"]}
        return {"loaded": True}

    def do_update(self, params: dict) -> None:
        """`flush`: the update finishes its own work before it returns: texts a memolib index
        batches across updates are embedded now (a deployed memory: see memolib.dense)."""
        episode = contract.EpisodeRecorder.from_dict(params["episode"])
        self._run_program(self._update_and_flush if params.get("flush") else self.memo.update, episode)
        return None

    def _update_and_flush(self, episode: contract.EpisodeRecorder) -> None:
        self.memo.update(episode)
        dense = sys.modules.get("automemo.toolkit.memolib.dense")  # not imported: nothing batched
        if dense is not None:
            dense.flush_all()

    def do_retrieve(self, params: dict) -> dict[str, Any]:
        task = contract.PartialRecorder.from_dict(params["task"])
        value = self._run_program(self.memo.retrieve, task)
        try:
            payload = contract.payload_from_result(value).to_dict()
        except contract.ContractError as exc:
            raise CallFailed("bad-result", str(exc)) from None
        size = len(protocol.encode({"id": 0, "result": payload}))
        if size > self.max_result_bytes:
            raise CallFailed(
                "bad-result",
                f"retrieve() returned a {size:,}-byte payload; the sandbox accepts at most "
                f"{self.max_result_bytes:,} bytes (the retrieval budget is far smaller)",
            )
        return payload

    # --- snapshots: the program's state leaves and enters in chunks -----------------------
    # A snapshot can be hundreds of megabytes at the size of a life, and every reply must fit
    # `max_result_bytes`: the host reads it in chunks ("read_state") after "save_state" made it,
    # and writes one in chunks ("write_state") before "load_state" applies it.

    def do_save_state(self, params: dict) -> dict[str, Any]:
        self._outgoing = b""
        memo_bytes = self._run_program(self.memo.save_state)
        if not isinstance(memo_bytes, (bytes, bytearray)):
            raise CallFailed("bad-result", f"save_state() returned {type(memo_bytes).__name__}, not bytes")
        self._outgoing = snapshot_blob(bytes(memo_bytes), Path(self.info["state_dir"]))
        return {"bytes": len(self._outgoing), "sha256": hashlib.sha256(self._outgoing).hexdigest()}

    def do_read_state(self, params: dict) -> dict[str, Any]:
        offset, size = int(params["offset"]), int(params["size"])
        chunk = self._outgoing[offset:offset + size]
        if offset + size >= len(self._outgoing):
            self._outgoing = b""  # read to the end: the guest's memory is the program's again
        return {"data": base64.b64encode(chunk).decode("ascii")}

    def do_write_state(self, params: dict) -> None:
        if params.get("offset", 0) == 0:
            self._incoming = bytearray()
        self._incoming += base64.b64decode(params["data"])
        return None

    def do_load_state(self, params: dict) -> None:
        blob, self._incoming = bytes(self._incoming), bytearray()
        if hashlib.sha256(blob).hexdigest() != params["sha256"]:
            raise CallFailed("bad-request", "the snapshot arrived damaged (sha256 differs)")
        memo_bytes = restore_state_dir(blob, Path(self.info["state_dir"]))
        self._run_program(self.memo.load_state, memo_bytes)
        return None

    def _run_program(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except BaseException as exc:  # noqa: BLE001 - sys.exit and friends are program errors too
            if os.getpid() != MAIN_PID:  # a forked child must never answer on the channel
                os._exit(0)
            raise CallFailed("exception", describe_exception(exc), traceback_tail(exc)) from None
        finally:
            if os.getpid() != MAIN_PID:
                os._exit(0)


def resident_memory_kb() -> dict[str, int]:
    """The guest's resident memory now and at its peak (kB), as the kernel counts it: what
    `automemo bench memory` reports for a memory at the size of a life."""
    out = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out["rss_kb" if key == "VmRSS" else "peak_rss_kb"] = int(value.split()[0])
    except (OSError, ValueError, IndexError):
        pass  # no /proc in this guest: no figure rather than a failed describe
    return out


SNAPSHOT_MAGIC = b"AMSNAP1\n"


def snapshot_blob(memo_bytes: bytes, state_dir: Path) -> bytes:
    """One snapshot: the program's `save_state` bytes and a tar of the files under its state dir."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        if state_dir.is_dir():
            for path in sorted(state_dir.rglob("*")):
                if path.is_file() and not path.is_symlink():
                    tar.add(path, arcname=str(path.relative_to(state_dir)), recursive=False)
    return SNAPSHOT_MAGIC + len(memo_bytes).to_bytes(8, "big") + memo_bytes + archive.getvalue()


def restore_state_dir(blob: bytes, state_dir: Path) -> bytes:
    """Put a snapshot's files back under the state dir (emptied first); returns the program's
    `save_state` bytes."""
    if not blob.startswith(SNAPSHOT_MAGIC):
        raise CallFailed("bad-request", "not a snapshot of this automemo (wrong header)")
    start = len(SNAPSHOT_MAGIC) + 8
    size = int.from_bytes(blob[len(SNAPSHOT_MAGIC):start], "big")
    memo_bytes = blob[start:start + size]
    for path in sorted(state_dir.glob("*")):
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    with tarfile.open(fileobj=io.BytesIO(blob[start + size:]), mode="r") as tar:
        for member in tar.getmembers():  # regular files under state_dir only, whatever the tar says
            target = (state_dir / member.name).resolve()
            if not member.isfile() or state_dir.resolve() not in target.parents:
                raise CallFailed("bad-request", f"the snapshot holds an entry outside the state dir: {member.name!r}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tar.extractfile(member).read())
    return memo_bytes


def describe_exception(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"the program called sys.exit({exc.code!r}); a memo program must not exit"
    if isinstance(exc, KeyboardInterrupt):
        return "the program raised KeyboardInterrupt"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def traceback_tail(exc: BaseException) -> str:
    # Frames of the runner itself say nothing to whoever repairs the program: start at its code.
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    lines = traceback.format_exception(type(exc), exc, tb)
    return "".join(lines)[-TRACEBACK_CHARS:]


def serve(sock: socket.socket) -> None:
    output = OutputTail()
    sys.stdout = sys.stderr = output
    channel = GuestChannel(sock)
    runner = Runner(channel, output)
    while True:
        try:
            message = protocol.recv(sock, HOST_MESSAGE_LIMIT)
        except protocol.ChannelClosed:
            return
        if not protocol.is_request(message):
            continue  # a stray reply (e.g. to a host call a program abandoned): nothing to do
        msg_id = message["id"]
        channel.serving = True
        cpu_before = cpu_seconds()
        try:
            reply = {"id": msg_id, "result": runner.dispatch(message["method"], message.get("params") or {})}
        except CallFailed as exc:
            reply = protocol.error_message(msg_id, exc.kind, exc.message, exc.tb)
        except contract.ContractError as exc:
            reply = protocol.error_message(msg_id, "bad-request", str(exc))
        except Exception as exc:  # a runner bug: report it rather than die silently
            reply = protocol.error_message(msg_id, "runner", describe_exception(exc),
                                           traceback.format_exc()[-TRACEBACK_CHARS:])
        finally:
            channel.serving = False
        reply["cpu_ms"] = round(max(0.0, cpu_seconds() - cpu_before) * 1000.0, 3)
        try:
            frame = protocol.encode(reply)
        except (TypeError, ValueError) as exc:
            frame = protocol.encode(protocol.error_message(msg_id, "bad-result", f"not JSON: {exc}"))
        protocol.send_frame(sock, frame)


MAIN_PID = os.getpid()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m automemo.sandbox.runner SOCKET_PATH", file=sys.stderr)
        return 2
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(argv[0])
    # From here on stdout/stderr belong to the program's prints; file descriptors 1 and 2 go
    # to /dev/null so that C-level writes cannot fill a log the host would have to read.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    serve(sock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
