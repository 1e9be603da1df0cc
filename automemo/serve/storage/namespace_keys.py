"""What a user id becomes on disk: a key made with a secret of the state folder.

A namespace's folder (`users/<key>/`), its lease (`leases/<key>.*`) and what a pooled version
records of the namespaces it read are named by `HMAC-SHA256(secret, user id)`, truncated. A bare
hash of the user id would let anyone who can read a name (a folder listing, a pooled record, an
answer) test a guess: `sha256("alice@example.com")` is one line of anyone's shell. With the
secret, a name says nothing to whoever does not hold the folder itself.

The secret is made once per state folder (`STATE/namespace-secret`, 32 random bytes, readable by
its owner only), by whichever process first needs it: two processes racing to make it both end
up reading the one that was linked into place first. A folder written before keys were keyed
(names that are a bare sha256 of the user id) is renamed to the keyed names when the folder is
next locked (`StateFolder._rekey_namespaces`)."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from automemo.serve.storage.episode_log import fsync_file

SECRET_FILE = "namespace-secret"
KEY_CHARS = 32   # hex characters of a key: 128 bits, as the bare hash was


def read_or_make_secret(state_root: Path) -> bytes:
    """The state folder's secret, made (durably, 0600) when it has none yet."""
    path = Path(state_root) / SECRET_FILE
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, secrets.token_bytes(32))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)   # fails if another process linked its secret first: then read that one
    except FileExistsError:
        pass
    finally:
        tmp.unlink(missing_ok=True)
    fsync_file(path.parent)
    return _read(path)


def keyed(secret: bytes, text: str) -> str:
    """The key of `text` (a user id, or a namespace's key and incarnation) under `secret`."""
    return hmac.new(secret, text.encode(), hashlib.sha256).hexdigest()[:KEY_CHARS]


def bare_key(user: str) -> str:
    """The unkeyed name folders had before: what `_rekey_namespaces` looks for."""
    return hashlib.sha256(user.encode()).hexdigest()[:KEY_CHARS]


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    if len(data) < 16:
        raise OSError(f"{path} holds {len(data)} bytes, not a secret; delete it only if the folder holds no user "
                      f"yet (every user's folder is named with it)")
    return data

