"""`automemo bench discovered-default`: find the discovered default again, and write it with its
provenance (docs/label-free.md, "The discovered default"; the shipped one is discovered/discovered.py).

    automemo bench discovered-default [--draws 3] [--steps 20] [--out discovered.py]

What it does, on the embedded sample (`@mem-gallery-sample`) only:
1. runs the quickstart's search (`--preset memgallery-sample`: the five train conversations and
   their labelled questions) once per draw, with the run seeds 0..draws-1 and without sweeping
   the discovered default itself; the five test conversations are never read here until step 4;
2. takes every candidate the draws' confirmations paired with their best hand design (and that
   hand design), one per distinct deployable program;
3. chooses to transfer, not to fit: each candidate's lead over the best hand design is taken per
   train conversation, and the candidate with the highest lower bound across conversations (mean
   lead − one SE over the conversations) leads; of the candidates whose mean lead is within one
   such SE of the leader's, the cheapest to run (CPU per recall, then per remembered turn) is
   chosen: a program that holds on every conversation, at the lowest cost that holds;
4. scores it and the best hand design on the test split (the held-out verdict's figures) and
   writes the program, in its deployable form, with a provenance header: the data and its
   digest, the command, the commit, the draws, the validation and test figures, and the cost of
   both programs.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import math
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from automemo.cli import UserError
from automemo.cli.flags import add_sandbox_flag, sandbox_choice, unsafe_confirmed

PRESET = "memgallery-sample"
DATA = "@mem-gallery-sample"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--draws", type=int, default=3, help="searches, run seeds 0..N-1 (default 3)")
    p.add_argument("--steps", type=int, default=20, help="steps of each search (default 20, the quickstart's)")
    p.add_argument("--out", type=Path, default=Path("discovered.py"),
                   help="the program file to write (default discovered.py; the package's is discovered/discovered.py)")
    p.add_argument("--workdir", type=Path, help="keep the draws' runs here (default: a temporary folder)")
    add_sandbox_flag(p, default="auto")


@dataclass(frozen=True)
class Candidate:
    """One distinct program of the draws, with what choosing it rests on."""

    draw: int
    node_id: int
    summary: str
    source: str                        # deployable (fits on all train questions)
    validation: float                  # μ on the train split's questions
    by_conversation: Mapping[str, float]  # conversation -> mean lead over the best hand design
    cost: Mapping[str, float]
    hand_design: bool = False

    @property
    def lead(self) -> float:
        values = list(self.by_conversation.values())
        return sum(values) / len(values) if values else 0.0

    @property
    def lead_se(self) -> float:
        values = list(self.by_conversation.values())
        if len(values) < 2:
            return 0.0
        mean = self.lead
        return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1) / len(values))

    @property
    def bound(self) -> float:
        return self.lead - self.lead_se

    def cost_key(self) -> tuple[float, float]:
        return (float(self.cost.get("recall_cpu_ms", math.inf)), float(self.cost.get("ingest_cpu_ms_per_turn", math.inf)))


def choose(candidates: list[Candidate]) -> tuple[Candidate, Candidate]:
    """(the leader by the bound across conversations, the chosen one: the cheapest within one
    conversation-SE of the leader's lead). Pure: tested on its own."""
    if not candidates:
        raise ValueError("no candidate to choose from")
    leader = max(candidates, key=lambda c: (c.bound, c.lead, -c.draw, -c.node_id))
    within = [c for c in candidates if (c.lead >= leader.lead - leader.lead_se and c.bound > 0) or c is leader]
    chosen = min(within, key=lambda c: (c.cost_key(), -c.bound, c.draw, c.node_id))
    return leader, chosen


def by_conversation(candidate: Mapping[str, float], bar: Mapping[str, float]) -> dict[str, float]:
    """Conversation -> mean paired difference on its questions (ids are "conversation/Q007")."""
    sums: dict[str, list[float]] = {}
    for question in sorted(set(candidate) & set(bar)):
        sums.setdefault(question.split("/", 1)[0], []).append(candidate[question] - bar[question])
    return {conv: sum(d) / len(d) for conv, d in sorted(sums.items())}


def data_digest(folder: Path) -> str:
    """sha256 over the data set's files (name and bytes, in name order)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def run(args: argparse.Namespace) -> int:
    if args.draws < 1 or args.steps < 1:
        raise UserError(f"--draws and --steps must be at least 1, got {args.draws} and {args.steps}")
    if args.out.is_dir():
        raise UserError(f"--out {args.out} is a folder; pass the program file to write, e.g. {args.out / 'discovered.py'}")
    with tempfile.TemporaryDirectory(prefix="automemo-discovered-") as tmp:
        work = (args.workdir or Path(tmp)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        candidates: list[Candidate] = []
        for draw in range(args.draws):
            print(f"draw {draw + 1}/{args.draws}: the quickstart's search, run seed {draw}, {args.steps} steps …",
                  file=sys.stderr)
            candidates += _draw(work, draw, args)
        seen: set[str] = set()
        distinct = [c for c in candidates if not (c.source in seen or seen.add(c.source))]
        leader, chosen = choose(distinct)
        hand = max((c for c in distinct if c.hand_design), key=lambda c: c.validation)
        test = _test(work, args, chosen, hand)
    provenance = _provenance(args, distinct, leader, chosen, hand, test)
    _write(args.out, chosen.source, provenance)
    _print(distinct, leader, chosen, hand, test, args.out)
    return 0


def _config(args: argparse.Namespace, draw: int, steps: int) -> Any:
    from automemo.resolution import load_run_config

    return load_run_config(PRESET, None, {
        "search": {"steps": steps, "seed": draw, "heldout_test": False, "sweep_discovered": False},
        "sandbox": {"backend": sandbox_choice(args) or "auto"}, "evaluation": {"quiet": True}})


def _draw(work: Path, draw: int, args: argparse.Namespace) -> list[Candidate]:
    """One search; its confirmation's candidates and its bar, each as a Candidate."""
    from automemo.assembly import build_search
    from automemo.config import run_config_to_dict
    from automemo.meta.source.fitted import deployable_source
    from automemo.runs import RunDir
    from automemo.search.tree import Tree
    from automemo.search.view import RunView

    config = _config(args, draw, args.steps)
    run = RunDir.create(work / "runs", run_config_to_dict(config), f"draw-{draw}")
    assembled = build_search(run, config, quiet=True, unsafe_confirmed=unsafe_confirmed(args), preflight=False)
    try:
        final = assembled.loop.run_search()
    finally:
        assembled.close()
    stats = Tree.from_rundir(run).stats()
    confirmation = final.get("confirmation") or {}
    bar = stats.node(int(confirmation.get("bar", final["node_id"])))
    view = RunView.load(run)
    ids = [bar.id] + [int(c["node_id"]) for c in confirmation.get("candidates") or ()]
    out = []
    for node_id in dict.fromkeys(ids):
        v = stats.node(node_id)
        out.append(Candidate(draw, node_id, str(view.node(node_id).summary),
                             deployable_source(run.program_source(node_id)), float(v.mean),
                             by_conversation(v.task_scores, bar.task_scores), dict(v.cost), node_id == bar.id))
    return out


def _test(work: Path, args: argparse.Namespace, chosen: Candidate, hand: Candidate) -> dict[str, Any]:
    """Both programs on the sample's test split (the conversations no draw read), paired."""
    from automemo.assembly import build_evaluation
    from automemo.search.heldout import paired_difference, task_scores

    config = _config(args, 0, args.steps)
    with build_evaluation(config, store_root=work / "test-store", quiet=True,
                          unsafe_confirmed=unsafe_confirmed(args)) as setup:
        results = {name: setup.evaluator.evaluate(c.source, split="test", evidence_dir=work / f"test-{name}")
                   for name, c in (("discovered", chosen), ("hand_design", hand))}
    scores = {name: task_scores(r) for name, r in results.items()}
    return {"discovered": float(results["discovered"].mean), "hand_design": float(results["hand_design"].mean),
            "difference": paired_difference(scores["discovered"], scores["hand_design"]),
            "cost": {name: dict(r.cost) for name, r in results.items()}}


def _commit() -> str:
    """The checkout's commit, "+dirty" when its working tree had changes (the code that ran was
    then that commit and those changes); "unknown" outside a git checkout."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, cwd=here)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, timeout=10, cwd=here)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    commit = head.stdout.strip()
    return (commit + ("+dirty" if dirty.stdout.strip() else "")) if commit else "unknown"


def _provenance(args: argparse.Namespace, candidates: list[Candidate], leader: Candidate, chosen: Candidate,
                hand: Candidate, test: Mapping[str, Any]) -> dict[str, Any]:
    from automemo.paths import shipped_data

    d = test["difference"]
    return {
        "what": "the discovered default: found by automemo's own search on the labelled questions of the "
                "embedded sample's train conversations; not a hand design",
        "data": DATA, "data_sha256": data_digest(Path(shipped_data(DATA))),
        "chosen_on": "the five train conversations of --preset memgallery-sample (their labelled questions); "
                     "the five test conversations were read only for the test figures below",
        "command": "automemo bench discovered-default " + " ".join(
            shlex.quote(a) for a in (f"--draws={args.draws}", f"--steps={args.steps}")),
        "commit": _commit(), "date": datetime.date.today().isoformat(),
        "draws": args.draws, "steps": args.steps, "candidates": len(candidates),
        "chosen": {"draw": chosen.draw, "node": chosen.node_id, "summary": chosen.summary},
        "leader": {"draw": leader.draw, "node": leader.node_id, "summary": leader.summary},
        "validation": round(chosen.validation, 6),
        "validation_lead_by_conversation": {k: round(v, 6) for k, v in chosen.by_conversation.items()},
        "validation_lead": round(chosen.lead, 6), "validation_lead_se": round(chosen.lead_se, 6),
        "hand_design": hand.summary, "hand_design_validation": round(hand.validation, 6),
        "test_metric": "recall@10", "test": round(test["discovered"], 6),
        "test_hand_design": round(test["hand_design"], 6),
        "test_lead": round(d["difference"], 6), "test_lead_se": round(d["se"], 6), "test_questions": d["tasks"],
        "cost": {name: {k: round(float(v), 4) for k, v in figures.items()
                        if k in ("ingest_cpu_ms_per_turn", "recall_cpu_ms", "recall_p95_ms")}
                 for name, figures in test["cost"].items()},
    }


def _write(out: Path, source: str, provenance: Mapping[str, Any]) -> None:
    from automemo.programs import provenance_header

    header = ("# The discovered default memo program (automemo/programs.py: `discovered`). Written by\n"
              "# `automemo bench discovered-default`; do not edit by hand, run it again.\n")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(header + provenance_header(provenance) + "\n" + source)


def _print(candidates: list[Candidate], leader: Candidate, chosen: Candidate, hand: Candidate,
           test: Mapping[str, Any], out: Path) -> None:
    print(f"{len(candidates)} distinct candidate(s) over the draws; lead over the best hand design per train conversation:")
    for c in sorted(candidates, key=lambda c: -c.bound):
        mark = " <- chosen" if c is chosen else (" <- leader" if c is leader else "")
        print(f"  draw {c.draw} #{c.node_id:<3} {c.lead:+.3f} ± {c.lead_se:.3f} (bound {c.bound:+.3f}) "
              f"recall CPU {c.cost.get('recall_cpu_ms', float('nan')):.2f} ms  {c.summary[:70]}{mark}")
    d = test["difference"]
    costs = test["cost"]
    print(f"test split ({d['tasks']} questions no draw read): discovered {test['discovered']:.3f}, "
          f"{hand.summary} {test['hand_design']:.3f}; lead {d['difference']:+.3f} ± {d['se']:.3f} (paired SE)")
    for name, figures in costs.items():
        print(f"  cost of {name}: {figures.get('ingest_cpu_ms_per_turn', float('nan')):.2f} ms CPU per remembered "
              f"turn, {figures.get('recall_cpu_ms', float('nan')):.2f} ms CPU per recall, "
              f"recall p95 {figures.get('recall_p95_ms', float('nan')):.2f} ms")
    print(f"written: {out}")
