"""A user's own benchmark: the example of docs/custom-benchmark.md, taken from the page itself,
runs through `automemo eval` and a 2-step search; specs that do not name a usable benchmark
class fail before anything runs, saying why."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from automemo.benchmarks import benchmark_class, load
from automemo.cli import main
from automemo.configtools import ConfigError
from automemo.runs import RunDir
from searchtools import search_command, search_env

DOC = Path(__file__).resolve().parents[1] / "docs" / "custom-benchmark.md"
REF_CITER = Path(__file__).resolve().parent / "programs" / "ref_citer.py"


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    """The page's Python block, written to a file as a user would save it."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 1 and 40 <= len(blocks[0].splitlines()) <= 60
    path = tmp_path_factory.mktemp("user") / "address_book.py"
    path.write_text(blocks[0])
    return path


def test_the_documented_example_runs_through_eval(example, tmp_path, capsys):
    out = tmp_path / "results.json"
    code = main(["eval", str(REF_CITER), "--benchmark", f"{example}:AddressBook", "--repeats", "1",
                 "--sandbox", "unsafe", "--quiet", "--out", str(out), "--workdir", str(tmp_path / "w"),
                 "--store", str(tmp_path / "store")])
    assert code == 0
    table = json.loads(out.read_text())["table"]
    assert table["benchmark"] == "address_book" and table["n_scored"]["mean"] == 6
    assert table["score"]["mean"] == 1.0 and "category where" in capsys.readouterr().out
    # Its options are checked like a built-in benchmark's.
    assert main(["eval", "no_memory", "--benchmark", f"{example}:AddressBook", "--option", "topp=2",
                 "--sandbox", "unsafe", "--store", str(tmp_path / "store"), "--workdir", str(tmp_path / "w2")]) == 2
    assert "topp" in capsys.readouterr().err


def test_the_documented_example_runs_a_two_step_search(example, tmp_path):
    """Started from the example's folder with a relative `file.py:Class`, the run stores the
    file's absolute path, so it resumes from another directory."""
    config = tmp_path / "run.toml"
    config.write_text(f'[benchmark]\nname = "{example.name}:AddressBook"\n\n[evaluation]\nconcurrency = 2\n')
    runs = ["--runs-dir", str(tmp_path / "runs")]
    result = _search_in(example.parent, "--config", str(config), "--steps", "2", "--sandbox", "unsafe",
                        *runs, "--run-id", "r")
    assert result.returncode == 0, result.stderr[-2000:]
    run = RunDir.open(tmp_path / "runs" / "r")
    assert run.config()["benchmark"]["name"] == f"{example}:AddressBook"
    evaluated = [e["mean"] for e in run.evaluations()]
    assert evaluated[0] == 0.0 and max(evaluated) > 0  # the no-memory root, then programs that cite
    assert run.final()["node_id"] is not None
    resumed = _search_in(tmp_path, "--resume", str(run.path), "--steps", "3", "--sandbox", "unsafe")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert RunDir.open(run.path).last_step() == 3


def _search_in(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(search_command(*args), env=search_env(), cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def test_a_module_spec_loads_the_same_class(example, monkeypatch):
    monkeypatch.syspath_prepend(str(example.parent))
    cls = benchmark_class("address_book:AddressBook")
    assert cls.name == "address_book" and load("address_book:AddressBook", {"top": 1}).options.top == 1
    sys.modules.pop("address_book", None)


@pytest.mark.parametrize(
    "source, spec, message",
    [
        ("", "nofile.py:Bench", "does not exist"),
        ("X = 1\n", "{file}:Bench", "defines no Bench"),
        ("class Bench:\n    pass\n", "{file}:Bench", "is not a subclass of automemo.benchmarks.Benchmark"),
        ("from automemo.benchmarks import Benchmark\nclass Bench(Benchmark):\n    name = 'b'\n",
         "{file}:Bench", "does not implement partial, run_episode, score, split"),
        ("import no_such_module_xyz\n", "{file}:Bench", "importing .* failed: ModuleNotFoundError"),
        ("", "no_such_module_xyz:Bench", "cannot import no_such_module_xyz"),
        ("", "{file}:", "expected a built-in benchmark name"),
    ],
)
def test_bad_specs_say_what_is_wrong(source, spec, message, tmp_path):
    file = tmp_path / "bench.py"
    if source:
        file.write_text(source)
    with pytest.raises((ValueError, ConfigError), match=message):
        load(spec.format(file=file))


def test_a_class_without_options_is_refused(example, tmp_path):
    text = example.read_text().replace("    Options = AddressBookOptions\n", "")
    (tmp_path / "no_options.py").write_text(text)
    with pytest.raises(ValueError, match="needs an `Options` dataclass"):
        load(f"{tmp_path / 'no_options.py'}:AddressBook")
