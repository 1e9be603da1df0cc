"""Precomputed text embeddings shipped next to a data set, so that a first search on it (the
quickstart on `@mem-gallery-sample`) does not spend its minutes running the encoder.

A pack is one file in a shipped data set's folder, `embeddings.<encoder name>.npz`:

    keys      (N, 32) uint8     the cache's content key of each text: sha256(encoder name, text)
    vectors   (N, dim) float16  the encoder's L2-normalised vector of that text
    encoder   str               the encoder's name, e.g. "all-MiniLM-L6-v2"
    keys_sha256    str          sha256 of `keys`: the texts the pack holds, as a whole
    source_sha256  str          sha256 of the data set's *.json files the texts were taken from

A pack is used only when all of these agree with what is there now: the encoder of the run has
the pack's name and dimension, the keys hash to `keys_sha256` and the data set's files to
`source_sha256`. Otherwise (an edited data set, another model under the same file name, a
damaged file) it is ignored with one warning and every text is computed as without it. A
vector is only ever served for the exact text it was computed from (the key is that text's hash).
`write_pack` builds a pack from a run's embedding cache (scripts/pack-sample-embeddings.sh).
"""

from __future__ import annotations

import functools
import hashlib
import sqlite3
import sys
from pathlib import Path

import numpy as np

from automemo.paths import SHIPPED_DATA_DIR

PACK_PREFIX = "embeddings."


def pack_name(encoder_name: str) -> str:
    return f"{PACK_PREFIX}{encoder_name}.npz"


def source_sha256(folder: Path) -> str:
    """The hash of a data set's *.json files (names and bytes), in name order."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.json")):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def write_pack(cache_db: Path, folder: Path, encoder_name: str, dim: int) -> Path:
    """Write `folder`'s pack from the vectors of an embedding cache file (a run's
    `episodes/embeddings.sqlite`): every text vector it holds for `encoder_name`."""
    conn = sqlite3.connect(f"file:{cache_db}?mode=ro", uri=True)
    try:
        rows = conn.execute("select key, dim, vector from embeddings where dim = ? order by key", (dim,)).fetchall()
    finally:
        conn.close()
    if not rows:
        raise ValueError(f"{cache_db} holds no {dim}-dimensional vectors to pack")
    keys = np.frombuffer(b"".join(bytes.fromhex(k) for k, _, _ in rows), dtype=np.uint8).reshape(len(rows), 32)
    vectors = np.stack([np.frombuffer(v, dtype=np.float32, count=d) for _, d, v in rows]).astype(np.float16)
    out = folder / pack_name(encoder_name)
    with out.open("wb") as f:
        np.savez_compressed(f, keys=keys, vectors=vectors, encoder=np.array(encoder_name),
                            keys_sha256=np.array(hashlib.sha256(keys.tobytes()).hexdigest()),
                            source_sha256=np.array(source_sha256(folder)))
    return out


def read_pack(path: Path, encoder_name: str, dim: int) -> dict[str, np.ndarray]:
    """Content key (hex) -> float32 vector, or {} (with the reason on stderr) when the pack
    disagrees with the encoder or the data it was made from."""
    try:
        with np.load(path, allow_pickle=False) as pack:
            keys, vectors = pack["keys"], pack["vectors"]
            encoder, keys_hash = str(pack["encoder"]), str(pack["keys_sha256"])
            source_hash = str(pack["source_sha256"])
    except (OSError, ValueError, KeyError) as exc:
        return _ignored(path, f"it cannot be read ({exc})")
    if encoder != encoder_name:
        return _ignored(path, f"it was made with {encoder!r}, this run embeds with {encoder_name!r}")
    if vectors.shape != (len(keys), dim) or keys.shape[1:] != (32,):
        return _ignored(path, f"its vectors are {vectors.shape}, the encoder's are {dim}-dimensional")
    if hashlib.sha256(keys.tobytes()).hexdigest() != keys_hash:
        return _ignored(path, "its texts do not hash to the hash it records (a damaged file)")
    if source_sha256(path.parent) != source_hash:
        return _ignored(path, f"the data in {path.parent} changed since it was made")
    rows = vectors.astype(np.float32)
    rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)  # float16 rounding off unit length
    return {bytes(k).hex(): v for k, v in zip(keys, rows)}


def _ignored(path: Path, why: str) -> dict[str, np.ndarray]:
    print(f"automemo: warning: shipped embeddings {path} not used: {why}; the texts are embedded "
          f"instead", file=sys.stderr)
    return {}


def shipped_packs(encoder_name: str, root: Path = SHIPPED_DATA_DIR) -> list[Path]:
    """The shipped data sets' packs made with `encoder_name` (none for most encoders)."""
    return sorted(root.glob(f"*/{pack_name(encoder_name)}"))


@functools.lru_cache(maxsize=None)
def shipped_vectors(encoder_name: str, dim: int, root: Path = SHIPPED_DATA_DIR) -> dict[str, np.ndarray]:
    """Every shipped pack of `encoder_name`, merged; read once per process (a run's sessions
    share it, and a pack that disagrees is reported once)."""
    out: dict[str, np.ndarray] = {}
    for path in shipped_packs(encoder_name, root):
        out.update(read_pack(path, encoder_name, dim))
    return out


def main(argv: list[str] | None = None) -> int:
    """python3 -m automemo.toolkit.embedding_pack CACHE.sqlite DATA_FOLDER: write the folder's
    MiniLM pack from a run's embedding cache (scripts/pack-sample-embeddings.sh)."""
    import argparse

    from automemo.toolkit.text_encoders import MINILM_DIM, MiniLMEncoder

    parser = argparse.ArgumentParser(prog="python3 -m automemo.toolkit.embedding_pack", description=main.__doc__)
    parser.add_argument("cache", type=Path, help="a run's episodes/embeddings.sqlite")
    parser.add_argument("folder", type=Path, help="the shipped data set's folder the texts came from")
    args = parser.parse_args(argv)
    for given in (args.cache, args.folder):
        if not given.exists():
            parser.error(f"{given} does not exist")
    out = write_pack(args.cache, args.folder, MiniLMEncoder.name, MINILM_DIM)
    print(f"{out}: {out.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
