"""The example program of docs/memolib.md runs as written: it composes BM25, dense search, rank
fusion, a learned router and neighbour expansion, and cites the round that answers."""

from __future__ import annotations

import re
from pathlib import Path

from automemo.episode_store import EpisodeStore
from seedtools import conversation, question, toolkit

DOC = Path(__file__).resolve().parents[1] / "docs" / "memolib.md"


def test_the_documented_example_retrieves_the_answering_round(tmp_path):
    source = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S).group(1)
    namespace: dict = {"__name__": "memolib_example"}
    exec(compile(source, str(DOC), "exec"), namespace)
    store = EpisodeStore(tmp_path / "store")
    memo = namespace["Memo"](toolkit(tmp_path, store.root))
    memo.update(conversation("ann-s1", [("ann/D1:1", "I adopted a beagle named Biscuit."),
                                        ("ann/D1:2", "We moved to Lyon in March."),
                                        ("ann/D1:3", "The flat is near the river.")], user="ann"))
    memo.update(conversation("ben-s1", [("ben/D1:1", "My beagle is called Pepper.")], user="ben"))
    what = memo.retrieve(question("What is my beagle called?", user="ann"))
    assert what.metadata["evidence"][0] == "ann/D1:1" and "ben/D1:1" not in what.metadata["evidence"]
    when = memo.retrieve(question("When did we move to Lyon?", user="ann")).metadata["evidence"]
    assert namespace["ROUTER"].predict("When did we move to Lyon?") == "TR"
    assert when[0] == "ann/D1:2" and set(when) == {"ann/D1:1", "ann/D1:2", "ann/D1:3"}
