"""The text-only baselines: trajectory_retrieval (whole records), reasoning_bank (distilled items
from successes and failures) and g_memory (insight / query / interaction graph)."""

from __future__ import annotations

from seedtools import conversation, load_seed, question, toolkit, web_episode, web_task

SHOP = "https://shop.example.com/"
MAPS = "https://maps.example.org/"


def _web_memory(tmp_path, seed, **overrides):
    memo = load_seed(seed, **overrides).Memo(toolkit(tmp_path))
    memo.update(web_episode("buy-1", "Buy a red umbrella in the shop",
                            ['type "red umbrella" into search', "click first result", "click add to cart"], url=SHOP))
    memo.update(web_episode("route-1", "Find a cycling route from Berlin to Potsdam",
                            ["click directions", 'type "Potsdam"', "click bicycle"], url=MAPS))
    memo.update(web_episode("buy-2", "Buy blue rain boots in the shop",
                            ['type "rain boots" into search', "click filter size 42"], url=SHOP, reward=0.0,
                            errors={1: "no results for the chosen size"}))
    return memo


# --- trajectory_retrieval --------------------------------------------------------------------

def test_trajectory_record_keeps_errors_and_outcome_and_ranks_by_similarity(tmp_path):
    memo = _web_memory(tmp_path, "trajectory_retrieval", TOP_K=2)
    payload = memo.retrieve(web_task("Buy a green umbrella in the shop", SHOP))
    first_case = payload.text.split("### Case 2")[0]
    assert "red umbrella" in first_case and "OUTCOME: SUCCESS" in first_case
    assert "Potsdam" not in payload.text  # TOP_K=2: the unrelated map task is left out
    boots = memo.retrieve(web_task("Buy rain boots", SHOP)).text
    assert "ERROR no results for the chosen size" in boots and "OUTCOME: FAILURE" in boots


def test_trajectory_success_only_drops_failed_records(tmp_path):
    memo = _web_memory(tmp_path, "trajectory_retrieval", SUCCESS_ONLY=True, TOP_K=5)
    assert "FAILURE" not in memo.retrieve(web_task("Buy rain boots", SHOP)).text


def test_trajectory_cites_the_rounds_with_query_words_first(tmp_path):
    memo = load_seed("trajectory_retrieval", UNITS_CITED_PER_RECORD=1).Memo(toolkit(tmp_path))
    memo.update(conversation("s1", [("R1", "Nice weather today."), ("R2", "My cat Miso loves tuna.")]))
    assert memo.retrieve(question("What does Miso love to eat?")).metadata["evidence"] == ["R2"]


# --- reasoning_bank ---------------------------------------------------------------------------

def test_reasoning_bank_distils_strategies_and_failure_lessons(tmp_path):
    memo = _web_memory(tmp_path, "reasoning_bank", TOP_K=20)
    text = memo.retrieve(web_task("Buy rain boots", SHOP)).text
    assert "[Strategy]" in text and "<target item>" in text  # values generalised
    assert "[Pitfall]" in text and "no results for the chosen size" in text
    assert "[Lesson from a failure]" in text


def test_reasoning_bank_without_failure_lessons_keeps_only_successes(tmp_path):
    memo = _web_memory(tmp_path, "reasoning_bank", TOP_K=20, FAILURE_LESSONS=False)
    text = memo.retrieve(web_task("Buy rain boots", SHOP)).text
    assert "[Strategy]" in text and "Pitfall" not in text and "Lesson" not in text


def test_reasoning_bank_scopes_facts_to_the_asking_user(tmp_path):
    memo = load_seed("reasoning_bank").Memo(toolkit(tmp_path))
    memo.update(conversation("a", [("A:R1", "My dog is called Rex.")], user="A"))
    memo.update(conversation("b", [("B:R1", "My dog is called Bolt.")], user="B"))
    assert memo.retrieve(question("What is my dog called?", user="B")).metadata["evidence"] == ["B:R1"]


# --- g_memory ---------------------------------------------------------------------------------

def test_g_memory_writes_an_insight_for_a_neighbourhood_of_similar_tasks(tmp_path):
    memo = load_seed("g_memory", INSIGHT_GROUP=3, QUERY_EDGE=0.5).Memo(toolkit(tmp_path))
    for i, (item, ok) in enumerate([("red umbrella", 1.0), ("green umbrella", 1.0), ("black umbrella", 0.0)]):
        memo.update(web_episode(f"u{i}", f"Buy a {item} in the shop", [f'type "{item}"', "click buy"],
                                url=SHOP, reward=ok, errors={} if ok else {1: "out of stock"}))
    insights = [n for n, d in memo.graph.nodes(data=True) if d["level"] == "insight"]
    assert len(insights) == 1
    text = memo.retrieve(web_task("Buy a yellow umbrella in the shop", SHOP)).text
    assert "2/3 similar tasks succeeded" in text and "out of stock" in text


def test_g_memory_hops_reach_related_queries(tmp_path):
    tk = toolkit(tmp_path)
    def build(hops):
        memo = load_seed("g_memory", QUERY_K=1, HOPS=hops, QUERY_EDGE=0.3).Memo(tk)
        memo.update(web_episode("a", "Buy a red umbrella in the shop", ["click buy"], url=SHOP))
        memo.update(web_episode("b", "Buy a red umbrella stand in the shop", ["click buy"], url=SHOP))
        text = memo.retrieve(web_task("Buy a red umbrella", SHOP)).text
        return text.split("Related tasks:\n")[1].split("\n\n")[0].splitlines()
    assert len(build(0)) == 1
    assert len(build(1)) == 2  # the neighbour of the best match joins through its query edge


def test_reasoning_bank_distils_with_the_memo_llm_and_falls_back_on_garbage(tmp_path, fake_llm):
    from automemo.llm import LLMClient, LLMConfig, RoleConfig

    fake_llm.script([
        'Here: [{"title": "Use the size filter", "description": "narrow first", "content": "Filter by size before browsing."}]',
        "I cannot answer in JSON today.",
    ])
    client = LLMClient(LLMConfig(memo=RoleConfig(model="fake", base_url=fake_llm.base_url, api_key_env="PATH")))
    memo = load_seed("reasoning_bank", TOP_K=10).Memo(toolkit(tmp_path, llm=client))
    memo.update(web_episode("ok", "Buy boots", ["click filter"], url=SHOP))
    memo.update(web_episode("bad", "Buy a hat", ["click banner"], url=SHOP, reward=0.0, errors={0: "popup"}))
    text = memo.retrieve(web_task("Buy boots", SHOP)).text
    assert "[Strategy] Use the size filter: narrow first" in text
    assert "[Pitfall]" in text and "popup" in text  # the unparseable reply fell back to the rules
    assert "failed" in str(fake_llm.requests[1]["messages"])
