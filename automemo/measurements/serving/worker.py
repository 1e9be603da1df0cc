"""The server process of `automemo bench serve`: `automemo serve`'s HTTP app over a
MemoryService whose embeddings come from the fast deterministic encoder of `bench seeds` (the
figures then measure the server and the program, not MiniLM), or, with `--encoder export`, from
the export's own configuration (MiniLM: what a client's ingest really costs), or, with `--encoder
fast-cache`, from the fast encoder behind each user's own embedding cache file (as MiniLM is
served, so that forgetting's cache pruning is real).

    python -m automemo.measurements.serving.worker EXPORT STATE PORT SANDBOX [--encoder fast|fast-cache|export]
                                          [--shared-experience] [--max-open-users N]"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    import uvicorn

    from automemo.measurements.seeds import FastEncoder
    from automemo.serve.defaults import MAX_OPEN_NAMESPACES
    from automemo.serve.http.app import build_app
    from automemo.serve.http.policy import HttpPolicy
    from automemo.serve.requests import RequestLimits
    from automemo.serve.service import MemoryService

    parser = argparse.ArgumentParser(prog="serve_worker")
    parser.add_argument("export", type=Path)
    parser.add_argument("state", type=Path)
    parser.add_argument("port", type=int)
    parser.add_argument("sandbox")
    parser.add_argument("--encoder", choices=("fast", "fast-cache", "export"), default="fast")
    parser.add_argument("--shared-experience", action="store_true")
    parser.add_argument("--max-open-users", type=int, default=MAX_OPEN_NAMESPACES)
    args = parser.parse_args(argv)
    service = MemoryService(args.export, args.state, sandbox=args.sandbox, unsafe=args.sandbox == "unsafe",
                            services=FastEncoder() if args.encoder == "fast" else None,
                            services_for=_cached_fast_services if args.encoder == "fast-cache" else None,
                            shared_experience=args.shared_experience, max_open=args.max_open_users)
    # no rate limit: the bench drives hundreds of requests a second from one address
    app = build_app(service, limits=RequestLimits(), policy=HttpPolicy(rate_per_minute=0))
    try:
        uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning",
                                      access_log=False)).run()
    finally:
        service.close()


class _FastText:
    """The fast encoder's text vectors as an encoder a cache can stand in front of."""

    name = "bench-fast-text"

    def __init__(self) -> None:
        from automemo.measurements.seeds import TEXT_DIM, FastEncoder

        self.dim, self._fast = TEXT_DIM, FastEncoder()

    def encode(self, texts, *, node=None):
        import numpy as np

        return np.asarray(self._fast.handle("embed_text", {"texts": list(texts)}), dtype=np.float32)


def _cached_fast_services(store: Path):
    from automemo.toolkit.embedding import CachedImageEncoder, CachedTextEncoder, Encoders, PerceptualImageEncoder
    from automemo.toolkit.embedding_cache import EmbeddingCache
    from automemo.toolkit.services import MemoServices

    cache = EmbeddingCache(store / "embeddings.sqlite")
    return MemoServices(Encoders(CachedTextEncoder(_FastText(), cache), CachedImageEncoder(PerceptualImageEncoder(), cache)),
                        None, store)


if __name__ == "__main__":
    main(sys.argv[1:])
