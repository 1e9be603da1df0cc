"""`automemo eval seeds/no_memory.py --benchmark mind2web_offline` on a Multimodal-Mind2Web
fixture (tests/fixtures/benchmarks/mind2web_offline_sample.json): the fake agent is right on
united's pages and half wrong on amazon's, so the four step-wise metrics have known values."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from automemo.benchmarks.mind2web_offline import step_metrics
from automemo.measurements.stand_ins.fakellm import FakeLLM
from automemo.paths import seed_path

from webpolicy import last_user_text

pytestmark = [pytest.mark.docker]

FIXTURES = Path(__file__).parent / "fixtures" / "benchmarks"

# What the agent does at each step of each task: (verb, label of the element it picks, text typed).
PLAN = {
    "Find flights from New York to Chicago": [("type", "From", "New York"), ("click", "Search flights", "")],
    "Check the flight status of UA 100": [("type", "Flight number", "UA 100"), ("click", "Check status", "")],
    # amazon: the right element with one word too many, then the wrong element
    "Search for red shoes and open the first result": [("type", "Search Amazon", "red shoes now"),
                                                       ("click", "Sponsored: blue shoes", "")],
    "Choose size 9 from the size menu and add the shoes to the cart": [("type", "Size", "Size 9 now"), ("click", "Buy now", "")],
}


def agent(request: dict) -> str:
    text = last_user_text(request)
    task = re.search(r"Task: (.+)", text).group(1)
    done = 0 if "Previous actions: none" in text else len(text.split("Previous actions:\n", 1)[1].split("\nStep ")[0].splitlines())
    verb, label, typed = PLAN[task][done]
    ref = re.search(rf'^\[(\d+)\] .*"{re.escape(label)}"', text, re.MULTILINE).group(1)
    return f"Action: {verb} [{ref}] {typed}".rstrip()


def test_step_metrics_follow_mind2web():
    gold = {"pos_candidates": [{"backend_node_id": "7"}], "operation": {"op": "TYPE", "value": "new york"}}
    assert step_metrics({"backend_node_id": "7"}, "TYPE new york", gold) == {"element_acc": 1.0, "op_f1": 1.0, "step_sr": 1.0}
    right_element_extra_word = step_metrics({"backend_node_id": "7"}, "TYPE new york city", gold)
    assert right_element_extra_word["element_acc"] == 1.0 and right_element_extra_word["step_sr"] == 0.0
    assert right_element_extra_word["op_f1"] == pytest.approx(6 / 7)
    assert step_metrics({"backend_node_id": "8"}, "TYPE new york", gold)["step_sr"] == 0.0
    assert step_metrics(None, "", gold) == {"element_acc": 0.0, "op_f1": 0.0, "step_sr": 0.0}


def test_eval_reports_the_four_metrics_and_replays_recorded_update_episodes(tmp_path):
    home = tmp_path / "user"
    (home / "seeds").mkdir(parents=True)
    shutil.copy(seed_path("no_memory"), home / "seeds" / "no_memory.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AUTOMEMO_"))}
    env.update(AUTOMEMO_CACHE=str(home / "cache"), OPENAI_API_KEY="sk-local-placeholder")
    with FakeLLM() as server:
        server.set_handler(agent)
        run = subprocess.run(
            ["automemo", "eval", "seeds/no_memory.py", "--benchmark", "mind2web_offline", "--agent-model", "m",
             "--agent-base-url", server.base_url, "--repeats", "1",
             "--option", f"path={FIXTURES / 'mind2web_offline_sample.json'}", "--option", "test_fraction=0.5"],
            cwd=home, env=env, capture_output=True, text=True, timeout=300)
        calls = len(server.requests)
    assert run.returncode == 0, run.stderr
    doc = json.loads((home / re.search(r"results written to (\S+);", run.stdout).group(1)).read_text())
    table = doc["table"]
    metrics = {name: stat["mean"] for name, stat in table["metrics"].items()}
    # united: both steps right; amazon: right element with a wrong value, then a wrong element.
    assert metrics["element_acc"] == pytest.approx(0.75)
    assert metrics["op_f1"] == pytest.approx((1 + (6 / 7 + 1) / 2) / 2)
    assert metrics["step_sr"] == pytest.approx(0.5) and metrics["task_sr"] == pytest.approx(0.5)
    assert table["score"]["mean"] == pytest.approx(0.5)
    assert {c: s["mean"] for c, s in table["per_category"].items()} == {"united": 1.0, "amazon": 0.0}
    for name in ("element_acc", "op_f1", "step_sr", "task_sr"):
        assert name in run.stdout
    # One agent call per recorded test step (2 tasks x 2 steps); the two update tasks were replayed.
    assert calls == 4
    (evaluation,) = doc["evaluations"]
    assert evaluation["info"]["n_update"] == evaluation["info"]["n_update_applied"] == 2


def test_the_release_with_one_row_per_step_is_grouped_into_the_same_tasks(tmp_path):
    """The Hugging Face export: one row per step, operation and candidates as JSON text."""
    from automemo.benchmarks import load

    tasks = json.loads((FIXTURES / "mind2web_offline_sample.json").read_text())
    rows = []
    for task in tasks:
        for i, action in enumerate(task["actions"]):
            shot = action.get("screenshot") or (task.get("screenshots") or [None, None])[i]
            rows.append({**{k: task[k] for k in ("annotation_id", "website", "domain", "confirmed_task", "action_reprs")},
                         "action_uid": action["action_uid"], "operation": json.dumps(action["operation"]),
                         "pos_candidates": [json.dumps(c) for c in action["pos_candidates"]],
                         "neg_candidates": [json.dumps(c) for c in action["neg_candidates"]],
                         "cleaned_html": action["cleaned_html"], "raw_html": "<html>...</html>", "screenshot": shot})
    (tmp_path / "rows.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    for name in ("av_img1.png", "av_img2.png"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    grouped = load("mind2web_offline", {"path": str(tmp_path / "rows.jsonl")})
    original = load("mind2web_offline", {"path": str(FIXTURES / "mind2web_offline_sample.json")})
    assert [t.task_id for t in grouped.tasks] == ["u1", "u2", "a1", "a2"]
    assert [t.data for t in grouped.tasks] == [t.data for t in original.tasks]
