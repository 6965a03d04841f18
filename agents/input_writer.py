"""Input writer agent: renders each protocol run into jobs with inputs (from templates only),
with job ids unique across the plan and dependencies remapped. Reviewer feedback arrives here as
parameter overrides decided by the backend and validated against the protocol's schema.

Reviewer edits of rendered files (ProtocolRun.input_edits) are re-applied to every new rendering
(after a repair or feedback changed the parameters) by a three-way merge; an edit that no longer
applies cleanly stops the run with a message naming the file and lines, never silently dropped."""

from __future__ import annotations

from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from simagent.engines import get_engine
from simagent.errors import SimagentError
from simagent.handlers import reapply_edit
from simagent.models import Correction, Decision, InputEdit, Job, Plan, ProtocolRun
from simagent.protocols import get_protocol
from simagent.state import RunContext, RunState


def render_plan(runs: list[ProtocolRun], time_limit_s: float, cores: int = 1) -> Plan:
    """The runs' jobs; a job whose protocol chose no ranks or threads is spread over `cores`
    by its engine's adapter (Settings.job_cores)."""
    jobs: list[Job] = []
    new_runs = []
    for index, run in enumerate(runs):
        protocol = get_protocol(run.protocol)
        params = protocol.validate_params(run.params)
        prefix = run.protocol.split("/")[-1] + (f"{index}" if len(runs) > 1 else "")
        local_jobs = protocol.jobs(params)
        mapping = {job.id: f"{prefix}-{job.id}" for job in local_jobs}
        edits: dict[str, dict[str, InputEdit]] = {}
        for job in local_jobs:
            inputs = job.inputs
            if run.input_edits.get(job.id):
                inputs, edits[job.id] = reapply_edits(mapping[job.id], job.inputs, run.input_edits[job.id])
            jobs.append(get_engine(job.engine).spread(job, cores).model_copy(update={
                "id": mapping[job.id],
                "depends_on": [mapping[d] for d in job.depends_on],
                "stage_in": {mapping[d]: names for d, names in job.stage_in.items()},
                "time_limit_s": min(job.time_limit_s, time_limit_s),
                "inputs": inputs,
            }))
        missing = sorted(set(run.input_edits) - set(mapping))
        if missing:
            raise SimagentError(f"edited inputs of {', '.join(missing)} cannot be applied: {run.protocol} "
                                "no longer renders that job")
        new_runs.append(run.model_copy(update={"jobs": mapping, "input_edits": edits}))
    plan = Plan(jobs=jobs, runs=new_runs)
    plan.topological_order()  # raises on a cycle
    return plan


def reapply_edits(job_id: str, rendered: dict[str, str], edits: dict[str, InputEdit]
                  ) -> tuple[dict[str, str], dict[str, InputEdit]]:
    """A job's new rendering with the reviewer's edits merged in, and the edits rebased on it."""
    inputs, rebased = dict(rendered), {}
    for name, edit in edits.items():
        fresh = rendered.get(name)
        if fresh is None and edit.base:
            raise SimagentError(f"your edit of {job_id}/{name} cannot be applied: the new rendering has no "
                                f"{name}; edit the inputs again or run without the edit")
        try:
            merged = reapply_edit(edit.base, edit.edited, fresh or "")
        except SimagentError as err:
            raise SimagentError(f"your edit of {job_id}/{name} no longer applies cleanly after the inputs "
                                f"were rendered again: {err}; nothing was run with it. Edit the file again "
                                "at review, or run without the edit") from None
        inputs[name] = merged
        rebased[name] = InputEdit(base=fresh or "", edited=merged)
    return inputs, rebased


def apply_feedback(state: RunState, context: RunContext, feedback: str) -> tuple[list[ProtocolRun], list, list]:
    """Reviewer's free text -> validated parameter overrides on every protocol run."""
    runs, corrections, decisions = [], [], []
    for run in state.plan.runs:
        protocol = get_protocol(run.protocol)
        schema = protocol.Params.model_json_schema()
        overrides = context.backend.parameter_overrides(feedback, run.protocol, run.params, schema)
        params = dict(run.params)
        for item in overrides.overrides:
            params[item.parameter] = item.value
            corrections.append(Correction(job=run.protocol, handler="reviewer feedback",
                                          action=f"set {item.parameter} = {item.value}", reason=feedback))
        try:
            validated = protocol.validate_params(params)
        except ValueError as err:
            raise SimagentError(f"feedback gives invalid parameters for {run.protocol}: {err}") from None
        runs.append(run.model_copy(update={"params": validated.model_dump(mode="json")}))
        decisions.append(Decision(decision="parameter_overrides", backend=context.backend.name,
                                  detail="; ".join(c.action for c in corrections) or "none"))
        if overrides.not_understood:
            corrections.append(Correction(job=run.protocol, handler="reviewer feedback", action="none",
                                          reason="not understood: " + "; ".join(overrides.not_understood)))
    return runs, corrections, decisions


def input_writer(state: RunState, runtime: Runtime[RunContext]) -> Command[Literal["precheck", "response"]]:
    runtime.context.report("stage", name="input_writer", detail="rendering inputs")
    try:
        settings = runtime.context.settings
        plan = render_plan(state.plan.runs, settings.job_time_limit_s, settings.cores_per_job)
    except (SimagentError, ValueError) as err:
        return Command(goto="response", update={"error": f"could not write inputs: {err}"})
    return Command(goto="precheck", update={"plan": plan})
