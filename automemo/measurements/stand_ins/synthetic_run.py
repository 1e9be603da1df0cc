"""A synthetic but complete run directory, for the report's benchmark and tests.

Written through the real write API (`RunDir.create`, `StepJournal` commits, the evaluation
harness's evidence writers, the LLM `Ledger`), with steps chosen by the real search policy and
scores drawn from a seeded model of program quality. Only the programs' behaviour is invented:
every file and row has the shape a real search writes, images included (web-page-like
screenshots and gallery photos in the episode store), so the report meets a realistic load.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from automemo.contract import EpisodeRecorder, ImageRef, MemoryPayload, Step
from automemo.episode_store import EpisodeStore, atomic_write
from automemo.evaluation import evidence as evidence_io
from automemo.evaluation.result import EvaluationResult, TaskResult
from automemo.llm import Ledger, LedgerEntry
from automemo.runs import RunDir
from automemo.runs.journal import StepJournal
from automemo.runs.records import ActionRecord, DiagnosisRecord, EvaluationRecord, NodeRecord, Outcome
from automemo.search import policy
from automemo.search.config import SearchConfig
from automemo.search.tree import Node, Tree

PROGRAM = '''"""Synthetic memo program {name}: dense retrieval over stored rounds."""

from automemo.contract import MemoProgram, MemoryPayload

TOP_K = {top_k}  # tunable: int 1..30
THRESHOLD = {threshold}  # tunable: float 0.0..0.9
MODE = "{mode}"  # tunable: choice dense|hybrid|graph


class Memo(MemoProgram):
    def __init__(self, toolkit):
        super().__init__(toolkit)
        self.rounds = []

    def update(self, episode):
        # Keep the instruction and every step's observation: the retrieve side ranks them.
        self.rounds.append((episode.task_id, episode.instruction))

    def retrieve(self, task):
        hits = [r for r in self.rounds if MODE != "graph" or r[0] != task.task_id][:TOP_K]
        text = "\\n".join(f"[{{tid}}] {{text}}" for tid, text in hits)
        return MemoryPayload(text=text, metadata={{"evidence": [tid for tid, _ in hits]}})
'''

CATEGORIES = ("FR", "VS", "TR", "VR", "MR", "KR")


def write_synthetic_run(
    runs_root: str | Path,
    *,
    nodes: int = 20,
    tasks_per_eval: int = 8,
    screenshots_per_task: int = 3,
    fail_rate: float = 0.2,
    seed: int = 0,
    finished: bool = True,
    run_id: str | None = None,
) -> RunDir:
    """A run whose tree holds `nodes` nodes (failed generations included) after as many policy
    steps as that takes. With `finished=False` it looks mid-way: no final.json, more steps
    planned than done, and one more child committed without an evaluation."""
    rng = random.Random(seed)
    search = SearchConfig(steps=0, seed=seed)
    config = {
        "benchmark": {"name": "minigallery"},
        "search": {k: getattr(search, k) for k in ("steps", "c_e", "c_g", "kappa", "alpha", "min_width", "seed")},
        "llm": {"meta": {"model": "fake-meta", "api_key_env": "OPENAI_API_KEY"},
                "memo": {"model": "fake-embed", "api_key_env": "OPENAI_API_KEY"},
                "max_total_tokens": None, "max_usd": 5.0},
        "evaluation": {"budget": {"max_chars": 50_000, "max_images": 2}},
    }
    run = RunDir.create(runs_root, config, run_id)
    store = EpisodeStore(run.store_root)
    ledger = Ledger(run.db_path)
    gallery = [store.put_image(_photo(i), caption=f"photo {i}: a {c} scene")
               for i, c in enumerate(("red", "green", "blue", "amber", "teal", "violet"))]
    writer = _Writer(run, store, ledger, rng, gallery, tasks_per_eval, screenshots_per_task)

    quality = {0: 0.3}
    tree = Tree()
    step = 0
    writer.evaluate_root(tree, quality)
    while len(tree) < nodes:
        step += 1
        action = policy.choose_action(tree.stats(), search)
        if action.kind == "evaluate":
            writer.reevaluate(tree, quality, step, action.node_id)
            continue
        child = tree.next_id()
        quality[child] = min(0.95, max(0.0, quality[action.node_id] + rng.gauss(0.03, 0.07)))
        writer.generate(tree, quality, step, action.node_id, child, failed=rng.random() < fail_rate)
    if not finished:
        # A child committed without an evaluation (its evaluation hit an infrastructure error):
        # what a report of a running or troubled search must show as "not evaluated yet".
        step += 1
        writer.unevaluated_child(tree, step, tree.root.id, tree.next_id())
    if finished:
        stats = tree.stats()
        best = policy.final_by_bound(stats, search)
        run.write_final({
            "node_id": best.id, "mean": best.mean, "n": best.n,
            "lcb": policy.lcb(best, stats, search), "total_evaluations": stats.total_evaluations,
            "program_path": f"nodes/{best.id}/program.py", "stop_reason": "steps",
            "steps_done": step, "candidates": [],
        })
    # The plan is what the run set out to do: the steps it took (finished) or a few more.
    config["search"]["steps"] = step if finished else step + 5
    _write_json(run.path / "config.json", config)
    return run


class _Writer:
    def __init__(self, run, store, ledger, rng, gallery, tasks, shots):
        self.run, self.store, self.ledger, self.rng = run, store, ledger, rng
        self.gallery, self.tasks, self.shots = gallery, tasks, shots

    def evaluate_root(self, tree: Tree, quality) -> None:
        journal = StepJournal(self.run, 0)
        source = PROGRAM.format(name="no_memory", top_k=0, threshold=0.35, mode="dense")
        self._node_files(journal, 0, source, None)
        journal.add_node(_node_record(0, None, "root", "evaluated", "no memory (root)", 0, source))
        tree.add(Node(0, None, "nodes/0/program.py", "no memory (root)", action="root"))
        self._evaluate(journal, tree, quality, 0, 0)
        journal.commit(ActionRecord(step=0, kind="evaluate_root", node_id=0, outcome=Outcome.EVALUATED))

    def reevaluate(self, tree: Tree, quality, step: int, node_id: int) -> None:
        journal = StepJournal(self.run, step)
        self._evaluate(journal, tree, quality, node_id, tree.node(node_id).n)
        journal.commit(ActionRecord(step=step, kind="evaluate", node_id=node_id, outcome=Outcome.EVALUATED))

    def generate(self, tree: Tree, quality, step: int, parent: int, child: int, *, failed: bool) -> None:
        journal = StepJournal(self.run, step)
        rng = self.rng
        top_k, threshold = rng.randint(1, 30), round(rng.uniform(0.0, 0.9), 2)
        mode = rng.choice(("dense", "hybrid", "graph"))
        summary = f"TOP_K {top_k}, THRESHOLD {threshold}, MODE {mode}"
        source = PROGRAM.format(name=f"node {child}", top_k=top_k, threshold=threshold, mode=mode)
        repairs = 3 if failed else rng.randint(0, 1)
        self._node_files(journal, child, source, parent, repairs=repairs, failed=failed)
        snapshot = tree.node(parent).mean
        status = "failed" if failed else "evaluated"
        journal.add_node(dataclasses.replace(
            _node_record(child, parent, "generate", status, summary, repairs, source),
            parent_snapshot=snapshot, failure="exam: budget: payload over budget after 3 repairs" if failed else "",
        ))
        self.ledger.record(LedgerEntry(role="meta", model="fake-meta", status="ok", node=str(child),
                                       purpose="analysis", prompt_tokens=rng.randint(3000, 9000),
                                       completion_tokens=rng.randint(400, 1500), usd=0.004))
        tree.add(Node(child, parent, f"nodes/{child}/program.py", summary, parent_snapshot=snapshot,
                      status=status, created_step=step))
        if not failed:
            self._evaluate(journal, tree, quality, child, 0)
        journal.commit(ActionRecord(step=step, kind="generate", node_id=parent, child_id=child,
                                    outcome=Outcome.FAILED_EXAM if failed else Outcome.EVALUATED))

    def unevaluated_child(self, tree: Tree, step: int, parent: int, child: int) -> None:
        journal = StepJournal(self.run, step)
        source = PROGRAM.format(name=f"node {child}", top_k=12, threshold=0.3, mode="hybrid")
        self._node_files(journal, child, source, parent)
        summary = "MODE hybrid (evaluation pending)"
        journal.add_node(dataclasses.replace(
            _node_record(child, parent, "generate", "evaluated", summary, 0, source),
            parent_snapshot=tree.node(parent).mean,
        ))
        tree.add(Node(child, parent, f"nodes/{child}/program.py", summary, created_step=step))
        journal.commit(ActionRecord(step=step, kind="generate", node_id=parent, child_id=child,
                                    outcome=Outcome.EVAL_ERROR, detail="browser crashed twice"))

    def _node_files(self, journal, node_id, source, parent, *, repairs=0, failed=False) -> None:
        folder = journal.node_dir(node_id)
        (folder / "program.py").write_text(source)
        if parent is None:
            return
        # The shape the search writes: a diagnosis in the analysis schema, with the move it made.
        _write_json(folder / "diagnosis.json", DiagnosisRecord(
            summary="raise TOP_K so the answer round is reached",
            diagnosis={
                "summary": "mean 0.412 over 4 scored tasks (2 successes, 2 failures)",
                "content_issues": ["1 of 4 payloads are empty"],
                "structural_issues": ["retrieval misses the round that holds the answer"],
                "memory_relevance": [
                    {"task_id": "q-1", "label": "helpful", "reason": "the task succeeded with this memory"},
                    {"task_id": "q-3", "label": "missing", "reason": "nothing was retrieved and the task failed"},
                ],
                "suggestions": [
                    {"priority": 1, "change": "raise TOP_K so the answer round is reached",
                     "rationale": "the answer round ranks 7th"},
                    {"priority": 2, "change": "cite image ids", "rationale": "no payload cites evidence"},
                ],
                "mutation": {"kind": "perturb", "summary": "perturb TOP_K 5→8",
                             "changes": {"TOP_K": {"from": 5, "to": 8}}},
            },
            usage={"calls": [{"calls": 2, "prompt_tokens": 6000, "completion_tokens": 900}]},
            failure="exam: budget: payload over budget after 3 repairs" if failed else "",
        ).to_dict())
        attempts = 1 + repairs
        exam = []
        for a in range(attempts):
            ok = not failed and a == attempts - 1
            exam.append({"attempt": a, "passed": ok, "source_sha256": "0" * 64, "report": {
                "passed": ok, "failed_check": None if ok else "budget",
                "error": "" if ok else "payload has 61234 characters (text + metadata), budget is 50000",
                "traceback_tail": "" if ok else 'File "program.py", line 24, in retrieve\n    return MemoryPayload(...)',
                "failing_input": None if ok else {"task_id": "q-3", "instruction": "What colour was the car?"},
                "timings": {"total_s": 0.4}}})
        _write_json(folder / "exam.json", exam)

    def _evaluate(self, journal, tree: Tree, quality, node_id: int, k: int) -> None:
        folder = journal.evaluation_dir(node_id, k)
        records = [self._task(node_id, k, t, quality[node_id]) for t in range(self.tasks)]
        scores = [r.result.score for r in records]
        mean = sum(scores) / len(scores)
        result = EvaluationResult(
            mean=mean, n_scored=len(scores),
            per_category={c: mean for c in sorted({r.result.category for r in records})},
            metrics={"recall@10": mean, "ndcg@10": mean * 0.9}, tasks=tuple(r.result for r in records),
            wall_s=12.5, tokens=0,
        )
        for r in records:
            evidence_io.write_task(folder, r)
        evidence_io.write_summary(folder, result, store_root=self.store.root)
        _write_json(folder / "result.json", evidence_io.result_to_dict(result))
        journal.add_evaluation(EvaluationRecord(
            node_id=node_id, k=k, mean=mean, n_scored=len(scores), metrics=dict(result.metrics),
            per_category=dict(result.per_category), tokens=0, wall_s=12.5, update_s=3.0,
            evidence_dir=f"nodes/{node_id}/evaluations/{k}"))
        tree.add_score(node_id, mean)

    def _task(self, node_id: int, k: int, t: int, quality: float) -> evidence_io.TaskEvidence:
        rng = self.rng
        task_id = f"q-{t}"
        score = min(1.0, max(0.0, quality + rng.gauss(0, 0.25)))
        shots = [self.store.put_image(_screenshot(f"node {node_id} eval {k} task {t} step {s}", s))
                 for s in range(self.shots)]
        steps = tuple(Step(index=s, observation=f"page {s}", screenshot=ref, action=f"click({s})")
                      for s, ref in enumerate(shots))
        episode = EpisodeRecorder(task_id=task_id, benchmark="minigallery",
                                  instruction=f"Which photo shows the {t}th scene the user described?",
                                  steps=steps, final_answer=f"photo {t % len(self.gallery)}", reward=score)
        payload = MemoryPayload(
            text="\n".join(f"[s{j}-r{t}] user shared {self.gallery[j % len(self.gallery)].caption}"
                           for j in range(8)),
            images=tuple(self.gallery[(t + j) % len(self.gallery)] for j in range(2)),
            metadata={"evidence": [f"s{j}-r{t}" for j in range(8)]},
        )
        result = TaskResult(task_id=task_id, category=CATEGORIES[t % len(CATEGORIES)], score=score,
                            metrics={"recall@10": score}, payload=payload,
                            episode_path=evidence_io.episode_rel_path(task_id), steps=len(steps))
        return evidence_io.TaskEvidence(result=result, episode=episode)


def _write_json(path: Path, value: Any) -> None:
    atomic_write(path, json.dumps(value, indent=2, sort_keys=True).encode())


def _node_record(node_id, parent, action, status, summary, repairs, source) -> NodeRecord:
    return NodeRecord(id=node_id, parent=parent, action=action, status=status, summary=summary,
                      program_path=f"nodes/{node_id}/program.py",
                      program_sha256=hashlib.sha256(source.encode()).hexdigest(),
                      repair_attempts=repairs)


def _photo(i: int) -> Image.Image:
    """A gallery 'photo': a gradient sky, ground and a few shapes, distinct per index."""
    rnd = random.Random(i)
    im = Image.new("RGB", (512, 384))
    draw = ImageDraw.Draw(im)
    top, bottom = [rnd.randint(40, 220) for _ in range(3)], [rnd.randint(20, 160) for _ in range(3)]
    for y in range(384):
        f = y / 383
        draw.line([(0, y), (511, y)], fill=tuple(int(a + (b - a) * f) for a, b in zip(top, bottom)))
    for _ in range(6):
        x, y, r = rnd.randint(0, 511), rnd.randint(100, 383), rnd.randint(10, 60)
        draw.ellipse([x - r, y - r, x + r, y + r], fill=tuple(rnd.randint(0, 255) for _ in range(3)))
    return im


def _screenshot(label: str, step: int) -> Image.Image:
    """A web page: header bar, a form, lines of text, one highlighted button."""
    im = Image.new("RGB", (640, 420), "white")
    draw = ImageDraw.Draw(im)
    draw.rectangle([0, 0, 639, 48], fill=(36, 41, 47))
    draw.text((20, 18), f"Mini task - {label}", fill="white")
    for i in range(4):
        draw.text((40, 80 + 40 * i), f"{label}, row {i}: some text on the page", fill=(60, 60, 60))
        draw.rectangle([40, 96 + 40 * i, 600, 104 + 40 * i], fill=(234, 238, 242))
    draw.rectangle([40, 340, 220, 380], fill=(31, 111, 235) if step % 2 else (26, 127, 55))
    draw.text((70, 354), f"Submit {step}", fill="white")
    return im
