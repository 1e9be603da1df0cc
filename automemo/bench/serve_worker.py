"""The server process of `automemo bench serve`: `automemo serve`'s HTTP app over a
MemoryService whose embeddings come from the fast deterministic encoder of `bench seeds` (the
figures then measure the server and the program, not MiniLM), or, with `--encoder export`, from
the export's own configuration (MiniLM: what a client's ingest really costs).

    python -m automemo.bench.serve_worker EXPORT STATE PORT SANDBOX [--encoder fast|export] [--shared-experience]"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    import uvicorn

    from automemo.bench.seeds import FastEncoder
    from automemo.serve.http_face import build_app
    from automemo.serve.http_policy import HttpPolicy
    from automemo.serve.requests import RequestLimits
    from automemo.serve.service import MemoryService

    parser = argparse.ArgumentParser(prog="serve_worker")
    parser.add_argument("export", type=Path)
    parser.add_argument("state", type=Path)
    parser.add_argument("port", type=int)
    parser.add_argument("sandbox")
    parser.add_argument("--encoder", choices=("fast", "export"), default="fast")
    parser.add_argument("--shared-experience", action="store_true")
    args = parser.parse_args(argv)
    service = MemoryService(args.export, args.state, sandbox=args.sandbox, unsafe=args.sandbox == "unsafe",
                            services=FastEncoder() if args.encoder == "fast" else None,
                            shared_experience=args.shared_experience)
    # no rate limit: the bench drives hundreds of requests a second from one address
    app = build_app(service, limits=RequestLimits(), policy=HttpPolicy(rate_per_minute=0))
    try:
        uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning",
                                      access_log=False)).run()
    finally:
        service.close()


if __name__ == "__main__":
    main(sys.argv[1:])
