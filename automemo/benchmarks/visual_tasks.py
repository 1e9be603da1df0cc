"""Visual-reasoning benchmarks read from local task files, answered by the visual agent with web
tools when a search provider is configured (their protocols give the agent `web_search` and
`visit`); without one the agent answers from the question and its images alone, and the run
says so (`describe()["notice"]`).

Formats read (one JSON list, or JSONL with one task per line):
- AgentVista `val.json`: {"question_id"|"doc_id", "problem"|"question", "images": [paths],
  "solution"}; category = "category" when present.
- MMSearch-Plus (decrypted, exported to JSON/JSONL): {"question", "answer": [str, ...],
  "img_1".."img_5" or "images": [paths], "category", "area", "subfield"}; category = category or area.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from automemo.benchmarks.base import Task, TaskScore
from automemo.benchmarks.files import FileBenchmark, first_field
from automemo.contract import EpisodeRecorder, MemoryPayload
from automemo.episode_store import EpisodeStore
from automemo.interaction.answers import exact_match, token_f1
from automemo.interaction.tools import ToolsConfig, WebTools


@dataclass(frozen=True)
class VisualTasksOptions:
    path: str = ""                 # the task file (JSON list or JSONL); required
    image_dir: str = ""            # folder image paths are relative to; "" = the task file's folder
    seed: int = 0                  # fixes the stratified splits
    test_fraction: float = 0.8     # the paper splits train:test about 1:4, stratified by category
    retrieve_fraction: float = 0.5  # share of train tasks in the retrieve (validation) batch
    limit: int = 0                 # use only the first N tasks of the file; 0 = all
    judge: str = "f1"              # "f1" (exact match against any listed answer) or "llm" (the judge role)
    # web_search + visit for the agent, as the benchmarks' protocols give it; no provider = no tools
    tools: ToolsConfig = ToolsConfig()


class VisualFileBenchmark(FileBenchmark):
    """Visual-reasoning tasks: the visual agent answers from the question and its images, with
    web tools when a search provider is configured."""

    family = "visual"
    Options = VisualTasksOptions
    site_known = False  # the category is the dataset's question category, an annotation

    def __init__(self, options: VisualTasksOptions = VisualTasksOptions(), *, llm: Any = None) -> None:
        if options.judge not in ("f1", "llm"):
            raise ValueError(f"{self.name}: judge must be \"f1\" or \"llm\", got {options.judge!r}")
        super().__init__(options, llm=llm)
        # The tools the agent gets (None: none configured); `build_agent` reads `agent_tools`.
        self.agent_tools = WebTools(options.tools, llm) if options.tools.provider else None

    def run_episode(self, task: Task, agent: Any, payload: MemoryPayload | None, store: EpisodeStore) -> EpisodeRecorder:
        if agent is None:
            raise ValueError(f"{self.name} needs the visual agent: configure the agent role (llm.agent.model)")
        partial = self.partial(task, store)
        answer = agent.answer(partial, payload, store)
        gold = task.data.get("answers") or []
        verdict, feedback = False, "no reference answer in the task file"
        if gold and self.options.judge == "llm":
            from automemo.interaction.judges import AnswerJudge

            verdict, feedback = AnswerJudge(self.llm).judge(task.instruction, " OR ".join(gold), answer.text)
        elif gold:
            verdict = max(exact_match(answer.text, g) for g in gold) == 1.0
            feedback = f"reference: {' | '.join(gold)}"
        return EpisodeRecorder(**{**partial.to_dict(), "task_images": partial.task_images}, steps=answer.steps,
                               final_answer=answer.text, reward=float(verdict), success=verdict,
                               judge_feedback=feedback, usage=answer.usage)

    def score(self, task: Task, episode: EpisodeRecorder, payload: MemoryPayload) -> TaskScore:
        gold = task.data.get("answers") or []
        answer = episode.final_answer or ""
        metrics = {"success": 1.0 if episode.success else 0.0}
        if gold:
            metrics["f1"] = max(token_f1(answer, g) for g in gold)
            metrics["em"] = max(exact_match(answer, g) for g in gold)
        return TaskScore(metrics["success"], metrics, feedback=episode.judge_feedback or "")

    def describe(self) -> dict[str, Any]:
        out = {**super().describe(), "tools": self.agent_tools.describe() if self.agent_tools else "none"}
        if self.agent_tools is None:
            out["notice"] = (f"{self.name} runs without tools: no search provider is configured (benchmark option "
                             "tools.provider = searxng | serper | brave), so the agent answers from the question and "
                             "its images alone and scores are not comparable to the paper's")
        return out


def _answers(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]


class AgentVistaTasks(VisualFileBenchmark):
    name = "agentvista"
    format_hint = "AgentVista val.json: {question_id, problem, images, solution}"

    def parse(self, record, where):
        return Task(str(first_field(record, ("question_id", "doc_id", "id"), "a task id", where)), self.name,
                    str(record.get("category") or record.get("subcategory") or "uncategorised"),
                    str(first_field(record, ("problem", "question"), "the task text", where)),
                    {"images": [str(p) for p in record.get("images") or []], "answers": _answers(record.get("solution"))})


class MMSearchPlusTasks(VisualFileBenchmark):
    name = "mmsearch_plus"
    format_hint = "MMSearch-Plus exported to JSON/JSONL: {question, answer, img_1..img_5 or images, category}"

    def parse(self, record, where):
        images = [str(p) for p in record.get("images") or []] or [
            str(record[k]) for k in ("img_1", "img_2", "img_3", "img_4", "img_5") if isinstance(record.get(k), str) and record[k]
        ]
        return Task(str(record.get("id") or record.get("question_id") or where.rsplit(" ", 1)[-1]), self.name,
                    str(record.get("category") or record.get("area") or "uncategorised"),
                    str(first_field(record, ("question",), "the question", where)),
                    {"images": images, "answers": _answers(record.get("answer"))})
