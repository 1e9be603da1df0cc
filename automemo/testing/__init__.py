"""Test doubles and bench fixtures; not used by a search.

What the benchmark commands (`automemo bench ...`) and the test suite run in place of the real
thing, shipped with the package because the benches run from an installed wheel too:

- `fakellm`: a scriptable OpenAI-compatible HTTP server on 127.0.0.1 (`FakeLLM`), also a way to
  try the tool without a model;
- `landscape`: a simulated search landscape whose true program qualities are known;
- `synthetic_run`: a complete run directory written through the real write API;
- `serve_export`: an exported folder for `automemo serve` without a search first;
- `episodes/`: a small episode store in the layout `automemo exam --episodes` reads
  (`EXAMPLE_EPISODES_DIR`).

Only `automemo.bench` (and the tests) import this package; `tests/test_layers.py` holds the rule.
"""

from pathlib import Path

EXAMPLE_EPISODES_DIR = Path(__file__).resolve().parent / "episodes"
