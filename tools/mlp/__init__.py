"""Universal machine-learned potentials (CHGNet, SevenNet) as ASE calculators, run in a child process.
Knows nothing of agents or the graph."""
