"""`automemo eval seeds/no_memory.py --benchmark webvoyager|mind2web --option path=tasks.jsonl`
against a small shop site on 127.0.0.1 (tests/livesite.py): real chromium episodes from the task
files' start URLs, the agent and the WebVoyager-style judge answered by the fake server. Shows a
solved task, a failed one (whose judge sees only the last 5 of its 8 screenshots), and start pages
that never load or answer HTTP 500: retried, then excluded and reported."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from automemo.agents import build_agent
from automemo.benchmarks import load
from automemo.episode_store import EpisodeStore
from automemo.llm import LLMClient, LLMConfig, RoleConfig
from automemo.measurements.stand_ins.fakellm import FakeLLM
from automemo.paths import seed_path

from livesite import PRODUCTS, site  # noqa: F401 (site: the shop, a fixture)
from webpolicy import JUDGE_MARK, shop

pytestmark = [pytest.mark.browser, pytest.mark.docker]

TRUTH = {name: price for name, price in PRODUCTS.values()}


@pytest.fixture(scope="module")
def server():
    with FakeLLM() as fake:
        fake.set_handler(shop(TRUTH))
        yield fake


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("user")
    (home / "seeds").mkdir()
    shutil.copy(seed_path("no_memory"), home / "seeds" / "no_memory.py")
    return home


def _eval(user_dir: Path, server: FakeLLM, benchmark: str, *options: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AUTOMEMO_"))}
    env.update(AUTOMEMO_CACHE=str(user_dir / "cache"), OPENAI_API_KEY="sk-local-placeholder")
    argv = ["automemo", "eval", "seeds/no_memory.py", "--benchmark", benchmark, "--agent-model", "m",
            "--agent-base-url", server.base_url, "--repeats", "1", "--concurrency", "2",
            "--option", "test_fraction=1", "--config", "eval.toml"]
    # Each test excludes one of its two or three tasks on purpose: above the default limit on the
    # excluded share (20%), which is for real evaluations of many tasks.
    (user_dir / "eval.toml").write_text("[evaluation]\nmax_excluded_share = 0.5\n")
    for option in options:
        argv += ["--option", option]
    return subprocess.run(argv, cwd=user_dir, env=env, capture_output=True, text=True, timeout=600)


def _row(stdout: str, name: str) -> str:
    match = re.search(rf"^│ {re.escape(name)}\s+│\s+(.+?)\s+│$", stdout, re.MULTILINE)
    assert match, f"no row {name!r} in:\n{stdout}"
    return match.group(1)


def _images(request: dict) -> int:
    return sum(1 for m in request["messages"] if isinstance(m["content"], list)
               for p in m["content"] if p["type"] == "image_url")


def _judge_requests(server: FakeLLM, since: int) -> dict[str, dict]:
    out = {}
    for request in server.requests[since:]:
        text = request["messages"][-1]["content"]
        text = text if isinstance(text, str) else "\n".join(p.get("text", "") for p in text)
        if JUDGE_MARK in text:
            out[re.search(r"Task: (.+)", text).group(1)] = {"text": text, "images": _images(request)}
    return out


def test_webvoyager_eval_runs_judged_episodes_and_excludes_a_site_that_never_loads(site, server, user_dir):
    tasks = user_dir / "webvoyager" / "tasks.jsonl"
    tasks.parent.mkdir()
    tasks.write_text("\n".join(json.dumps(t) for t in [
        {"web_name": "Shop", "id": "Shop--0", "ques": "Find the price of the Blue Widget.", "web": site.url("/")},
        {"web_name": "Shop", "id": "Shop--1", "ques": "Find the price of the Green Gizmo.", "web": site.url("/")},
        {"web_name": "Down", "id": "Down--0", "ques": "Find the price of the Blue Widget.", "web": site.url("/slow")},
    ]) + "\n")
    # WebVoyager's reference_answer.json next to the task file is read by itself.
    (tasks.parent / "reference_answer.json").write_text(json.dumps(
        {"Shop": {"notice": "", "answers": [{"id": 0, "type": "golden", "ans": "$19.99"}]}}))
    before, slow_before = len(server.requests), site.hits.count("/slow")
    # /slow never answers: each attempt ends at the page-load timeout (long enough for a loaded machine).
    run = _eval(user_dir, server, "webvoyager", f"path={tasks.relative_to(user_dir)}", "page_load_timeout_s=6")
    assert run.returncode == 0, run.stderr

    out = run.stdout
    assert _row(out, "score") == "0.500 ± 0.000"           # the judge: one success, one failure
    assert _row(out, "category Shop") == "0.500 ± 0.000"
    assert _row(out, "tasks scored") == "2.0 ± 0.0"
    assert _row(out, "tasks excluded (infrastructure)") == "1.0 ± 0.0"

    workdir = user_dir / re.search(r"evidence in (\S+)$", out, re.MULTILINE).group(1)
    task_dir = workdir / "repeat-1" / "tasks"
    solved = json.loads((task_dir / "Shop--0" / "episode.json").read_text())
    failed = json.loads((task_dir / "Shop--1" / "result.json").read_text())
    down = json.loads((task_dir / "Down--0" / "result.json").read_text())
    assert solved["success"] and solved["final_answer"] == "$19.99"
    assert [s["action"] for s in solved["steps"]] == ["type [0] Blue Widget", "click [1]", "click [0]", "answer $19.99"]
    assert "matches the product page" in solved["judge_feedback"]
    summary = json.loads((workdir / "repeat-1" / "summary.json").read_text())
    store = Path(summary["store_root"])
    assert all((store / s["screenshot"]["path"]).is_file() for s in solved["steps"])  # screenshots in the evidence
    assert failed["score"] == 0.0 and "not the price shown for Green Gizmo" in failed["feedback"]
    assert down["excluded"] and down["attempts"] == 3 and "timeout" in down["infra_errors"][0].lower()
    assert site.hits.count("/slow") - slow_before == 3      # retried twice, then excluded

    judged = _judge_requests(server, before)
    assert judged["Find the price of the Green Gizmo."]["images"] == 5   # 8 screenshots taken, the last 5 judged
    assert judged["Find the price of the Blue Widget."]["images"] == 4
    assert "Reference answer from the dataset" in judged["Find the price of the Blue Widget."]["text"]
    assert "$19.99 (golden)" in judged["Find the price of the Blue Widget."]["text"]
    assert "Reference answer" not in judged["Find the price of the Green Gizmo."]["text"]
    # The agent never had more than 8 images in its context, and saw `back` and `wait` offered.
    agent_calls = [r for r in server.requests[before:] if JUDGE_MARK not in json.dumps(r["messages"][-1])]
    assert agent_calls and max(_images(r) for r in agent_calls) <= 8
    assert "- back" in agent_calls[0]["messages"][0]["content"]


def test_mind2web_eval_runs_online_mind2web_tasks_and_excludes_a_500_start_page(site, server, user_dir):
    tasks = user_dir / "online_mind2web.json"
    tasks.write_text(json.dumps([
        {"task_id": "a1b2", "confirmed_task": "Find the price of the Blue Gadget.", "website": site.url("/"), "level": "easy"},
        {"task_id": "c3d4", "confirmed_task": "Find the price of the Blue Widget.", "website": site.url("/broken"), "level": "easy"},
    ]))
    run = _eval(user_dir, server, "mind2web", "path=online_mind2web.json", "page_load_timeout_s=20")
    assert run.returncode == 0, run.stderr
    assert _row(run.stdout, "score") == "1.000 ± 0.000"
    assert _row(run.stdout, "category 127.0.0.1") == "1.000 ± 0.000"
    assert _row(run.stdout, "tasks excluded (infrastructure)") == "1.0 ± 0.0"
    doc = json.loads((user_dir / re.search(r"results written to (\S+);", run.stdout).group(1)).read_text())
    assert doc["benchmark"]["name"] == "mind2web" and doc["benchmark"]["page_load_timeout_s"] == 20
    task_dir = user_dir / doc["evaluations"][0]["evidence_dir"] / "tasks"
    broken = json.loads((task_dir / "c3d4" / "result.json").read_text())
    assert broken["excluded"] and broken["attempts"] == 3
    assert all("answered HTTP 500" in e for e in broken["infra_errors"])


def test_a_click_off_the_allowed_sites_is_undone_and_told_to_the_agent(site, tmp_path):
    """The shop links to itself under another host name (localhost): leaving 127.0.0.1 is
    refused unless `allowed_domains` lists the host."""
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"web_name": "Shop", "id": "Shop--9", "ques": "Open the mirror.", "web": site.url("/")}))
    replies = ['Action: click [3]', 'Action: answer stayed', 'Action: click [3]', 'Action: answer left']  # [3] = Mirror
    with FakeLLM() as fake:
        fake.set_handler(lambda request: "Verdict: SUCCESS" if JUDGE_MARK in json.dumps(request["messages"][-1]) else replies.pop(0))
        role = RoleConfig(model="m", base_url=fake.base_url, max_retries=0)
        llm = LLMClient(LLMConfig(agent=role, judge=role))
        for options, error, url in (({}, "outside the sites this task may use", "127.0.0.1"),
                                    ({"allowed_domains": ["localhost"]}, None, "localhost")):
            bench = load("webvoyager", {"path": str(tasks), **options}, llm=llm)
            try:
                episode = bench.run_episode(bench.tasks[0], build_agent(bench, llm), None, EpisodeStore(tmp_path / "store"))
            finally:
                bench.close()
            assert episode.steps[0].action == "click [3]"
            assert (error in episode.steps[0].error) if error else episode.steps[0].error is None
            assert f"URL: http://{url}:" in episode.steps[1].observation
