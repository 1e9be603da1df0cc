"""Pseudo-questions written offline: every kind keeps the rules (no source turn is a clue, no
question is a verbatim substring of a clue turn), answers only from what stays in the memory, and
the draw shares a conversation's questions among the kinds as configured."""

from __future__ import annotations

import pytest

from automemo import benchmarks
from automemo.benchmarks.conversation.model import Session, Turn, TurnImage
from automemo.benchmarks.pseudo.conversation import Conversation, conversations, held_out_turns
from automemo.benchmarks.pseudo.model import InvalidPseudoQuestion, PseudoQuestion, check
from automemo.benchmarks.pseudo.offline import WRITERS
from automemo.benchmarks.pseudo.sampling import Quota, conversation_counts, draw
from conversation_data import write_user_logs_many


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    options = write_user_logs_many(tmp_path_factory.mktemp("logs"))
    return benchmarks.load("conversations", {k: str(v) for k, v in options.items()})


@pytest.fixture(scope="module")
def convs(logs):
    return conversations(logs.data.sessions, logs.data.scopes, held_out=0.2, seed="t")


@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_every_kind_keeps_the_rules_and_answers_from_the_memory(convs, kind):
    written = [q for conv in convs for q in WRITERS[kind](conv)]
    assert written, f"the fixture gives {kind} candidates"
    for conv in convs:
        memorized = {t.ref for t in conv.turns if conv.memorized(t.index)}
        held = {conv.turns[i].ref for i in conv.held}
        for q in WRITERS[kind](conv):
            check(q, conv.by_ref())                        # raises on a broken rule
            assert set(q.clues) <= memorized               # answered by what the memory holds
            assert set(q.sources) <= held or kind == "picture"  # asked from what it does not
            assert not set(q.sources) & set(q.clues)


def test_context_questions_are_answered_by_the_turns_around_their_source(convs):
    conv = convs[0]
    for q in WRITERS["context"](conv):
        source = next(t for t in conv.turns if t.ref == q.sources[0])
        neighbours = {t.ref for t in conv.turns if t.session == source.session and abs(t.index - source.index) == 1}
        assert set(q.clues) <= neighbours and q.clues


def test_check_refuses_each_broken_rule():
    turns = {"c/1": "user: I moved to Lisbon in May and bought a blue bike.", "c/2": "assistant: Nice!"}
    check(PseudoQuestion("c", "refer", "Where did we say the bike came from?", ("c/1",), ("c/2",)), turns)
    broken = {
        "its source turn counts as its evidence": PseudoQuestion("c", "refer", "Where did the bike come from?", ("c/1",), ("c/1",)),
        "a verbatim substring": PseudoQuestion("c", "refer", "moved to Lisbon in May", ("c/1",), ("c/2",)),
        "naming no turn": PseudoQuestion("c", "refer", "Where is the bike now?", ("c/9",)),
        "no clue": PseudoQuestion("c", "refer", "Where is the bike now?", ()),
        "unknown kind": PseudoQuestion("c", "riddle", "Where is the bike now?", ("c/1",)),
    }
    for reason, q in broken.items():
        with pytest.raises(InvalidPseudoQuestion, match=reason):
            check(q, turns)
    # Punctuation and case do not make a copied sentence new.
    with pytest.raises(InvalidPseudoQuestion, match="verbatim"):
        check(PseudoQuestion("c", "refer", "MOVED to lisbon, in may!", ("c/1",)), turns)


def _session(sid: str, texts: list[str], pictured: set[int] = frozenset()) -> Session:
    turns = tuple(Turn(f"c/{sid}:{i}", "user", text,
                       (TurnImage(f"c/{sid}:IMG{i}", None, "a picture"),) if i in pictured else ())
                  for i, text in enumerate(texts))
    return Session(f"c/{sid}", "c", "2024-01-01", turns)


def test_held_out_turns_spare_pictures_and_the_last_turn_of_a_session_and_follow_the_seed():
    sessions = [_session("D1", [f"turn {i} about kayaks" for i in range(10)], pictured={2, 5}),
                _session("D2", ["only one turn here"])]
    conv = Conversation("c", sessions, held_out=0.4, seed="s")
    assert len(conv.held) == round(0.4 * 11)
    held_refs = {conv.turns[i].ref for i in conv.held}
    assert not held_refs & {"c/D1:2", "c/D1:5", "c/D2:0"}
    assert conv.held == held_out_turns(conv.turns, 0.4, "s/c")
    assert Conversation("c", sessions, held_out=0.4, seed="other").held != conv.held or len(conv.held) == 0
    assert Conversation("c", sessions).held == frozenset()


def test_conversation_counts_grow_with_sessions_and_respect_both_caps():
    quota = Quota(per_session=5, per_conversation=30, total=1000)
    assert conversation_counts({"a": 2, "b": 12}, quota) == {"a": 10, "b": 30}
    tight = Quota(per_session=5, per_conversation=30, total=12)
    counts = conversation_counts({"a": 4, "b": 4, "c": 4}, tight)
    assert sum(counts.values()) <= 12 and min(counts.values()) >= 1


def test_draw_shares_questions_by_weight_and_gives_an_empty_kinds_share_to_the_others():
    turns = {f"c/{i}": f"text of turn {i}" for i in range(40)}

    def q(kind: str, i: int) -> PseudoQuestion:
        return PseudoQuestion("c", kind, f"what about thing number {kind} {i}?", (f"c/{i}",), (f"c/{i + 1}",))

    candidates = {"context": [q("context", i) for i in range(20)], "refer": [q("refer", i) for i in range(20)]}
    drawn = draw(candidates, 12, {"context": 2.0, "refer": 1.0}, turns, seed="x")
    assert [x.kind for x in drawn].count("context") == 8 and [x.kind for x in drawn].count("refer") == 4
    few = {"context": [q("context", i) for i in range(3)], "refer": [q("refer", i) for i in range(20)]}
    drawn = draw(few, 12, {"context": 2.0, "refer": 1.0}, turns, seed="x")
    assert [x.kind for x in drawn].count("context") == 3 and len(drawn) == 12
    assert len({x.question for x in drawn}) == len(drawn)
    assert draw(candidates, 12, {"context": 2.0, "refer": 1.0}, turns, seed="x") == \
        draw(candidates, 12, {"context": 2.0, "refer": 1.0}, turns, seed="x")
    # A candidate that breaks a rule is never drawn.
    bad = {"context": [PseudoQuestion("c", "context", "what about turn one then?", ("c/1",), ("c/1",))]}
    assert draw(bad, 5, {"context": 1.0}, turns, seed="x") == []


def test_the_same_questions_are_written_in_every_process(tmp_path):
    """Sets iterate in an order that changes with each process's string hash seed: a writer that
    read it drew other questions in another process, and a resumed search paired a task id with
    another question."""
    import subprocess
    import sys

    # A fixture large enough that, before, every hash seed tried drew other questions.
    options = {k: str(v) for k, v in write_user_logs_many(tmp_path, sessions=12, turns=16).items()}
    script = (
        "import json, sys\n"
        "from automemo import benchmarks\n"
        "from automemo.benchmarks.pseudo.config import PseudoQuestionConfig\n"
        "from automemo.benchmarks.pseudo.label_free import make_label_free\n"
        f"bench = benchmarks.load('conversations', {options!r})\n"
        "make_label_free(bench, 'self', PseudoQuestionConfig())\n"
        "print(json.dumps([[q.question_id, q.question, list(q.clues)] for q in (*bench.data.questions, *bench.fitting_questions)]))\n"
    )
    written = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                              env={**__import__("os").environ, "PYTHONHASHSEED": seed}).stdout
               for seed in ("1", "2")]
    assert written[0] == written[1] and len(written[0]) > 100
