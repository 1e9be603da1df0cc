"""The server process of `automemo bench serve`: `automemo serve`'s HTTP app over a
MemoryService whose embeddings come from the fast deterministic encoder of `bench seeds`, so the
figures measure the server and the program, not MiniLM.

    python -m automemo.bench.serve_worker EXPORT STATE PORT SANDBOX"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    import uvicorn

    from automemo.bench.seeds import FastEncoder
    from automemo.serve.http_face import build_app
    from automemo.serve.http_policy import HttpPolicy
    from automemo.serve.requests import RequestLimits
    from automemo.serve.service import MemoryService

    export, state, port, sandbox = Path(argv[0]), Path(argv[1]), int(argv[2]), argv[3]
    service = MemoryService(export, state, sandbox=sandbox, services=FastEncoder())
    # no rate limit: the bench drives hundreds of requests a second from one address
    app = build_app(service, limits=RequestLimits(), policy=HttpPolicy(rate_per_minute=0))
    try:
        uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                      access_log=False)).run()
    finally:
        service.close()


if __name__ == "__main__":
    main(sys.argv[1:])
