"""MDGym-compatible benchmark harness: task files in, an agent per task, scores and a failure taxonomy out.

Layers as in MDGym: agents (simagent.bench.agents), the orchestrator (prompt, budget, resume;
simagent.bench.orchestrator) and per-engine validators (simagent.bench.validate), plus the
failure taxonomy (simagent.bench.taxonomy) and the session reports (simagent.bench.report).
"""
