"""Histories for the adaptation tests: a served export whose program remembers nothing (so that
any real memory beats it in a race), and a user's chat sessions with words of their own, logged
into a state folder as `automemo serve` logs remembers."""

from __future__ import annotations

import json
import random
from pathlib import Path

from automemo.contract import EpisodeRecorder, Step
from automemo.measurements.stand_ins.serve_export import write_export
from automemo.serve.storage.state_folder import StateFolder
from automemo.serve.user_memory import UserMemory

ROOT = Path(__file__).resolve().parents[1]
TOPICS = ["kayak", "violin", "sourdough", "orchid", "telescope", "marathon", "pottery", "chess", "beekeeping",
          "origami", "glacier", "saxophone", "lantern", "harbor", "falcon", "quartz", "meadow", "cactus"]
FILLER = ["today", "really", "think", "maybe", "friend", "weekend", "plan", "remember", "talked", "about"]


def forgetful_export(out: Path) -> Path:
    """An export of the no-memory seed: it answers every recall with nothing."""
    return write_export(out, (ROOT / "seeds" / "no_memory.py").read_text(), [], benchmark="conversations")


def chat_sessions(user: str, sessions: int = 12, turns: int = 12, *, seed: int = 0,
                  secret: str | None = None) -> list[EpisodeRecorder]:
    """`sessions` chat sessions of `turns` turns; each session about two topics with a rare word
    of its own per turn (so that a held-out turn's neighbours are findable by their words)."""
    rng = random.Random(f"{user}/{seed}")
    out = []
    for s in range(sessions):
        topics = rng.sample(TOPICS, 2)
        steps = []
        for t in range(turns):
            rare = f"{user[:3]}{rng.choice(TOPICS)[:4]}{s}x{t}"
            words = [rng.choice(topics), rare, rng.choice(topics), *rng.sample(FILLER, 3), rng.choice(topics)]
            if secret and s == 1 and t == 2:
                words.append(secret)
            speaker = "user" if t % 2 == 0 else "assistant"
            steps.append(Step(index=t, observation=f"{speaker}: " + " ".join(words), ref=f"{user}-s{s}-t{t}",
                              metadata={"speaker": speaker, "time": f"2024-05-{s + 1:02d}"}))
        out.append(EpisodeRecorder(task_id=f"{user}-session-{s}", benchmark="conversations",
                                   instruction=f"Conversation session {s} (2024-05-{s + 1:02d})", steps=tuple(steps),
                                   reward=1.0, success=True,
                                   metadata={"conversation": True, "user": user, "time": f"2024-05-{s + 1:02d}"}))
    return out


def served_state(root: Path, histories: dict[str, list[EpisodeRecorder]]) -> tuple[Path, StateFolder]:
    """An export and a state folder holding each user's logged history (replayed when served)."""
    export = forgetful_export(root / "export")
    state_dir = root / "state"
    state_dir.mkdir(parents=True)
    manifest = json.loads((export / "manifest.json").read_text())
    (state_dir / "program.json").write_text(json.dumps({"program_sha256": manifest["files"]["program.py"],
                                                        "shared_experience": False, "export": str(export)}))
    state = StateFolder(state_dir)
    for user, episodes in histories.items():
        UserMemory(user, state, None).add_logged(episodes)
    return export, state


def files_holding(folder: Path, needle: str) -> list[Path]:
    """Every file under `folder` whose bytes hold `needle`."""
    return [p for p in folder.rglob("*") if p.is_file() and needle.encode() in p.read_bytes()]
