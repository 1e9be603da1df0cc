"""search: the budget-aware tree search (docs/search.md). The policy is pure (no I/O, no clock,
no randomness without a seed argument): given the tree's statistics it returns an action; the
loop does the I/O. A map of the package, by what each file does:

| decides (pure functions of `TreeStats`) | |
|---|---|
| `policy` | U_eval, U_gen, LCB, the action of a step; `confirm_final` / `final_by_bound`: the final choice held to its bar |
| `regimes` | the three evaluation regimes (repeats, exact, sampled): what n(v), N and ± mean in each |
| `win_rule` | when a candidate replaces the bar (clears by z paired SEs, holds on every guard): the search's and adaptation's one rule |
| `strategies` | `Strategy` (a Protocol) and its four: tree, alma, greedy, random; `final_node`: a strategy's own final rule |
| `halving` | the final race with a question budget (successive halving); `tree_final`: the tree strategy's choice in either regime |
| `question_policy` | with a question budget: early stopping, what the race keeps, which node is scored next |
| `cost_front` | the quality / cost front and the cheapest program within one SE of the best |
| `sweep` | which programs the seed sweep transplants (the seeds, then the discovered default) |

| runs (I/O, threads) | |
|---|---|
| `loop` | preflight, the root's evaluation, the scheduler until the budget, final.json |
| `scheduler` | up to `search.parallel` actions in flight; commits each step |
| `steps` | one action done: the root, a re-evaluation, a generation (exam, repairs, first evaluation) |
| `generation` | propose, quick-exam, repair one child; duplicates rejected before their exam |
| `meta_context` | what the meta agent is told about the tree |
| `heldout` | after the search: the selection, its bar and the programs beside them on the test split |
| `display`, `stops` | the terminal's lines; the exceptions that stop a search cleanly |

| holds state | |
|---|---|
| `config` | `SearchConfig`: every hyper-parameter, with why |
| `tree` | `Tree`: the generation tree in memory, rebuilt from the run directory |
| `tree_stats` | `NodeStats`, `TreeStats`: what the policy reads; paired differences; the bar (`reference`) |
| `view` | `RunView`: one read-only view of a run for every reader (tree, show, report, export) |
| `pending` | actions in flight: the ids they reserve, their virtual visits |
| `questions` | with a question budget: the one question order, the sample size, the race |
| `collaborators` | what the search drives, handed in by whoever assembles it |

Five names for the run's tree, each one thing: `RunDir` (`automemo.runs`) is the run folder on
disk (config, tree.db, node folders); `StepJournal` (`automemo.runs.journal`) stages one step's
rows and files until it commits; `Tree` is the committed tree in memory, rebuilt from the
`RunDir`; `TreeStats` is what the pure policy sees of it (failed nodes left out, μ as the
policy reads it); `RunView` is what readers see (μ, n, LCB, the selection, lineage, spend).
"""
