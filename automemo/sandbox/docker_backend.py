"""The Docker backend: one container per session, from the image `automemo sandbox build` makes.

The container has no network, a read-only root, a tmpfs state dir as the only writable place
besides a small /tmp, runs as nobody (65534) with every capability dropped and
no-new-privileges, and is bounded in memory (no swap), CPU and pids. The automemo package and
the episode store are bind-mounted read-only; the session socket's directory is the only host
path it can write. Its environment is built from scratch, never copied from the host.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from automemo.paths import PACKAGE_DIR
from automemo.sandbox import image
from automemo.sandbox.base import HostServices, Limits, Sandbox, SandboxUnavailable, Session
from automemo.sandbox.host import (
    GUEST_CHANNEL,
    GUEST_PACKAGE_DIR,
    GUEST_PYTHONPATH,
    GUEST_STATE,
    GUEST_STORE,
    GUEST_TMP_MB,
    GUEST_UID,
    ExitInfo,
    GuestProcess,
    SessionDirs,
    exit_info_from_status,
    guest_environment,
    host_pid_alive,
    guest_runner,
    start_guest_session,
    sweep_stale_session_dirs,
)

LABEL = "automemo.sandbox"
HOST_PID_LABEL = "automemo.host_pid"


class DockerGuest(GuestProcess):
    def __init__(self, container: Any) -> None:
        self.container = container
        self._removed = False

    def running(self) -> bool:
        try:
            self.container.reload()
        except Exception:
            return False
        return self.container.status in ("created", "running")

    def kill(self) -> None:
        try:
            self.container.kill()
        except Exception:  # already stopped or gone: nothing left to kill
            pass

    def exit_info(self, timeout: float) -> ExitInfo:
        try:
            status = self.container.wait(timeout=timeout)["StatusCode"]
            self.container.reload()
        except Exception:
            return ExitInfo()
        info = exit_info_from_status(status)
        if self.container.attrs.get("State", {}).get("OOMKilled"):
            return ExitInfo(code=info.code, signal=info.signal, oom=True)
        return info

    def cleanup(self) -> None:
        if self._removed:
            return
        self._removed = True
        try:
            self.container.remove(force=True)
        except Exception:
            pass

    def log_tail(self) -> str:
        try:
            return self.container.logs(tail=30).decode(errors="replace")
        except Exception:
            return ""


class DockerSandbox(Sandbox):
    name = "docker"

    def __init__(self, image_tag: str | None = None) -> None:
        try:
            import docker

            self.client = docker.from_env()
            self.client.ping()
        except Exception as exc:
            raise SandboxUnavailable(
                f"no Docker engine answers ({type(exc).__name__}: {exc}); start one "
                "(scripts/start-dockerd.sh) or use the bwrap backend") from None
        # The content-hash tag is what `automemo sandbox build` makes; `:latest` alone is what
        # building sandbox/Dockerfile makes.
        wanted = [image_tag] if image_tag else [image.load_definition().tag,
                                                f"{image.IMAGE_REPOSITORY}:latest"]
        for tag in wanted:
            try:
                self.client.images.get(tag)
                self.image_tag = tag
                break
            except Exception:
                continue
        else:
            raise SandboxUnavailable(
                f"the sandbox image {wanted[0]} is not built; run `automemo sandbox build`")

        self._sweep_stale()

    def _sweep_stale(self) -> None:
        """Remove containers of host processes that died without closing their sessions."""
        try:
            for container in self.client.containers.list(all=True, filters={"label": LABEL}):
                pid = container.labels.get(HOST_PID_LABEL, "")
                if pid.isdigit() and not host_pid_alive(int(pid)):
                    container.remove(force=True)
        except Exception:  # best effort: a sweep must never stop a session from opening
            pass
        sweep_stale_session_dirs()

    def open(self, program_source: str, limits: Limits = Limits(), *,
             services: HostServices | None = None, store_root: Path | None = None) -> Session:
        from docker.types import LogConfig

        volumes = {
            str(PACKAGE_DIR): {"bind": GUEST_PACKAGE_DIR, "mode": "ro"},
        }
        if store_root is not None:
            volumes[str(Path(store_root).resolve())] = {"bind": GUEST_STORE, "mode": "ro"}

        def launch(dirs: SessionDirs) -> GuestProcess:
            container = self.client.containers.run(
                self.image_tag,
                command=guest_runner(dirs),
                detach=True,
                init=True,  # tini reaps a program's zombies and passes on how the runner died
                network_mode="none",
                read_only=True,
                user=f"{GUEST_UID}:{GUEST_UID}",
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                mem_limit=f"{limits.memory_mb}m",
                memswap_limit=f"{limits.memory_mb}m",
                nano_cpus=int(limits.cpus * 1e9),
                pids_limit=limits.pids,
                environment=guest_environment(GUEST_PYTHONPATH, GUEST_STATE),
                working_dir=GUEST_STATE,
                tmpfs={
                    GUEST_STATE: f"size={limits.state_mb}m,uid={GUEST_UID},gid={GUEST_UID},"
                                 "mode=0700,nosuid,nodev,noexec",
                    "/tmp": f"size={GUEST_TMP_MB}m,mode=1777,nosuid,nodev,noexec",
                },
                volumes={**volumes, str(dirs.channel): {"bind": GUEST_CHANNEL, "mode": "rw"}},
                ipc_mode="none",
                log_config=LogConfig(type=LogConfig.types.JSON, config={"max-size": "1m"}),
                labels={LABEL: "1", HOST_PID_LABEL: str(os.getpid())},
                **idle_container_options(),
            )
            return DockerGuest(container)

        return start_guest_session(launch, program_source, limits, services)


def idle_container_options() -> dict[str, object]:
    """A container started by a process at SCHED_IDLE (an adaptation round): the Docker daemon
    starts it, so it inherits neither that policy nor the caller's cores; it gets the least CPU
    weight Docker allows and the caller's cores instead. Nothing for any other caller."""
    from automemo.sandbox.cgroups import caller_is_idle

    if not caller_is_idle():
        return {}
    options: dict[str, object] = {"cpu_shares": 2}
    try:
        options["cpuset_cpus"] = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        pass
    return options
