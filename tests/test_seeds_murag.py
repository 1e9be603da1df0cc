"""MuRAG seed: joint text+image MIPS over rounds and images, raw images kept, evidence cited."""

from automemo.episode_store import EpisodeStore

from seedtools import conversation, load_seed, question, solid_image, toolkit


def _memory(tmp_path, **overrides):
    store = EpisodeStore(tmp_path / "store")
    red = solid_image(store, (220, 20, 20), "a red sports car parked by the lake")
    blue = solid_image(store, (20, 20, 220), "a blue ceramic teapot on a shelf")
    memo = load_seed("murag", **overrides).Memo(toolkit(tmp_path, store.root))
    memo.update(conversation("s1", [
        ("D1:1", "I just adopted a beagle puppy named Biscuit."),
        ("D1:2", "Look at my new car!"),
        ("D1:3", "My favourite food is ramen with extra garlic."),
    ], images={1: ("D1:IMG_001", red)}))
    memo.update(conversation("s2", [
        ("D2:1", "My grandmother gave me this teapot."),
        ("D2:2", "We went hiking in the Alps last summer."),
    ], images={0: ("D2:IMG_001", blue)}))
    return memo, store, red, blue


def test_text_question_cites_the_matching_round_first(tmp_path):
    memo, *_ = _memory(tmp_path)
    payload = memo.retrieve(question("What is the name of my dog?"))
    assert payload.metadata["evidence"][0] == "D1:1"
    assert "Biscuit" in payload.text


def test_image_question_finds_the_image_unit_and_attaches_raw_pixels(tmp_path):
    memo, store, red, blue = _memory(tmp_path)
    # the question's image is a slightly different blue: only the visual half can match it
    probe = solid_image(store, (30, 30, 200))
    payload = memo.retrieve(question("Which picture did I show earlier that looks like this?",
                                     images=[probe]))
    assert payload.metadata["evidence"][0] in ("D2:IMG_001", "D2:1")
    assert payload.images[0].sha256 == blue.sha256
    assert "D2:IMG_001" in payload.metadata["evidence"][:2]


def test_image_weight_zero_makes_the_visual_match_irrelevant(tmp_path):
    memo, store, red, blue = _memory(tmp_path, IMAGE_WEIGHT=0.0)
    probe = solid_image(store, (30, 30, 200))
    with_image = memo.retrieve(question("Which picture looks like this?", images=[probe]))
    without = memo.retrieve(question("Which picture looks like this?"))
    assert with_image.metadata["evidence"] == without.metadata["evidence"]


def test_budget_caps_text_images_and_evidence(tmp_path):
    memo, *_ = _memory(tmp_path)
    payload = memo.retrieve(question("car teapot dog ramen hiking",
                                     budget={"max_chars": 300, "max_images": 1}))
    assert payload.size_chars() <= 300
    assert len(payload.images) <= 1
    assert len(payload.metadata["evidence"]) <= 10


def test_weak_match_adds_the_not_mentioned_guard(tmp_path):
    memo, *_ = _memory(tmp_path, ABSTAIN_BELOW=0.9)
    assert "Not mentioned" in memo.retrieve(question("What is my passport number?")).text
    memo, *_ = _memory(tmp_path / "b", ABSTAIN_BELOW=0.0)
    assert "Not mentioned" not in memo.retrieve(question("What is my passport number?")).text


def test_top_k_limits_units(tmp_path):
    memo, *_ = _memory(tmp_path, TOP_K=1)
    payload = memo.retrieve(question("What food do I like?"))
    assert payload.metadata["evidence"] == ["D1:3"]


def test_a_users_question_searches_only_that_users_memory(tmp_path):
    memo = load_seed("murag").Memo(toolkit(tmp_path))
    memo.update(conversation("a", [("A:R1", "My dog is called Rex.")], user="A"))
    memo.update(conversation("b", [("B:R1", "My dog is called Bolt.")], user="B"))
    assert memo.retrieve(question("What is my dog called?", user="A")).metadata["evidence"] == ["A:R1"]
    assert memo.retrieve(question("What is my dog called?", user="B")).metadata["evidence"] == ["B:R1"]
    assert len(memo.retrieve(question("What is my dog called?")).metadata["evidence"]) == 2
