"""Real data for the contract prompt: an excerpt of one update episode (from the run's episode
store) and of one retrieve task (what `retrieve` was given in the parent's evaluation).

A model that has read one real episode writes code for the fields the data really fills (the
`ref` of a dialogue round, the `user` scope in metadata, where the images are) instead of for the
fields the interface merely allows. Excerpts are cut per field and as a whole, so one long
observation cannot crowd out the rest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Collection, Mapping, Sequence

from automemo.contract import EpisodeRecorder, PartialRecorder, question_time_task

_FIELD_CHARS = 300
_STEPS = 3


def _clip(value: Any, limit: int = _FIELD_CHARS) -> Any:
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + f"…[{len(value) - limit} more chars]"
    if isinstance(value, dict):
        return {k: _clip(v, limit) for k, v in list(value.items())[:12]}
    if isinstance(value, (list, tuple)):
        items = [_clip(v, limit) for v in list(value)[:6]]
        return items + ([f"…[{len(value) - 6} more]"] if len(value) > 6 else [])
    return value


def _dump(data: dict[str, Any], limit: int) -> str:
    text = json.dumps(data, indent=1, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "\n…[excerpt cut]"


def episode_excerpt(episode: EpisodeRecorder, limit: int) -> str:
    """An update episode as JSON: its first steps, every string field cut to a few hundred chars."""
    data = episode.to_dict()
    steps = data.get("steps") or []
    data["steps"] = [_clip(s) for s in steps[:_STEPS]]
    if len(steps) > _STEPS:
        data["steps"].append(f"…[{len(steps) - _STEPS} more steps of the same shape]")
    return _dump({k: (v if k == "steps" else _clip(v)) for k, v in data.items()}, limit)


def task_excerpt(task: PartialRecorder, limit: int, question_time_keys: Collection[str] = (),
                 budget: Mapping[str, Any] | None = None) -> str:
    """A retrieve task as JSON, exactly as the harness hands it to `retrieve`
    (`contract.question_time_task`: an excerpt must not teach what retrieve never sees):
    `question_time_keys` are the benchmark's own additions to the contract's allow-list, `budget`
    the run's retrieval budget."""
    return _dump(_clip(question_time_task(task, question_time_keys, budget)[0].to_dict()), limit)


def first_update_episode(store_roots: Sequence[Path]) -> EpisodeRecorder | None:
    """The first update episode of the first group found in an episode store, or None."""
    for root in store_roots:
        groups = sorted(p for p in (Path(root) / "episodes").glob("*") if p.is_dir()) \
            if (Path(root) / "episodes").is_dir() else []
        for group in groups:
            if group.name.startswith("retrieve"):
                continue
            for path in sorted(group.glob("*.json"))[:1]:
                try:
                    return EpisodeRecorder.from_json(path.read_text())
                except (ValueError, OSError):
                    continue
    return None


def data_samples(store_roots: Sequence[Path], retrieve_episode: EpisodeRecorder | None,
                 limit: int, question_time_keys: Collection[str] = (),
                 budget: Mapping[str, Any] | None = None) -> dict[str, str]:
    """{"update_episode": ..., "retrieve_task": ...}, each "" when there is nothing to show."""
    update = first_update_episode(store_roots)
    return {
        "update_episode": episode_excerpt(update, limit) if update is not None else "",
        "retrieve_task": task_excerpt(retrieve_episode.partial(), limit, question_time_keys, budget)
        if retrieve_episode else "",
    }
