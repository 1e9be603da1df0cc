"""Pseudo-questions written by an LLM role (`questions = "llm"`): it is shown a later session of a
conversation and an earlier one, and asked for questions a user might ask, each with the numbers
of the turns that answer it, as LongMemEval built its own questions from sessions (GPL, Wang et
al. 2022, showed such generated queries adapt a retriever to a new domain).

Every call goes on the run's ledger (role `benchmark.pseudo.llm_role`, purpose
"pseudo-questions"), its caps included. What the model writes is checked like any pseudo-question
(`model.check`): an answer that is not the asked JSON, a turn number not shown, or a question
copied from its turn is dropped and counted. Each call's questions are written to the cache file
as they come, so a command started again after a failure asks the model only for what is missing.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from automemo.benchmarks.pseudo.config import PseudoQuestionConfig
from automemo.benchmarks.pseudo.conversation import Conversation
from automemo.benchmarks.pseudo.model import InvalidPseudoQuestion, PseudoQuestion, check
from automemo.benchmarks.pseudo.sampling import Quota, conversation_counts
from automemo.prompting import render

TURN_CHARS = 400      # a turn's text shown at most: two sessions of ~30 turns stay within ~8k tokens
MAX_TURNS = 40        # a session's turns shown at most (a window of them, seeded)
PURPOSE = "pseudo-questions"
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def _replies_json(text: str) -> list[Any]:
    """The JSON list in a fenced block, or the first bracketed list of the reply; [] when none."""
    candidates = _FENCE.findall(text or "") + [text or ""]
    for chunk in candidates:
        start, end = chunk.find("["), chunk.rfind("]")
        if 0 <= start < end:
            try:
                value = json.loads(chunk[start:end + 1])
            except json.JSONDecodeError:
                continue
            if isinstance(value, list):
                return value
    return []


def _shown(conv: Conversation, session: int, rng: random.Random) -> list[int]:
    ids = [t.index for t in conv.turns if t.session == session]
    if len(ids) > MAX_TURNS:
        start = rng.randrange(len(ids) - MAX_TURNS + 1)
        ids = ids[start:start + MAX_TURNS]
    return ids


def _call_questions(conv: Conversation, count: int, rng: random.Random, config: PseudoQuestionConfig,
                    llm: Any) -> tuple[list[PseudoQuestion], int]:
    """One call's valid questions and how many of its answers were dropped."""
    later = rng.randrange(conv.sessions)
    shown_sessions = ([rng.randrange(later)] if later > 0 else []) + [later]
    number_of: dict[int, int] = {}
    sessions = []
    for si in shown_sessions:
        ids = _shown(conv, si, rng)
        for i in ids:
            number_of[i] = len(number_of) + 1
        first = conv.turns[ids[0]] if ids else None
        sessions.append({"date": first.date if first else "",
                         "turns": [{"number": number_of[i], "speaker": conv.turns[i].speaker or "user",
                                    "text": conv.turns[i].memory_text} for i in ids]})
    prompt = render("pseudo_questions", sessions=sessions, count=count, turn_chars=TURN_CHARS)
    reply = llm.chat(config.llm_role, [{"role": "user", "content": prompt}], purpose=PURPOSE,
                     max_tokens=120 + 80 * count)
    ref_of = {n: conv.turns[i].ref for i, n in number_of.items()}
    turn_text = conv.by_ref()
    kept, dropped = [], 0
    for item in _replies_json(reply.text):
        try:
            question = str(item["question"]).strip()
            numbers = [int(n) for n in item["evidence"]]
            q = PseudoQuestion(conv.scope, "llm", question, tuple(dict.fromkeys(ref_of[n] for n in numbers)))
            check(q, turn_text)
        except (KeyError, TypeError, ValueError, InvalidPseudoQuestion):
            dropped += 1
            continue
        kept.append(q)
    return kept, dropped


def _stored(cache: Path | None) -> dict[str, Any]:
    """The cache file's question sets, by key (a split's conversations, settings and texts)."""
    if cache is None or not cache.is_file():
        return {}
    try:
        stored = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return stored.get("sets", {}) if isinstance(stored, dict) else {}


def _save(cache: Path | None, key: str, written: Mapping[str, dict[str, Any]]) -> None:
    if cache is None:
        return
    sets = {**_stored(cache), key: written}
    cache.parent.mkdir(parents=True, exist_ok=True)
    scratch = cache.with_suffix(".tmp")
    scratch.write_text(json.dumps({"sets": sets}, indent=1), encoding="utf-8")
    scratch.replace(cache)


def write_with_llm(convs: Sequence[Conversation], config: PseudoQuestionConfig, llm: Any,
                   *, cache: Path | None = None, salt: str = "") -> tuple[list[PseudoQuestion], dict[str, int]]:
    """The LLM's pseudo-questions of the conversations `convs`, as many as the offline path would
    draw (`config`'s quota), and a record: calls made, questions dropped, questions read from the
    cache."""
    quota = Quota(config.per_session, config.per_conversation, config.max_questions, config.kinds)
    counts = conversation_counts({c.scope: c.sessions for c in convs}, quota)
    digest = hashlib.sha256(json.dumps([[t.ref, t.memory_text] for c in convs for t in c.turns]).encode()).hexdigest()
    key = f"{salt}/{config.seed}/{config.llm_role}/{config.llm_questions_per_call}/{digest[:16]}"
    # scope -> {"questions": [...], "complete": the model was asked all it will be asked}
    written = dict(_stored(cache).get(key, {}))
    record = {"calls": 0, "dropped": 0, "cached": sum(len(v["questions"]) for v in written.values())}
    out: list[PseudoQuestion] = []
    for conv in convs:
        kept = written.get(conv.scope, {"questions": [], "complete": False})
        mine = [PseudoQuestion(conv.scope, "llm", d["question"], tuple(d["clues"])) for d in kept["questions"]]
        if kept["complete"]:
            out += mine
            continue
        rng = random.Random(int(hashlib.sha256(f"{config.seed}/{salt}/{conv.scope}".encode()).hexdigest()[:16], 16))
        seen = {q.question for q in mine}
        attempts = 0
        # A call that writes nothing new still costs one attempt: a model that never answers in
        # the format, or repeats itself, stops after a few calls instead of looping.
        most = 2 * counts[conv.scope] // config.llm_questions_per_call + 3
        while len(mine) < counts[conv.scope] and attempts < most:
            attempts += 1
            got, dropped = _call_questions(conv, min(config.llm_questions_per_call, counts[conv.scope] - len(mine)),
                                           rng, config, llm)
            record["calls"] += 1
            record["dropped"] += dropped
            for q in got:
                if q.question not in seen and len(mine) < counts[conv.scope]:
                    seen.add(q.question)
                    mine.append(q)
            written[conv.scope] = {"questions": [{"question": q.question, "clues": list(q.clues)} for q in mine],
                                   "complete": len(mine) >= counts[conv.scope] or attempts >= most}
            _save(cache, key, written)
        out += mine
    return out, record
