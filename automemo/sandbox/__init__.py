"""Sandboxes for untrusted memo programs.

`get_sandbox(name)` returns a backend: "docker", "bwrap", "unsafe" (no isolation; only behind
`--sandbox unsafe`) or "auto" (Docker when an engine answers and the image exists, else
bubblewrap). Backends are imported lazily: the guest imports `automemo.sandbox.runner`, so this
package must not pull in docker or anything else heavy when it is imported.
"""

from __future__ import annotations

from automemo.sandbox.base import (
    BadResult,
    CallTimeout,
    HostServices,
    Limits,
    ProgramError,
    ProgramLoadError,
    Sandbox,
    SandboxError,
    SandboxUnavailable,
    Session,
    SessionDead,
)

BACKENDS = ("docker", "bwrap", "unsafe", "auto")


def get_sandbox(name: str = "auto") -> Sandbox:
    """A sandbox backend by name. Raises `SandboxUnavailable` saying what is missing and how to
    get it (start dockerd, run `automemo sandbox build`, install bubblewrap)."""
    if name == "docker":
        from automemo.sandbox.docker_backend import DockerSandbox

        return DockerSandbox()
    if name == "bwrap":
        from automemo.sandbox.bwrap_backend import BubblewrapSandbox

        return BubblewrapSandbox()
    if name == "unsafe":
        from automemo.sandbox.local_backend import UnsafeLocalSandbox

        return UnsafeLocalSandbox()
    if name == "auto":
        try:
            return get_sandbox("docker")
        except SandboxUnavailable as docker_problem:
            try:
                return get_sandbox("bwrap")
            except SandboxUnavailable as bwrap_problem:
                raise SandboxUnavailable(
                    f"no sandbox backend works here. docker: {docker_problem} bwrap: "
                    f"{bwrap_problem} (only if you trust the programs: --sandbox unsafe)"
                ) from None
    raise ValueError(f"unknown sandbox {name!r}; choose one of {', '.join(BACKENDS)}")


__all__ = [
    "BACKENDS", "BadResult", "CallTimeout", "HostServices", "Limits", "ProgramError",
    "ProgramLoadError", "Sandbox", "SandboxError", "SandboxUnavailable", "Session", "SessionDead",
    "get_sandbox",
]
