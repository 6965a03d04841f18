"""Human review of generated inputs before anything runs (skipped with --yes).

The user approves, edits files (edited files go through the same pre-run check), gives feedback
that the input writer applies as parameter overrides, or aborts. A node of its own because
resuming after interrupt() re-runs the whole node."""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from simagent.errors import SimagentError
from simagent.models import Correction
from simagent.state import RunContext, RunState


def review(state: RunState, runtime: Runtime[RunContext]) -> Command[Literal["runner", "precheck", "input_writer", "response"]]:
    if runtime.context.auto_approve or state.reviewed:
        return Command(goto="runner")
    files = {job.id: job.inputs for job in state.plan.jobs}
    reply = interrupt({"kind": "review", "files": files})
    action = reply.get("action") if isinstance(reply, dict) else "approve"
    if action == "approve":
        return Command(goto="runner", update={"reviewed": True})
    if action == "abort":
        return Command(goto="response", update={"error": "cancelled by the reviewer; nothing was run"})
    if action == "edit":
        jobs, corrections = [], list(state.corrections)
        for job in state.plan.jobs:
            edited = reply.get("files", {}).get(job.id)
            if edited and edited != job.inputs:
                changed = sorted(name for name in edited if edited[name] != job.inputs.get(name))
                corrections.append(Correction(job=job.id, handler="reviewer", action=f"edited {', '.join(changed)}",
                                              reason="edited by the user before running"))
                job = job.model_copy(update={"inputs": {**job.inputs, **edited}})
            jobs.append(job)
        plan = state.plan.model_copy(update={"jobs": jobs})
        return Command(goto="precheck", update={"plan": plan, "corrections": corrections})
    if action == "feedback":
        from agents.input_writer import apply_feedback

        try:
            runs, corrections, decisions = apply_feedback(state, runtime.context, reply.get("text", ""))
        except SimagentError as err:
            return Command(goto="response", update={"error": str(err)})
        plan = state.plan.model_copy(update={"runs": runs})
        return Command(goto="input_writer", update={
            "plan": plan, "corrections": [*state.corrections, *corrections],
            "decisions": [*state.decisions, *decisions],
        })
    return Command(goto="response", update={"error": f"unknown review action {action!r}"})
