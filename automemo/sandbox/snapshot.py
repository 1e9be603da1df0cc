"""A program's state out of and into its sandbox session: `save_state(session)` returns the
snapshot's bytes (the program's `save_state` plus the files under its state dir), and
`load_state(session, data)` makes a freshly opened program that memory again.

The bytes cross the session channel in chunks, since a snapshot at the size of a life is far
larger than one reply may be (`Limits.max_result_bytes`). The host never unpickles them: they are
the guest's own data, opened only inside a sandbox."""

from __future__ import annotations

import base64
import hashlib

from automemo.sandbox.base import BadResult, Limits, Session


def chunk_bytes(limits: Limits) -> int:
    """Raw bytes per chunk, so that a chunk's base64 fits one reply with room for its envelope."""
    return max(4096, (limits.max_result_bytes - 4096) // 4 * 3)


def save_state(session: Session, limits: Limits) -> bytes:
    """The program's snapshot. Raises `ProgramError` when the program cannot save its state
    (its `save_state` raised: it holds something pickle cannot carry)."""
    made = session.call("save_state", {}, limits.timeout("save_state"))
    size, step, parts = int(made["bytes"]), chunk_bytes(limits), []
    for offset in range(0, size, step):
        reply = session.call("read_state", {"offset": offset, "size": step})
        parts.append(base64.b64decode(reply["data"]))
    data = b"".join(parts)
    if len(data) != size or hashlib.sha256(data).hexdigest() != made["sha256"]:
        raise BadResult(f"the snapshot arrived damaged ({len(data):,} of {size:,} bytes, or its sha256 differs)")
    return data


def load_state(session: Session, data: bytes, limits: Limits) -> None:
    """Make the session's freshly loaded program the memory `data` describes."""
    step = chunk_bytes(limits)
    for offset in range(0, max(len(data), 1), step):
        session.call("write_state", {"offset": offset,
                                     "data": base64.b64encode(data[offset:offset + step]).decode("ascii")})
    session.call("load_state", {"sha256": hashlib.sha256(data).hexdigest()}, limits.timeout("load_state"))
