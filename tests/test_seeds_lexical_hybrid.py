"""bm25_rag and hybrid_rag seeds: BM25 finds the round that shares the question's rare words;
hybrid_rag also finds a paraphrase no word of which matches; both search only the asking user's
memory, cite rounds best first and stay in the budget."""

from automemo.episode_store import EpisodeStore

from seedtools import conversation, load_seed, question, toolkit

ANN = [("ann/D1:1", "I just adopted a beagle puppy named Biscuit."),
       ("ann/D1:2", "My favourite food is ramen with extra garlic."),
       ("ann/D1:3", "We went hiking in the Alps last summer.")]
BEN = [("ben/D1:1", "My beagle is called Pepper."), ("ben/D1:2", "I play the cello in an orchestra.")]


def _memory(tmp_path, seed, **overrides):
    store = EpisodeStore(tmp_path / "store")
    memo = load_seed(seed, **overrides).Memo(toolkit(tmp_path, store.root))
    memo.update(conversation("ann-s1", ANN, user="ann"))
    memo.update(conversation("ben-s1", BEN, user="ben"))
    return memo


def test_bm25_cites_the_round_with_the_rare_words_and_keeps_to_the_users_memory(tmp_path):
    memo = _memory(tmp_path, "bm25_rag")
    payload = memo.retrieve(question("What is my beagle called?", user="ben"))
    assert payload.metadata["evidence"] == ["ben/D1:1"] and "Pepper" in payload.text
    ann = memo.retrieve(question("Which dish with garlic do I like?", user="ann"))
    assert ann.metadata["evidence"][0] == "ann/D1:2"
    assert memo.retrieve(question("zebra", user="ann")).metadata.get("evidence") is None  # no shared word


def test_a_window_indexes_the_neighbours_words_but_cites_the_round_itself(tmp_path):
    memo = _memory(tmp_path, "bm25_rag", WINDOW=1)
    cited = memo.retrieve(question("Biscuit ramen", user="ann")).metadata["evidence"]
    assert cited[:2] == ["ann/D1:1", "ann/D1:2"] and all(c.startswith("ann/") for c in cited)


def test_hybrid_finds_a_paraphrase_and_fuses_both_rankings(tmp_path):
    memo = _memory(tmp_path, "hybrid_rag")
    # No content word in common with the round ("mountains" vs "Alps", "trek" vs "hiking").
    trek = memo.retrieve(question("Did I go on a trek in the mountains?", user="ann"))
    assert trek.metadata["evidence"][0] == "ann/D1:3"
    assert set(trek.metadata["evidence"]) <= {c for c, _ in ANN}
    lexical_only = _memory(tmp_path / "l", "hybrid_rag", DENSE_WEIGHT=0.0)
    assert lexical_only.retrieve(question("Did I go on a trek in the mountains?", user="ann")).metadata.get("evidence") != \
        trek.metadata["evidence"]


def test_the_payload_stays_in_the_budget(tmp_path):
    memo = _memory(tmp_path, "hybrid_rag")
    payload = memo.retrieve(question("beagle ramen hiking cello", user="ann", budget={"max_chars": 120, "max_images": 0}))
    assert payload.size_chars() <= 120 and payload.images == ()
