"""Every seed that cites the rounds it retrieved cites each one's own id before the picture ids
it carries (`memolib.citations`): the scorers count a cited image id as the round that showed
it, so a picture id cited right after its round retrieves nothing new and takes one of the ten
counted places (docs/baselines.md)."""

from __future__ import annotations

import pytest

from automemo.episode_store import EpisodeStore
from seedtools import conversation, load_seed, question, solid_image, toolkit

CITING = ("bm25_rag", "hybrid_rag", "murag", "acgm", "ontology_memory", "g_memory",
          "m2", "reasoning_bank", "xskill", "trajectory_retrieval")

COLOURS = ("red", "green", "blue", "orange", "purple", "yellow")


@pytest.mark.parametrize("seed", CITING)
def test_a_seed_cites_the_rounds_it_retrieved_before_their_pictures(seed, tmp_path):
    store = EpisodeStore(tmp_path / "store")
    # Every round about the garden, every other one with a picture: the retrieved rounds include
    # pictured ones, whose picture ids an interleaving seed cites between the rounds.
    rounds = [(f"u/D1:{i + 1}", f"Ann: the garden roses and the garden bench, part {i}") for i in range(6)]
    pictures = {i: (f"u/D1:IMG_{i}", solid_image(store, COLOURS[i], caption=f"a {COLOURS[i]} garden"))
                for i in range(0, 6, 2)}
    memo = load_seed(seed).Memo(toolkit(tmp_path, store.root))
    memo.update(conversation("u-D1", rounds, images=pictures, user="u"))
    cited = memo.retrieve(question("What did Ann say about the garden roses?", user="u")).metadata["evidence"]
    own = [i for i, e in enumerate(cited) if "IMG" not in e]
    shown = [i for i, e in enumerate(cited) if "IMG" in e]
    assert len(own) >= 2 and shown, f"{seed} cited {cited}: the fixture should retrieve pictured rounds"
    assert max(own) < min(shown), f"{seed} cites a picture id before a round: {cited}"
