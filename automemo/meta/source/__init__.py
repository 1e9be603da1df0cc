"""Reading memo-program source, for both meta agents: parsing, declared tunables, which of them
reachable code reads, recipes (structured programs over memolib components), and a program's fits
in the deployable form an export ships (`fitted`)."""
