"""`automemo bench adapt`: `command` (a served memory adapting to the test conversations: before
and after, lost, leaks, p95), `agent_feedback` (the agent that asks and cites, for `--feedback`), `trial` (the phase that asks
under an open trial, and its counts),
`forget` (forgetting while a round runs), `load` (burner processes beside the server)."""
