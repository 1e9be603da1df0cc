"""Pseudo-questions written offline from a conversation's own words, one writer per kind. Each
writer returns every candidate it can form; `sampling.py` draws the questions a search gets.

A share of the turns is held out of the memory (`Conversation.held`): a held-out turn is a later
message that asks what the memory holds, and the memory never holds the words a question was cut
from. Every kind but `picture` asks from a held-out turn and is answered by memorized turns:

- refer: the held-out turn's words around the rare words (names, numbers, rare terms) it shares
  with turns of other sessions; answered by those turns. What it captures: a question that
  recalls another session in other words than that session used (Mem-Gallery's TR/KR, LoCoMo's
  multi-session questions).
- context: the inverse cloze task (Lee et al. 2019): the held-out turn's sentence, answered by its
  context, the turns just before and after it in its session, either of them (scored by Hit@k,
  `any_clue`). What it captures: recalling a stretch of a conversation by what it was about, not
  by a shared word (lists, descriptions).
- cloze: the held-out turn's sentence with its rarest word masked, answered by the memorized
  turns that hold that word. The question keeps the context and loses the word a lexical index
  would match.
- date: a rare word of the held-out turn asked about on the date of another session that used it
  ("what did we say about X on D?"), answered by that session's turns with it. What a program's
  temporal stages and session structure answer.
- picture: a shared picture asked for by two or three of its caption's rarest words, on its date
  half the time ("which picture ... is about X?"), answered by the turn that shared it (and its
  picture id, which the scorer reads as it). Its source is the caption, not a turn.

Every question keeps the rules of `model.check`. Questions take their words from the data and a
fixed template; the templates read like what a user asks, so that a router fitted on the kinds
routes real questions of the same shape alike.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from automemo.benchmarks.pseudo.conversation import _WORD, Conversation, SourceTurn, sentences, term_of, terms
from automemo.benchmarks.pseudo.model import PseudoQuestion

MAX_CLUES = 3            # a question's clues at most: real questions cite 1-3 turns mostly
PHRASE_WORDS = 14        # words of a source sentence a question carries at most
RELATIVE_CLUE = 0.7      # a further clue's link weight, at least this share of the best one's
MAX_MASKED_MENTIONS = 4  # a masked word held by more turns than this asks no one thing
CAPTION_WORDS = 3        # caption words a picture question names
CONTEXT_SENTENCES = 2    # context questions cut from one held-out turn at most


def _plain(word: str) -> str | None:
    return term_of(re.sub(r"[^\w'’]", "", word))


def _surface(turn: SourceTurn, term: str) -> str:
    """`term` as the turn writes it (its case), for a question that names it."""
    for word in _WORD.findall(turn.memory_text):
        if term_of(word) == term:
            return re.sub(r"['’]s$", "", word)
    return term


def _window(sentence: str, wanted: set[str], width: int = PHRASE_WORDS) -> str:
    """The `width` consecutive words of `sentence` that hold the most of `wanted`."""
    words = sentence.split()
    if len(words) > width:
        hits = [1 if _plain(w) in wanted else 0 for w in words]
        start = max(range(len(words) - width + 1), key=lambda i: (sum(hits[i:i + width]), -i))
        words = words[start:start + width]
    return " ".join(words).strip(" .!?,;:")


def _sources(conv: Conversation) -> list[SourceTurn]:
    return [conv.turns[i] for i in sorted(conv.held)]


def _rarest_terms(conv: Conversation, per_turn: int = 2) -> list[tuple[SourceTurn, str]]:
    """Each source turn with each of its `per_turn` rarest terms (by idf): what a cloze or a
    date question is asked about."""
    # Ties by the term itself, not by the set's order (which changes with the string hash seed).
    return [(s, term) for s in _sources(conv)
            for term in sorted(conv.rare(s.index), key=lambda t: (-conv.idf(t), t))[:per_turn]]


def _asks(who: str, we: str, named: str) -> str:
    return we if who == "we" else named.format(who=who)


def refer(conv: Conversation) -> list[PseudoQuestion]:
    out = []
    for s in _sources(conv):
        shared: dict[int, set[str]] = {}
        for term in conv.rare(s.index):
            for e in conv.postings[term]:
                if conv.memorized(e) and conv.turns[e].session != s.session:
                    shared.setdefault(e, set()).add(term)
        linked = sorted(((conv.weight(t), e, t) for e, t in shared.items() if len(t) >= 2), reverse=True)
        if not linked:
            continue
        clues = [e for w, e, _ in linked if w >= RELATIVE_CLUE * linked[0][0]][:MAX_CLUES]
        phrase = _window(conv.sentence_with(s.index, linked[0][2]), linked[0][2])
        if not set(terms(phrase)) & linked[0][2]:
            continue  # the shared words are in a caption, not in what was said
        ask = _asks(conv.turns[clues[0]].who, "did we discuss", "did {who} say")
        out.append(PseudoQuestion(conv.scope, "refer", f"What {ask} about {phrase}?",
                                  tuple(conv.turns[e].ref for e in clues), (s.ref,)))
    return out


def context(conv: Conversation) -> list[PseudoQuestion]:
    out = []
    for s in _sources(conv):
        around = [i for i in (s.index - 1, s.index + 1)
                  if 0 <= i < len(conv.turns) and conv.turns[i].session == s.session and conv.memorized(i)]
        if not around:
            continue
        # A question per sentence that says something (at most CONTEXT_SENTENCES, the heaviest):
        # a turn of a user's question and an assistant's answer asks two things of its context.
        said = [x for x in sentences(s.text) if len(terms(x)) >= 3]
        said = sorted(said, key=lambda x: -conv.weight(set(terms(x))))[:CONTEXT_SENTENCES]
        ask = _asks(s.who, "did we discuss", "did {who} discuss")
        for sentence in said:
            phrase = _window(sentence, set(conv.terms[s.index]))
            # Either neighbour answers it: a program that returns both as one block (a window of
            # adjacent turns) must not win by construction (scored by Hit@k: any_clue).
            out.append(PseudoQuestion(conv.scope, "context", f"What {ask} around: {phrase}?",
                                      tuple(conv.turns[i].ref for i in around), (s.ref,), any_clue=True))
    return out


def cloze(conv: Conversation) -> list[PseudoQuestion]:
    out = []
    for s, term in _rarest_terms(conv):
        others = [e for e in conv.postings[term] if e != s.index and conv.memorized(e)]
        sentence = conv.sentence_with(s.index, {term})
        if not 1 <= len(others) <= MAX_MASKED_MENTIONS or term not in terms(sentence):
            continue
        sentence_terms = set(terms(sentence)) - {term}
        linked = sorted(((conv.weight(sentence_terms & conv.terms[e]), e) for e in others), reverse=True)
        linked = [(w, e) for w, e in linked if w > 0]
        masked = " ".join("___" if _plain(w) == term else w for w in _window(sentence, {term}).split())
        if not linked or "___" not in masked:
            continue
        clues = [e for w, e in linked if w >= RELATIVE_CLUE * linked[0][0]][:MAX_CLUES]
        out.append(PseudoQuestion(conv.scope, "cloze", f"{masked} — what is the missing word?",
                                  tuple(conv.turns[e].ref for e in clues), (s.ref,)))
    return out


def date(conv: Conversation) -> list[PseudoQuestion]:
    out = []
    for s, term in _rarest_terms(conv):
        by_session: dict[int, list[int]] = {}
        for e in conv.postings[term]:
            if conv.memorized(e) and conv.turns[e].session != s.session:
                by_session.setdefault(conv.turns[e].session, []).append(e)
        for session, ids in sorted(by_session.items()):
            first = conv.turns[ids[0]]
            if not first.date:
                continue
            ask = _asks(first.who, "did we say", "did {who} say")
            out.append(PseudoQuestion(conv.scope, "date",
                                      f"What {ask} about {_surface(s, term)} on {first.date}?",
                                      tuple(conv.turns[i].ref for i in ids[:MAX_CLUES]), (s.ref,)))
    return out


def picture(conv: Conversation) -> list[PseudoQuestion]:
    out = []
    for turn in conv.turns:
        if not conv.memorized(turn.index):
            continue
        for caption in turn.captions:
            words = terms(caption)
            keep = set(sorted(words, key=conv.idf, reverse=True)[:CAPTION_WORDS])
            chosen = [_surface(turn, t) for t in words if t in keep]
            if len(chosen) < 2:
                continue
            when = f" shared on {turn.date}" if turn.date and turn.index % 2 else ""
            named = ", ".join(chosen[:-1]) + f" and {chosen[-1]}"
            out.append(PseudoQuestion(conv.scope, "picture", f"Which picture{when} is about {named}?",
                                      (turn.ref,)))
    return out


WRITERS: dict[str, Callable[[Conversation], Sequence[PseudoQuestion]]] = {
    "refer": refer, "context": context, "cloze": cloze, "date": date, "picture": picture,
}
"""The offline kinds, by name (`model.KINDS` less "llm")."""
