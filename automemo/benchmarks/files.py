"""Benchmarks read from their published task files on local disk (nothing is downloaded): the
shared reading (a JSON list or JSONL), task-id checks, stratified splits and partial recorders.
The formats themselves are parsed by `liveweb` (WebVoyager, Online-Mind2Web), `mind2web_offline`
and `visual_tasks` (AgentVista, MMSearch-Plus)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from automemo.benchmarks.base import Benchmark, Split, Task
from automemo.benchmarks.splits import stratified_split
from automemo.contract import PartialRecorder
from automemo.episode_store import EpisodeStore


def read_records(path: Path) -> list[dict[str, Any]]:
    """A JSON list or JSONL file of objects; errors name the file and the line."""
    if not path.is_file():
        raise ValueError(f"task file {path} does not exist; set the benchmark option `path` to the downloaded task file")
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc})") from None
    else:
        records = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{n}: not valid JSON ({exc.msg})") from None
    if isinstance(records, Mapping):  # some releases wrap the list: {"data": [...]}
        records = next((v for v in records.values() if isinstance(v, list)), [records])
    bad = [i for i, r in enumerate(records) if not isinstance(r, Mapping)]
    if bad:
        raise ValueError(f"{path}: task {bad[0]} is not a JSON object")
    return list(records)


def first_field(record: Mapping[str, Any], keys: tuple[str, ...], what: str, where: str) -> Any:
    for key in keys:
        if record.get(key) not in (None, ""):
            return record[key]
    raise ValueError(f"{where}: missing {what} (expected one of the fields {', '.join(keys)})")


class FileBenchmark(Benchmark):
    """Shared loading, splitting and partial recorders; subclasses parse one record format.
    `options` needs `path`, `limit`, `seed`, `test_fraction` and `retrieve_fraction`."""

    def __init__(self, options: Any, *, llm: Any = None) -> None:
        if not options.path:
            raise ValueError(f"{self.name}: set the option `path` to the local task file ({self.format_hint})")
        self.options = options
        self.llm = llm
        path = Path(options.path).expanduser()
        image_dir = getattr(options, "image_dir", "")
        self.image_dir = Path(image_dir).expanduser() if image_dir else path.parent
        records = self.prepare(read_records(path), path)
        if options.limit:
            records = records[: options.limit]
        self.tasks = [self.parse(r, f"{path} task {i}") for i, r in enumerate(records)]
        ids = [t.task_id for t in self.tasks]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise ValueError(f"{path}: task id {dup!r} appears more than once")

    format_hint = ""

    def prepare(self, records: list[dict[str, Any]], path: Path) -> list[dict[str, Any]]:
        """Records as read -> one record per task (a release with one row per step groups them here)."""
        return records

    def parse(self, record: Mapping[str, Any], where: str) -> Task:
        raise NotImplementedError

    def split(self, name: str) -> Split:
        o = self.options
        train, test = stratified_split(self.tasks, lambda t: t.category, o.test_fraction, o.seed, salt=f"{self.name}-test")
        update, retrieve = stratified_split(train, lambda t: t.category, o.retrieve_fraction, o.seed, salt=f"{self.name}-train")
        if name == "train":
            return Split("train", tuple(update), tuple(retrieve))
        if name == "test":
            return Split("test", tuple(update), tuple(test))
        raise ValueError(f"{self.name} has splits 'train' and 'test', not {name!r}")

    def _images(self, task: Task, store: EpisodeStore) -> tuple:
        refs = []
        for rel in task.data.get("images", []):
            path = (self.image_dir / rel).resolve()
            if not path.is_file():
                raise ValueError(f"{self.name} task {task.task_id}: image {rel} not found under {self.image_dir}; set the option `image_dir`")
            refs.append(store.put_image(path))
        return tuple(refs)

    question_time_keys = frozenset({"site", "url"})

    site_known = True
    """Whether a task's category names the website the agent works on (known to an application at
    question time, so `retrieve` sees it as `site`) rather than an annotation (a question category,
    which `retrieve` never sees). Domains and difficulty levels are annotations too."""

    def partial(self, task: Task, store: EpisodeStore) -> PartialRecorder:
        meta = {"site": task.category} if self.site_known else {}
        if "url" in task.data:
            meta["url"] = task.data["url"]
        return PartialRecorder(task.task_id, self.name, task.instruction, self._images(task, store), metadata=meta)

    def describe(self) -> dict[str, Any]:
        cats: dict[str, int] = {}
        for t in self.tasks:
            cats[t.category] = cats.get(t.category, 0) + 1
        return {"name": self.name, "family": self.family, "path": self.options.path, "tasks": len(self.tasks),
                "categories": cats}
