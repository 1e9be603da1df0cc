"""`automemo bench serve`: `command` (the entry point and the loopback latency bench), `load` (a
server process and recall clients), `worker` (the server process itself), `phases` (a tenant's
load: image floods, ingest, first start), `faults` (kill -9 under many users' calls), `on_ray`
(Ray Serve replicas against the single-process server)."""
