"""Runner agent: submits the plan's jobs to the executor in dependency order (independent jobs
concurrently). Finished jobs with unchanged inputs are not run again (resume)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from simagent.errors import SimagentError
from simagent.jobrun import run_plan
from simagent.state import RunContext, RunState


def runner(state: RunState, runtime: Runtime[RunContext]) -> Command[Literal["postcheck", "response"]]:
    context = runtime.context
    plan = state.plan.model_copy(deep=True)
    root = Path(state.root) / "jobs"

    def progress(job, record) -> None:
        context.report("job", id=job.id, status=record.status.value, wall_s=record.wall_s,
                       message=record.message)

    context.report("stage", name="runner", detail=f"{len(plan.jobs)} job(s)")
    try:
        run_plan(plan, root, context.executor, progress=progress,
                 notice=lambda text: context.report("notice", text=text),
                 status=lambda counts: context.report("plan", line=counts.line()) if counts.total > 1 else None)
    except SimagentError as err:
        return Command(goto="response", update={"error": str(err), "plan": plan})
    return Command(goto="postcheck", update={"plan": plan})
