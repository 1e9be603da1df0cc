"""A synthetic life for `automemo bench memory`: conversation sessions of 20 turns between a
handful of users and the assistant, dated one after the other, with a picture now and then, and
the questions and one-turn remembers a served memory sees between them.

The words come from a fixed vocabulary drawn with a Zipf-like skew (a few words everywhere, most
rare), so lexical postings and dense neighbourhoods grow as they do in real conversation rather
than as one repeated sentence. Deterministic for a given seed."""

from __future__ import annotations

import hashlib
import random
from datetime import datetime, timedelta

from automemo.contract import EpisodeRecorder, ImageRef, PartialRecorder, Step

TURNS = 20
USERS = 8
_TOPICS = ("umbrella boots lamp sofa kettle bicycle camera jacket tent printer guitar watch flight hotel "
           "train museum recipe concert dentist passport garden piano sister brother doctor").split()
_START = datetime(2020, 1, 1, 9, 0)


class Life:
    """Sessions, questions and remembers of one synthetic life (`seed` fixes all of it)."""

    def __init__(self, seed: int = 0, vocabulary: int = 4000) -> None:
        self.rng = random.Random(seed)
        syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "be", "da", "fi", "go", "hu", "ze"]
        words = set()
        while len(words) < vocabulary:
            words.add("".join(self.rng.choice(syllables) for _ in range(self.rng.randint(2, 4))))
        self.words = sorted(words)
        self._weights = [1.0 / (rank + 1) for rank in range(len(self.words))]
        self.sessions = 0
        self.remembers = 0

    def _phrase(self, n: int) -> str:
        return " ".join(self.rng.choices(self.words, weights=self._weights, k=n))

    def _picture(self, caption: str) -> ImageRef:
        digest = hashlib.sha256(f"{self.sessions}:{self.rng.random()}".encode()).hexdigest()
        return ImageRef(path=f"images/{digest[:2]}/{digest}.png", sha256=digest, caption=caption)

    def session(self) -> EpisodeRecorder:
        """The next session: `TURNS` rounds of one user, a picture in every tenth round."""
        i = self.sessions
        self.sessions += 1
        user, when = f"U{i % USERS}", _START + timedelta(hours=6 * i)
        steps, rounds = [], []
        for r in range(TURNS):
            topic = self.rng.choice(_TOPICS)
            speaker = user if r % 2 == 0 else "assistant"
            picture = self._picture(f"a photo of my {topic}") if r % 10 == 5 else None
            steps.append(Step(index=r, observation=f"{speaker}: my {topic} {self._phrase(8)}", screenshot=picture))
            rounds.append({"round_id": f"{user}:S{i}:R{r}", "time": when.strftime("%Y-%m-%d %H:%M"),
                           "image_id": f"{user}:S{i}:IMG{r}" if picture else None})
        return EpisodeRecorder(task_id=f"s{i}", benchmark="life", instruction=f"conversation session {i}",
                               steps=steps, reward=1.0, success=True,
                               metadata={"conversation": True, "user": user, "rounds": rounds,
                                         "time": when.strftime("%Y-%m-%d %H:%M")})

    def remember(self) -> EpisodeRecorder:
        """One turn remembered between two questions, as a served memory receives it."""
        i = self.remembers
        self.remembers += 1
        user, when = f"U{self.rng.randrange(USERS)}", _START + timedelta(hours=6 * self.sessions, minutes=i)
        text = f"{user}: my {self.rng.choice(_TOPICS)} {self._phrase(8)}"
        return EpisodeRecorder(task_id=f"m{i}", benchmark="life", instruction="remember", reward=1.0, success=True,
                               steps=(Step(index=0, observation=text),),
                               metadata={"conversation": True, "user": user,
                                         "rounds": [{"round_id": f"{user}:M{i}", "time": when.strftime("%Y-%m-%d %H:%M")}]})

    def question(self, j: int) -> PartialRecorder:
        """A question about one user's topic; every fourth names no user (searches everyone)."""
        topic, words = self.rng.choice(_TOPICS), self._phrase(2)
        meta = {} if j % 4 == 3 else {"user": f"U{self.rng.randrange(USERS)}"}
        return PartialRecorder(task_id=f"q{j}", benchmark="life",
                               instruction=f"What did I say about my {topic} and {words}?", metadata=meta)
