"""The documented Dockerfile route (sandbox/Dockerfile, for machines without debootstrap) builds
a guest the Docker backend can run, offline: it is built here on a stand-in for
python:3.11-slim made from the project's own image (interpreter in /usr/local/bin, no
/usr/bin/python3, no packages, no pip), with the wheels `automemo sandbox build` downloaded and
the pip wheel Python bundles, then a memo program answers through it."""

from __future__ import annotations

import io
import shutil
import textwrap
from pathlib import Path

import pytest

from automemo.contract import EpisodeRecorder, PartialRecorder
from automemo.paths import SANDBOX_DIR
from automemo.sandbox import image
from automemo.sandbox.base import Limits
from automemo.sandbox.docker_backend import DockerSandbox

# python:3.11-slim's layout, without a registry: what made the documented route break.
SLIM_LIKE = """\
ARG BASE
FROM ${BASE}
RUN set -eu; mv /usr/bin/python3.11 /usr/local/bin/python3.11; rm -f /usr/bin/python3; \\
    ln -s python3.11 /usr/local/bin/python3; rm -rf /usr/local/lib/python3.11/dist-packages
"""

PROGRAM = textwrap.dedent("""\
    import faiss, networkx, numpy, sqlite_utils
    from automemo.contract import MemoProgram, MemoryPayload

    class Memo(MemoProgram):
        def update(self, episode):
            self.seen = episode.task_id

        def retrieve(self, task):
            return MemoryPayload(text=f"{self.seen} numpy {numpy.__version__} faiss {faiss.__version__}")
    """)


@pytest.mark.slow
@pytest.mark.docker
def test_the_dockerfile_builds_a_working_guest_offline(tmp_path):
    import docker
    import ensurepip

    defn = image.build()  # the project's image: the stand-in's base, and the wheels
    client = docker.from_env()
    context = tmp_path / "context"
    (tmp_path / "slim").mkdir()
    (tmp_path / "slim" / "Dockerfile").write_text(SLIM_LIKE)
    shutil.copytree(SANDBOX_DIR, context)
    wheels = context / "wheels"
    shutil.copytree(image.build_dir(defn) / "wheels", wheels)
    for pip_wheel in (Path(ensurepip.__file__).parent / "_bundled").glob("pip-*.whl"):
        shutil.copy(pip_wheel, wheels)
    tags = ("automemo-test-slim-like:latest", "automemo-test-dockerfile:latest")
    try:
        client.images.build(path=str(tmp_path / "slim"), tag=tags[0], buildargs={"BASE": defn.tag},
                            network_mode="none", rm=True)
        client.images.build(path=str(context), tag=tags[1], buildargs={"BASE": tags[0]},
                            network_mode="none", rm=True)
        session = DockerSandbox(image_tag=tags[1]).open(PROGRAM, Limits())
        try:
            session.call("update", {"episode": EpisodeRecorder(task_id="e1", benchmark="b", instruction="i").to_dict()})
            payload = session.call("retrieve", {"task": PartialRecorder(task_id="t", benchmark="b", instruction="q").to_dict()})
        finally:
            session.close()
        assert payload["text"].startswith("e1 numpy 2.") and "faiss 1." in payload["text"]
    finally:
        for tag in reversed(tags):
            try:
                client.images.remove(tag, force=True)
            except docker.errors.ImageNotFound:
                pass


def test_sandbox_build_says_what_it_needs_when_it_cannot_run(monkeypatch, capsys, tmp_path):
    from automemo.cli import main

    monkeypatch.setattr(image, "CACHE_DIR", tmp_path / "cache")  # nothing is built: not cached
    monkeypatch.setattr(image.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(image.shutil, "which", lambda tool: None)
    assert main(["sandbox", "build", "--no-docker"]) == 2
    err = capsys.readouterr().err
    assert "needs root (debootstrap and chroot need it): run `sudo automemo sandbox build`" in err
    assert "debootstrap (Debian/Ubuntu: apt-get install debootstrap)" in err
    assert "docker build -t automemo-sandbox:latest sandbox/" in err
    assert not (tmp_path / "cache").exists()  # asked before anything is written
