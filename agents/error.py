"""Error agent: the pre-run check (safety policy + dry run) and the post-run diagnosis with
bounded repair. Repairs are declarative parameter changes on a protocol run, decided by the
backend, validated against the protocol's schema, and listed in the answer as corrections."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from simagent.errors import SimagentError
from simagent.models import Correction, Decision, JobStatus
from simagent.protocols import get_protocol
from simagent.state import RunContext, RunState
from tools.lammps.parse import read_output


def precheck_problems(state: RunState) -> list[str]:
    """Each engine adapter's pre-run check (tools.<engine>.check.precheck(job) -> problems)."""
    problems = []
    for job in state.plan.jobs:
        try:
            check = importlib.import_module(f"tools.{job.engine}.check")
        except ImportError:
            continue  # engines without a pre-run check (their runs still pass the post-run gates)
        problems += [f"{job.id}: {p}" for p in check.precheck(job)]
    return problems


def precheck(state: RunState, runtime: Runtime[RunContext]) -> Command[Literal["review", "response"]]:
    runtime.context.report("stage", name="precheck", detail="safety policy and dry run")
    try:
        problems = precheck_problems(state)
    except SimagentError as err:  # e.g. the engine is not installed
        return Command(goto="response", update={"error": str(err)})
    if problems:
        return Command(goto="response", update={
            "problems": problems,
            "error": "the inputs did not pass the pre-run check; nothing was run:\n  " + "\n  ".join(problems),
        })
    return Command(goto="review", update={"problems": []})


def diagnose(job_dir: Path, message: str) -> str:
    try:
        out = read_output(job_dir)
    except Exception:  # noqa: BLE001 - no output at all is itself the diagnosis
        return message or "no output"
    lines = out.errors[:3] or [message]
    return "; ".join(lines)


def postcheck(state: RunState, runtime: Runtime[RunContext]) -> Command[Literal["input_writer", "analysis"]]:
    """Failed jobs: ask the backend for a repair (bounded by settings.max_repairs), else report."""
    failed = [job for job in state.plan.jobs if job.status == JobStatus.failed]
    if not failed:
        return Command(goto="analysis")
    context = runtime.context
    failures, corrections, decisions = [], list(state.corrections), list(state.decisions)
    runs = list(state.plan.runs)
    repaired = False
    for job in failed:
        diagnosis = diagnose(Path(job.workdir), job.message)
        index = next(i for i, run in enumerate(runs) if job.id in run.jobs.values())
        run = runs[index]
        if state.repairs >= context.settings.max_repairs:
            failures.append(f"{job.id} failed: {diagnosis} (no repair left)")
            continue
        protocol = get_protocol(run.protocol)
        action = context.backend.repair(diagnosis, run.protocol, run.params, protocol.Params.model_json_schema())
        decisions.append(Decision(decision="repair", backend=context.backend.name, detail=action.reason))
        if action.action == "give_up" or action.parameter not in run.params:
            failures.append(f"{job.id} failed: {diagnosis}")
            continue
        params = dict(run.params)
        old = params[action.parameter]
        params[action.parameter] = float(old) * float(action.value) if action.action == "scale" else action.value
        try:
            params = protocol.validate_params(params).model_dump(mode="json")
        except ValueError as err:
            failures.append(f"{job.id} failed: {diagnosis}; repair rejected: {err}")
            continue
        runs[index] = run.model_copy(update={"params": params})
        corrections.append(Correction(job=job.id, handler=f"{context.backend.name} repair",
                                      action=f"{action.parameter}: {old} -> {params[action.parameter]}",
                                      reason=f"{diagnosis} ({action.reason})"))
        repaired = True
    update = {"corrections": corrections, "decisions": decisions}
    if repaired:
        plan = state.plan.model_copy(update={"runs": runs})
        return Command(goto="input_writer", update={**update, "plan": plan, "repairs": state.repairs + 1})
    return Command(goto="analysis", update={**update, "failures": [*state.failures, *failures]})
