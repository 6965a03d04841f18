"""Response agent: the Answer (status, numbers with unit, uncertainty and provenance, defaults,
corrections, a plain-language summary), written to the run folder as answer.json."""

from __future__ import annotations

from pathlib import Path

from langgraph.runtime import Runtime

from simagent.handlers import CorrectionLog
from simagent.knowledge import comparison
from simagent.models import Answer, Correction, Result, TaskSpec
from simagent.state import RunContext, RunState

LABELS = {
    "lattice_constant": "lattice constant", "lattice_constant_c": "lattice constant c",
    "cohesive_energy": "cohesive energy", "potential_energy_per_atom": "potential energy per atom",
    "kinetic_energy_per_atom": "kinetic energy per atom", "total_energy_per_atom": "total energy per atom",
    "self_diffusion_coefficient": "self-diffusion coefficient", "coordination_number": "coordination number",
    "rdf_first_peak": "first RDF peak position",
}


def format_value(result: Result) -> str:
    unit = "" if result.unit in ("", "reduced", "dimensionless") else f" {result.unit}"
    reduced = " (reduced units)" if result.unit == "reduced" else ""
    if result.uncertainty is None:
        return f"{result.value:.6g}{unit}{reduced}"
    return f"{result.value:.6g} ± {result.uncertainty:.2g}{unit}{reduced}"


def summarise(spec: TaskSpec | None, results: list[Result], failures: list[str], error: str | None) -> str:
    if error:
        return f"No answer: {error}"
    system = spec.system.name if spec and spec.system else "the system"
    lines = []
    for r in results:
        label = LABELS.get(r.quantity, r.quantity.replace("_", " "))
        lines.append(f"The {label} of {system} is {format_value(r)} (job {r.job}; {r.method}).")
    missing = [p.name for p in (spec.properties if spec else []) if not any(r.property == p.name for r in results)]
    if missing:
        lines.append("Not computed: " + ", ".join(LABELS.get(m, m.replace("_", " ")) for m in missing) + ".")
    lines += [f"Failure: {f}" for f in failures]
    if spec and spec.unparsed:
        lines.append("Not understood (ignored): " + "; ".join(f"'{s}'" for s in spec.unparsed) + ".")
    return " ".join(lines) if lines else "No results."


def engine_corrections(state: RunState) -> list[Correction]:
    """Corrections an engine's own runner made inside a job (QE and VASP recover in-job and record
    them in the job's corrections.json), which the graph's repair loop did not make itself."""
    known = {(c.job, c.handler, c.action) for c in state.corrections}
    found = []
    for job in state.plan.jobs if state.plan else []:
        for record in CorrectionLog.read(Path(job.workdir)) if job.workdir else []:
            correction = record.to_correction()
            if (correction.job, correction.handler, correction.action) not in known:
                known.add((correction.job, correction.handler, correction.action))
                found.append(correction)
    return found


def build_answer(state: RunState) -> Answer:
    if state.screen is not None:  # a screening run: the top N, each from its GCMC job
        status = "answered" if state.results and not state.error else "failed"
        return Answer(status=status, request=state.request, answers=state.results, decisions=state.decisions,
                      jobs=[r.job for r in state.results], summary=state.screen or f"No answer: {state.error}",
                      thread_id=state.thread_id, error=state.error)
    if state.knowledge is not None:  # answered from retrieved passages: citations, no computed numbers
        return Answer(status="failed" if state.error else "answered", request=state.request,
                      decisions=state.decisions, summary=state.knowledge, citations=state.citations,
                      thread_id=state.thread_id, error=state.error)
    spec = state.spec
    requested = {p.name for p in spec.properties} if spec else set()
    answered = {p for p in requested if any(r.property == p for r in state.results)}
    status = "answered" if state.results and not state.error and answered == requested else "failed"
    jobs = [job.workdir for job in state.plan.jobs if job.workdir] if state.plan else []
    error = state.error or ("; ".join(state.failures) if status == "failed" and state.failures else None)
    if status == "failed" and not error:
        error = "no result for: " + ", ".join(sorted(requested - answered))
    return Answer(
        status=status, request=state.request, answers=state.results, defaults_applied=state.defaults_applied,
        corrections=[*state.corrections, *engine_corrections(state)], decisions=state.decisions, jobs=jobs,
        summary=summarise(spec, state.results, state.failures, state.error), thread_id=state.thread_id,
        error=error,
    )


def write_answer(answer: Answer, root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "answer.json"
    tmp = root / "answer.json.tmp"
    tmp.write_text(answer.model_dump_json(indent=2))
    tmp.replace(path)
    return path


def response(state: RunState, runtime: Runtime[RunContext]) -> dict:
    answer = build_answer(state)
    if state.knowledge is None and state.screen is None:  # a computed answer: the user's papers beside it
        answer = comparison.add_literature(answer, state.spec, runtime.context.extra.get("literature_kb"))
    write_answer(answer, Path(state.root))
    runtime.context.report("stage", name="response", detail=answer.status)
    return {"answer": answer}
