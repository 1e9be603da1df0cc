"""`automemo bench NAME`: benchmarks that print figures (speed and memory targets live here, not in
timed unit tests, because these machines are shared and noisy; figures are compared as ratios
measured within one run). Each benchmark is a module of `automemo.measurements` with
`add_arguments(parser)` and `run(args) -> int`: `measurements.<name>` (a dash in NAME is an
underscore in the module's), or the sub-package's command named in `SUB_PACKAGED`."""

from __future__ import annotations

import importlib

BENCHES = {
    "sandbox": "session open, call round trip and quick-exam time per sandbox backend",
    "eval": "evaluation speed-up from concurrency and per-episode framework overhead",
    "search": "framework time per search step with a zero-latency fake LLM",
    "seeds": "update throughput and retrieve latency of every seed at 1k and 10k episodes",
    "memory": "a memory at the size of a life: update throughput, retrieve p50/p95 with an update before "
              "each, RSS, snapshot size/time and restart time at 10^3, 10^4, 10^5 units (PROGRAM|EXPORT)",
    "report": "size and browser render time of the HTML report of a synthetic 20-node run",
    "serve": "automemo serve over loopback: recall latency and overhead at 1, 8, 32 clients, kill -9 "
             "durability, restart time with 1k and 10k logged episodes; or only --tenants (one user's "
             "p95 under another's image flood), --ingest (500 turns), --first-start, --faults (kill -9 "
             "under many users' mixed calls); --engine ray --replicas 1,2: Ray Serve replicas against "
             "the single-process server",
    "scale": "episodes/s on threads and on Ray with 1, 2, 4 workers; parallel search K = 1, 2, 4",
    "meta": "meta completion tokens per valid child, SEARCH/REPLACE edits versus full rewrites "
            "(any OpenAI-compatible --base-url)",
    "strategies": "search strategies at equal budget: regret on simulated landscapes, meta calls and "
                  "tokens, Mini-Gallery test score of the selection",
    "cost": "what a QA-mode evaluation costs in LLM calls and tokens (fake agent and judge, read from "
            "the ledger), and a search's cost projected with and without a question budget",
    "cost-front": "each program's cost figures (CPU per remembered turn and per recall counted cold, recall "
                  "p95, index bytes per 1k turns) beside its score on one benchmark, with the command",
    "quickstart": "the quickstart's search and held-out comparison timed end to end, against the 6-minute "
                  "quickstart, and whether MiniLM had to run (the sample ships its vectors)",
    "discovery": "the search's selection on test against every seed, best-of-seeds, random and greedy "
                 "search at equal steps, and --parallel K at equal wall-clock, on one benchmark",
    "labelfree": "a label-free search against a labelled one on data with labels: Spearman of the pseudo score "
                 "and the real validation score over its nodes, each selection's test lead over the best seed, "
                 "their ratio and wall-clocks",
    "adapt": "a served hand design adapting to the test conversations remembered through REST: Recall@k "
             "through recall before and after, acknowledged remembers lost, a planted secret leaked, and a "
             "user's recall p95 while rounds run over idle (--mode per-user|pooled)",
    "transfer": "a run's selection and its best hand design scored on another benchmark's test split, "
                "with the paired difference (--from RUN --benchmark B)",
    "discovered-default": "find the discovered default again: the quickstart's search over several draws, the "
                          "candidate that holds across the train conversations (cheapest within one SE), its test "
                          "figures and cost beside the best hand design, written with its provenance (--out FILE)",
    "longmemeval-m": "a cold evaluation on a synthetic LongMemEval file of the M split's shape (~480 sessions a "
                     "question): wall-clock, host and guest peak RSS, haystack sessions read against distinct "
                     "ones, turns fed against texts encoded, and the command",
}


# The benches that drive a served memory live in sub-packages of their own, beside their parts
# (a server process, load clients, a simulated agent); each one's entry point is `command`.
SUB_PACKAGED = {"serve": "automemo.measurements.serving.command",
                "adapt": "automemo.measurements.adaptation.command"}


def module_of(name: str) -> str:
    return SUB_PACKAGED.get(name, f"automemo.measurements.{name.replace('-', '_')}")


def register(sub) -> None:
    parser = sub.add_parser("bench", help="print speed and memory figures")
    benches = parser.add_subparsers(dest="bench", metavar="NAME", required=True)
    for name, help_text in BENCHES.items():
        p = benches.add_parser(name, help=help_text)
        module = module_of(name)
        p.set_defaults(func=lambda args, m=module: importlib.import_module(m).run(args))
        try:
            importlib.import_module(module).add_arguments(p)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
