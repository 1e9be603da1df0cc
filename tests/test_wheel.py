"""A wheel works anywhere: build sdist → wheel from a copy of the checkout, install the wheel into a
fresh virtual environment, and from a folder with no checkout run `automemo sandbox check`, the
quick exam of a shipped seed on the shipped example episodes, a 2-step offline search, `export`
and `load_memory` of the export.

The venv sees the machine's site-packages (torch, faiss, ... are reused) but its own `automemo`,
installed from the wheel, comes first on its path; the subprocesses get no PYTHONPATH but the
test-only torchvision shim, so nothing of the checkout can be imported by mistake."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from automemo.sandbox.image import load_definition
from tests.searchtools import SHIM_SITE, SMALL_GALLERY

pytestmark = [pytest.mark.docker, pytest.mark.slow]

CHECKOUT = Path(__file__).resolve().parents[1]
NOT_SOURCE_AT_ROOT = {".git", "runs", "build", "dist", "automemo.egg-info", ".pytest_cache", ".cache",
                      "artifacts"}


def _not_source(folder: str, names: list[str]) -> set[str]:
    """What the source copy leaves out: generated folders at the root only (automemo/runs/ is code)."""
    top = {n for n in names if n in NOT_SOURCE_AT_ROOT} if Path(folder) == CHECKOUT else set()
    return top | {n for n in names if n == "__pycache__"}


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> SimpleNamespace:
    """The wheel installed into a new venv, and how to run its commands from an empty folder."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"  # a copy, so the build writes no build/ or egg-info into the checkout
    shutil.copytree(CHECKOUT, source, ignore=_not_source)
    dist = tmp / "dist"
    build_sdist = "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))"
    done = subprocess.run([sys.executable, "-c", build_sdist, str(dist)], cwd=source,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    sdist = dist / done.stdout.strip().splitlines()[-1]
    _check([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
            "-w", str(dist), str(sdist)], cwd=tmp)
    (wheel,) = dist.glob("automemo-*.whl")

    prefix = tmp / "venv"
    # No pip of its own: the system pip, visible through --system-site-packages, installs into it.
    _check([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(prefix)], cwd=tmp)
    python = prefix / "bin" / "python"
    _check([str(python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(wheel)],
           cwd=tmp)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "AUTOMEMO_HOME")}
    env.update(PYTHONPATH=str(SHIM_SITE), HF_HUB_OFFLINE="1", COLUMNS="200",  # no wrapped table cells
               PATH=os.pathsep.join([str(prefix / "bin"), env.get("PATH", "")]))
    work = tmp / "work"
    work.mkdir()
    return SimpleNamespace(prefix=prefix, python=python, automemo=prefix / "bin" / "automemo",
                           wheel=wheel, env=env, work=work)


def _check(cmd: list, *, cwd: Path, env: dict | None = None, timeout: float = 300) -> str:
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, f"{cmd}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _python(venv, script: str, *args) -> str:
    return _check([venv.python, "-c", textwrap.dedent(script), *args], cwd=venv.work, env=venv.env)


def test_the_wheel_carries_the_assets_and_the_venv_imports_it(venv):
    import zipfile

    names = zipfile.ZipFile(venv.wheel).namelist()
    for shipped in ("automemo/_assets/prompts/meta_generate.j2", "automemo/_assets/seeds/no_memory.py",
                    "automemo/_assets/sandbox/requirements.txt", "automemo/presets/minigallery.toml",
                    "automemo/report/templates/index.html", "automemo/presets/memgallery-sample.toml",
                    "automemo/data/mem-gallery-sample/LICENSE", "automemo/data/mem-gallery-sample/SOURCE.txt"):
        assert shipped in names
    # The embedded real example: all ten scenario files, found by name from the installed package.
    assert sum(n.startswith("automemo/data/mem-gallery-sample/") and n.endswith(".json") for n in names) == 10
    assert any(n.startswith("automemo/data/example-episodes/episodes/update/") for n in names)
    # Every module of the package is in the wheel: one missing would be imported silently from
    # the machine's editable install (its finder sits on the venv's path via the system site).
    modules = {p.relative_to(CHECKOUT).as_posix() for p in (CHECKOUT / "automemo").rglob("*.py")}
    assert modules - set(names) == set()

    found = json.loads(_python(venv, """
        import json, automemo, automemo.paths as p
        from automemo.sandbox.image import load_definition
        print(json.dumps({"package": automemo.__file__, "assets": str(p.ASSETS_DIR),
                          "seed": str(p.seed_path("no_memory")), "tag": load_definition().tag,
                          "sample": p.shipped_data("@mem-gallery-sample")}))
    """))
    package = Path(found["package"]).resolve()
    assert venv.prefix.resolve() in package.parents, f"imported {package}, not the venv's automemo"
    assert Path(found["assets"]) == package.parent / "_assets"
    assert Path(found["sample"]) == package.parent / "data" / "mem-gallery-sample"
    assert Path(found["seed"]).read_text() == (CHECKOUT / "seeds" / "no_memory.py").read_text()
    # Same sandbox definition as the checkout's, so the image already built here is found.
    assert found["tag"] == load_definition().tag


def test_sandbox_check(venv):
    # Exit 0: every backend opens a session and the isolating ones block the network; the
    # guests mount the venv's site-packages/automemo, not a checkout.
    out = _check([venv.automemo, "sandbox", "check"], cwd=venv.work, env=venv.env)
    assert out.count("blocked") == 2, out


def test_exam_of_a_seed_on_the_shipped_episodes(venv):
    paths = json.loads(_python(venv, """
        import json
        from automemo.paths import seed_path
        from automemo.paths import EXAMPLE_EPISODES_DIR
        print(json.dumps([str(seed_path("no_memory")), str(EXAMPLE_EPISODES_DIR)]))
    """))
    report = json.loads(_check([venv.automemo, "exam", paths[0], "--episodes", paths[1], "--json"],
                               cwd=venv.work, env=venv.env))
    assert report["passed"] and report["sandbox"] in ("docker", "bwrap")


def test_offline_search_export_and_load_memory(venv):
    options = ", ".join(f"{k} = {json.dumps(v)}" for k, v in SMALL_GALLERY.items())
    small = venv.work / "small.toml"
    small.write_text(f"[benchmark]\noptions = {{ {options} }}\n\n[evaluation]\nconcurrency = 2\n")
    runs = venv.work / "runs"
    _check([venv.automemo, "search", "--preset", "minigallery", "--config", small, "--steps", "2",
            "--runs-dir", runs, "--run-id", "r", "--quiet"], cwd=venv.work, env=venv.env, timeout=600)
    exported = venv.work / "exported"
    _check([venv.automemo, "export", runs / "r", "--out", exported], cwd=venv.work, env=venv.env)
    result = json.loads(_python(venv, """
        import json, sys
        from automemo.contract import PartialRecorder
        from automemo.deploy import load_memory

        with load_memory(sys.argv[1]) as memory:
            task = PartialRecorder(task_id="q", benchmark="minigallery",
                                   instruction="Which photo did I share about my trip?")
            payload = memory.retrieve(task)
            print(json.dumps({"payload": payload.to_dict(), "failures": memory.update_failures,
                              "node": memory.manifest["node"]["id"]}))
    """, exported).strip().splitlines()[-1])
    assert result["failures"] == []
    assert result["node"] == json.loads((exported / "manifest.json").read_text())["node"]["id"]
    assert len(result["payload"]["text"]) <= 50_000
