"""Mini-Gallery: determinism, well-formed clues, the nine question types, user-disjoint splits,
and the retrieval / QA metrics computed by hand."""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from automemo.benchmarks import load
from automemo.interaction import answers, evidence
from automemo.benchmarks.minigallery.model import QUESTION_TYPES
from automemo.configtools import ConfigError
from automemo.contract import MemoryPayload
from automemo.episode_store import EpisodeStore


def _digest(bench) -> str:
    h = hashlib.sha256()
    for split in ("train", "test"):
        data = bench.data(split)
        h.update(json.dumps(data.to_dict(), sort_keys=True).encode())
        for user in data.users:
            for session in user.sessions:
                for r in session.rounds:
                    if r.image:
                        h.update(bench.image_png(r.image.spec))
        for q in data.questions:
            if q.image:
                h.update(bench.image_png(q.image))
    return h.hexdigest()


def test_same_seed_gives_byte_identical_data_and_another_seed_differs():
    assert _digest(load("minigallery", {"seed": 7})) == _digest(load("minigallery", {"seed": 7}))
    assert _digest(load("minigallery", {"seed": 7})) != _digest(load("minigallery", {"seed": 8}))


def test_stored_episodes_are_byte_identical_across_instances(tmp_path):
    outputs = []
    for i in range(2):
        bench, store = load("minigallery", {"seed": 3}), EpisodeStore(tmp_path / str(i))
        split = bench.split("train")
        eps = [bench.run_episode(t, None, None, store).to_json() for t in split.update]
        parts = [bench.partial(t, store).to_json() for t in split.retrieve]
        outputs.append((eps, parts))
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("split", ["train", "test"])
def test_every_clue_points_at_an_existing_round_or_image_of_the_asking_user(split):
    data = load("minigallery").data(split)
    ids = {u.user_id: u.ids() for u in data.users}
    for q in data.questions:
        if q.qtype == "AR":
            assert q.clues == () and q.answer == "Not mentioned"
        else:
            assert q.clues, q
            assert set(q.clues) <= ids[q.user_id], (q.question_id, set(q.clues) - ids[q.user_id])


@pytest.mark.parametrize("split", ["train", "test"])
def test_all_nine_question_types_are_present(split):
    data = load("minigallery").data(split)
    assert {q.qtype for q in data.questions} == set(QUESTION_TYPES)
    assert 60 <= len(data.questions) <= 100


def test_train_and_test_users_are_different_people():
    bench = load("minigallery")
    train, test = bench.data("train"), bench.data("test")
    assert not {u.user_id for u in train.users} & {u.user_id for u in test.users}
    assert not {u.name for u in train.users} & {u.name for u in test.users}
    train_ids = {t.task_id for t in bench.split("train").update + bench.split("train").retrieve}
    test_ids = {t.task_id for t in bench.split("test").update + bench.split("test").retrieve}
    assert not train_ids & test_ids


def test_more_users_than_the_generator_has_names_is_a_clear_error():
    assert len({u.name for u in load("minigallery", {"users_per_split": 8}).data("test").users}) == 8
    for bad in (0, 9):
        with pytest.raises(ValueError, match=r"users_per_split must be within 1\.\.8 .* got " + str(bad)):
            load("minigallery", {"users_per_split": bad})


def _images_by_id(log):
    return {r.image.image_id: r.image for s in log.sessions for r in s.rounds if r.image}


def test_visual_answers_live_in_the_pixels_of_the_clue_images():
    data = load("minigallery", {"seed": 1}).data("train")
    users = {u.user_id: u for u in data.users}
    for q in data.questions:
        images = _images_by_id(users[q.user_id])
        if q.qtype == "VS":
            wanted = [images[c].spec for c in q.clues]
            assert q.answer == ", ".join(sorted(q.clues))
            # The target images are exactly the user's images of that kind and colour.
            same = sorted(i for i, img in images.items()
                          if (img.spec.kind, img.spec.colour) == (wanted[0].kind, wanted[0].colour))
            assert same == sorted(q.clues)
        elif q.qtype == "TTL":
            assert q.image is not None and len(q.clues) == 3
            assert {(images[c].spec.kind, images[c].spec.colour) for c in q.clues} == {(q.image.kind, q.image.colour)}
        elif q.qtype == "VR":
            spec = images[next(c for c in q.clues if ":IMG" in c)].spec
            assert q.answer in (str(spec.count), spec.colour, spec.pattern)


def test_session_episode_has_one_step_per_round_with_aligned_ids_and_stored_images(tmp_path):
    bench, store = load("minigallery"), EpisodeStore(tmp_path)
    task = bench.split("train").update[0]
    episode = bench.run_episode(task, None, None, store)
    user, session = bench._session(task)
    assert episode.metadata["conversation"] is True and episode.reward == 1.0
    assert len(episode.steps) == len(session.rounds) == len(episode.metadata["rounds"])
    for step, r, meta in zip(episode.steps, session.rounds, episode.metadata["rounds"]):
        assert meta["round_id"] == r.round_id and step.observation == f"{r.speaker}: {r.text}"
        if r.image:
            assert meta["image_id"] == r.image.image_id
            assert store.image_bytes(step.screenshot) == bench.image_png(r.image.spec)
            assert step.screenshot.caption == r.image.caption
        else:
            assert step.screenshot is None and meta["image_id"] is None


def test_questions_with_a_picture_carry_it_as_a_task_image(tmp_path):
    bench, store = load("minigallery"), EpisodeStore(tmp_path)
    for task in bench.split("train").retrieve:
        partial = bench.partial(task, store)
        assert "qtype" not in partial.metadata and partial.metadata["user"] == task.data["user"]
        has_image = bench._question(task).image is not None
        assert len(partial.task_images) == (1 if has_image else 0)
        if task.category == "TTL":
            assert has_image


def test_recall_and_ndcg_by_hand():
    assert evidence.recall_at_k(["a", "x", "b"], ["a", "b"], 10) == 1.0
    assert evidence.ndcg_at_k(["a", "x", "b"], ["a", "b"], 10) == pytest.approx(
        (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    )
    assert evidence.recall_at_k(["x", "a"], ["a", "b", "c"], 10) == pytest.approx(1 / 3)
    assert evidence.ndcg_at_k(["x", "a"], ["a", "b", "c"], 10) == pytest.approx(
        (1 / math.log2(3)) / (1 + 1 / math.log2(3) + 1 / math.log2(4))
    )
    # Only the first k count.
    assert evidence.recall_at_k([f"x{i}" for i in range(10)] + ["a"], ["a"], 10) == 0.0


def test_cited_evidence_dedupes_cuts_at_k_and_reports_bad_items():
    payload = MemoryPayload(metadata={"evidence": ["a", "a", 3, "b"] + [f"x{i}" for i in range(12)]})
    ids, problems = evidence.cited_evidence(payload, 10)
    assert ids[:2] == ["a", "b"] and len(ids) == 10
    assert any("non-string" in p for p in problems) and any("only the first 10" in p for p in problems)
    assert evidence.cited_evidence(MemoryPayload(), 10) == ([], ['payload.metadata has no "evidence" list (ranked round/image ids)'])


def _mean_retrieval(bench, store, payload_for):
    scores = []
    for task in bench.split("train").retrieve:
        payload = payload_for(task)
        episode = bench.run_episode(task, None, payload, store)
        scores.append((task, bench.score(task, episode, payload)))
    return scores


def test_oracle_payload_scores_one_empty_scores_zero_and_ar_is_not_counted(tmp_path):
    bench, store = load("minigallery"), EpisodeStore(tmp_path)
    oracle = _mean_retrieval(bench, store, lambda t: MemoryPayload(metadata={"evidence": list(t.data["clues"])}))
    empty = _mean_retrieval(bench, store, lambda t: MemoryPayload())
    for results, expected in ((oracle, 1.0), (empty, 0.0)):
        counted = [s for t, s in results if s.counted]
        assert {t.category for t, s in results if not s.counted} == {"AR"}
        assert all(s.value == expected and s.metrics["ndcg@10"] == expected for s in counted)


def test_a_payload_citing_the_wrong_user_scores_less_than_oracle(tmp_path):
    bench, store = load("minigallery"), EpisodeStore(tmp_path)
    tasks = [t for t in bench.split("train").retrieve if t.category == "FR"]
    other = {t.task_id: next(o for o in tasks if o.data["user"] != t.data["user"]) for t in tasks}
    results = _mean_retrieval(
        bench, store, lambda t: MemoryPayload(metadata={"evidence": list(other[t.task_id].data["clues"]) if t in tasks else []})
    )
    assert all(s.value == 0.0 for t, s in results if t in tasks)


def test_qa_metrics_normalise_before_comparing():
    assert answers.exact_match("The Pharmacist.", "pharmacist") == 1.0
    assert answers.token_f1("pharmacist and baker", "baker and pharmacist") == 1.0
    assert answers.token_f1("a florist", "florist and pilot") == pytest.approx(2 * 1 * (1 / 3) / (1 + 1 / 3))
    assert answers.token_f1("", "yes") == 0.0


def test_bad_options_fail_fast_with_the_option_named():
    with pytest.raises(ConfigError, match="sed"):
        load("minigallery", {"sed": 1})
    with pytest.raises(ConfigError, match="mode"):
        load("minigallery", {"mode": "vibes"})
    with pytest.raises(ValueError, match="rounds_per_session"):
        load("minigallery", {"rounds_per_session": 4}).data("train")
    with pytest.raises(ValueError, match="known benchmarks: .*minigallery"):
        load("nope")


def test_session_steps_carry_round_refs_and_a_round_ref_retrieves_its_picture(tmp_path):
    """Mini-Gallery fills `Step.ref` with round ids; an image clue (VS, TTL) is retrieved by its
    image id or by the ref of the round that showed it, and each clue counts once."""
    bench = load("minigallery", {"users_per_split": 1, "sessions_per_user": 3})
    store = EpisodeStore(tmp_path)
    split = bench.split("test")
    episode = bench.run_episode(split.update[0], None, None, store)
    rounds = episode.metadata["rounds"]
    assert [s.ref for s in episode.steps] == [r["round_id"] for r in rounds]
    with_image = next(i for i, r in enumerate(rounds) if r["image_id"])
    assert episode.steps[with_image].metadata["image_ids"] == [rounds[with_image]["image_id"]]
    round_of = {r.image.image_id: r.round_id for u in bench.data("test").users for s in u.sessions
                for r in s.rounds if r.image}
    vs = next(t for t in split.retrieve if t.category == "VS" and len(t.data["clues"]) == 1)
    clue = vs.data["clues"][0]
    for cited in ([clue], [round_of[clue]], [round_of[clue], clue]):
        result = bench.score(vs, None, MemoryPayload(metadata={"evidence": cited}))
        assert (result.value, result.metrics["ndcg@10"]) == (1.0, 1.0), cited
    vr = next(t for t in split.retrieve if t.category == "VR")  # clues: a round and its picture
    assert bench.score(vr, None, MemoryPayload(metadata={"evidence": vr.data["clues"][:1]})).value == 0.5
    assert evidence.matched_clues(["a", "b"], ["x"], 10, {"a": ["x"], "b": ["x"]}) == ["x", None]
