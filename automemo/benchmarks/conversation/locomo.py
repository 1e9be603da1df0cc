"""LoCoMo, read from its release file `locomo10.json`.

The file is a list of `{sample_id, conversation {speaker_a, speaker_b, session_N_date_time,
session_N: [{speaker, dia_id "D1:5", text, img_url?, blip_caption?, query?}]}, qa: [{question,
answer | adversarial_answer, evidence [dia_id], category 1..5}], event_summary, observation,
session_summary}`. Each turn is one step, cited by `"<sample_id>/<dia_id>"`; `img_url` points at
the web, so a shared photo is its `blip_caption` unless `image_dir` holds the file (looked up
by the URL's file name). Categories are the per-type table's rows; category 5 is adversarial:
the right answer is a refusal, and retrieval mode does not count it (its evidence is kept for
the with-adversarial figures). Joined, misspelt and unknown evidence ids: see clues.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from automemo.benchmarks.conversation.benchmark import ConversationBenchmark
from automemo.benchmarks.conversation.clues import ClueResolver
from automemo.benchmarks.conversation.files import as_list, read_json, url_image
from automemo.benchmarks.conversation.model import (
    REFUSAL, Conversations, DatasetError, Question, Session, Turn, TurnImage, UnknownClues,
    qualified,
)

FORMAT = "the LoCoMo release locomo10.json: a list of {sample_id, conversation, qa}"
ADVERSARIAL = 5
_SESSION_KEY = re.compile(r"^session_(\d+)$")


class _Photos:
    def __init__(self, image_dir: Path | None) -> None:
        self.image_dir, self.total, self.missing = image_dir, 0, 0

    def __call__(self, scope: str, dia_id: str, turn: Mapping) -> tuple[TurnImage, ...]:
        urls, captions = as_list(turn.get("img_url")), as_list(turn.get("blip_caption"))
        out = []
        for i in range(max(len(urls), len(captions))):
            file = url_image(str(urls[i]), self.image_dir) if i < len(urls) else None
            self.total += 1
            self.missing += file is None
            caption = str(captions[i]) if i < len(captions) and captions[i] else None
            out.append(TurnImage(qualified(scope, f"{dia_id}:IMG{i + 1}"), file, caption))
        return tuple(out)


def read_release(path: Path, image_dir: Path | None, unknown_clues: UnknownClues = "drop") -> Conversations:
    if not path.is_file():
        raise DatasetError(f"locomo: {path} does not exist; set the option `path` to the downloaded locomo10.json")
    data = read_json(path, FORMAT)
    if not isinstance(data, list) or not all(isinstance(s, Mapping) for s in data):
        raise DatasetError(f"{path}: not {FORMAT}")
    photos, resolve = _Photos(image_dir), ClueResolver(unknown_clues)
    scopes, sessions, questions, aliases = [], [], [], {}
    for si, sample in enumerate(data):
        where = f"{path}: sample {si}"
        # A sample without `qa` (or with an empty one) is a conversation without questions: its
        # sessions are still memory, e.g. for a search on questions generated from the sessions.
        if not isinstance(sample.get("conversation"), Mapping) or not isinstance(sample.get("qa", []), list):
            raise DatasetError(f"{where}: expected {{sample_id, conversation {{...}}, qa [...]}}")
        scope = str(sample.get("sample_id") or f"sample-{si}")
        if scope in scopes:
            raise DatasetError(f"{where}: sample_id {scope!r} appears twice")
        scopes.append(scope)
        conversation, turns_by_id = sample["conversation"], {}
        numbered = sorted((int(m.group(1)), key) for key in conversation if (m := _SESSION_KEY.match(key)))
        for n, key in numbered:
            turns = []
            for ti, turn in enumerate(as_list(conversation[key])):
                if not isinstance(turn, Mapping) or not turn.get("dia_id"):
                    raise DatasetError(f"{where} ({scope}): {key}[{ti}] has no dia_id")
                dia_id = str(turn["dia_id"])
                ref = qualified(scope, dia_id)
                images = photos(scope, dia_id, turn)
                for image in images:
                    aliases[image.image_id] = (ref,)
                turns_by_id[dia_id] = ref
                text = f"{turn.get('speaker') or ''}: {turn.get('text') or ''}"
                turns.append(Turn(ref, str(turn.get("speaker") or ""), text, images))
            if turns:
                date = str(conversation.get(f"{key}_date_time") or "")
                sessions.append(Session(qualified(scope, f"D{n}"), scope, date, tuple(turns)))
        for qi, qa in enumerate(sample.get("qa", [])):
            q_where = f"{where} ({scope}): qa[{qi}]"
            if not isinstance(qa, Mapping) or not qa.get("question") or "category" not in qa:
                raise DatasetError(f"{q_where}: expected {{question, answer, evidence, category}}")
            try:
                category = int(qa["category"])
            except (TypeError, ValueError):
                raise DatasetError(f"{q_where}: category must be 1..5, got {qa['category']!r}") from None
            refusal = category == ADVERSARIAL
            # A refusal question keeps its clues (LoCoMo's adversarial evidence): the main figures
            # leave it out, the with-adversarial ones score them.
            clues = resolve(as_list(qa.get("evidence")), turns_by_id, q_where, f"turn of {scope}")
            answer = REFUSAL if refusal else str(qa.get("answer", ""))
            questions.append(Question(
                qualified(scope, f"Q{qi + 1:03d}"), scope, f"cat{category}", str(qa["question"]), answer,
                tuple(clues), refusal,
            ))
    return Conversations(str(path), tuple(scopes), {}, tuple(sessions), tuple(questions),
                         photos.total, photos.missing, aliases, tuple(resolve.dropped), tuple(resolve.repaired))


class LoCoMo(ConversationBenchmark):
    name = "locomo"
    format_hint = "the downloaded locomo10.json"
    missing_images_are = "have no local file (img_url points at the web; set image_dir to a folder of the photos)"

    def read(self) -> Conversations:
        o = self.options
        image_dir = Path(o.image_dir).expanduser() if o.image_dir else None
        return read_release(Path(o.path).expanduser(), image_dir, o.unknown_clues)

    @classmethod
    def guard_metrics(cls, options: Any) -> tuple[str, ...]:
        """Session any-hit: what the field's LoCoMo retrieval figures quote; a selection that leads
        turn recall must not lose it (retrieval mode only)."""
        return (f"session_hit@{options.k}",) if options.mode == "retrieval" else ()
