"""One read-only view of a run: its nodes with μ, n and LCB, the selected node, lineage, spend
per LLM role and what its steps came to. Computed once, with the policy's own functions, and
read by everything that shows or uses a run — the loop's final selection, `automemo tree`,
`show`, `report` and `export` — so that they cannot disagree on a number.

    view = RunView.load(RunDir.open("runs/<id>"))
    view.selected_id, view.node(3).lcb, view.lineage(3), view.spend
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Any, Mapping

from automemo import configtools
from automemo.benchmarks import ranking_metric
from automemo.configtools import ConfigError
from automemo.llm.config import ROLES
from automemo.llm.ledger import Ledger
from automemo.runs.records import SEARCH_STEP_KINDS, ActionRecord, EvaluationRecord, NodeRecord, Outcome
from automemo.runs.rundir import RunDir
from automemo.search import halving, policy
from automemo.evaluation.cost_bounds import CostBounds
from automemo.search.config import SearchConfig
from automemo.search.cost_front import CostFront, cost_front
from automemo.search.strategies import strategy_for
from automemo.search.tree import Tree


@dataclass(frozen=True)
class NodeView:
    """A node as every reader sees it: its record, its scores, and where it stands."""

    record: NodeRecord
    scores: tuple[float, ...]     # one mean score per full evaluation, in order
    lcb: float | None             # None while the node has no evaluation (or it failed)
    selected: bool = False
    # The ± term the policy used for this node (z·SE of its task scores when evaluation is
    # exact, c_e·sqrt(ln N / n) otherwise): LCB = μ − uncertainty.
    uncertainty: float | None = None
    # μ as the policy reads it: with a question budget, over every question the node was
    # scored on (samples differ in size); otherwise the mean of its evaluations' means.
    policy_mean: float | None = None
    questions: int = 0            # validation questions its evaluations asked
    stopped: str = ""             # why early stopping ended its scoring ("" when it did not)
    cost: Mapping[str, Any] = field(default_factory=dict)  # its latest evaluation's cost figures
    outside: str = ""             # why it is outside the run's cost bounds ("" within, or none)

    def __getattr__(self, name: str) -> Any:
        # The record's fields read as the node's own (node.id, node.summary, node.failure ...).
        if name == "record":  # not set yet (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.record, name)

    @property
    def n(self) -> int:
        return len(self.scores)

    @property
    def mean(self) -> float | None:
        if self.policy_mean is not None:
            return self.policy_mean
        return sum(self.scores) / len(self.scores) if self.scores else None

    @property
    def failed(self) -> bool:
        return self.record.status == "failed"

    @property
    def evaluated(self) -> bool:
        return not self.failed and bool(self.scores)


@dataclass(frozen=True)
class RoleSpend:
    role: str
    model: str                    # configured model; "" when the role is not configured
    calls: int = 0                # successful calls (failed attempts are counted apart)
    failed: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    usd: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class RunView:
    run: RunDir
    config: Mapping[str, Any]               # the resolved run config (config.json)
    search: SearchConfig
    nodes: tuple[NodeView, ...]
    evaluations: tuple[EvaluationRecord, ...]
    actions: tuple[ActionRecord, ...]
    final: Mapping[str, Any] | None         # final.json, None while the search has not finished
    selected_id: int | None                 # final.json's choice, or the current leader
    total_evaluations: int                  # N
    spend: tuple[RoleSpend, ...] = ()
    # "tasks" (exact evaluation: ± z·SE of per-task scores) or "repeats" (± c_e·sqrt(ln N / n)).
    uncertainty_source: str = "repeats"
    # The selection's paired lead over the runner-up on their shared tasks (exact evaluation).
    lead: Mapping[str, Any] | None = None
    # Exact evaluation: the final confirmation (candidates paired with the best hand design on
    # every search question, their bounds, the rule and the choice); final.json's once written.
    confirmation: Mapping[str, Any] | None = None
    # Validation questions: the budget (None: none), asked so far, how many there are and the
    # sample size (None without a budget). final.json's "questions".
    questions: Mapping[str, Any] = field(default_factory=dict)
    # The per-question metric μ is the mean of (the benchmark's option `metric`, else its
    # default), None where the run's config does not name a benchmark that can say.
    metric: str | None = None
    _by_id: Mapping[int, NodeView] = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, run: RunDir, search: SearchConfig | None = None) -> RunView:
        """Read the run's committed state. `search` defaults to the run's own search config."""
        config = run.config()
        search = search or configtools.build(SearchConfig, config.get("search") or {})
        tree = Tree.from_rundir(run)
        lcbs: dict[int, float] = {}
        spreads: dict[int, float] = {}
        leader: int | None = None
        source, lead, confirmation = "repeats", None, None
        final = run.final()
        # Before the root's first evaluation commits (a live report from the search's start) the
        # tree has no statistics yet: every figure below is empty.
        stats = tree.stats() if tree.total_evaluations else None
        if stats is not None:
            lcbs = {v.id: policy.lcb(v, stats, search) for v in stats.nodes if v.n > 0}
            spreads = {v.id: policy.uncertainty(v, stats, search) for v in stats.nodes if v.n > 0}
            leader = strategy_for(search).select_final(stats).id
            if policy.uses_task_uncertainty(stats, search):
                source = "tasks"
                chosen = final.get("node_id") if final is not None else leader
                lead = _paired_lead(stats, chosen)
                confirmation = (final or {}).get("confirmation") or confirmation_document(stats, search)
        selected = final.get("node_id") if final is not None else leader
        records = [NodeRecord.from_row(row) for row in run.nodes()]
        # μ as the policy reads it (Tree.stats: paired with a question budget), for every reader
        means = {v.id: v.mean for v in stats.nodes if v.n > 0} if stats is not None else {}
        outside = {v.id: v.outside for v in stats.nodes} if stats is not None else {}
        nodes = tuple(
            NodeView(r, tree.node(r.id).scores, lcbs.get(r.id), selected=r.id == selected,
                     uncertainty=spreads.get(r.id), policy_mean=means.get(r.id),
                     questions=len(tree.node(r.id).asked), stopped=tree.node(r.id).stopped,
                     cost=tree.node(r.id).cost, outside=outside.get(r.id, ""))
            for r in records
        )
        return cls(
            run=run, config=config, search=search, nodes=nodes,
            evaluations=tuple(EvaluationRecord.from_row(e) for e in run.evaluations()),
            actions=tuple(ActionRecord.from_row(a) for a in run.actions()),
            final=final, selected_id=selected, total_evaluations=tree.total_evaluations,
            spend=_spend(run, config), uncertainty_source=source, lead=lead, confirmation=confirmation,
            questions=_questions(tree, search), metric=_ranking_metric(config), _by_id={n.id: n for n in nodes},
        )

    @property
    def bounds(self) -> Mapping[str, Any] | None:
        """The cost bounds the selection is held to (final.json's "bounds", or as they stand)."""
        if self.final is not None and "bounds" in self.final:
            return self.final["bounds"]
        if not self.total_evaluations or self.selected_id is None:
            return None
        return bounds_document(Tree.from_rundir(self.run).stats(), self.search, self.selected_id)

    @property
    def front(self) -> CostFront:
        """The run's quality / cost front and the cheapest node within z SE of the best."""
        if not self.total_evaluations:
            return CostFront((), (), None, None, self.search.z)
        return cost_front(Tree.from_rundir(self.run).stats(), self.search.z)

    @property
    def uncertainty_rule(self) -> str:
        """How the ± of every node was computed, as the tree view and report print it."""
        if self.questions.get("sample_size"):
            return (f"samples that grow (question budget): μ from the questions a node was asked, paired "
                    f"with the node asked the most; "
                    f"± = {self.search.z:g}·SE of its per-question scores, LCB = μ − {self.search.z:g}·SE; "
                    f"a re-evaluation asks the next {self.questions['sample_size']} questions; the best "
                    f"{self.search.race_candidates} race by successive halving and the winner must beat the best "
                    f"hand design by {self.search.z:g} paired SE on the questions both were asked")
        if self.uncertainty_source == "tasks":
            return (f"exact evaluation: ± = {self.search.z:g}·SE of the per-task scores, "
                    f"LCB = μ − {self.search.z:g}·SE; no re-evaluation; the selection must beat "
                    f"the best hand design by {self.search.z:g} paired SE on the same tasks")
        return f"± = {self.search.c_e:g}·√(ln N / n), LCB = μ − {self.search.c_e:g}·√(ln N / n)"

    # nodes -------------------------------------------------------------------------------------

    def node(self, node_id: int) -> NodeView:
        try:
            return self._by_id[node_id]
        except KeyError:
            raise KeyError(f"run {self.run.run_id} has no node {node_id}; nodes: {sorted(self._by_id)}") from None

    def score_text(self, node: NodeView) -> str:
        """A node's scores as `tree` and `show` print them: μ, n, ±, LCB; with a question budget
        the questions it was asked and whether it was stopped early."""
        if not node.evaluated:
            return "not evaluated"
        text = f"μ={node.mean:.3f} n={node.n} ±{node.uncertainty:.3f} LCB={node.lcb:.3f}"
        if self.questions.get("sample_size"):
            text += f" on {node.questions}/{self.questions['validation']} questions"
            if node.stopped:
                text += " (stopped early)"
        return text

    def questions_line(self) -> str | None:
        """What the question budget bought, None without one."""
        q = self.questions
        if not q.get("sample_size"):
            return None
        return (f"questions: {q['scored']} asked of a budget of {q['budget']} ({q['validation']} validation "
                f"questions, samples of {q['sample_size']}); "
                f"{sum(1 for n in self.nodes if n.stopped)} node(s) stopped early")

    def children(self, node_id: int | None) -> list[NodeView]:
        return [n for n in self.nodes if n.parent == node_id]

    def lineage(self, node_id: int) -> list[NodeView]:
        """The node and its ancestors, root first."""
        chain = [self.node(node_id)]
        while chain[-1].parent is not None:
            chain.append(self.node(chain[-1].parent))
        return chain[::-1]

    @property
    def selected(self) -> NodeView | None:
        return self._by_id.get(self.selected_id) if self.selected_id is not None else None

    def evaluations_of(self, node_id: int) -> list[EvaluationRecord]:
        return [e for e in self.evaluations if e.node_id == node_id]

    # steps and spend ---------------------------------------------------------------------------

    @property
    def last_step(self) -> int | None:
        """The last committed step (0 = the root's first evaluation), None before any."""
        return max((a.step for a in self.actions), default=None)

    @property
    def steps_done(self) -> int:
        """Committed steps that count against `search.steps` (the root's evaluation and the
        final confirmation do not)."""
        return sum(1 for a in self.actions if a.kind in SEARCH_STEP_KINDS)

    @property
    def outcome_counts(self) -> Mapping[Outcome, int]:
        """What the committed steps came to (the root's evaluation included)."""
        return collections.Counter(a.outcome for a in self.actions)

    def spend_totals(self) -> dict[str, float]:
        return {"tokens": sum(r.tokens for r in self.spend), "usd": sum(r.usd for r in self.spend)}

    # the selection -----------------------------------------------------------------------------

    def best(self) -> dict[str, Any] | None:
        """The current selection as the display shows it, None before any evaluation."""
        node = self.selected
        if node is None or node.mean is None:
            return None
        return {"node_id": node.id, "mean": node.mean, "n": node.n, "lcb": node.lcb,
                "uncertainty": node.uncertainty, "selection": strategy_for(self.search).selection,
                "questions": node.questions if self.questions.get("sample_size") else None}

    def final_document(self, stop_reason: str) -> dict[str, Any]:
        """final.json: the strategy's selection (LCB for `tree`, best mean otherwise), with every
        evaluated node's μ, n and LCB."""
        strategy = strategy_for(self.search)
        base = {"stop_reason": stop_reason, "metric": self.metric, "steps_done": self.steps_done,
                "steps": self.search.steps, "strategy": strategy.name, "selection": strategy.selection,
                "questions": dict(self.questions)}
        evaluated = [n for n in self.nodes if n.evaluated]
        if not evaluated:
            return {**base, "node_id": None, "candidates": []}
        stats = Tree.from_rundir(self.run).stats()
        chosen = self.node(strategy.select_final(stats).id)
        source = "tasks" if policy.uses_task_uncertainty(stats, self.search) else "repeats"
        return {
            **base, "node_id": chosen.id, "mean": chosen.mean, "n": chosen.n, "lcb": chosen.lcb,
            "uncertainty_source": source, "uncertainty": chosen.uncertainty,
            "lead": _paired_lead(stats, chosen.id) if source == "tasks" else None,
            "confirmation": confirmation_document(stats, self.search) if source == "tasks" else None,
            "total_evaluations": self.total_evaluations, "program_path": chosen.program_path,
            "summary": chosen.summary,
            # the number each candidate was selected by (policy.selection_bound)
            "candidates": [{"node_id": n.id, "mean": n.mean, "n": n.n, "lcb": n.lcb,
                            "uncertainty": n.uncertainty, "questions": n.questions,
                            **({"stopped": n.stopped} if n.stopped else {}),
                            **({"outside_bounds": n.outside} if n.outside else {}),
                            "cost": dict(n.cost),
                            "bound": policy.selection_bound(stats.node(n.id), stats, self.search)}
                           for n in evaluated],
            "bounds": bounds_document(stats, self.search, chosen.id),
            "cost_front": cost_front(stats, self.search.z).to_dict(),
        }


def bounds_document(stats: policy.TreeStats, search: SearchConfig, chosen: int) -> dict[str, Any] | None:
    """final.json's "bounds": the cost bounds the selection was held to, whether the chosen node
    and the best hand design fit them, and, when no hand design does, a sentence saying so; None
    without bounds."""
    bounds = CostBounds.from_search(search)
    if not bounds.active:
        return None
    designs = [v for v in stats.nodes if not v.failed and v.n > 0 and policy.is_hand_design(v)]
    bar = policy.reference(stats) if designs else None
    pick = stats.node(chosen)
    note = ""
    if bar is not None and bar.outside:
        note = (f"no hand design fits the bounds ({bounds.describe()}): the best of them, #{bar.id}, is "
                f"outside ({bar.outside})")
        note += ("; the selection is over the bounds too" if pick.outside
                 else f"; #{pick.id}, within the bounds, is chosen over it")
    elif pick.outside:
        note = f"no evaluated node fits the bounds ({bounds.describe()}); #{pick.id} is outside ({pick.outside})"
    return {**bounds.to_dict(), "describe": bounds.describe(), "chosen_fits": not pick.outside,
            "bar": bar.id if bar is not None else None, "bar_fits": bar is not None and not bar.outside,
            "outside": {str(v.id): v.outside for v in stats.nodes if v.outside}, "note": note}


def bounds_lines(bounds: Mapping[str, Any] | None) -> list[str]:
    """final.json's "bounds" in words, as `automemo tree` prints them."""
    if not bounds:
        return []
    lines = [f"cost bounds: {bounds['describe']}; the selection "
             + ("fits them" if bounds["chosen_fits"] else "is OUTSIDE them")
             + (f"; bar #{bounds['bar']} (the best hand design within them)" if bounds.get("bar_fits") else "")]
    if bounds.get("note"):
        lines.append(f"  {bounds['note']}")
    for node, why in sorted((bounds.get("outside") or {}).items(), key=lambda x: int(x[0])):
        lines.append(f"  #{node} outside: {why}")
    return lines


def _ranking_metric(config: Mapping[str, Any]) -> str | None:
    """The metric the run ranks programs by, from its recorded benchmark and options."""
    bench = config.get("benchmark")
    if not isinstance(bench, Mapping) or not bench.get("name"):
        return None
    try:
        return ranking_metric(bench["name"], bench.get("options") or {})
    except (ValueError, ImportError, ConfigError):  # a plugin gone since, or options it no longer takes
        return None


def search_steps_done(run: RunDir) -> int:
    """Committed steps of `run` that count against `search.steps` (`RunView.steps_done`)."""
    return sum(1 for a in run.actions() if a["kind"] in SEARCH_STEP_KINDS)


def _questions(tree: Tree, search: SearchConfig) -> dict[str, Any]:
    plan = tree.plan
    return {"budget": search.question_budget or None, "scored": tree.questions_spent,
            "validation": plan.total if plan is not None else _validation_count(tree),
            "sample_size": plan.sample_size if plan is not None else None}


def _validation_count(tree: Tree) -> int | None:
    """Without a plan, every evaluation asked every question: the most any node was asked."""
    return max((len(n.asked) for n in tree.nodes()), default=0) or None


def confirmation_document(stats: policy.TreeStats, search: SearchConfig) -> dict[str, Any] | None:
    """`policy.confirm_final` as plain data (final.json's "confirmation"); None for a strategy
    that does not select by the tree's bound."""
    if strategy_for(search).selection != "lcb":
        return None
    c = halving.final_confirmation(stats, search)
    return {"rule": c.rule, "bar": c.bar, "bar_mean": c.bar_mean, "tasks": c.tasks, "z": c.z,
            "chosen": c.chosen, "kept_hand_design": c.chosen == c.bar,
            "candidates": [{"node_id": x.node_id, "mean": x.mean, "difference": x.difference, "se": x.se,
                            "tasks": x.tasks, "bound": x.bound, "complete": x.complete, "clears": x.clears,
                            **({"dropped_in": x.dropped_in} if x.dropped_in is not None else {}),
                            **({"guards": [{"metric": g.metric, "difference": g.difference, "se": g.se,
                                            "tasks": g.tasks, "holds": g.holds} for g in x.guards]}
                               if x.guards else {})}
                           for x in c.candidates],
            **({"race": [{"questions": r.prefix, "means": {str(a): m for a, m in r.means},
                          "kept": list(r.kept), "dropped": list(r.dropped)} for r in c.rounds]}
               if c.raced else {})}


def confirmation_lines(confirmation: Mapping[str, Any]) -> list[str]:
    """The confirmation in plain words, as `automemo tree` and `show` print it."""
    c = confirmation
    lines = [f"final confirmation on {c['tasks']} search questions against the best hand design "
             f"#{c['bar']} (μ {c['bar_mean']:.3f}):" if "race" not in c else
             f"final confirmation, a race against the best hand design #{c['bar']} (μ {c['bar_mean']:.3f}, "
             f"asked {c['tasks']} questions):"]
    for i, r in enumerate(c.get("race") or ()):
        # best first (final.json is written with sorted keys, so the order is not kept there)
        ranked = ", ".join(f"#{a} {m:.3f}" for a, m in sorted(r["means"].items(), key=lambda x: -x[1]))
        lines.append(f"  race round {i + 1} on the first {r['questions']} questions: {ranked}; "
                     f"dropped {', '.join(f'#{d}' for d in r['dropped'])}")
    for x in c["candidates"]:
        if "race" in c:
            verdict = ("clears" if x["clears"] else f"dropped in round {x['dropped_in'] + 1}"
                       if x.get("dropped_in") is not None else "does not clear")
        else:
            verdict = "clears" if x["clears"] else ("not scored on every question" if not x["complete"] else "does not clear")
        guards = x.get("guards") or ()
        if x["clears"] and not all(g["holds"] for g in guards):
            verdict = "clears, but loses on a guard metric"
        lines.append(f"  #{x['node_id']}: μ {x['mean']:.3f}, paired d {x['difference']:+.3f} ± {x['se']:.3f} "
                     f"(SE), bound {x['bound']:.3f} vs {c['bar_mean']:.3f}: {verdict}")
        for g in guards:
            lines.append(f"      guard {g['metric']}: paired d {g['difference']:+.3f} ± {g['se']:.3f} on {g['tasks']} "
                         f"questions: {'holds' if g['holds'] else 'loses by more than one paired SE'}")
    if not c["candidates"]:
        lines.append("  no node other than the hand designs was evaluated")
    lines.append(f"  chosen: #{c['chosen']}" + (" (the hand design is kept)" if c["kept_hand_design"] else ""))
    lines.append(f"  rule: {c['rule']}")
    return lines


def _paired_lead(stats: policy.TreeStats, chosen: int | None) -> dict[str, Any] | None:
    """The chosen node paired with the bar it was held to (the best hand design,
    `policy.reference`) on their shared tasks, or, when it is the bar, with the best other node
    by μ: is the lead bigger than its standard error? None with a single evaluated node."""
    nodes = {v.id: v for v in stats.nodes if not v.failed and v.n > 0}
    if chosen not in nodes or len(nodes) < 2:
        return None
    bar = policy.reference(stats)
    rival = bar if bar.id != chosen else max((v for v in nodes.values() if v.id != chosen),
                                            key=lambda v: (v.mean, -v.id))
    try:
        diff = policy.paired(nodes[chosen], rival)
    except ValueError:  # no shared task (task scores not recorded)
        return None
    return {"over": rival.id, "difference": diff.difference, "se": diff.se, "tasks": diff.tasks,
            "bar": bar.id}


def _spend(run: RunDir, config: Mapping[str, Any]) -> tuple[RoleSpend, ...]:
    """Per role, configured or seen in the ledger: the ledger's own totals."""
    ledger = Ledger(run.db_path)
    try:
        totals = ledger.totals("role")
    finally:
        ledger.close()
    llm = config.get("llm") or {}
    out = []
    for role in list(ROLES) + sorted(set(totals) - set(ROLES)):
        t = totals.get(role, {})
        role_config = llm.get(role) if isinstance(llm.get(role), Mapping) else {}
        out.append(RoleSpend(
            role=role, model=role_config.get("model", "") or "", calls=int(t.get("calls") or 0),
            failed=int(t.get("failed") or 0), prompt_tokens=int(t.get("prompt_tokens") or 0),
            completion_tokens=int(t.get("completion_tokens") or 0), usd=float(t.get("usd") or 0.0),
        ))
    return tuple(out)
