"""`automemo bench adapt --forget-during-round`: forgetting while a round works, measured.

Every user's second session carries a marker word of its own and a small image of its own (random
pixels, so that its bytes are nowhere else). While a round runs (its work folder holds files),
the bench, through REST:

1. forgets the marked session of user A (one episode);
2. exports user B (the user whose round is running, per user; any other user, pooled), forgets
   B whole, imports the export without B's marked session (an edited export) and remembers one
   more session: B's log again holds sequence numbers 1..N, as the round read them, but not the
   episode it read as one of them.

Once every round has ended it counts:

- `forgotten_returned`: recalls, as any user, asking for a forgotten marker, whose answer holds
  that marker (text or evidence);
- `leftovers`: files under the state folder and the machine's temporary folder (the server's and
  its rounds' entries, `automemo-*`) whose bytes hold a forgotten marker or a forgotten image.

Both must be 0, per user and pooled, killed mid-round or not."""

from __future__ import annotations

import base64
import io
import json
import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from automemo.measurements.rest import post_lines

MARKED_SESSION = 1   # each user's second session carries the marker (the first may carry the secret)


@dataclass(frozen=True)
class Marked:
    """The marker word and image bytes planted in one user's marked session."""

    user: str
    word: str
    image: bytes


@dataclass
class ForgetScenario:
    """What the bench planted, what it forgot, and when."""

    marked: dict[str, Marked] = field(default_factory=dict)
    forgotten: list[Marked] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)       # what was done, in order, with seconds into the phase
    during_round: bool = False                           # a round was running when the forgets began

    def plant(self, users: dict[str, list[dict]]) -> None:
        """Mark each user's second session (the users' episodes are edited in place)."""
        rng = random.Random(7)
        for index, (user, episodes) in enumerate(users.items()):
            if len(episodes) <= MARKED_SESSION:
                continue
            word = f"zqxforgot{index}{''.join(rng.choice('bcdfghjklmnpqrstvwxz') for _ in range(8))}"
            image = _noise_png(rng)
            step = episodes[MARKED_SESSION]["steps"][0]
            step["observation"] += f" (the marker is {word})"
            step["screenshot"] = "data:image/png;base64," + base64.b64encode(image).decode()
            self.marked[user] = Marked(user, word, image)

    def run(self, url: str, state: Path, mode: str, users: dict[str, list[dict]],
            post: Callable[[str, Any], tuple[int, dict]], export: Callable[[str, str], list[str]],
            started: float) -> None:
        """The two forgets, the re-import and the new remember (see the module's docstring)."""
        running = running_namespace(state) if mode == "per-user" else None
        names = list(self.marked)
        b = next((u for u in names if _key(state, u) == running), names[-1])
        a = next(u for u in names if u != b)
        self.during_round = round_running(state)

        def note(what: str) -> None:
            self.steps.append(f"{time.monotonic() - started:.1f}s {what}")

        status, answer = post(url + "/v1/forget", {"user": a, "task_id": _task_id(users[a][MARKED_SESSION])})
        assert status == 200 and answer.get("forgotten") == 1, answer
        self.forgotten.append(self.marked[a])
        note("forgot user A's marked session")
        lines = export(url, b)
        kept = [line for line in lines if self.marked[b].word not in line]
        assert len(kept) == len(lines) - 1, "the marked session of B is not in B's export"
        status, answer = post(url + "/v1/forget", {"user": b, "all": True})
        assert status == 200, answer
        self.forgotten.append(self.marked[b])
        note("forgot user B whole")
        status, answer = post_lines(url + f"/v1/import?user={_quote(b)}", kept)
        assert status == 200, answer
        note(f"imported B's export without its marked session ({len(kept)} episodes)")
        fresh = json.loads(kept[-1])
        fresh["task_id"] = f"{fresh.get('task_id')}-again"
        status, answer = post(url + "/v1/remember", {"user": b, "episode": fresh})
        assert status == 200, answer
        note(f"remembered one more session for B (seq {answer.get('seq')})")

    def returned(self, url: str, users: dict[str, list[dict]],
                 recall: Callable[[str, str, str], tuple[float, dict]]) -> int:
        """Recalls, as any user, that return a forgotten marker."""
        count = 0
        for marked in self.forgotten:
            for user in users:
                answer = recall(url, user, f"what is the marker {marked.word}")[1]
                count += marked.word in json.dumps(answer)
        return count

    def leftovers(self, state: Path, own: list[Path]) -> list[str]:
        """Files under the state folder and the temporary folder's `automemo-*` entries (but the
        bench's own, `own`, outside the state folder) holding a forgotten marker or image."""
        needles = [m.word.encode() for m in self.forgotten] + [m.image for m in self.forgotten]
        places = [state] + [p for p in Path(tempfile.gettempdir()).glob("automemo-*")
                            if not any(p == o or o in p.parents or p in o.parents for o in own)]
        found = []
        for place in places:
            for path in ([place] if place.is_file() else place.rglob("*")):
                try:
                    if path.is_file() and path.stat().st_size < 512 * 1024 * 1024:
                        data = path.read_bytes()
                        if any(n in data for n in needles):
                            found.append(str(path))
                except OSError:
                    continue
        return found

    def report(self, state: Path, url: str, users: dict[str, list[dict]], recall: Callable, own: list[Path]) -> dict:
        left = self.leftovers(state, own)
        return {"forgotten_returned": self.returned(url, users, recall), "leftovers": len(left),
                "leftover_files": left[:20], "forgets_during_round": self.during_round, "forget_steps": self.steps}


def round_running(state: Path) -> bool:
    """Whether a round's work folder holds anything now (per user or pooled)."""
    from automemo.serve.storage.versions import WORK

    return any(any(p.iterdir()) for p in [state / WORK, *state.glob(f"users/*/{WORK}")] if p.is_dir())


def running_namespace(state: Path) -> str | None:
    """The folder key of the user whose per-user round is running, if any."""
    from automemo.serve.storage.versions import WORK

    for work in state.glob(f"users/*/{WORK}"):
        if work.is_dir() and any(work.iterdir()):
            return work.parent.name
    return None



def _key(state: Path, user: str) -> str:
    from automemo.serve.storage.state_folder import StateFolder

    return StateFolder(state).key(user)


def _task_id(episode: dict) -> str:
    return str(episode.get("task_id"))


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


def _noise_png(rng: random.Random) -> bytes:
    from PIL import Image

    image = Image.frombytes("RGB", (24, 24), bytes(rng.randrange(256) for _ in range(24 * 24 * 3)))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
