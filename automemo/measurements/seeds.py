"""`automemo bench seeds`: every seed's update throughput (episodes/s) and retrieve latency with
1,000 and 10,000 stored episodes.

The seeds run in-process on the real guest toolkit, but its host calls are answered by a fast
deterministic encoder (hashed bag of words for text, sha256-seeded vectors for images) so that
the figures measure the seed's own cost (indexing, ranking, graph work, payload building), not
MiniLM's. The synthetic memory mixes web episodes (steps with actions, screenshots, errors and
rewards) and conversation sessions (rounds with pictures, owned by a handful of users), since
the seeds treat the two differently.

The first retrieve after the updates is reported on its own: several seeds build their index
lazily then (the memory is frozen), and that one-off cost is not a per-query latency.
Target: index-based seeds (every seed but no_memory) retrieve in <= 50 ms at 10,000 episodes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import random
import re
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from automemo.contract import EpisodeRecorder, ImageRef, PartialRecorder, Step
from automemo.paths import SEEDS_DIR, list_seeds

TARGET_MS = 50.0
TEXT_DIM, IMAGE_DIM = 384, 320  # the real encoders' sizes (MiniLM, perceptual feature)
_WORD = re.compile(r"[a-z0-9]+")
_TOPICS = ("umbrella boots lamp sofa kettle bicycle camera jacket tent printer guitar watch "
           "flight hotel train museum recipe concert dentist passport").split()
_SITES = ("shop.example.com", "travel.example.org", "maps.example.net", "news.example.com")
_VERBS = ("click", "type", "scroll", "select", "press")


class FastEncoder:
    """Deterministic host services: hashed bag-of-words text vectors, sha256-seeded image
    vectors. Same API as `MemoServices.handle`."""

    def __init__(self) -> None:
        self._word_cache: dict[str, np.ndarray] = {}

    def _word(self, word: str) -> np.ndarray:
        vec = self._word_cache.get(word)
        if vec is None:
            seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
            vec = np.random.default_rng(seed).standard_normal(TEXT_DIM).astype(np.float32)
            self._word_cache[word] = vec
        return vec

    def _text(self, text: str) -> list[float]:
        words = _WORD.findall(text.lower())
        vec = np.sum([self._word(w) for w in words], axis=0) if words else np.zeros(TEXT_DIM, np.float32)
        return (vec / (np.linalg.norm(vec) or 1.0)).tolist()

    @staticmethod
    def _image(ref: dict) -> list[float]:
        seed = int(ref["sha256"][:16], 16)
        vec = np.random.default_rng(seed).random(IMAGE_DIM).astype(np.float32)
        return (vec / np.linalg.norm(vec)).tolist()

    def handle(self, method: str, params: dict):
        if method == "embed_text":
            return [self._text(t) for t in params["texts"]]
        if method == "embed_image":
            return [self._image(r) for r in params["refs"]]
        if method == "embedding_dims":
            return {"text": TEXT_DIM, "image": IMAGE_DIM}
        if method == "has_llm":
            return False
        raise RuntimeError(f"bench seeds: host method {method!r} is not served (no memo LLM)")


def _image(rng: random.Random, caption: str) -> ImageRef:
    digest = hashlib.sha256(str(rng.random()).encode()).hexdigest()
    return ImageRef(path=f"images/{digest[:2]}/{digest}.png", sha256=digest, caption=caption)


def synthetic_episode(i: int, rng: random.Random) -> EpisodeRecorder:
    topic, site = rng.choice(_TOPICS), rng.choice(_SITES)
    if i % 2:
        user = f"U{i % 8}"
        steps, rounds = [], []
        for r in range(6):
            other = rng.choice(_TOPICS)
            pic = _image(rng, f"a photo of a {other}") if r == 2 else None
            steps.append(Step(index=r, observation=f"{user}: my {topic} and the {other} from episode {i}", screenshot=pic))
            rounds.append({"round_id": f"{user}:E{i}:R{r}", "time": "2024-01-01 10:00",
                           "image_id": f"{user}:E{i}:IMG{r}" if pic else None})
        return EpisodeRecorder(task_id=f"c{i}", benchmark="bench", instruction=f"session {i}", steps=steps,
                               reward=1.0, success=True,
                               metadata={"conversation": True, "user": user, "rounds": rounds})
    n = rng.randint(3, 5)
    success = rng.random() < 0.6
    steps = [
        Step(index=s, observation=f"https://{site}/ page {s} about {topic}",
             action=f'{rng.choice(_VERBS)} "{topic} {rng.randint(1, 99)}"',
             screenshot=_image(rng, f"{site} screen"),
             error="no results" if not success and s == n - 1 else None)
        for s in range(n)
    ]
    return EpisodeRecorder(task_id=f"w{i}", benchmark="bench", instruction=f"Find a {topic} on {site} number {i}",
                           initial_observation=f"URL: https://{site}/", steps=steps,
                           reward=1.0 if success else 0.0, success=success)


def synthetic_task(j: int, rng: random.Random) -> PartialRecorder:
    topic, site = rng.choice(_TOPICS), rng.choice(_SITES)
    if j % 2:
        return PartialRecorder(task_id=f"q{j}", benchmark="bench", instruction=f"What did I say about my {topic}?",
                               metadata={"user": f"U{j % 8}"})
    return PartialRecorder(task_id=f"t{j}", benchmark="bench", instruction=f"Buy a {topic} on {site}",
                           initial_observation=f"URL: https://{site}/",
                           initial_screenshot=_image(rng, f"{site} screen"))


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_seed_{name}", SEEDS_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def add_arguments(parser) -> None:
    parser.add_argument("--seed-name", action="append", dest="seeds", metavar="NAME",
                        help="measure only this seed (repeatable); default: every seed")
    parser.add_argument("--sizes", default="1000,10000", help="stored episodes, comma-separated (1000,10000)")
    parser.add_argument("--queries", type=int, default=30, help="retrieves timed per size (30)")


def run(args) -> int:
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from automemo.cli import UserError
    from automemo.toolkit.guest import Toolkit

    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        raise UserError(f"--sizes takes comma-separated integers (e.g. 1000,10000), got {args.sizes!r}") from None
    known = [p.stem for p in list_seeds()]
    names = args.seeds or known
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise UserError(f"unknown seed(s) {', '.join(unknown)}; seeds: {', '.join(known)}")
    console = Console()
    console.print("Seeds in-process on the guest toolkit; embeddings from a fast deterministic encoder "
                  "(hashed bag of words / sha256-seeded image vectors), so figures are the seeds' own cost, "
                  "without MiniLM's ~5-20 ms per query.")
    table = Table(title="seed update throughput and retrieve latency")
    table.add_column("seed", no_wrap=True)
    for col in ("episodes", "update ep/s", "first retrieve ms", "median ms", "p90 ms", f"<= {TARGET_MS:.0f} ms"):
        table.add_column(col, justify="right")
    encoder = FastEncoder()
    with Progress(console=console, transient=True) as progress:
        job = progress.add_task("seeds", total=len(names) * sum(sizes))
        for name in names:
            module = _load(name)
            for size in sizes:
                rng = random.Random(size)
                episodes = [synthetic_episode(i, rng) for i in range(size)]
                tasks = [synthetic_task(j, rng) for j in range(args.queries + 1)]
                with tempfile.TemporaryDirectory(prefix="bench-seeds-") as tmp:
                    memo = module.Memo(Toolkit(Path(tmp), Path(tmp), call_host=encoder.handle))
                    started = time.perf_counter()
                    for k, episode in enumerate(episodes):
                        memo.update(episode)
                        if k % 200 == 199:
                            progress.advance(job, 200)
                    progress.advance(job, size % 200)
                    update_s = time.perf_counter() - started
                    timings = []
                    for task in tasks:
                        t0 = time.perf_counter()
                        memo.retrieve(task)
                        timings.append((time.perf_counter() - t0) * 1000)
                first, rest = timings[0], timings[1:]
                median = statistics.median(rest)
                p90 = sorted(rest)[int(0.9 * (len(rest) - 1))]
                indexed = name != "no_memory"
                verdict = ("yes" if median <= TARGET_MS else "NO") if indexed and size >= 10_000 else "-"
                table.add_row(name, f"{size:,}", f"{size / update_s:,.0f}", f"{first:,.1f}",
                              f"{median:.2f}", f"{p90:.2f}", verdict)
    console.print(table)
    return 0
