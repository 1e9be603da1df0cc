"""One exception root (`automemo.errors`) and the kinds `automemo` maps to an exit status and a
sentence: one real failure of each kind through `python3 -m automemo`, and every exception class
of the package under the root."""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import automemo
from automemo.errors import AutomemoError, BudgetSpent, DataError, HostError, UsageError
from automemo.llm import BudgetExceeded
from automemo.llm.breaker import CALLS_STOPPED, EndpointDown
from automemo.search.stops import stop_reason
from automemo.toolkit.services import raise_host_failure

REPO = Path(__file__).resolve().parents[1]

QA_BENCHMARK = """[benchmark]
name = "minigallery"
[benchmark.options]
mode = "qa"
users_per_split = 1
sessions_per_user = 3
rounds_per_session = 16
"""


def automemo_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "automemo", *args], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"}, timeout=600)


def _eval(tmp_path: Path, config: Path, *extra: str) -> subprocess.CompletedProcess:
    return automemo_cli("eval", "no_memory", "--config", str(config), *extra, "--unsafe-no-sandbox", "--quiet",
                        "--workdir", str(tmp_path / "work"), "--store", str(tmp_path / "store"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _error_line(done: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return next(line for line in done.stderr.splitlines() if line.startswith("automemo: error: "))


def test_a_bad_config_key_is_a_usage_error_exit_2(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text("[search]\nbogus_key = 1\n")
    done = automemo_cli("search", "--config", str(config), "--runs-dir", str(tmp_path / "runs"))
    assert done.returncode == UsageError.exit_status == 2
    assert "unknown config key(s) search.bogus_key" in _error_line(done)
    assert not (tmp_path / "runs").exists()


def test_a_missing_dataset_is_a_data_error_exit_2(tmp_path):
    missing = tmp_path / "nowhere" / "locomo10.json"
    done = automemo_cli("eval", "no_memory", "--benchmark", "locomo", "--option", f"path={missing}",
                        "--unsafe-no-sandbox", "--workdir", str(tmp_path / "work"), "--store", str(tmp_path / "s"))
    assert done.returncode == DataError.exit_status == 2
    assert f"{missing} does not exist; set the option `path`" in _error_line(done)
    # A folder that is not a run: the data error reaches the command's handler as it is.
    done = automemo_cli("tree", str(tmp_path))
    assert done.returncode == 2 and "is not a run directory" in _error_line(done)


@pytest.mark.slow
def test_an_unreachable_endpoint_is_a_host_error_exit_1(tmp_path):
    config = tmp_path / "dead.toml"
    config.write_text(QA_BENCHMARK + f'[llm.agent]\nmodel = "local"\nbase_url = "http://127.0.0.1:{_free_port()}/v1"\n'
                                     "max_retries = 0\n")
    done = _eval(tmp_path, config)
    assert done.returncode == HostError.exit_status == 1
    line = _error_line(done)
    assert "LLM calls in a row failed at the endpoint" in line and "Connection refused" in line
    assert line.endswith(HostError.advice)


@pytest.mark.slow
def test_a_spent_cap_is_a_budget_error_exit_1(tmp_path, fake_llm):
    config = tmp_path / "capped.toml"
    config.write_text(QA_BENCHMARK + f'[llm]\nmax_total_tokens = 1\n[llm.agent]\nmodel = "local"\n'
                                     f'base_url = "{fake_llm.base_url}"\n')
    done = _eval(tmp_path, config)
    assert done.returncode == BudgetSpent.exit_status == 1
    line = _error_line(done)
    assert "token cap reached" in line and line.endswith(BudgetSpent.advice)


def _exception_classes() -> dict[str, type]:
    found = {}
    for module in pkgutil.walk_packages(automemo.__path__, "automemo."):
        if module.name.endswith("__main__"):
            continue
        loaded = importlib.import_module(module.name)
        for name, value in vars(loaded).items():
            if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.name:
                found[f"{module.name}.{name}"] = value
    return found


def test_every_exception_class_of_the_package_is_under_the_root():
    classes = _exception_classes()
    assert len(classes) > 50  # the walk saw the package, not an empty corner of it
    outside = sorted(name for name, cls in classes.items()
                     if not issubclass(cls, AutomemoError) and not name.rpartition(".")[2].startswith("_"))
    assert outside == []


def test_a_dead_endpoint_is_not_a_spent_budget_but_stops_the_run_as_one():
    assert not issubclass(EndpointDown, BudgetExceeded) and issubclass(EndpointDown, HostError)
    assert stop_reason(EndpointDown("down")) == "endpoint" and stop_reason(BudgetExceeded("cap")) == "budget"
    assert set(CALLS_STOPPED) == {EndpointDown, BudgetExceeded}

    class Services:  # what a session's host services met while serving one call
        def __init__(self, failure: Exception) -> None:
            self.failures = [failure]

        def take_host_failures(self):
            failures, self.failures = self.failures, []
            return failures

    # A memo LLM endpoint that died under a program's call stops the work as the dead endpoint it is.
    with pytest.raises(EndpointDown, match="retrieve of t1 stopped"):
        raise_host_failure(Services(EndpointDown("3 LLM calls in a row failed")), "retrieve of t1")
    with pytest.raises(BudgetExceeded, match="retrieve of t1 stopped"):
        raise_host_failure(Services(BudgetExceeded("token cap reached")), "retrieve of t1")
