"""`automemo serve DIR --engine ray`: the memory service as a Ray Serve application, on a local
Ray cluster or on the one at `--address`.

    HTTP (Ray's proxy, on every node) -> ingress (serve.cluster.ingress: the same app, guard and faces)
                                      -> memory replicas (serve.cluster.replica), one namespace per
                                         multiplexed model id, each under its lease (serve.cluster.lease)

The driver (this process) prepares the state folder once, as the single-process server does on
start (checks it belongs to this export, replays the shipped episodes into the shared base
snapshot), and holds the folder's lock while the application runs, so neither a single-process
server nor `automemo memory` writes beside it. Replicas share the folder: on one machine a local
path; across machines a file system every node mounts at the same path (see docs/serve.md)."""

from __future__ import annotations

import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from automemo.errors import HostError
from automemo.serve.access import TokenTable
from automemo.serve.defaults import LEASE_WAIT_SECONDS, RAY_MAX_ONGOING, RAY_REPLICA_CPUS
from automemo.serve.http.policy import HttpPolicy
from automemo.serve.requests import RequestLimits
from automemo.serve.service import MemoryService, ServedExport, StartReport
from automemo.serve.storage.state_folder import StateFolder
from automemo.serve.user_memory import Program

APP_NAME = "automemo"
INGRESS_MAX_ONGOING = 1024  # the ingress only parses and forwards; the replicas' limit is what bounds work
# Ray's access log would print a line per call (and a user's calls are theirs); failures still log.
QUIET = {"enable_access_log": False, "log_level": "WARNING"}


class RayServeUnavailable(HostError, RuntimeError):
    """Ray Serve is not installed or the cluster cannot be reached; the message says what to do."""


@dataclass(frozen=True)
class PreparedState:
    """What the driver learned preparing the state folder, for every replica and the ingress."""

    state_root: Path
    served: ServedExport    # the manifest, the start, the choices every face reads
    program: Program        # what every replica's namespaces share

    @property
    def manifest(self) -> dict[str, Any]:
        return self.served.manifest

    @property
    def start(self) -> StartReport:
        return self.served.start

    def lock(self) -> Any:
        """Hold the state folder (as the single-process server does) while the application runs."""
        return StateFolder(self.state_root).lock(self.manifest, shared_experience=self.served.shared_experience)


def prepare(folder: Path, state: Path, **service_args: Any) -> PreparedState:
    """Check and prepare the state folder as `MemoryService` does on start (its lock, the shipped
    base's snapshot, the default user's memory opened once), then let it go: the replicas open
    the namespaces."""
    service = MemoryService(folder, state, **service_args)
    try:
        return PreparedState(state_root=service.state.root, served=service.served, program=service.pool.program)
    finally:
        service.close()


def deploy(prepared: PreparedState, *, replicas: int, max_open: int, limits: RequestLimits, policy: HttpPolicy,
           tokens: TokenTable, replica_cpus: float = RAY_REPLICA_CPUS, adapting: bool = False) -> Any:
    """Run the application on the connected Ray cluster (its HTTP proxy already started by
    `serve.start`); returns the ingress handle once every replica is up. `adapting`: the driver
    runs `--adapt`'s rounds, which /healthz reports."""
    from ray import serve

    from automemo.serve.cluster.ingress import IngressConfig, MemoryIngress
    from automemo.serve.cluster.replica import MemoryReplica, ReplicaConfig

    memory = MemoryReplica.options(
        num_replicas=replicas, max_ongoing_requests=RAY_MAX_ONGOING, ray_actor_options={"num_cpus": replica_cpus},
        logging_config=QUIET,
    ).bind(ReplicaConfig(state_root=prepared.state_root, served=prepared.served, program=prepared.program,
                         max_open=max_open, lease_wait_seconds=LEASE_WAIT_SECONDS))
    ingress = MemoryIngress.options(
        max_ongoing_requests=INGRESS_MAX_ONGOING, ray_actor_options={"num_cpus": 0}, logging_config=QUIET,
    ).bind(memory, IngressConfig(served=prepared.served, max_open=max_open, replicas=replicas, limits=limits,
                                 policy=policy, tokens=tokens,
                                 adapting=prepared.state_root if adapting else None))
    return serve.run(ingress, name=APP_NAME, route_prefix="/")


def serve_on_ray(folder: Path, state: Path, *, address: str | None, replicas: int, port: int, max_open: int,
                 limits: RequestLimits, policy: HttpPolicy, tokens: TokenTable, say: Callable[[str], None],
                 shared_experience: bool = False, adapting: bool = False, **service_args: Any) -> None:
    """Prepare, start (or join) the cluster, deploy, serve until SIGINT or SIGTERM, then stop the
    application (its replicas snapshot their open namespaces) and let the state folder go.
    `shared_experience`: every user starts from the shipped episodes (`serve --shared-experience`),
    else empty; `adapting`: the caller runs `--adapt`'s rounds (reported by /healthz);
    `service_args` are MemoryService's (sandbox, snapshot_every, ...)."""
    try:
        import ray
        from ray import serve
    except ImportError:
        raise RayServeUnavailable("--engine ray needs Ray Serve: pip install 'automemo[ray]'") from None
    prepared = prepare(folder, state, max_open=max_open, shared_experience=shared_experience, **service_args)
    start = prepared.start
    say(f"state folder ready in {start.seconds:.1f} s ("
        + (f"{start.shipped_episodes} shipped episodes as every user's base, " if start.shared_experience
           else "every user starts empty, ")
        + f"{start.users} users; state {prepared.state_root})")
    lock = prepared.lock()
    stop = threading.Event()
    try:
        try:
            if address:
                ray.init(address=address, log_to_driver=False)
            else:  # a local cluster, whose workers import this very package
                ray.init(include_dashboard=False, log_to_driver=False,
                         runtime_env={"env_vars": {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}})
        except (ConnectionError, RuntimeError) as exc:
            raise RayServeUnavailable(f"cannot start or reach the Ray cluster {address or '(local)'} ({exc}); "
                                      f"start one with `ray start --head`, or drop --address for a local "
                                      f"one") from None
        try:
            serve.start(http_options={"host": policy.bind_host, "port": port})
            deploy(prepared, replicas=replicas, max_open=max_open, limits=limits, policy=policy, tokens=tokens,
                   adapting=adapting)
            shown = f"[{policy.bind_host}]" if ":" in policy.bind_host else policy.bind_host
            say(f"serving on http://{shown}:{port} through Ray Serve ({replicas} memory replica"
                f"{'s' if replicas > 1 else ''}, at most {max_open} open users each, cluster "
                f"{address or 'local'}): MCP at /mcp, REST at /v1/..., schema at /openapi.json")
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, lambda *_: stop.set())
            stop.wait()
            say("stopping: the replicas snapshot their open users")
        finally:
            serve.delete(APP_NAME)
            if not address:
                serve.shutdown()
            ray.shutdown()
    finally:
        lock.close()
