"""The offline meta agent: its operator table, the recipe generator and its moves, crossover,
and fitting the question router on the host."""
