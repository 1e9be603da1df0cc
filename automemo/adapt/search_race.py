"""The two measurements of an adaptation round, over a history written as a sessions file: the
label-free search that proposes a candidate, and the paired race that decides whether it
replaces the live program.

The search is `automemo search --benchmark conversations --questions self` rooted at the live
program (without the seed sweep by default: a round refines what a user is served), so the live
program is the search's bar. Its selection is
the first candidate; when it loses its race, the next best nodes by their mean are raced in turn
(`AdaptConfig.race_candidates`), as the search's own confirmation takes the next candidate when
one loses on a guard. The race then scores the live program and the candidate on the held-out
conversations' pseudo-questions, written with another seed than the search's (a candidate is
never judged on the questions it was chosen on), paired question by question: the candidate
wins only when its mean difference is more than z paired SEs above 0, and it loses by no more
than z paired SEs on the other kinds (the guard: a proxy that favours a design for the wrong
reason, as `context` can favour one that returns a turn's neighbours, is caught by the kinds
that ask for one turn's words)."""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from automemo.adapt.config import AdaptConfig
from automemo.config import RunConfig


ONE_BLOCK = 1_000_000
"""A history's sessions as one conversation (`block_sessions` past any history's size)."""


@dataclass(frozen=True)
class Proposal:
    """What the round's search selected."""

    source: str                 # the program, as deployed (fits on all its questions)
    node_id: int
    summary: str
    search: Mapping[str, Any]   # steps, nodes, the selection's and this node's mean: the version's record

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "source"}


@dataclass(frozen=True)
class Race:
    """The candidate against the live program on the same held-out pseudo-questions."""

    live_mean: float
    candidate_mean: float
    difference: float           # candidate − live, mean over the paired questions
    se: float
    questions: int
    z: float
    won: bool                   # difference − z·SE > 0, and the guard kinds hold
    per_question: Mapping[str, tuple[float, float]]   # question id -> (live, candidate)
    texts: Mapping[str, str]                          # question id -> the pseudo-question
    # the guard kinds' paired difference: difference, se, questions, holds (empty: none asked)
    guard: Mapping[str, Any] = field(default_factory=dict)

    @property
    def cleared(self) -> bool:
        """Whether it won on the scored questions (`win_rule.clears`), whatever the guard said."""
        from automemo.search import win_rule
        from automemo.search.tree_stats import PairedDifference

        return win_rule.clears(PairedDifference(self.difference, self.se, self.questions), self.z)

    @property
    def same_answers(self) -> bool:
        """Whether the candidate scored as the live program on every raced question, the guard
        kinds' too: a copy in behaviour, which a trial could not tell apart."""
        return all(live == candidate for live, candidate in self.per_question.values()) and \
            self.guard.get("difference", 0.0) == 0.0 and self.guard.get("se", 0.0) == 0.0

    def summary(self) -> dict[str, Any]:
        """The race without its questions (what a pooled version may carry)."""
        return {k: v for k, v in asdict(self).items() if k not in ("per_question", "texts")}


def round_config(sessions: Path, manifest: Mapping[str, Any], config: AdaptConfig, *, blocks: int | None,
                 sandbox: str, root: Path | None = None, pseudo_seed: int = 0, search_seed: int = 0,
                 kinds: Mapping[str, float] | None = None,
                 pooled: bool = False, feedback: Path | None = None) -> RunConfig:
    """The run config of a round's search (with `root`) or race: the conversations benchmark over
    `sessions`, label-free, with the served export's embeddings, budget and limits, over the
    operator's run-config TOML (`config.run_config`, checked when the `AdaptConfig` was made:
    LLM roles, pseudo-question and search settings). Its questions are written by the LLM role `benchmark.pseudo.llm_role` when the
    file configures that role (`questions = "llm"`), else offline (`"self"`). `pooled`: the meta
    agent is the offline one whatever the file says (an LLM meta agent is shown the users' turns
    and could write them into a program every user is served), and so are the questions when
    their role is `meta`. `feedback`: a questions file of the agent's feedback on recalls
    (`adapt.feedback_questions`): the search fits on its older questions and a race scores the
    newer ones (`questions = "feedback"`), over one memory of every session."""
    from automemo.resolution import load_run_config

    config_file = config.run_config
    options: dict[str, Any] = {"path": str(sessions)}
    if blocks is not None:
        options["block_sessions"] = blocks
    overrides: dict[str, Any] = {
        "benchmark": {"name": "conversations", "options": options, "questions": "self",
                      "pseudo": {"seed": pseudo_seed}},
        "sandbox": {"backend": sandbox, "limits": dict(manifest.get("limits") or {})},
        "budget": dict(manifest.get("budget") or {}),
        "embeddings": {k: v for k, v in (manifest.get("embeddings") or {}).items() if k != "cache_path"},
        "evaluation": {"quiet": True},
        "search": {"steps": config.steps, "seed": search_seed, "heldout_test": False, "z": config.z,
                   "seed_sweep": config.sweep},
    }
    if root is not None:
        overrides["search"]["root"] = str(root)
    if pooled:
        overrides["llm"] = {"meta": {"model": ""}}
    if kinds is not None:  # a race's guard: the other kinds, scored (none fitted on: a race fits nothing)
        overrides["benchmark"]["pseudo"].update(kinds=dict(kinds), fit_kinds={})
    if feedback is not None:
        # one memory of every session, as served: the split is by the questions' time
        options.update(questions=str(feedback), block_sessions=ONE_BLOCK)
        overrides["benchmark"]["questions"] = "feedback"
        overrides["search"]["seed_sweep"] = config.feedback_sweep
        return load_run_config(None, config_file, overrides)
    resolved = load_run_config(None, config_file, overrides)
    role = getattr(resolved.llm, resolved.benchmark.pseudo.llm_role)
    if role.model:  # the operator configured the role that writes pseudo-questions: it writes them
        overrides["benchmark"]["questions"] = "llm"
        resolved = load_run_config(None, config_file, overrides)
    return resolved


def search(work: Path, run_config: RunConfig, live_source: str, candidates: int = 1, *,
           when_kept: bool = False) -> list[Proposal]:
    """Run the round's search in `work/runs/search`; its selection as deployed, then (up to
    `candidates` in all) the other evaluated nodes best by their mean, each a program other than
    the live one and the ones before it. Empty: the search kept the live program, unless
    `when_kept` (a round on feedback, whose trial is the check the logged feedback cannot be: the
    best nodes other than the live program are proposed all the same)."""
    from automemo.assembly import build_search
    from automemo.config import run_config_to_dict
    from automemo.meta.source.fitted import deployable_source
    from automemo.runs import RunDir
    from automemo.search.view import RunView

    shutil.rmtree(work / "runs" / "search", ignore_errors=True)
    run = RunDir.create(work / "runs", run_config_to_dict(run_config), "search")
    assembled = build_search(run, run_config, quiet=True, unsafe_confirmed=_unsafe(run_config))
    try:
        final = assembled.loop.run_search()
    finally:
        assembled.close()
    view = RunView.load(run)
    evaluated = [n for n in view.nodes if n.evaluated]
    record = {"steps": run_config.search.steps, "nodes": len(view.nodes), "evaluated": len(evaluated),
              "selected": int(final["node_id"]), "selected_mean": float(final["mean"]),
              "summary": final.get("summary", ""),
              "root_mean": next((float(n.mean) for n in evaluated if n.id == 0), None)}
    selected = int(final["node_id"])
    ranked = [selected] + [n.id for n in sorted(evaluated, key=lambda n: (-n.mean, n.id)) if n.id != selected]
    seen = {deployable_source(live_source)}
    out: list[Proposal] = []
    for node_id in ranked:
        if len(out) >= candidates or (node_id == selected and not when_kept
                                      and deployable_source(run.program_source(node_id)) in seen):
            break  # the search kept the live program: nothing else is proposed
        source = deployable_source(run.program_source(node_id))
        if source in seen:
            continue
        seen.add(source)
        node = view.node(node_id)
        out.append(Proposal(source, node_id, str(node.summary), {**record, "candidate": node_id,
                                                                 "candidate_mean": float(node.mean)}))
    return out


def race(work: Path, scored: Sequence[RunConfig], guarded: Sequence[RunConfig], live_source: str, candidate_source: str,
         z: float) -> Race:
    """Score both programs on the held-out conversations' pseudo-questions of each run config
    (one per draw of held-out turns), paired: `scored` on the kind the search is scored on,
    `guarded` on the other kinds (a word a later message refers back to, a masked word, a
    date), which the candidate must not lose by more than z paired SEs."""
    from automemo.search import win_rule
    from automemo.search.tree_stats import paired_scores

    live, candidate, texts = _paired_draws(work / "scored", scored, live_source, candidate_source)
    try:
        d = paired_scores(candidate, live)
    except ValueError:
        return Race(0.0, 0.0, 0.0, 0.0, 0, z, False, {}, {})
    guard: dict[str, Any] = {}
    if guarded:
        from automemo.assembly import AssemblyError

        try:
            guard_live, guard_candidate, _ = _paired_draws(work / "guarded", guarded, live_source, candidate_source)
            g = paired_scores(guard_candidate, guard_live)
            guard = {"difference": g.difference, "se": g.se, "questions": g.tasks, "holds": win_rule.holds(g, z)}
        except (AssemblyError, ValueError) as exc:  # the history holds no question of those kinds
            guard = {"skipped": str(exc) or "no question of the guard kinds"}
    clears = win_rule.clears(d, z)  # the rule the search's confirmation applies, written once
    return Race(sum(live.values()) / len(live), sum(candidate.values()) / len(candidate), d.difference, d.se,
                d.tasks, z, clears and guard.get("holds", True), {q: (live[q], candidate[q]) for q in sorted(live)},
                texts, guard)


def _paired_draws(work: Path, run_configs: Sequence[RunConfig], live_source: str,
                  candidate_source: str) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
    """Both programs' scores on the test split of each run config, by "draw:question"; a question
    text an earlier draw asked is not counted again."""
    from automemo.assembly import build_evaluation

    live_scores: dict[str, float] = {}
    candidate_scores: dict[str, float] = {}
    texts: dict[str, str] = {}
    for draw, run_config in enumerate(run_configs):
        with build_evaluation(run_config, store_root=work / f"store-{draw}", quiet=True,
                              unsafe_confirmed=_unsafe(run_config)) as setup:
            live = setup.evaluator.evaluate(live_source, split="test", evidence_dir=work / f"live-{draw}")
            candidate = setup.evaluator.evaluate(candidate_source, split="test", evidence_dir=work / f"candidate-{draw}")
            asked = {t.task_id: t.instruction for t in setup.benchmark.split("test").retrieve}
        seen = set(texts.values())
        a, b = _scores(live), _scores(candidate)
        for question in sorted(set(a) & set(b)):
            if asked.get(question, question) in seen:
                continue
            key = f"{draw}:{question}"
            live_scores[key], candidate_scores[key], texts[key] = a[question], b[question], asked.get(question, "")
    return live_scores, candidate_scores, texts


def _scores(result: Any) -> dict[str, float]:
    return {t.task_id: float(t.score) for t in result.tasks if t.counted and not t.excluded}


def _unsafe(run_config: RunConfig) -> bool:
    """A round runs its programs as the server runs them: `--sandbox unsafe` was the operator's
    own choice on the command line that started it."""
    return run_config.sandbox.backend == "unsafe"
