"""Error agent: the pre-run check (safety policy, static physics checks, dry run) and the post-run
step (physics gates, then bounded repair by the handler library, then the decision backend).

Repairs of protocol jobs are parameter actions on the protocol run (re-rendered by the input
writer); every change is listed in the answer as a Correction and written to the job folder's
corrections.json. A failed attempt's folder is kept as `<job>.failed<N>`; finished jobs that
depend on a repaired job are moved to `<job>.superseded<N>` so they run again on its new output.

Review rule: deterministic repairs (handlers, gates, the expert's rules) go straight back to the
input writer and the runner. A repair proposed by an LLM is, in review mode (no --yes), sent
through the review node first: `repair_review` keeps the plan as it was after the failed attempt,
and review shows the re-rendered inputs as a unified diff against it (approve, edit or reject).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command

from simagent import gates
from simagent.assessment import EXTEND_HANDLER, Assessment, assess_failed, assess_finished, prescribed_changes
from simagent.engines import get_engine
from simagent.errors import SimagentError
from simagent.handlers import (
    CorrectionLog,
    CorrectionRecord,
    Diagnosis,
    Finding,
    apply_param_action,
    backend_diagnosis,
    diagnose,
)
from simagent.jobfolder import JobFolder
from simagent.models import Correction, Decision, Job, JobStatus, ProtocolRun
from simagent.protocols import get_protocol
from simagent.state import RunContext, RunState

# ---------------------------------------------------------------------------------------------
# Pre-run check
# ---------------------------------------------------------------------------------------------


def job_findings(job: Job) -> list[Finding]:
    """Pre-run findings for one job from its engine adapter (simagent.engines.EngineAdapter
    .precheck_findings: safety policy, input-stage handlers, static checks, dry run; protocol jobs
    of engines with their own protocol check get the safety policy and that check)."""
    return get_engine(job.engine).precheck_findings(job)


def precheck_problems(state: RunState) -> list[str]:
    """Problems that block the run (unsafe or broken inputs), as 'job: problem' lines."""
    return [f"{job.id}: {f}" for job in state.plan.jobs for f in job_findings(job) if f.severity != "warning"]


def precheck(state: RunState, runtime: Runtime[RunContext]) -> Command[Literal["review", "response"]]:
    runtime.context.report("stage", name="precheck", detail="safety policy, static checks and dry run")
    blocking, warnings = [], []
    try:
        for job in state.plan.jobs:
            for finding in job_findings(job):
                (warnings if finding.severity == "warning" else blocking).append(f"{job.id}: {finding}")
    except SimagentError as err:  # e.g. the engine is not installed
        return Command(goto="response", update={"error": str(err)})
    if blocking:
        unsafe = any("[unsafe]" in p for p in blocking)
        what = "were rejected by the safety policy" if unsafe else "did not pass the pre-run check"
        return Command(goto="response", update={
            "problems": blocking + warnings,
            "error": f"the inputs {what}; nothing was run:\n  " + "\n  ".join(blocking),
        })
    # what the check found but let run (e.g. a prescribed timestep above the limit) goes with the answer
    noted = {d.detail for d in state.decisions if d.decision == "warning"}
    kept = [Decision(decision="warning", backend="precheck", detail=w) for w in dict.fromkeys(warnings)
            if w not in noted]
    return Command(goto="review", update={"problems": warnings, "decisions": [*state.decisions, *kept]})


# ---------------------------------------------------------------------------------------------
# Post-run: gates and repair
# ---------------------------------------------------------------------------------------------


def diagnosis_text(job_dir: Path, job: Job) -> str:
    """One line on why a job failed, from the handler library or the executor's record."""
    try:
        found = diagnose(job_dir, job, CorrectionLog())
    except OSError:
        found = None
    if found is not None:
        return found.summary()
    return job.message or "unknown failure"


def _run_index(runs: list[ProtocolRun], job: Job) -> int | None:
    return next((i for i, run in enumerate(runs) if job.id in run.jobs.values()), None)


def _supersede_dependents(jobs: list[Job], repaired: set[str]) -> list[str]:
    """Move the folders of jobs downstream of a repaired job aside, so they run again (their own
    inputs may be unchanged, but what they read from the repaired job is not)."""
    downstream: set[str] = set()
    changed = True
    while changed:
        changed = False
        for job in jobs:
            if job.id not in downstream and job.id not in repaired and set(job.depends_on) & (repaired | downstream):
                downstream.add(job.id)
                changed = True
    return [job.id for job in jobs
            if job.id in downstream and job.workdir and JobFolder(job.workdir, job.id).set_aside("superseded")]


def _repair_run(run: ProtocolRun, items: list[tuple[Job, Diagnosis]], failures: list[str]
                ) -> tuple[ProtocolRun | None, list[tuple[Job, Diagnosis, list[str]]]]:
    """One planned run with the repairs its jobs asked for applied to its parameters: the repaired run
    (None when the protocol rejects the repaired parameters) and, per job, the diagnosis and the changes
    made. A repair that cannot be applied, or is rejected, is added to `failures` (a succeeded job whose
    gate failed then counts as failed)."""
    protocol = get_protocol(run.protocol)
    params = dict(run.params)
    changes: list[tuple[Job, Diagnosis, list[str]]] = []
    touched: set[str] = set()
    for job, found in items:
        applied = []
        try:
            for action in found.actions:
                if action["param"] in touched:  # two jobs of one run asking the same change
                    continue
                params, change = apply_param_action(params, action)
                touched.add(action["param"])
                applied.append(change)
        except (SimagentError, KeyError, TypeError, ValueError) as err:
            failures.append(f"{job.id} failed: {found.summary()}; repair not applicable: {err}")
            if job.status == JobStatus.succeeded:  # a gate failed and cannot be repaired
                job.status, job.message = JobStatus.failed, "physics gate failed: " + found.summary()
            continue
        changes.append((job, found, applied))
    try:
        params = protocol.validate_params(params).model_dump(mode="json")
    except ValueError as err:
        failures += [f"{job.id} failed: {found.summary()}; repair rejected: {err}" for job, found, _ in changes]
        return None, []
    return run.model_copy(update={"params": params}), changes


@dataclass
class _Findings:
    """What the post-run pass over the finished jobs found: the decisions to record, the failures to
    report, and the repairs planned per run (index into the plan's runs)."""

    decisions: list[Decision]
    failures: list[str] = field(default_factory=list)
    planned: dict[int, list[tuple[Job, Diagnosis]]] = field(default_factory=dict)
    only_extensions: bool = True  # every planned repair is a gate's extension (no repair round is used up)

    def plan(self, index: int, job: Job, found: Diagnosis, extension: bool = False) -> None:
        self.planned.setdefault(index, []).append((job, found))
        self.only_extensions = self.only_extensions and extension


def _handler_notes(job: Job, notes: list[str]) -> list[Decision]:
    return [Decision(decision="repair", backend="handlers", detail=f"{job.id}: {note}") for note in notes]


def _kept(job: Job, job_dir: Path, verdict: Assessment, log: CorrectionLog, found: _Findings) -> None:
    """A job whose numbers stand: a prescribed run whose gates failed keeps them with the finding as a
    warning; a handler's diagnosis goes with it; its corrections so far are written to its folder."""
    if verdict.gates.outcome != gates.Outcome.PASS:
        # the run is prescribed: the number stands, the finding goes with it
        found.decisions.append(Decision(decision="warning", backend="gates",
                                        detail=f"{job.id}: run kept as prescribed; {'; '.join(verdict.reasons)}"))
        return
    if verdict.diagnosis is not None:
        found.decisions.append(Decision(decision="warning", backend="handlers",
                                        detail=f"{job.id}: {verdict.diagnosis.summary()}"))
    if log.for_job(job.id):
        JobFolder(job_dir, job.id).write_corrections(log)


def _assess_succeeded(job: Job, job_dir: Path, index: int | None, log: CorrectionLog, extend: bool,
                      prescribed: bool, found: _Findings) -> None:
    """A job that exited cleanly, through the physics gates: kept, planned for an extension or a
    repair, or failed with the gates' reasons (its numbers are then not used)."""
    verdict = assess_finished(job_dir, job, log, extend=extend, param_only=True, prescribed=prescribed)
    found.decisions += _handler_notes(job, verdict.notes)
    if verdict.verdict == "pass":
        _kept(job, job_dir, verdict, log, found)
        return
    reasons = list(verdict.reasons)
    if verdict.verdict == "extend" and index is not None:
        found.plan(index, job, verdict.diagnosis, extension=True)
        return
    if verdict.gates.outcome == gates.Outcome.EXTEND:
        reasons.append(f"not converged after {log.count(job.id, EXTEND_HANDLER)} extension(s)")
    diagnosis = verdict.diagnosis if verdict.verdict != "extend" else diagnose(job_dir, job, log, succeeded=True)
    if verdict.verdict == "repair" and index is not None:
        found.plan(index, job, diagnosis)
        return
    if diagnosis is not None:
        reasons.append(f"{diagnosis.handler}: {diagnosis.summary()}")
    reasons += [note for note in verdict.notes if note.startswith("not repaired")]
    job.status = JobStatus.failed
    job.message = "physics gate failed: " + "; ".join(reasons)
    found.failures.append(f"{job.id}: no result reported, the physics gates failed: {'; '.join(reasons)}")


def _backend_repair(context: RunContext, job: Job, job_dir: Path, run: ProtocolRun, diagnosis: Diagnosis | None,
                    log: CorrectionLog, found: _Findings) -> Diagnosis | None:
    """The decision backend's diagnosis of a failure no handler repairs by a parameter (None, with the
    failure recorded, when the backend cannot give one)."""
    text = diagnosis.summary() if diagnosis else (job.message or "unknown failure")
    try:
        schema = get_protocol(run.protocol).Params.model_json_schema()
        diagnosis = backend_diagnosis(context.backend, job, text, run.protocol, run.params, schema, log,
                                      job_dir=job_dir)
    except SimagentError as err:
        found.failures.append(f"{job.id} failed: {text}; repair backend: {err}")
        return None
    found.decisions.append(Decision(decision="repair", backend=context.backend.name,
                                    detail="; ".join(diagnosis.errors)))
    return diagnosis


def _assess_failed(job: Job, job_dir: Path, index: int | None, runs: list[ProtocolRun], log: CorrectionLog,
                   context: RunContext, prescribed: bool, found: _Findings) -> None:
    """A failed job: the handlers' repair, else the decision backend's, planned for its run; or the
    failure recorded (no run to repair, a repair the description's prescription forbids, or none)."""
    found.only_extensions = False
    verdict = assess_failed(job_dir, job, log, param_only=True, prescribed=prescribed)
    diagnosis = verdict.diagnosis
    if prescribed and verdict.notes and diagnosis is not None and diagnosis.fixable:  # a repair it may not make
        found.failures.append(f"{job.id} failed: {diagnosis.summary()}; {'; '.join(verdict.notes)}")
        return
    if index is None:
        found.failures.append(f"{job.id} failed: {diagnosis.summary() if diagnosis else job.message}")
        return
    if verdict.verdict != "repair":
        # a file edit: protocol inputs are re-rendered, so it is only recorded
        found.decisions += _handler_notes(job, verdict.notes)
        diagnosis = _backend_repair(context, job, job_dir, runs[index], diagnosis, log, found)
        if diagnosis is None:
            return
    if diagnosis.fixable and prescribed and prescribed_changes(diagnosis.actions):
        found.failures.append(f"{job.id} failed: {'; '.join(diagnosis.errors)}; not repaired: the repair would "
                              f"change the {', '.join(prescribed_changes(diagnosis.actions))} that the description "
                              f"prescribes")
    elif diagnosis.fixable:
        found.plan(index, job, diagnosis)
    else:
        why = f" ({diagnosis.blocked})" if diagnosis.blocked else ""
        found.failures.append(f"{job.id} failed: {'; '.join(diagnosis.errors)}{why}")


def _apply_repairs(planned: dict[int, list[tuple[Job, Diagnosis]]], runs: list[ProtocolRun], log: CorrectionLog,
                   corrections: list[Correction], failures: list[str]) -> tuple[dict[str, Diagnosis], bool]:
    """The planned repairs applied to their runs (in place), each recorded in the correction log, the
    answer's corrections and the failed attempt's archived folder: the repaired jobs with their
    diagnoses, and whether any repair needs review."""
    repaired: dict[str, Diagnosis] = {}
    needs_review = False
    for index, items in planned.items():
        repaired_run, changes = _repair_run(runs[index], items, failures)
        if repaired_run is None:
            continue
        runs[index] = repaired_run
        for job, found, applied in changes:
            if not applied:
                continue
            record = CorrectionRecord(job=job.id, handler=found.handler or "repair", category=found.category,
                                      errors=found.errors, actions=found.actions, changes=applied,
                                      attempt=log.count(job.id) + 1,
                                      source="gate" if found.handler == EXTEND_HANDLER else "handler")
            JobFolder(job.workdir, job.id).archive_failed(CorrectionLog([*log.records, record]))
            log.add(record)
            corrections.append(Correction(job=job.id, handler=record.handler, action="; ".join(applied),
                                          reason="; ".join(found.errors)))
            repaired[job.id] = found
            needs_review = needs_review or found.needs_review
    return repaired, needs_review


def _no_round_left(planned: dict[int, list[tuple[Job, Diagnosis]]], max_repairs: int, failures: list[str]) -> None:
    """Planned repairs with no repair round left: each is a failure, and a succeeded job whose gate
    failed counts as failed (its numbers are not used)."""
    for items in planned.values():
        for job, found in items:
            failures.append(f"{job.id} failed: {found.summary()} (no repair round left: "
                            f"max_repairs = {max_repairs}); no result reported")
            if job.status == JobStatus.succeeded:  # a physics gate failed: its numbers are not used
                job.status = JobStatus.failed
                job.message = "physics gate failed: " + found.summary()


def _run_again(state: RunState, context: RunContext, runs: list[ProtocolRun], jobs: list[Job],
               corrections: list[Correction], found: _Findings, repaired: dict[str, Diagnosis],
               needs_review: bool) -> Command[Literal["input_writer", "analysis"]]:
    """Back to the input writer with the repaired runs; the jobs downstream of a repaired one are set
    aside to run again; an LLM's repair in review mode keeps the plan the failed attempt left for review."""
    superseded = _supersede_dependents(jobs, set(repaired))
    if superseded:
        found.decisions.append(Decision(decision="repair", backend="handlers",
                                        detail=f"run again after the repair of a job they depend on: "
                                               f"{', '.join(superseded)}"))
    plan = state.plan.model_copy(update={"runs": runs})
    extra = {}
    if needs_review and not context.auto_approve:
        # the plan as the failed attempt left it: what review diffs against, and what a
        # rejection goes back to (the repaired jobs count as failed there)
        before = [job.model_copy(update={"status": JobStatus.failed, "message": "; ".join(repaired[job.id].errors)})
                  if job.id in repaired else job for job in jobs]
        extra = {"reviewed": False, "repair_review": {
            "plan": state.plan.model_copy(update={"jobs": before}).model_dump(mode="json"),
            "corrections": [c.model_dump(mode="json") for c in corrections[len(state.corrections):]],
            "failures": found.failures,
        }}
    return Command(goto="input_writer", update={"corrections": corrections, "decisions": found.decisions, **extra,
                                                "plan": plan, "repairs": state.repairs + 1})


def postcheck(state: RunState, runtime: Runtime[RunContext]) -> Command[Literal["input_writer", "analysis"]]:
    """Gates on finished jobs; handlers, then the backend, on failed ones; bounded repair rounds."""
    context = runtime.context
    context.report("stage", name="postcheck", detail="physics gates and repair")
    log = CorrectionLog.from_corrections(state.corrections)
    runs = list(state.plan.runs)
    jobs = [job.model_copy() for job in state.plan.jobs]
    corrections = list(state.corrections)
    found = _Findings(decisions=list(state.decisions))
    prescribed = not context.settings.gate_extensions  # solve: the description prescribes every run
    for job in jobs:
        if job.status not in (JobStatus.succeeded, JobStatus.failed) or not job.workdir:
            continue
        job_dir, index = Path(job.workdir), _run_index(runs, job)
        if job.status == JobStatus.succeeded:
            _assess_succeeded(job, job_dir, index, log, context.settings.gate_extensions, prescribed, found)
        else:
            _assess_failed(job, job_dir, index, runs, log, context, prescribed, found)

    rounds_left = state.repairs < context.settings.max_repairs or (found.only_extensions and found.planned)
    repaired: dict[str, Diagnosis] = {}
    needs_review = False
    if found.planned and rounds_left:
        repaired, needs_review = _apply_repairs(found.planned, runs, log, corrections, found.failures)
    elif found.planned:
        _no_round_left(found.planned, context.settings.max_repairs, found.failures)
    if repaired:
        return _run_again(state, context, runs, jobs, corrections, found, repaired, needs_review)
    plan = state.plan.model_copy(update={"jobs": jobs})
    return Command(goto="analysis", update={"corrections": corrections, "decisions": found.decisions, "plan": plan,
                                            "failures": [*state.failures, *found.failures]})
