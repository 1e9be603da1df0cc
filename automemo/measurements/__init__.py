"""measurements: what `automemo bench NAME` runs. Each command prints figures and can write them
as JSON (`--out`); speed and memory targets live here, never in timed unit tests, and are
compared as ratios measured in one run. (The benchmarks a program is *scored* on are another
package: `automemo.benchmarks`.) A map, by what is measured:

| the search | |
|---|---|
| `discovery` | the search's selection against every seed, best-of-seeds, random and greedy (with `question_budget`, `oracle`) |
| `strategies` | the search strategies at equal budget on simulated landscapes (`landscape_search`) |
| `labelfree` | a label-free search against a labelled one on data that has labels |
| `discovered_default` | finding the shipped discovered default again, written with its provenance |
| `transfer` | a run's selection scored on another benchmark |
| `quickstart` | the quickstart timed end to end |
| `search`, `meta` | the framework's time per step; meta tokens per valid child |

| a program and its evaluation | |
|---|---|
| `eval`, `scale` | what concurrency, Ray workers and a parallel search buy (`latency_benchmark`: episodes that only wait) |
| `seeds`, `memory` | update and retrieve speed at 10^3..10^5 units (`life`: a synthetic life to feed) |
| `cost`, `cost_front` | LLM calls and tokens of an evaluation; each program's cost beside its score |
| `longmemeval_m` | a cold evaluation at the LongMemEval M split's size |
| `sandbox` | session open, round trip and quick exam per sandbox backend |
| `report`, `report_upkeep` | the HTML report's size and render time; its share of a search step |

| a served memory | |
|---|---|
| `serving/` | `automemo bench serve`: recall latency under clients, tenants, faults, kill -9, Ray replicas |
| `adaptation/` | `automemo bench adapt`: a served memory adapting (per user, pooled, on feedback): before and after, lost, leaks, p95 |
| `rest` | the benches' REST client of a real server |

`stand_ins/` holds what a bench runs in place of a real part (a fake LLM server, a simulated
landscape, a synthetic run, an export, a LongMemEval-shaped file)."""
