"""The multimodal web baselines: m2 (insight bank, top-5, successes only, value generalisation)
and xskill (merged skills, visually grounded experiences)."""

from __future__ import annotations

from dataclasses import replace

from automemo.episode_store import EpisodeStore

from seedtools import load_seed, solid_image, toolkit, web_episode, web_task

SHOP = "https://shop.example.com/"


def test_m2_mines_tagged_generalised_insights_from_successes_only(tmp_path):
    memo = load_seed("m2").Memo(toolkit(tmp_path))
    memo.update(web_episode("ok", "Buy a red umbrella", ['type "red umbrella" in search', "click result 3"], url=SHOP))
    memo.update(web_episode("bad", "Buy a red umbrella", ["click banner"], url=SHOP, reward=0.0))
    text = memo.retrieve(web_task("Buy a blue umbrella", SHOP)).text
    assert "Defensive Hints" in text
    assert "[Search Strategy]" in text and "<target item>" in text and "<number>" in text
    assert "banner" not in text  # failures are ignored, as in M2
    assert "Plan sketch" in text


def test_m2_returns_at_most_top_i_entries(tmp_path):
    memo = load_seed("m2", TOP_I=2, MAX_HINTS=40).Memo(toolkit(tmp_path))
    for i in range(5):
        memo.update(web_episode(f"e{i}", f"Buy item number {i} in the shop", [f"click unique_action_{i}"], url=SHOP))
    text = memo.retrieve(web_task("Buy an item in the shop", SHOP)).text
    assert len([line for line in text.splitlines() if line.startswith("- click unique_action")]) == 2


def test_m2_uses_the_memo_llm_as_abstractor(tmp_path, fake_llm):
    from automemo.llm import LLMClient, LLMConfig, RoleConfig

    fake_llm.script(["[Navigation Efficiency] Open the category menu before searching.\nnot a rule"])
    client = LLMClient(LLMConfig(memo=RoleConfig(model="fake", base_url=fake_llm.base_url, api_key_env="PATH")))
    memo = load_seed("m2").Memo(toolkit(tmp_path, llm=client))
    memo.update(web_episode("ok", "Buy a lamp", ["click lamps"], url=SHOP))
    text = memo.retrieve(web_task("Buy a lamp", SHOP)).text
    assert "Open the category menu before searching." in text and "not a rule" not in text
    assert "Search Strategy" in str(fake_llm.requests[0]["messages"])  # the abstractor prompt was sent


def test_xskill_merges_similar_successes_into_one_skill(tmp_path):
    memo = load_seed("xskill", SKILL_MERGE=0.85).Memo(toolkit(tmp_path))
    memo.update(web_episode("a", "Buy a red umbrella in the shop", ['type "x"', "click a", "click b", "click c"], url=SHOP))
    memo.update(web_episode("b", "Buy a red umbrella in the shop!", ['type "x"', "click buy"], url=SHOP))
    memo.update(web_episode("c", "Plan a cycling route to Potsdam", ["click directions"], url=SHOP))
    assert len(memo.skills) == 2
    merged = next(s for s in memo.skills if "umbrella" in s["task"])
    assert merged["support"] == 2 and merged["workflow"] == ["type <target item>", "click buy"]


def test_xskill_visual_context_picks_the_experience_with_the_matching_screenshot(tmp_path):
    store = EpisodeStore(tmp_path / "store")
    red, blue = solid_image(store, (230, 10, 10)), solid_image(store, (10, 10, 230))

    def build(weight, screen):
        memo = load_seed("xskill", VISUAL_WEIGHT=weight, EXPERIENCE_K=1).Memo(
            toolkit(tmp_path / f"{weight}{screen.sha256[:4]}", store.root))
        memo.update(web_episode("r", "Open the settings", ["click gear"], url=SHOP, screenshots={0: red}))
        memo.update(web_episode("b", "Open the settings", ["click gear"], url=SHOP, screenshots={0: blue}))
        return memo.retrieve(replace(web_task("Open the settings", SHOP), initial_screenshot=screen))

    assert build(1.0, blue).metadata["evidence"] == ["b#0"]
    assert build(1.0, red).metadata["evidence"] == ["r#0"]
    assert build(1.0, blue).images[0].sha256 == blue.sha256
    # without visual weight the screen cannot decide: identical text, same answer either way
    assert build(0.0, blue).metadata["evidence"] == build(0.0, red).metadata["evidence"]


def test_xskill_keeps_failed_error_steps_as_avoid_experiences(tmp_path):
    memo = load_seed("xskill").Memo(toolkit(tmp_path))
    memo.update(web_episode("f", "Log in", ["click login"], url=SHOP, reward=0.0, errors={0: "captcha"}))
    assert "AVOID:" in memo.retrieve(web_task("Log in", SHOP)).text
    memo = load_seed("xskill", KEEP_FAILED_STEPS=False).Memo(toolkit(tmp_path / "b"))
    memo.update(web_episode("f", "Log in", ["click login"], url=SHOP, reward=0.0, errors={0: "captcha"}))
    assert "AVOID:" not in memo.retrieve(web_task("Log in", SHOP)).text
