"""`simagent check FILE` and `simagent run FILE`: users' own inputs through the same pre-run check,
runner and repair loop as generated ones.

check: safety policy, static physics checks and a dry run; prints the findings; exit 0 when the
input may run (warnings allowed), 1 when it is broken, 4 when it is unsafe.
run: check, pre-run corrections (e.g. a timestep beyond the bound), run in its own folder with
wall-time and memory limits, then gates and the handler library in a loop (bounded): each
correction is applied by the input modder, logged to corrections.json and, without --yes, shown
as a diff for approval. With --json one object: status (succeeded | failed | rejected),
corrections, final_input, log, job_dir, gates, message. Exit 0 only when it succeeded.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.syntax import Syntax

from simagent.assessment import EXTEND_HANDLER, assess_failed, assess_finished
from simagent.engines import EngineAdapter, all_engines, get_engine, guess_engine
from simagent.errors import InputError, SimagentError
from simagent.executor import LocalExecutor
from simagent.handlers import (
    CorrectionLog,
    CorrectionRecord,
    Diagnosis,
    Finding,
    apply_actions,
    backend_diagnosis,
    input_diff,
)
from simagent.jobfolder import JobFolder
from simagent.models import Job, JobStatus

EXIT_OK, EXIT_FAILED, EXIT_UNSAFE = 0, 1, 4
MAX_ATTEMPTS = 6  # runs of one input, the first included
DEFAULT_TIME_LIMIT_S = 1800.0


def user_engines() -> list[str]:
    """Engines whose users' own inputs `simagent check/run` takes."""
    return [adapter.name for adapter in all_engines() if adapter.user_inputs]


def load(path: Path, engine: str | None,
         time_limit_s: float = DEFAULT_TIME_LIMIT_S) -> tuple[Job, dict[str, Path], EngineAdapter]:
    path = Path(path).expanduser()
    if not path.exists():
        raise InputError(f"{path} does not exist")
    engine = engine or guess_engine(path)
    if engine not in user_engines():
        raise InputError(f"unknown engine {engine!r}; use one of {', '.join(user_engines())}")
    adapter = get_engine(engine)
    job, files = adapter.load_user_job(path.resolve(), time_limit_s=time_limit_s)
    return job, files, adapter


# ---------------------------------------------------------------------------------------------
# check
# ---------------------------------------------------------------------------------------------


@dataclass
class CheckReport:
    file: str
    engine: str
    findings: list[Finding]

    @property
    def unsafe(self) -> bool:
        return any(f.severity == "unsafe" for f in self.findings)

    @property
    def broken(self) -> bool:
        return any(f.severity == "error" for f in self.findings)

    @property
    def exit_code(self) -> int:
        return EXIT_UNSAFE if self.unsafe else EXIT_FAILED if self.broken else EXIT_OK

    def as_dict(self) -> dict:
        status = "unsafe" if self.unsafe else "broken" if self.broken else "ok"
        return {"file": self.file, "engine": self.engine, "status": status,
                "findings": [asdict(f) for f in self.findings]}


def check_file(path: Path, engine: str | None = None, dry_run: bool = True) -> CheckReport:
    job, files, adapter = load(path, engine)
    findings = adapter.precheck_findings(job, dry_run=dry_run, files=files)
    return CheckReport(str(path), job.engine, findings)


# ---------------------------------------------------------------------------------------------
# run: the repair loop
# ---------------------------------------------------------------------------------------------


@dataclass
class RunReport:
    status: str  # succeeded | failed | rejected
    file: str
    engine: str
    corrections: list[dict] = field(default_factory=list)
    final_input: str | None = None
    log: str | None = None
    job_dir: str | None = None
    attempts: int = 0
    gates: str = ""
    findings: list[dict] = field(default_factory=list)
    diagnoses: list[dict] = field(default_factory=list)  # every failure mode recognised, fixed or not
    message: str = ""

    @property
    def exit_code(self) -> int:
        return EXIT_OK if self.status == "succeeded" else EXIT_UNSAFE if self.status == "rejected" else EXIT_FAILED

    def note(self, diagnosis: Diagnosis | None, attempt: int) -> None:
        if diagnosis is not None and diagnosis.handler:
            self.diagnoses.append({"attempt": attempt, "handler": diagnosis.handler, "category": diagnosis.category,
                                   "errors": diagnosis.errors, "fixable": diagnosis.fixable,
                                   "blocked": diagnosis.blocked})

    def as_dict(self) -> dict:
        return asdict(self)


Confirm = Callable[[str, str], bool]  # (what, diff) -> apply?


def _resolver(source_folder: Path, adapter: EngineAdapter) -> Callable[[str], str]:
    def resolve(source: str) -> str:
        kind, name = source.split(":", 1)
        if kind == "user":
            path = source_folder / name
            if path.resolve().parent != source_folder.resolve() or not path.is_file():
                raise InputError(f"{name} is not a file in {source_folder}")
            return path.read_text()
        if kind == "library":
            return adapter.library_file(name)
        raise InputError(f"cannot resolve {source}")

    return resolve


def _run_once(job: Job, folder: JobFolder, files: dict[str, Path], executor: LocalExecutor,
              adapter: EngineAdapter) -> tuple[JobStatus, str]:
    folder.write_inputs(job, files)
    launch = adapter.launch(job)
    handle = executor.submit(job, folder.path, launch.argv, launch.env, max(launch.cores, launch.ranks))
    while True:
        record = executor.poll(handle)
        if record.status in (JobStatus.succeeded, JobStatus.failed, JobStatus.cancelled):
            return record.status, record.message
        time.sleep(0.05)


@dataclass
class _Corrector:
    """The user's job as corrections change it: each correction applied (after approval, unless
    `yes`), logged for the job folder and listed in the report."""

    job: Job
    log: CorrectionLog
    report: RunReport
    resolve: Callable
    say: Callable[[str], None]
    yes: bool
    confirm: Confirm | None

    def apply(self, diagnosis: Diagnosis, source: str) -> bool:
        job, report = self.job, self.report
        try:
            new, changes = apply_actions(job, diagnosis.actions, self.resolve)
        except SimagentError as err:
            report.message = f"{diagnosis.summary()}; the correction could not be applied: {err}"
            return False
        diff = input_diff(job, new)
        if not self.yes and self.confirm is not None and not self.confirm(
                f"{diagnosis.handler}: {diagnosis.summary()}", diff):
            report.message = f"{diagnosis.summary()}; the correction was not approved"
            return False
        record = CorrectionRecord(job=job.id, handler=diagnosis.handler or "?", category=diagnosis.category,
                                  errors=diagnosis.errors, actions=diagnosis.actions, changes=changes,
                                  attempt=report.attempts, source=source)  # type: ignore[arg-type]
        self.log.add(record)
        report.corrections.append({"handler": record.handler, "category": record.category,
                                   "reason": "; ".join(record.errors), "changes": changes,
                                   "attempt": record.attempt, "source": source})
        self.say(f"correction ({diagnosis.handler}): {'; '.join(changes)}")
        self.job = new
        return True


def _after_run(status: JobStatus, message: str, job: Job, job_dir: Path, log: CorrectionLog, report: RunReport,
               backend) -> Diagnosis | None:
    """The correction to make after one attempt, or None when the loop ends (the report says how)."""
    if status == JobStatus.succeeded:
        verdict = assess_finished(job_dir, job, log, repair_warnings=True)
        report.gates = verdict.gates.summary()
        diagnosis = verdict.diagnosis
        if verdict.verdict == "pass":
            report.note(diagnosis, report.attempts)
            report.status = "succeeded"
            report.message = diagnosis.summary() if diagnosis else "finished; all gates passed"
            return None
        if verdict.verdict == "repair":
            report.note(diagnosis, report.attempts)
        elif verdict.verdict == "fail":
            report.note(diagnosis or Diagnosis(job=job.id, errors=verdict.reasons, handler="gates",
                                               category="physics gate"), report.attempts)
            report.message = "the physics gates failed, no number should be trusted: " + \
                             "; ".join(verdict.reasons)
            return None
        return diagnosis
    diagnosis = assess_failed(job_dir, job, log).diagnosis
    report.note(diagnosis, report.attempts)
    if (diagnosis is None or not diagnosis.fixable) and backend is not None:
        text = diagnosis.summary() if diagnosis else (message or "unknown failure")
        diagnosis = backend_diagnosis(backend, job, _failure_context(job_dir, text), f"user/{job.engine}",
                                      {}, {}, log)
    if diagnosis is None or not diagnosis.fixable:
        reason = diagnosis.summary() if diagnosis else (message or "unknown failure")
        blocked = f" ({diagnosis.blocked})" if diagnosis and diagnosis.blocked else ""
        report.message = f"the run failed: {reason}{blocked}"
        return None
    return diagnosis


def run_file(path: Path, engine: str | None = None, workdir: Path | None = None, yes: bool = True,
             confirm: Confirm | None = None, backend=None, time_limit_s: float = DEFAULT_TIME_LIMIT_S,
             memory_limit_mb: int | None = 16384, stall_limit_s: float | None = 300.0,
             max_attempts: int = MAX_ATTEMPTS, progress: Callable[[str], None] | None = None,
             ranks: int = 1, threads: int = 1) -> RunReport:
    """Check, correct, run and repair a user's input until it runs and passes the gates (bounded);
    on `ranks` MPI ranks of `threads` OpenMP threads each (an engine that cannot use them refuses)."""
    path = Path(path).expanduser().resolve()
    say = progress or (lambda _msg: None)
    job, files, adapter = load(path, engine, time_limit_s)
    job = job.model_copy(update={"ranks": ranks, "threads": threads})
    adapter.launch(job)  # refuses ranks/threads the engine cannot use before anything runs
    root = Path(workdir or Path("simagent-runs") / "user" / f"{path.stem}-{time.strftime('%Y%m%d-%H%M%S')}")
    root = root.resolve()
    root.mkdir(parents=True, exist_ok=True)
    job_dir = root / job.id
    folder = JobFolder(job_dir, job.id)
    report = RunReport(status="failed", file=str(path), engine=job.engine, job_dir=str(job_dir))
    log = CorrectionLog()
    fix = _Corrector(job, log, report, _resolver(path.parent if path.is_file() else path, adapter), say, yes, confirm)

    # 1. pre-run: safety policy and static checks; the dry run is left to the first real run,
    #    which stops at the same line (and the repair loop handles it)
    findings = adapter.precheck_findings(job, dry_run=False, files=files)
    report.findings = [asdict(f) for f in findings]
    unsafe = [f for f in findings if f.severity == "unsafe"]
    if unsafe:
        report.status = "rejected"
        report.message = "rejected by the safety policy; nothing was run: " + "; ".join(f.message for f in unsafe)
        return report
    for finding in findings:
        if finding.actions and log.allows(job.id) is None:
            fix.apply(Diagnosis(job=job.id, errors=[finding.message], handler=finding.handler or "precheck",
                                category=finding.category, actions=finding.actions), "precheck")

    # 2. run, gate, repair
    executor = LocalExecutor(max_parallel=1, memory_limit_mb=memory_limit_mb, stall_limit_s=stall_limit_s)
    try:
        while report.attempts < max_attempts:
            unsafe = [f for f in adapter.precheck_findings(fix.job, dry_run=False, files=files)
                      if f.severity == "unsafe"]
            if unsafe:  # a correction (e.g. from an LLM) must never make an input unsafe
                report.status = "rejected"
                report.message = "a corrected input broke the safety policy; not run: " + unsafe[0].message
                break
            report.attempts += 1
            say(f"attempt {report.attempts}: running {fix.job.engine} in {job_dir}")
            status, message = _run_once(fix.job, folder, files, executor, adapter)
            diagnosis = _after_run(status, message, fix.job, job_dir, log, report, backend)
            if diagnosis is None:
                break
            folder.archive_failed(CorrectionLog(log.records))
            if not fix.apply(diagnosis, "gate" if diagnosis.handler == EXTEND_HANDLER else
                             "backend" if diagnosis.category == "backend" else "handler"):
                break
        else:
            report.message = f"gave up after {max_attempts} runs"
    finally:
        executor.shutdown()
    if job_dir.is_dir():
        log.write(job_dir, fix.job.id)
        report.final_input = str(job_dir / adapter.main_input(fix.job))
        report.log = str(adapter.user_log(job_dir))
    return report


def _failure_context(job_dir: Path, text: str) -> str:
    """The diagnosis plus the tail of the screen output, for the decision backend."""
    tail = ""
    path = job_dir / "stdout.txt"
    if path.is_file():
        tail = "\n".join(path.read_text(errors="replace").splitlines()[-15:])
    return f"{text}\nlast output lines:\n{tail}" if tail else text


# ---------------------------------------------------------------------------------------------
# Typer commands (registered on simagent.cli's app)
# ---------------------------------------------------------------------------------------------


EngineOpt = Annotated[str | None, typer.Option("--engine", help="lammps | gromacs | raspa (default: from the file)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print one JSON object on stdout")]
FileArg = Annotated[Path, typer.Argument(help="input file (LAMMPS script, .mdp, simulation.input) or folder")]
NoDryRunOpt = Annotated[bool, typer.Option("--no-dry-run", help="skip the engine's parse-level dry run")]
WorkdirOpt = Annotated[Path | None, typer.Option("--workdir", help="run folder")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="apply corrections without asking")]
TimeLimitOpt = Annotated[float, typer.Option("--time-limit", help="wall-time limit per run, s")]
RanksOpt = Annotated[int, typer.Option("--ranks", min=1, help="MPI ranks (LAMMPS: mpiexec -n; GROMACS: -ntmpi)")]
ThreadsOpt = Annotated[int, typer.Option("--threads", min=1, help="OpenMP threads per rank (LAMMPS: -sf omp; "
                                          "GROMACS: -ntomp)")]


def register(app) -> None:
    err = Console(stderr=True)

    @app.command("check")
    def check_command(file: FileArg, engine: EngineOpt = None, json_out: JsonOpt = False,
                      no_dry_run: NoDryRunOpt = False) -> None:
        """Check an input: safety policy, physics sanity, dry run. Exit 1 if broken, 4 if unsafe."""
        try:
            report = check_file(file, engine, dry_run=not no_dry_run)
        except SimagentError as exc:
            _emit_error(json_out, str(exc), err)
            raise typer.Exit(EXIT_FAILED) from None
        if json_out:
            typer.echo(json.dumps(report.as_dict()))
        else:
            out = Console()
            if not report.findings:
                out.print(f"[green]ok[/green]  {file}: no problems found")
            for f in report.findings:
                colour = {"unsafe": "red", "error": "red", "warning": "yellow"}[f.severity]
                where = f"{f.file or ''}{f' line {f.line}' if f.line else ''}"
                out.print(f"[{colour}]{f.severity}[/{colour}] {where} [{f.category}] {f.message}")
                for action in f.actions:
                    out.print(f"    suggested correction: {action}")
        raise typer.Exit(report.exit_code)

    @app.command("run")
    def run_command(file: FileArg, engine: EngineOpt = None, workdir: WorkdirOpt = None, yes: YesOpt = False,
                    json_out: JsonOpt = False, time_limit: TimeLimitOpt = DEFAULT_TIME_LIMIT_S,
                    ranks: RanksOpt = 1, threads: ThreadsOpt = 1) -> None:
        """Run an input with pre-run check, repair loop and physics gates. Exit 0 only on success."""
        from simagent.backends import get_backend
        from simagent.config import load_settings

        def confirm(what: str, diff: str) -> bool:
            err.rule(what)
            err.print(Syntax(diff or "(no textual change)", "diff"))
            try:
                return typer.confirm("apply this correction and run again?", default=True, err=True)
            except (typer.Abort, EOFError):
                return False

        settings = load_settings()
        backend = get_backend(settings) if settings.resolved_backend == "openai" else None
        try:
            report = run_file(file, engine, workdir, yes=yes, confirm=confirm, backend=backend,
                              time_limit_s=time_limit, ranks=ranks, threads=threads,
                              progress=None if json_out else (lambda m: err.print(f"[dim]· {m}[/dim]")))
        except SimagentError as exc:
            _emit_error(json_out, str(exc), err)
            raise typer.Exit(EXIT_FAILED) from None
        if json_out:
            typer.echo(json.dumps(report.as_dict()))
        else:
            out = Console()
            colour = {"succeeded": "green", "failed": "red", "rejected": "red"}[report.status]
            out.print(f"[bold {colour}]{report.status}[/bold {colour}]  {report.message}")
            for c in report.corrections:
                out.print(f"  correction [{c['category']}] {c['handler']}: {'; '.join(c['changes'])} — {c['reason']}")
            if report.final_input:
                out.print(f"final input: {report.final_input}\nlog: {report.log}")
        raise typer.Exit(report.exit_code)


def _emit_error(as_json: bool, message: str, err) -> None:
    if as_json:
        print(json.dumps({"status": "failed", "corrections": [], "final_input": None, "log": None,
                          "message": message}))
    else:
        err.print(f"[red]error:[/red] {message}")
