"""Analysis agent: each protocol's own analysis on its finished job folders, then conversion to
the units the user asked for. A physics-gate failure means no number for that protocol, except a missed
thermostat/barostat set point in a run the description prescribes (settings.gate_extensions False):
the number is kept and the finding travels with it as a warning (report.md)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from agents.planner import restrict
from simagent.errors import SimagentError, set_point_findings
from simagent.models import JobStatus, Result, TaskSpec
from simagent.protocols import get_protocol
from simagent.state import RunContext, RunState
from simagent.units import convert_measured


def requested(result: Result, spec: TaskSpec) -> bool:
    return result.property in {p.name for p in spec.properties}


def to_requested_units(result: Result, spec: TaskSpec) -> Result:
    for prop in spec.properties:
        if prop.unit and result.property == prop.name:
            try:
                value, uncertainty = convert_measured(result.value, result.uncertainty, result.unit, prop.unit)
            except SimagentError:
                return result
            return result.model_copy(update={"value": value, "unit": prop.unit, "uncertainty": uncertainty})
    return result


def analysis(state: RunState, runtime: Runtime[RunContext]) -> Command[Literal["response"]]:
    runtime.context.report("stage", name="analysis", detail="analysing outputs")
    results, failures = [], list(state.failures)
    status = {job.id: job for job in state.plan.jobs}
    for run in state.plan.runs:
        if any(status[j].status != JobStatus.succeeded for j in run.jobs.values()):
            continue  # the failure is already in state.failures
        protocol = get_protocol(run.protocol)
        spec = restrict(state.spec, run.properties)
        job_dirs = {local: Path(status[plan_id].workdir) for local, plan_id in run.jobs.items()}
        try:
            # free requests (ask): a missed set point raises, no number
            with nullcontext([]) if runtime.context.settings.gate_extensions else set_point_findings() as missed:
                found = protocol.analyze(protocol.validate_params(run.params), job_dirs, spec)
        except SimagentError as err:
            failures.append(f"{run.protocol}: {err}")
            continue
        # a prescribed run (solve) keeps its number; the protocol's set-point findings go with it
        found = [r.model_copy(update={"warnings": [*r.warnings, *missed]}) for r in found] if missed else found
        results += [to_requested_units(r.model_copy(update={"job": run.jobs.get(r.job, r.job)}), spec)
                    for r in found if requested(r, spec)]
    return Command(goto="response", update={"results": results, "failures": failures})
