"""Human review of generated inputs before anything runs (skipped with --yes).

The user approves, edits files (edited files go through the same pre-run check), gives feedback
that the input writer applies as parameter overrides, or aborts. A node of its own because
resuming after interrupt() re-runs the whole node.

Edits of a protocol's files are recorded on the protocol run (ProtocolRun.input_edits), so the
input writer re-applies them whenever a repair or feedback renders the inputs again.

After a repair proposed by an LLM (the error agent sets `repair_review`), the payload also carries
`repair`: what was changed and why, and a unified diff of every input the repair changed (before
the failed attempt -> now). Besides approve, edit, feedback and abort the user may then `reject`
the repair: the repair round is dropped, its jobs stay failed and the answer reports what the
other jobs gave. Deterministic repairs (handlers, gates, expert rules) do not stop here.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from simagent.errors import SimagentError
from simagent.handlers import input_diff
from simagent.models import Correction, Decision, InputEdit, Job, Plan, ProtocolRun
from simagent.state import RunContext, RunState

REVIEW_ACTIONS = ("approve", "edit", "feedback", "abort")
REPAIR_REVIEW_ACTIONS = (*REVIEW_ACTIONS, "reject")


def repair_payload(state: RunState) -> dict[str, Any]:
    """What an LLM repair changed: its corrections and a unified diff per changed job."""
    pending = state.repair_review or {}
    before = {job["id"]: job.get("inputs", {}) for job in pending.get("plan", {}).get("jobs", [])}
    diffs = {}
    for job in state.plan.jobs:
        diff = input_diff(before.get(job.id, {}), job.inputs, prefix=f"{job.id}/")
        if diff:
            diffs[job.id] = diff
    return {"changes": pending.get("corrections", []), "diffs": diffs, "diff": "".join(diffs.values())}


def record_edits(runs: list[ProtocolRun], job: Job, edited: dict[str, str]) -> list[ProtocolRun]:
    """Keep a reviewer's edit of a protocol job on its run, against the text the protocol rendered."""
    index = next((i for i, run in enumerate(runs) if job.id in run.jobs.values()), None)
    if index is None:  # not a protocol job: its inputs are never re-rendered
        return runs
    run = runs[index]
    local = next(local for local, plan_id in run.jobs.items() if plan_id == job.id)
    job_edits = dict(run.input_edits.get(local, {}))
    for name, text in edited.items():
        earlier = job_edits.get(name)
        base = earlier.base if earlier is not None else job.inputs.get(name, "")
        job_edits[name] = InputEdit(base=base, edited=text)
    runs = list(runs)
    runs[index] = run.model_copy(update={"input_edits": {**run.input_edits, local: job_edits}})
    return runs


def reject_repair(state: RunState) -> Command[Literal["analysis"]]:
    """Drop the pending repair round: back to the plan as it was after the failed attempt."""
    pending = state.repair_review or {}
    plan = Plan.model_validate(pending["plan"])
    proposed = [Correction.model_validate(c) for c in pending.get("corrections", [])]
    corrections = [c for c in state.corrections if c not in proposed]
    reasons = [f"{c.job} failed: {c.reason}; the repair proposed by {c.handler} ({c.action}) was rejected "
               "by the reviewer; no result reported" for c in proposed]
    decision = Decision(decision="repair_review", backend="reviewer",
                        detail="rejected: " + "; ".join(f"{c.job}: {c.action}" for c in proposed))
    return Command(goto="analysis", update={
        "plan": plan, "corrections": corrections, "decisions": [*state.decisions, decision],
        "failures": [*state.failures, *pending.get("failures", []), *reasons], "repair_review": None,
        "reviewed": True,
    })


def review(state: RunState, runtime: Runtime[RunContext]
           ) -> Command[Literal["runner", "precheck", "input_writer", "response", "analysis"]]:
    if runtime.context.auto_approve or state.reviewed:
        return Command(goto="runner", update={"repair_review": None} if state.repair_review else {})
    files = {job.id: job.inputs for job in state.plan.jobs}
    payload: dict[str, Any] = {"kind": "review", "files": files, "actions": list(REVIEW_ACTIONS)}
    if state.repair_review:
        payload["repair"] = repair_payload(state)
        payload["actions"] = list(REPAIR_REVIEW_ACTIONS)
    reply = interrupt(payload)
    action = reply.get("action") if isinstance(reply, dict) else "approve"
    if action == "approve":
        return Command(goto="runner", update={"reviewed": True, "repair_review": None})
    if action == "abort":
        return Command(goto="response", update={"error": "cancelled by the reviewer; nothing was run"})
    if action == "reject" and state.repair_review:
        return reject_repair(state)
    if action == "edit":
        jobs, corrections, runs = [], list(state.corrections), list(state.plan.runs)
        for job in state.plan.jobs:
            edited = reply.get("files", {}).get(job.id)
            if edited and edited != job.inputs:
                changed = {name: text for name, text in edited.items() if text != job.inputs.get(name)}
                corrections.append(Correction(job=job.id, handler="reviewer",
                                              action=f"edited {', '.join(sorted(changed))}",
                                              reason="edited by the user before running"))
                runs = record_edits(runs, job, changed)
                job = job.model_copy(update={"inputs": {**job.inputs, **changed}})
            jobs.append(job)
        plan = state.plan.model_copy(update={"jobs": jobs, "runs": runs})
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
