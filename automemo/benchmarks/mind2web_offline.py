"""Mind2Web offline: recorded Multimodal-Mind2Web tasks scored step by step, as that dataset
defines it (no live site is visited).

Format read (a JSON list or JSONL, one task per record):
    {"annotation_id", "website", "domain", "subdomain"?, "confirmed_task",
     "actions": [{"action_uid", "operation": {"op": "CLICK" | "TYPE" | "SELECT", "value"},
                  "pos_candidates": [candidate], "neg_candidates": [candidate], "cleaned_html",
                  "screenshot"?: path}],
     "screenshots"?: [path per action], "action_reprs"?: ["[button] Search -> CLICK", ...]}
    candidate = {"tag", "backend_node_id", "attributes": JSON string or object}
The Hugging Face release (one row per step: the task fields plus `action_uid`, `operation` and
candidates as JSON strings, `screenshot`) is read too once exported to JSONL with each row's
screenshot saved as a file and `screenshot` holding its path: rows are grouped into tasks by
`annotation_id`, in file order. Screenshot paths are relative to `image_dir` (default: the task
file's folder); a step without one is shown as text only.

For each recorded step the web agent gets the task, the recorded previous actions and the page
(its candidate elements, numbered, with their text from the cleaned HTML, plus the screenshot)
and answers one action: `click [N]`, or `type [N] text` (a SELECT when element N is a <select>).
Per step: element correct = the chosen candidate is a positive one; operation F1 = token F1 of
"OP value" against the recorded operation; step success = element correct and operation F1 = 1.
Per task: the means of those, and task success = every step succeeded. A task's score is its
step success rate. Update episodes are the train tasks' recorded trajectories (no agent runs);
memory is retrieved once per test task and shown at every one of its steps.
"""

from __future__ import annotations

import dataclasses
import json
import random
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any, Mapping

from automemo.benchmarks.base import Split, Task, TaskScore
from automemo.benchmarks.files import FileBenchmark, first_field
from automemo.contract import EpisodeRecorder, MemoryPayload, PartialRecorder, Step
from automemo.episode_store import EpisodeStore
from automemo.interaction.answers import token_f1
from automemo.interaction.web import WebObservation

OPERATIONS = ("CLICK", "TYPE", "SELECT")
SHOWN_ATTRIBUTES = ("id", "name", "type", "role", "aria_label", "aria-label", "placeholder", "title", "alt", "value", "href")


@dataclass(frozen=True)
class Mind2WebOfflineOptions:
    path: str = ""                 # the task file (JSON list or JSONL); required
    image_dir: str = ""            # folder screenshot paths are relative to; "" = the task file's folder
    seed: int = 0                  # fixes the splits and the candidates sampled per step
    test_fraction: float = 0.8     # the paper splits train:test about 1:4, stratified by website
    retrieve_fraction: float = 0.5  # share of train tasks in the retrieve (validation) batch
    limit: int = 0                 # use only the first N tasks of the file; 0 = all
    max_candidates: int = 20       # elements shown per step: every positive one plus sampled negatives
    max_text_chars: int = 80       # text shown per candidate


TASK_FIELDS = ("annotation_id", "website", "domain", "subdomain", "confirmed_task", "action_reprs")


def _json(value: Any) -> Any:
    """The release stores operations and candidates as JSON text; fixtures may inline them."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


class _ElementText(HTMLParser):
    """The text inside every element of a cleaned HTML page that has a backend_node_id."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str | None] = []
        self.text: dict[str, list[str]] = {}

    def handle_starttag(self, tag, attrs):
        node = dict(attrs).get("backend_node_id")
        if node is not None:
            self.text.setdefault(node, [])
        if tag not in ("input", "img", "br", "hr", "meta", "link"):
            self.open.append(node)

    def handle_endtag(self, tag):
        if self.open:
            self.open.pop()

    def handle_data(self, data):
        words = data.split()
        if words:
            for node in self.open:
                if node is not None:
                    self.text[node].extend(words)


def element_texts(cleaned_html: str) -> dict[str, str]:
    parser = _ElementText()
    parser.feed(cleaned_html or "")
    return {node: " ".join(words) for node, words in parser.text.items()}


def _attributes(candidate: Mapping[str, Any]) -> dict[str, Any]:
    attrs = candidate.get("attributes") or {}
    if isinstance(attrs, str):
        try:
            attrs = json.loads(attrs)
        except json.JSONDecodeError:
            attrs = {}
    return attrs if isinstance(attrs, dict) else {}


def candidate_line(n: int, candidate: Mapping[str, Any], text: str, max_chars: int) -> str:
    attrs = _attributes(candidate)
    parts = [f"[{n}]", str(candidate.get("tag") or attrs.get("tag") or "element")]
    if text:
        parts.append(json.dumps(text[:max_chars], ensure_ascii=False))
    for key in SHOWN_ATTRIBUTES:
        if attrs.get(key) not in (None, ""):
            parts.append(f"{key}={json.dumps(str(attrs[key])[:max_chars], ensure_ascii=False)}")
    return " ".join(parts)


def operation_string(op: str, value: str) -> str:
    return f"{op} {value}".strip() if op != "CLICK" else "CLICK"


def step_metrics(chosen: Mapping[str, Any] | None, predicted_op: str, gold: Mapping[str, Any]) -> dict[str, float]:
    """Mind2Web's per-step metrics for the chosen candidate and the predicted operation string."""
    positives = {str(c.get("backend_node_id")) for c in gold["pos_candidates"]}
    element = 1.0 if chosen is not None and str(chosen.get("backend_node_id")) in positives else 0.0
    op = gold["operation"]
    op_f1 = token_f1(predicted_op, operation_string(op["op"], str(op.get("value") or ""))) if predicted_op else 0.0
    return {"element_acc": element, "op_f1": op_f1, "step_sr": 1.0 if element == 1.0 and op_f1 == 1.0 else 0.0}


class Mind2WebOffline(FileBenchmark):
    name = "mind2web_offline"
    family = "web"
    Options = Mind2WebOfflineOptions
    format_hint = "Multimodal-Mind2Web tasks: {annotation_id, website, domain, confirmed_task, actions: [...]}"

    def __init__(self, options: Mind2WebOfflineOptions = Mind2WebOfflineOptions(), *, llm: Any = None) -> None:
        if options.max_candidates < 2:
            raise ValueError(f"mind2web_offline: max_candidates must be at least 2, got {options.max_candidates}")
        super().__init__(options, llm=llm)
        # One action per recorded step; `back` and `wait` mean nothing on a recorded page.
        self.web_agent_options = {"max_steps": 1}

    def prepare(self, records, path):
        if not records or "actions" in records[0] or "action_uid" not in records[0]:
            return records
        tasks: dict[str, dict[str, Any]] = {}
        for n, row in enumerate(records):
            task_id = str(first_field(row, ("annotation_id",), "the annotation_id", f"{path} row {n}"))
            task = tasks.setdefault(task_id, {k: v for k, v in row.items() if k in TASK_FIELDS} | {"actions": []})
            task["actions"].append({k: v for k, v in row.items() if k not in TASK_FIELDS and k != "raw_html"})
        return list(tasks.values())

    def parse(self, record, where):
        actions = record.get("actions")
        if not isinstance(actions, list) or not actions:
            raise ValueError(f"{where}: `actions` must be a non-empty list of recorded steps")
        shots = list(record.get("screenshots") or [])
        steps = []
        for i, action in enumerate(actions):
            op = _json(action.get("operation")) if isinstance(action, Mapping) else None
            if not isinstance(op, Mapping) or str(op.get("op", "")).upper() not in OPERATIONS:
                raise ValueError(f"{where} action {i}: `operation.op` must be one of {', '.join(OPERATIONS)}")
            if not action.get("pos_candidates"):
                raise ValueError(f"{where} action {i}: no pos_candidates (the recorded target element)")
            steps.append({
                "action_uid": str(action.get("action_uid") or i),
                "operation": {"op": str(op["op"]).upper(), "value": str(op.get("value") or "")},
                "pos_candidates": [_json(c) for c in action["pos_candidates"]],
                "neg_candidates": [_json(c) for c in action.get("neg_candidates") or []],
                "cleaned_html": str(action.get("cleaned_html") or ""),
                "screenshot": action.get("screenshot") or (shots[i] if i < len(shots) else None),
            })
        reprs = [str(r) for r in record.get("action_reprs") or []]
        return Task(str(first_field(record, ("annotation_id",), "the annotation_id", where)), self.name,
                    str(first_field(record, ("website",), "the website", where)),
                    str(first_field(record, ("confirmed_task",), "the task text", where)),
                    {"domain": record.get("domain") or "", "steps": steps, "action_reprs": reprs})

    def split(self, name: str) -> Split:
        split = super().split(name)
        # Update episodes replay the recorded trajectory: no agent acts on them.
        update = tuple(dataclasses.replace(t, data={**t.data, "replay": True}) for t in split.update)
        return Split(split.name, update, split.retrieve)

    # one step's page -------------------------------------------------------------------------

    def _candidates(self, task: Task, index: int) -> list[Mapping[str, Any]]:
        step = task.data["steps"][index]
        rng = random.Random(f"{self.options.seed}:{task.task_id}:{step['action_uid']}")
        negatives = list(step["neg_candidates"])
        rng.shuffle(negatives)
        shown = step["pos_candidates"] + negatives[: max(0, self.options.max_candidates - len(step["pos_candidates"]))]
        rng.shuffle(shown)
        return shown

    def _page(self, task: Task, index: int, store: EpisodeStore):
        step = task.data["steps"][index]
        candidates = self._candidates(task, index)
        texts = element_texts(step["cleaned_html"])
        lines = [candidate_line(n, c, texts.get(str(c.get("backend_node_id")), ""), self.options.max_text_chars)
                 for n, c in enumerate(candidates)]
        shot = None
        if step["screenshot"]:
            path = (self.image_dir / step["screenshot"]).resolve()
            if not path.is_file():
                raise ValueError(f"mind2web_offline task {task.task_id}: screenshot {step['screenshot']} not found "
                                 f"under {self.image_dir}; set the option `image_dir`")
            shot = store.put_image(path)
        return candidates, "\n".join(lines), shot

    def _recorded(self, task: Task, index: int) -> str:
        reprs = task.data["action_reprs"]
        if index < len(reprs):
            return reprs[index]
        step = task.data["steps"][index]
        pos = step["pos_candidates"][0]
        return f"[{pos.get('tag', 'element')}] -> {operation_string(step['operation']['op'], step['operation']['value'])}"

    # episodes --------------------------------------------------------------------------------

    def partial(self, task: Task, store: EpisodeStore) -> PartialRecorder:
        _, elements, shot = self._page(task, 0, store)
        return PartialRecorder(task.task_id, self.name, task.instruction, initial_observation=elements,
                               initial_screenshot=shot, metadata={"site": task.category})  # the domain is an annotation

    def run_episode(self, task: Task, agent: Any, payload: MemoryPayload | None, store: EpisodeStore) -> EpisodeRecorder:
        partial = self.partial(task, store)
        if task.data.get("replay"):
            pages = [self._page(task, i, store) for i in range(len(task.data["steps"]))]
            steps = tuple(Step(i, elements, shot, self._recorded(task, i)) for i, (_, elements, shot) in enumerate(pages))
            return EpisodeRecorder(**{**partial.to_dict(), "initial_screenshot": partial.initial_screenshot},
                                   steps=steps, reward=1.0, success=True, judge_feedback="recorded human trajectory")
        if agent is None:
            raise ValueError("mind2web_offline needs the web agent: configure the agent role (llm.agent.model)")
        steps, per_step = [], []
        usage = {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
        for i, gold in enumerate(task.data["steps"]):
            candidates, elements, shot = self._page(task, i, store)
            history = [self._recorded(task, j) for j in range(i)]
            instruction = task.instruction + ("\nPrevious actions:\n" + "\n".join(history) if history else "\nPrevious actions: none")
            run = agent.start(instruction, payload, store)
            turn = run.act(WebObservation("Candidate elements (pick one):\n" + elements,
                                          store.image_bytes(shot) if shot else None))
            for key in usage:
                usage[key] += run.usage.get(key, 0)
            chosen, predicted, error = self._prediction(turn, candidates)
            metrics = step_metrics(chosen, predicted, gold)
            per_step.append(metrics)
            steps.append(Step(i, elements, shot, str(turn.action) if turn.action else turn.reply.strip()[:500], turn.thought,
                              error))
        n = len(per_step)
        means = {k: sum(m[k] for m in per_step) / n for k in ("element_acc", "op_f1", "step_sr")}
        task_sr = 1.0 if means["step_sr"] == 1.0 else 0.0
        feedback = "; ".join(f"step {i}: element {'right' if m['element_acc'] else 'wrong'}, op F1 {m['op_f1']:.2f}"
                             for i, m in enumerate(per_step))
        return EpisodeRecorder(**{**partial.to_dict(), "initial_screenshot": partial.initial_screenshot,
                                  "metadata": {**partial.metadata, "step_metrics": per_step}},
                               steps=tuple(steps), reward=means["step_sr"], success=task_sr == 1.0,
                               judge_feedback=feedback, usage={**usage, "steps": n})

    @staticmethod
    def _prediction(turn: Any, candidates: list) -> tuple[Mapping[str, Any] | None, str, str | None]:
        """(chosen candidate, predicted operation string, error) from the agent's turn."""
        action = turn.action
        if action is None:
            return None, "", f"invalid action: {turn.error}"
        if action.kind not in ("click", "type") or action.ref is None:
            return None, "", f"`{action.kind}` is not an operation here; use click [N] or type [N] text"
        if not 0 <= action.ref < len(candidates):
            return None, "", f"there is no candidate [{action.ref}]"
        chosen = candidates[action.ref]
        if action.kind == "click":
            return chosen, "CLICK", None
        op = "SELECT" if str(chosen.get("tag", "")).lower() == "select" else "TYPE"
        return chosen, f"{op} {action.text}", None

    def score(self, task: Task, episode: EpisodeRecorder, payload: MemoryPayload) -> TaskScore:
        per_step = episode.metadata.get("step_metrics") or []
        if not per_step:
            return TaskScore(0.0, {"element_acc": 0.0, "op_f1": 0.0, "step_sr": 0.0, "task_sr": 0.0})
        n = len(per_step)
        metrics = {k: sum(m[k] for m in per_step) / n for k in ("element_acc", "op_f1", "step_sr")}
        metrics["task_sr"] = 1.0 if episode.success else 0.0
        return TaskScore(metrics["step_sr"], metrics, feedback=episode.judge_feedback or "")

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "max_candidates": self.options.max_candidates,
                "steps": sum(len(t.data["steps"]) for t in self.tasks)}
