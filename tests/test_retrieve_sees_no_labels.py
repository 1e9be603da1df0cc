"""What `retrieve` may see: on every registered benchmark a probe program records the metadata
keys of each retrieve task it is asked, and only the contract's allow-list and the benchmark's
declared question-time keys reach it, never a label (category, question type, answer, clue,
gold id, difficulty). The conversation benchmarks run the whole evaluation in
retrieval mode; the agent benchmarks hand the harness's retrieve tasks to the probe in a sandbox
(their episodes need an agent, which the keys do not depend on)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from automemo.benchmarks import REGISTRY, Task, load
from automemo.benchmarks.miniwob_page import PageState
from automemo.contract import BUDGET_KEY, RETRIEVE_METADATA_KEYS, MemoryPayload, PartialRecorder
from automemo.episode_store import EpisodeStore
from automemo.evaluation import EvaluationConfig, Evaluator
from automemo.sandbox import get_sandbox
from sandboxtools import METADATA_PROBE as PROBE
from conversation_data import write_locomo, write_memgallery, write_user_logs
from longmemeval_data import write_longmemeval

FIXTURES = Path(__file__).parent / "fixtures" / "benchmarks"


SMALL = {
    "minigallery": {"users_per_split": 1, "sessions_per_user": 3, "rounds_per_session": 16},
    "webvoyager": {"path": str(FIXTURES / "webvoyager_sample.jsonl")},
    "mind2web": {"path": str(FIXTURES / "mind2web_sample.json")},
    "mind2web_offline": {"path": str(FIXTURES / "mind2web_offline_sample.json")},
    "agentvista": {"path": str(FIXTURES / "agentvista_sample.json")},
    "mmsearch_plus": {"path": str(FIXTURES / "mmsearch_plus_sample.jsonl")},
    "miniwob": {"tasks": ["click-button", "enter-text"], "train_episodes_per_task": 2, "test_episodes_per_task": 1},
}
EVALUATED = ("minigallery", "memgallery", "locomo", "longmemeval", "conversations")  # retrieval mode: no agent
# What the benchmarks' tasks hold as annotations: none of it may be declared known at question time.
LABELS = frozenset({"category", "qtype", "question_type", "type", "answer", "answers", "gold", "gold_ids",
                    "solution", "clue", "clues", "evidence", "evidence_ids", "level", "label", "labels",
                    "reference", "domain"})


class _Page:
    """MiniWoB's first page without a browser: the retrieve task is built from it as from a real one."""

    def observe(self) -> PageState:
        return PageState("Click the OK button.", "[1] button OK", b"\x89PNG\r\n\x1a\n", frozenset({1}))


@pytest.fixture(scope="module")
def options(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("releases")
    return {**SMALL, "memgallery": {"path": str(write_memgallery(root / "mem-gallery"))},
            "locomo": {"path": str(write_locomo(root / "locomo10.json"))},
            "longmemeval": {"path": str(write_longmemeval(root / "longmemeval_s.json"))},
            "conversations": {k: str(v) for k, v in write_user_logs(root / "own-logs").items()}}


def _probe_partials(evaluator: Evaluator, partials: list[PartialRecorder], store: EpisodeStore) -> list[list[str]]:
    session = get_sandbox("unsafe").open(PROBE, store_root=store.root)
    try:
        return [MemoryPayload.from_dict(session.call("retrieve", {"task": p.to_dict()}, 10.0)).metadata["seen"]
                for p in partials]
    finally:
        session.close()


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_no_label_reaches_retrieve(name, options, tmp_path):
    bench = load(name, options[name])
    if name == "miniwob":
        bench._page = lambda task: _Page()  # noqa: SLF001 - the page is the one browser-bound part
    store = EpisodeStore(tmp_path / "store")
    evaluator = Evaluator(bench, get_sandbox("unsafe"), store, config=EvaluationConfig(quiet=True))
    allowed = RETRIEVE_METADATA_KEYS | bench.question_time_keys
    try:
        seen: list[list[str]] = []
        for split in ("train", "test"):
            if name in EVALUATED:
                result = evaluator.evaluate(PROBE, split=split)
                seen += [t.payload.metadata["seen"] for t in result.tasks]
            else:
                seen += _probe_partials(evaluator, list(evaluator.partials(split).values()), store)
            # The benchmark's own retrieve tasks hold nothing the harness would drop (a built-in
            # benchmark declares every key it passes), not only what the harness passes on.
            tasks: tuple[Task, ...] = evaluator.split(split).retrieve
            assert all(set(bench.partial(t, store).metadata) <= allowed for t in tasks)
    finally:
        evaluator.close()
        close = getattr(bench, "close", None)
        if close:
            close()
    assert seen, f"{name}: the probe was asked nothing"
    assert not LABELS & bench.question_time_keys, f"{name} declares a label known at question time"
    leaked = {k for keys in seen for k in keys} - allowed
    assert not leaked, f"{name}: retrieve saw keys outside the allow-list: {sorted(leaked)}"
    assert all(BUDGET_KEY in keys for keys in seen)
    if name in EVALUATED:
        assert all("user" in keys for keys in seen)  # the scope stays: it is known at question time


def test_the_harness_drops_the_labels_a_users_own_benchmark_puts_in_its_retrieve_tasks(options, tmp_path):
    """A plug-in benchmark that leaks its labels into `partial` still cannot hand them to `retrieve`."""
    bench = load("memgallery", options["memgallery"])
    leaky = bench.partial
    bench.partial = lambda task, store: PartialRecorder(**{  # type: ignore[method-assign]
        **leaky(task, store).to_dict(), "metadata": {"user": "u", "category": task.category, "answer": "x"}})
    evaluator = Evaluator(bench, get_sandbox("unsafe"), EpisodeStore(tmp_path / "s"), config=EvaluationConfig(quiet=True))
    try:
        result = evaluator.evaluate(PROBE, split="test")
    finally:
        evaluator.close()
    assert {json.dumps(t.payload.metadata["seen"]) for t in result.tasks} == {json.dumps([BUDGET_KEY, "user"])}


# The benchmarks whose fixtures hold two or more train conversations, so that a router is fitted
# and its predictions are what the test checks; with the options that make them so (the shipped
# sample: five train scenarios; LongMemEval: every question is a conversation of its own).
ROUTED = {"memgallery", "minigallery", "longmemeval"}
ROUTED_OPTIONS = {"memgallery": {"path": "@mem-gallery-sample"},
                  "minigallery": {"users_per_split": 2, "sessions_per_user": 3, "rounds_per_session": 16}}


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_planted_label_that_a_leak_would_score_perfectly_routes_no_question_right(name, options, tmp_path):
    """Each train conversation's questions get a label of their own, seen nowhere else. A router
    that saw a question's conversation (a plain fit, or any fallback to it) routes most of them to
    that label by the conversation's own words; the run's router, fitted as the search fits it and
    asked what `retrieve` is asked, never can (a held-out fit has never seen the label). Where a
    benchmark's tasks name no conversation, nothing is routed at all."""
    from automemo.host_fitting import train_questions
    from automemo.meta import fit_question_router
    from automemo.toolkit.memolib import QuestionRouter, scope_of

    bench = load(name, ROUTED_OPTIONS.get(name, options[name]))
    evaluator = Evaluator(bench, get_sandbox("unsafe"), EpisodeStore(tmp_path / "store"), config=EvaluationConfig(quiet=True))
    try:
        rows = train_questions(evaluator)
        partials = list(evaluator.partials("train").values())
    finally:
        evaluator.close()
        close = getattr(bench, "close", None)
        if close:
            close()
    assert len(partials) == len(rows)
    if not rows:  # no train question: the generator has nothing to fit a router on
        from automemo.meta.offline.router_fitting import train_questions_of
        assert train_questions_of(rows) is None
        return
    questions, _, scopes, _ = (list(column) for column in zip(*rows))
    planted = [f"planted-{scope}" for scope in scopes]
    if not all(scopes) or len(set(scopes)) < 2:
        with pytest.raises(ValueError):
            fit_question_router(questions, planted, scopes)
        return
    assert name in ROUTED, f"{name}: add it to ROUTED, the benchmarks whose routing this test exercises"
    router = QuestionRouter.from_params(fit_question_router(questions, planted, scopes))
    routed = [router.predict(p.instruction, scope_of(p)) == f"planted-{scope_of(p)}" for p in partials]
    assert not any(routed), f"{name}: {sum(routed)} of {len(routed)} train questions routed by their own label"
    leak = QuestionRouter.fit(questions, planted)  # what a fallback would answer with
    assert sum(leak.predict(q) == label for q, label in zip(questions, planted)) > len(questions) / 2
