"""Multi-session conversation benchmarks, the released ones (Mem-Gallery, LoCoMo, LongMemEval)
and a user's own logs (`conversations`): one data model, one `Benchmark` over it, and one
reader per format."""
