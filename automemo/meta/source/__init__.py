"""Reading memo-program source, for both meta agents: parsing, declared tunables, which of them
reachable code reads, and recipes (structured programs over memolib components)."""
