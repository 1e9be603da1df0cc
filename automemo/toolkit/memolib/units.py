"""Units: the retrievable pieces of an episode (a web step or a dialogue round), read the same
way from both episode shapes.

- web / visual episodes: one `Step` per agent turn (observation, screenshot, action, error) and a
  reward; a unit cites the step's `ref`, or `"<task_id>#<step index>"` when it has none;
- conversation episodes (`metadata["conversation"]` true: Mini-Gallery, Mem-Gallery, LoCoMo
  sessions): one `Step` per dialogue round, its image as the step's screenshot; a unit cites the
  round's `Step.ref`, then its image ids (`Step.metadata["image_ids"]`). Version-1 episodes
  without refs fall back to `metadata["rounds"]` (a list aligned with the steps: `round_id`,
  `time`, `image_id`).
"""

from __future__ import annotations

import dataclasses

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from automemo.contract import EpisodeRecorder, ImageRef, PartialRecorder
from automemo.toolkit.memolib.text import dedupe


@dataclass(frozen=True)
class Unit:
    """One retrievable piece of an episode: a web step or a dialogue round.

    `position` is the step/round index inside its episode; `evidence` the ids a payload cites when
    this unit is used, best first; `images` the unit's images (a round's picture or a web step's
    screenshot); `scope` whose memory it belongs to (`scope_of` its episode); `time` as the
    episode states it (see `filters.parse_time`); `speaker` who said a dialogue round, as the
    benchmark names them ("" when unknown)."""

    episode_id: str
    position: int
    text: str
    action: str = ""
    images: tuple[ImageRef, ...] = ()
    evidence: tuple[str, ...] = ()
    error: str | None = None
    time: str = ""
    scope: str = ""
    speaker: str = ""


def is_conversation(episode: EpisodeRecorder | PartialRecorder) -> bool:
    return bool(episode.metadata.get("conversation"))


def _round_info(episode: EpisodeRecorder, position: int) -> Mapping[str, Any]:
    rounds = episode.metadata.get("rounds")
    if isinstance(rounds, list) and position < len(rounds) and isinstance(rounds[position], Mapping):
        return rounds[position]
    return {}


def units(episode: EpisodeRecorder) -> list[Unit]:
    """The episode's steps (web) or rounds (conversation) as units, in order: the turn granularity."""
    out = []
    conversation = is_conversation(episode)
    scope = scope_of(episode)
    for step in episode.steps:
        if conversation:
            info = {**_round_info(episode, step.index), **step.metadata}
            round_id = str(step.ref or info.get("round_id") or info.get("id") or f"{episode.task_id}#{step.index}")
            image_ids = [str(i) for i in info.get("image_ids") or ()]
            if info.get("image_id") and str(info["image_id"]) not in image_ids:
                image_ids.append(str(info["image_id"]))
            images = (step.screenshot,) if step.screenshot else ()
            captions = [i.caption for i in images if i.caption]
            text = step.observation
            if captions:
                text += "\n[images: " + "; ".join(captions) + "]"
            out.append(
                Unit(
                    episode_id=episode.task_id,
                    position=step.index,
                    text=text,
                    action=step.action,
                    images=images,
                    evidence=(round_id, *image_ids),
                    time=str(info.get("time") or episode.metadata.get("time") or ""),
                    scope=scope,
                    speaker=str(info.get("speaker") or ""),
                )
            )
        else:
            text = step.observation.strip()
            if step.action:
                text = f"{text}\nACTION: {step.action}" if text else f"ACTION: {step.action}"
            if step.error:
                text += f"\nERROR: {step.error}"
            out.append(
                Unit(
                    episode_id=episode.task_id,
                    position=step.index,
                    text=text,
                    action=step.action,
                    images=(step.screenshot,) if step.screenshot else (),
                    evidence=(step.ref or f"{episode.task_id}#{step.index}",),
                    error=step.error,
                    scope=scope,
                )
            )
    return out


def episode_units(episode: EpisodeRecorder) -> list[Unit]:
    """`units(episode)`, or one unit of the instruction (cited by the task id) for an episode
    without steps: an episode that never acted still teaches what was asked."""
    return units(episode) or [Unit(episode.task_id, 0, episode.instruction, evidence=(episode.task_id,),
                                   scope=scope_of(episode))]


def indexed_text(episode: EpisodeRecorder, unit: Unit) -> str:
    """A unit's text as an index should see it: a dialogue round as it is, a web step after its
    episode's instruction (a step alone rarely says what the task was)."""
    return unit.text if is_conversation(episode) else f"{episode.instruction}\n{unit.text}"


def scope_of(record: EpisodeRecorder | PartialRecorder) -> str:
    """Whose memory a record belongs to ("" when unknown). Mem-Gallery keeps one memory per
    user's conversation, so a question about one user is answered from that user's sessions."""
    return str(record.metadata.get("user") or "")


def episode_evidence(episode: EpisodeRecorder) -> list[str]:
    """Every id an episode can be cited by, in step order."""
    return dedupe(e for u in units(episode) for e in u.evidence)


def windows(turns: Sequence[Unit], radius: int = 1) -> list[Unit]:
    """Each unit with its `radius` neighbours of the same episode on either side (a round with the
    rounds around it), one window per unit and in the same order: the text joins the neighbours'
    in order, the evidence cites the centre first, then the neighbours nearest first."""
    by_episode: dict[str, list[Unit]] = {}
    place: list[int] = []  # each unit's index in its episode's row
    for unit in turns:
        row = by_episode.setdefault(unit.episode_id, [])
        place.append(len(row))
        row.append(unit)
    out = []
    for unit, here in zip(turns, place):
        row = by_episode[unit.episode_id]
        around = row[max(0, here - radius): here + radius + 1]
        near = sorted((u for u in around if u is not unit), key=lambda u: abs(u.position - unit.position))
        out.append(Unit(
            episode_id=unit.episode_id, position=unit.position, text="\n".join(u.text for u in around),
            action=unit.action, images=tuple(dedupe((i for u in around for i in u.images), key=lambda i: i.sha256)),
            evidence=tuple(dedupe(e for u in (unit, *near) for e in u.evidence)),
            error=unit.error, time=unit.time, scope=unit.scope, speaker=unit.speaker,
        ))
    return out


def image_units(turns: Sequence[Unit]) -> list[Unit]:
    """Each image of `turns` as a unit of its own (MuRAG's image items): its text the caption
    and the round it was shown in, its image the picture, cited by the image's own id when the
    turn names one (else by the turn). A question about a picture then ranks the picture, and
    its citation is the image id a clue names, not the round first."""
    out = []
    for unit in turns:
        image_ids = list(unit.evidence[1:])
        for i, image in enumerate(unit.images):
            cite = (image_ids[i],) if i < len(image_ids) else unit.evidence[:1]
            out.append(dataclasses.replace(unit, text=f"[image] {image.caption or ''}\n{unit.text}",
                                           images=(image,), evidence=cite, action="", error=None))
    return out


def session(episode: EpisodeRecorder) -> Unit:
    """The whole episode as one unit (a conversation session, a web episode): every turn's text in
    order, every id it can be cited by, the session's time."""
    turns = units(episode)
    return Unit(
        episode_id=episode.task_id, position=0, text="\n".join(u.text for u in turns),
        images=tuple(dedupe((i for u in turns for i in u.images), key=lambda i: i.sha256)),
        evidence=tuple(dedupe(e for u in turns for e in u.evidence)),
        time=str(episode.metadata.get("time") or (turns[0].time if turns else "")), scope=scope_of(episode),
    )
