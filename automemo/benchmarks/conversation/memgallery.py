"""Mem-Gallery, read from its release folder: one JSON file per scenario, images in a folder.

A scenario file holds `character_profile`, `multi_session_dialogues: [{session_id "D1", date,
dialogues: [{round "D1:3", user, assistant, image_id? [..], input_image? [paths relative to the
file], image_caption? [..]}]}]` and `"human-annotated QAs": [{point, question, answer,
session_id [..], clue [round ids], question_image?, image_caption?}]`. `point` is the question
type (FR, VS, TTL, TR, VR, MR, KR, CD, AR); VS answers are image ids, CD answers yes/no, AR
answers are refusals. Each round is one step, cited by `"<scenario>/<round>"`; an image id
cited instead stands for its round.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from automemo.benchmarks.conversation.benchmark import ConversationBenchmark
from automemo.benchmarks.conversation.clues import ClueResolver
from automemo.benchmarks.conversation.files import as_list, read_json, readable_image, resolve_image
from automemo.benchmarks.conversation.model import (
    REFUSAL, Conversations, DatasetError, Question, Session, Turn, TurnImage, UnknownClues,
    qualified,
)

FORMAT = "a Mem-Gallery scenario file: {character_profile, multi_session_dialogues, \"human-annotated QAs\"}"
QAS = "human-annotated QAs"


class _ImageReader:
    """Resolves and checks image files, counting the ones without pixels."""

    def __init__(self, image_dir: Path | None) -> None:
        self.image_dir, self.total, self.missing = image_dir, 0, 0

    def __call__(self, scope: str, ids: list, paths: list, captions: list, base: Path) -> tuple[TurnImage, ...]:
        out = []
        for i in range(max(len(ids), len(paths))):
            local = str(ids[i]) if i < len(ids) else f"IMG{i + 1}"
            file = resolve_image(str(paths[i]), base, self.image_dir) if i < len(paths) else None
            self.total += 1
            if file is None or not readable_image(file):
                self.missing += 1
                file = None
            caption = str(captions[i]) if i < len(captions) and captions[i] else None
            out.append(TurnImage(qualified(scope, local), file, caption))
        return tuple(out)


def scenario_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise DatasetError(
            f"memgallery: {root} does not exist; set the option `path` to the Mem-Gallery release folder "
            f"(its dialog JSON files) or to one scenario file"
        )
    files = sorted(p for p in root.rglob("*.json") if p.is_file())
    if not files:
        raise DatasetError(f"memgallery: no JSON files under {root}; expected {FORMAT} per scenario")
    return files


def read_release(root: Path, image_dir: Path | None, unknown_clues: UnknownClues = "drop") -> Conversations:
    images, resolve = _ImageReader(image_dir), ClueResolver(unknown_clues)
    scopes, strata, sessions, questions, aliases = [], {}, [], [], {}
    for file in scenario_files(root):
        data = read_json(file, FORMAT)
        if not isinstance(data, Mapping) or "multi_session_dialogues" not in data:
            raise DatasetError(f"{file}: not {FORMAT}")
        scope = file.stem
        if scope in strata:
            raise DatasetError(f"{file}: a second scenario named {scope!r}; scenario file names must differ")
        scopes.append(scope)
        strata[scope] = str(file.parent.relative_to(root)) if root.is_dir() else ""
        rounds: dict[str, str] = {}  # local round or image id -> qualified round ref
        for si, raw in enumerate(as_list(data["multi_session_dialogues"])):
            where = f"{file}: multi_session_dialogues[{si}]"
            if not isinstance(raw, Mapping) or not isinstance(raw.get("dialogues"), list):
                raise DatasetError(f"{where}: expected {{session_id, date, dialogues: [...]}}")
            local_session = str(raw.get("session_id") or f"D{si + 1}")
            turns = []
            for ri, r in enumerate(raw["dialogues"]):
                if not isinstance(r, Mapping) or not r.get("round"):
                    raise DatasetError(f"{where}.dialogues[{ri}]: expected a round with a `round` id like \"D1:3\"")
                ref = qualified(scope, str(r["round"]))
                turn_images = images(scope, as_list(r.get("image_id")), as_list(r.get("input_image")),
                                     as_list(r.get("image_caption")), file.parent)
                rounds[str(r["round"])] = ref
                for image in turn_images:
                    rounds[image.image_id.split("/", 1)[1]] = ref
                    aliases[image.image_id] = (ref,)
                text = f"user: {r.get('user') or ''}\nassistant: {r.get('assistant') or ''}"
                turns.append(Turn(ref, "user", text, turn_images))
            sessions.append(Session(qualified(scope, local_session), scope, str(raw.get("date") or ""), tuple(turns)))
        for qi, qa in enumerate(as_list(data.get(QAS))):
            where = f"{file}: {QAS}[{qi}]"
            if not isinstance(qa, Mapping) or not qa.get("question") or not qa.get("point"):
                raise DatasetError(f"{where}: expected {{point, question, answer, clue, ...}}")
            qtype = str(qa["point"]).strip()
            refusal = qtype == "AR"
            # An AR question keeps any clue it has (released AR questions have none): the main
            # figures leave it out, the with-adversarial ones score it.
            clues = resolve(as_list(qa.get("clue")), rounds, where, f"round of scenario {scope!r}")
            answer = ", ".join(str(a) for a in as_list(qa.get("answer")))
            q_images = images(scope, [f"Q{qi + 1}:IMG{i + 1}" for i in range(len(as_list(qa.get("question_image"))))],
                              as_list(qa.get("question_image")), as_list(qa.get("image_caption")), file.parent)
            questions.append(Question(
                qualified(scope, f"Q{qi + 1:03d}"), scope, qtype, str(qa["question"]),
                REFUSAL if refusal else answer, tuple(clues), refusal, q_images,
            ))
    return Conversations(str(root), tuple(scopes), strata, tuple(sessions), tuple(questions),
                         images.total, images.missing, aliases, tuple(resolve.dropped), tuple(resolve.repaired))


class MemGallery(ConversationBenchmark):
    name = "memgallery"
    format_hint = "the Mem-Gallery release folder holding one dialog JSON file per scenario"

    def read(self) -> Conversations:
        o = self.options
        image_dir = Path(o.image_dir).expanduser() if o.image_dir else None
        return read_release(Path(o.path).expanduser(), image_dir, o.unknown_clues)
