"""Live-web benchmarks: WebVoyager and Online-Mind2Web, run as real episodes in headless Debian
chromium from each task's start URL.

Formats read (one JSON list, or JSONL with one task per line):
- WebVoyager `WebVoyager_data.jsonl`: {"web_name", "id", "ques", "web"}; category = web_name.
  Reference answers from `reference_answer.json`: {web_name: {"answers": [{"id": 0, "type":
  "golden" | "possible", "ans": "..."}]}}, matched by the number after `--` in the task id.
- Online-Mind2Web task lists: {"task_id", "confirmed_task", "website", "level"}; category = host.
  (Original Mind2Web task JSON with `annotation_id` and a site name for `website` is read too, for
  listing and splits; it has no start URL, so its tasks cannot run here: use `mind2web_offline`.)

An episode: the web agent sees the page's screenshot with numbered boxes on the interactive
elements plus the element list, acts (click, type, press, scroll, wait, back, answer) at most
`max_steps` times; the WebVoyager auto-evaluation judge (task, final answer, the last 5
screenshots, the reference answer when there is one) gives the binary verdict and its reason.
Browser and site failures raise InfrastructureError (retried, then excluded by the harness).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from automemo.benchmarks.base import InfrastructureError, Task, TaskScore
from automemo.benchmarks.browser import BrowserConfig, BrowserPool, resolve_binaries
from automemo.benchmarks.files import FileBenchmark, first_field
from automemo.benchmarks.live_page import LivePage, host_of
from automemo.contract import EpisodeRecorder, MemoryPayload, Step
from automemo.episode_store import EpisodeStore
from automemo.interaction.judges import MAX_JUDGE_SCREENSHOTS, TrajectoryJudge
from automemo.interaction.web import WebObservation

@dataclass(frozen=True)
class LiveWebOptions:
    path: str = ""                  # the task file (JSON list or JSONL); required
    reference_path: str = ""        # webvoyager: reference_answer.json; "" = the one next to the task file, if any
    seed: int = 0                   # fixes the stratified splits
    test_fraction: float = 0.8      # the paper splits train:test about 1:4, stratified by site
    retrieve_fraction: float = 0.5  # share of train tasks in the retrieve (validation) batch
    limit: int = 0                  # use only the first N tasks of the file; 0 = all
    max_steps: int = 15             # agent actions per episode (the paper's budget)
    stay_on_site: bool = True       # a click may only lead to the start URL's host (and allowed_domains)
    allowed_domains: tuple[str, ...] = ()  # further hosts (and their subdomains) every task may visit
    wait_s: float = 2.0             # how long the `wait` action waits
    # After a click, a key or typing, how long (on the page's clock) a navigation may take to start
    # before the page is observed; one that starts is followed until its page has loaded.
    settle_s: float = 0.3
    max_text_chars: int = 2000      # visible page text shown beside the element list, per turn
    page_load_timeout_s: float = 30.0  # a start page or click that loads longer is an infrastructure failure
    # A desktop-sized window: live sites lay out for it (MiniWoB++'s 500 x 450 is for its tiny tasks).
    window_width: int = 1024
    window_height: int = 768


class LiveWebBenchmark(FileBenchmark):
    """Shared episode loop and judging; subclasses parse one task format."""

    Options = LiveWebOptions
    family = "web"

    def __init__(self, options: LiveWebOptions = LiveWebOptions(), *, llm: Any = None) -> None:
        if options.max_steps < 1:
            raise ValueError(f"{self.name}: max_steps must be at least 1, got {options.max_steps}")
        if options.settle_s < 0:
            raise ValueError(f"{self.name}: settle_s must be zero or more seconds, got {options.settle_s}")
        if options.page_load_timeout_s <= 0:
            raise ValueError(f"{self.name}: page_load_timeout_s must be positive, got {options.page_load_timeout_s}")
        if llm is not None and llm.configured("agent") and not llm.configured("judge"):
            raise ValueError(f"{self.name} episodes are scored by an LLM judge: configure the judge role (llm.judge.model)")
        super().__init__(options, llm=llm)
        # Chromium and chromedriver: Debian's, or $MINIWOB_CHROME_BINARY / $MINIWOB_CHROMEDRIVER.
        browser = BrowserConfig(window_width=options.window_width, window_height=options.window_height,
                                page_timeout_s=options.page_load_timeout_s)
        if llm is not None and llm.configured("agent"):
            try:  # a missing browser is a setup mistake: say so now, not as every episode's infrastructure failure
                resolve_binaries(browser)
            except InfrastructureError as exc:
                raise ValueError(f"{self.name}: {exc}") from None
        self.pool = BrowserPool(browser)
        # How the run's web agent is shaped (agents.build_agent): its step budget, `wait` / `back` offered.
        self.web_agent_options = {"max_steps": options.max_steps, "navigation": True}

    def allowed_hosts(self, task: Task) -> tuple[str, ...]:
        if not self.options.stay_on_site:
            return ()
        extra = tuple(d.lower().removeprefix("www.") for d in self.options.allowed_domains)
        return (host_of(task.data["url"]),) + extra

    def run_episode(self, task: Task, agent: Any, payload: MemoryPayload | None, store: EpisodeStore) -> EpisodeRecorder:
        if agent is None:
            raise ValueError(f"{self.name} needs the web agent: configure the agent role (llm.agent.model)")
        if not task.data.get("url"):
            raise ValueError(
                f"{self.name} task {task.task_id} has no start URL (website {task.category!r}): live episodes "
                "need a task list whose `website` is a URL (Online-Mind2Web); the original Mind2Web records "
                "are scored offline by the benchmark `mind2web_offline`")
        judge = self._judge()
        started = time.monotonic()
        steps, screenshots, answer, usage = self.pool.guarded(lambda: self._play(task, agent, payload, store))
        if answer is None:
            verdict, reason = False, f"no answer within {self.options.max_steps} steps"
            judged = 0
        else:
            reference = task.data.get("reference", "")
            verdict, reason = judge.judge(task.instruction, [s.action for s in steps], answer, screenshots,
                                          reference=reference)
            judged = min(len(screenshots), MAX_JUDGE_SCREENSHOTS)
        partial = self.partial(task, store)
        return EpisodeRecorder(
            **{**partial.to_dict(), "task_images": (), "metadata": {**partial.metadata, "judge_screenshots": judged}},
            steps=tuple(steps),
            final_answer=answer,
            reward=1.0 if verdict else 0.0,
            success=verdict,
            judge_feedback=reason,
            usage={**usage, "wall_s": round(time.monotonic() - started, 3)},
        )

    def _judge(self):
        if self.llm is None or not self.llm.configured("judge"):
            raise ValueError(f"{self.name} episodes are scored by an LLM judge: configure the judge role (llm.judge.model)")
        return TrajectoryJudge(self.llm)

    def _play(self, task: Task, agent: Any, payload: MemoryPayload | None, store: EpisodeStore):
        """The episode in the browser: (steps, screenshots, final answer or None, agent usage)."""
        page = LivePage(self.pool.driver(), self.allowed_hosts(task), wait_s=self.options.wait_s,
                        max_text_chars=self.options.max_text_chars, settle_s=self.options.settle_s,
                        load_timeout_s=self.options.page_load_timeout_s)
        page.open(task.data["url"])
        state = page.observe()
        run = agent.start(task.instruction, payload, store)
        steps: list[Step] = []
        screenshots: list[bytes] = []
        error: str | None = None
        for index in range(self.options.max_steps):
            shot = store.put_image(state.screenshot)
            screenshots.append(state.screenshot)
            observation = state.observation()
            turn = run.act(WebObservation(observation, state.screenshot, error))
            error = None
            if turn.action is None:  # the agent hears why at its next turn
                steps.append(Step(index, observation, shot, turn.reply.strip()[:500], turn.thought, f"invalid action: {turn.error}"))
                continue
            if turn.action.kind == "answer":
                steps.append(Step(index, observation, shot, str(turn.action), turn.thought))
                return steps, screenshots, turn.action.text, dict(run.usage)
            error = page.execute(turn.action, state.refs)
            steps.append(Step(index, observation, shot, str(turn.action), turn.thought, error))
            state = page.observe()
        return steps, screenshots, None, dict(run.usage)

    def score(self, task: Task, episode: EpisodeRecorder, payload: MemoryPayload) -> TaskScore:
        value = 1.0 if episode.success else 0.0
        return TaskScore(value, {"success": value, "steps": float(len(episode.steps))}, feedback=episode.judge_feedback or "")

    def describe(self) -> dict[str, Any]:
        o = self.options
        return {**super().describe(), "max_steps": o.max_steps, "stay_on_site": o.stay_on_site,
                "allowed_domains": list(o.allowed_domains), "page_load_timeout_s": o.page_load_timeout_s,
                "references": sum(1 for t in self.tasks if t.data.get("reference"))}

    def close(self) -> None:
        self.pool.close()


def read_webvoyager_references(path: Path) -> dict[tuple[str, int], str]:
    """(web_name, number) -> reference answer, from WebVoyager's `reference_answer.json`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, Mapping):
        raise ValueError(f"{path}: expected an object {{web_name: {{\"answers\": [...]}}}}")
    out = {}
    for site, entry in data.items():
        for answer in (entry or {}).get("answers", []) if isinstance(entry, Mapping) else []:
            if isinstance(answer, Mapping) and "id" in answer and answer.get("ans"):
                kind = answer.get("type", "")
                out[(str(site), int(answer["id"]))] = str(answer["ans"]) + (f" ({kind})" if kind else "")
    return out


class WebVoyagerTasks(LiveWebBenchmark):
    name = "webvoyager"
    format_hint = "WebVoyager_data.jsonl: one {web_name, id, ques, web} per line"

    def __init__(self, options: LiveWebOptions = LiveWebOptions(), *, llm: Any = None) -> None:
        self.references: dict[tuple[str, int], str] = {}
        if options.reference_path:
            ref = Path(options.reference_path).expanduser()
            if not ref.is_file():
                raise ValueError(f"webvoyager: reference_path {ref} does not exist")
            self.references = read_webvoyager_references(ref)
        elif options.path and (Path(options.path).expanduser().parent / "reference_answer.json").is_file():
            self.references = read_webvoyager_references(Path(options.path).expanduser().parent / "reference_answer.json")
        super().__init__(options, llm=llm)

    def parse(self, record, where):
        task_id = str(first_field(record, ("id",), "a task id", where))
        site = str(first_field(record, ("web_name",), "the site name", where))
        number = task_id.rsplit("--", 1)[-1]
        reference = self.references.get((site, int(number))) if number.isdigit() else None
        return Task(task_id, self.name, site, str(first_field(record, ("ques", "question"), "the task text", where)),
                    {"url": str(record.get("web", "")), **({"reference": reference} if reference else {})})


class Mind2WebTasks(LiveWebBenchmark):
    name = "mind2web"
    format_hint = "an Online-Mind2Web task list: {task_id, confirmed_task, website (a URL)}"

    def parse(self, record, where):
        site = str(first_field(record, ("website",), "the website", where))
        url = site if "/" in site else ""
        return Task(str(first_field(record, ("task_id", "annotation_id"), "a task id", where)), self.name,
                    host_of(url) if url else site,
                    str(first_field(record, ("confirmed_task", "task"), "the task text", where)),
                    {"url": url, "domain": record.get("domain") or record.get("subdomain") or "",
                     "level": record.get("level", "")})
