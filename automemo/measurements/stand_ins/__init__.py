"""What the benchmark commands (`automemo bench ...`) run in place of a real part, so that a
bench measures one thing: not used by a search, and imported by `automemo.measurements` only (the tests
reuse them; `tests/test_layers.py` holds the rule).

- `fakellm`: a scriptable OpenAI-compatible HTTP server on 127.0.0.1 (`FakeLLM`), also a way to
  try the tool without a model;
- `landscape`: a simulated search landscape whose true program qualities are known;
- `synthetic_run`: a complete run directory written through the real write API;
- `serve_export`: an exported folder for `automemo serve` without a search first;
- `longmemeval_file`: a synthetic LongMemEval file of the S or M split's shape, written one
  question at a time.

The example episode store they and `automemo exam` read is package data
(`automemo.paths.EXAMPLE_EPISODES_DIR`).
"""
