"""Running a list of jobs in dependency order through an Executor, with resume.

Used by the runner agent and directly by tests. A job whose folder already holds a successful run
of the same inputs is not run again; files named in `stage_in` are copied from finished
dependencies into the job's own folder, so an input never reads outside its folder."""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from simagent.engines import Launch, get_engine
from simagent.errors import CalculationFailed, InputError
from simagent.executor import (
    Executor,
    JobRecord,
    LocalExecutor,
    PreviousProcess,
    finished_ok,
    previous_process,
    read_record,
    stop_previous,
    write_inputs,
)
from simagent.models import Job, JobStatus, Plan

ProgressFn = Callable[[Job, JobRecord], None]
NoticeFn = Callable[[str], None]
FINAL = (JobStatus.succeeded, JobStatus.failed, JobStatus.cancelled)
# After an adopted job's process ended, time allowed for a remote owner to write its final record.
ADOPT_GRACE_S = 10.0
log = logging.getLogger(__name__)


def engine_launch(job: Job) -> Launch:
    """Command, environment, cores and ranks from the engine adapter (simagent.engines)."""
    try:
        adapter = get_engine(job.engine)
    except InputError:
        raise CalculationFailed(f"no adapter for engine {job.engine!r}") from None
    return adapter.launch(job)


def engine_command(job: Job) -> tuple[list[str], dict[str, str]]:
    launch = engine_launch(job)
    return launch.argv, launch.env


@dataclass
class PlanProgress:
    """Counts of a running plan and an ETA from the wall times of the jobs finished so far."""

    total: int
    done: int = 0
    failed: int = 0
    running: int = 0
    queued: int = 0
    workers: int = 1
    walls: list[float] = field(default_factory=list)

    @property
    def eta_s(self) -> float | None:
        """Mean finished wall time x jobs left / workers (None until a job has run here)."""
        if not self.walls:
            return None
        left = self.running + self.queued
        return sum(self.walls) / len(self.walls) * left / max(1, min(self.workers, left or 1))

    def line(self) -> str:
        eta = self.eta_s
        text = f"{self.done}/{self.total} done, {self.running} running, {self.queued} queued"
        if self.failed:
            text += f", {self.failed} failed"
        if eta is not None and self.running + self.queued:
            text += f", ETA {_duration(eta)}"
        return text


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


@dataclass
class _PlanRun:
    """What one run_plan call keeps between polls: the plan's jobs, the final records, the handles of
    the jobs it started, the processes it adopted (with the grace given a remote owner) and the notes
    that go with a job's record."""

    root: Path
    executor: Executor
    jobs: dict[str, Job]
    say: NoticeFn
    progress: ProgressFn | None
    records: dict[str, JobRecord] = field(default_factory=dict)
    handles: dict = field(default_factory=dict)
    adopted: dict[str, PreviousProcess] = field(default_factory=dict)
    adopt_grace: dict[str, float] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)

    def _final(self, job_id: str, record: JobRecord) -> None:
        self.records[job_id] = record
        if self.progress:
            self.progress(self.jobs[job_id], record)

    def settle_adopted(self) -> None:
        """Take the result of each adopted process that has ended (or queue its job again)."""
        for job_id, previous in list(self.adopted.items()):
            job_dir = self.root / job_id
            if previous_process(job_dir) is not None:
                continue
            record = read_record(job_dir)
            final = record is not None and record.status in FINAL
            if not final and (previous.owner_still_alive() or (not previous.local and time.monotonic() < (
                    self.adopt_grace.setdefault(job_id, time.monotonic() + ADOPT_GRACE_S)))):
                continue  # the owner writes the final record just after its engine ends
            del self.adopted[job_id]
            if finished_ok(self.jobs[job_id], job_dir):
                record = read_record(job_dir)
                record.message = (record.message + "; " if record.message else "") + self.notes[job_id]
                self._final(job_id, record)
            else:
                self.notes[job_id] += "; it did not finish successfully, so the job runs again"
                self.say(f"job {job_id}: the adopted process ended without success; running the job again")

    def start_ready(self) -> None:
        """Cancel the jobs whose dependency failed; start (or resume, or adopt) those whose
        dependencies all succeeded."""
        for job in self.jobs.values():
            if job.id in self.records or job.id in self.handles or job.id in self.adopted:
                continue
            deps = [self.records.get(d) for d in job.depends_on]
            if any(r is not None and r.status != JobStatus.succeeded for r in deps):
                self.records[job.id] = JobRecord(
                    job=job.id, status=JobStatus.cancelled, inputs_sha256="",
                    message="not run: a job it depends on did not succeed",
                )
                continue
            if any(r is None for r in deps):
                continue
            job_dir = self.root / job.id
            job.workdir = str(job_dir)
            if finished_ok(job, job_dir):
                self._final(job.id, read_record(job_dir))  # resume: already done
                continue
            self._start(job, job_dir)

    def _start(self, job: Job, job_dir: Path) -> None:
        """Adopt the job's still-running earlier process, or stop an orphaned one, then submit it."""
        previous = previous_process(job_dir) if job.id not in self.notes else None
        if previous is not None and (previous.owner_alive or not previous.local):
            self.notes[job.id] = f"adopted: {previous.describe()} was still running this job; waited for it"
            self.say(f"job {job.id}: {previous.describe()} is still running it; waiting for it and "
                     "adopting its result instead of starting a second one")
            self.adopted[job.id] = previous
            return
        if previous is not None:
            self.say(f"job {job.id}: stopping the orphaned {previous.describe()} before running it again")
            stop_previous(previous)
            self.notes[job.id] = f"stopped the orphaned {previous.describe()} before re-running"
        if job_dir.exists():
            shutil.rmtree(job_dir)
        write_inputs(job, job_dir)
        for dep_id, names in job.stage_in.items():
            for name in names:
                shutil.copy2(self.root / dep_id / name, job_dir / name)
        launch = engine_launch(job)
        cores = max(launch.cores, launch.ranks)
        self.handles[job.id] = self.executor.submit(job, job_dir, launch.argv, launch.env, cores)

    def poll(self, walls: list[float]) -> int:
        """Poll the started jobs, keep the final records (their wall times into `walls`); the number
        of jobs that read as running, adopted ones included."""
        running = len(self.adopted)
        for job_id, handle in list(self.handles.items()):
            record = self.executor.poll(handle)
            running += record.status == JobStatus.running
            if record.status in FINAL:
                if job_id in self.notes:
                    record.message = (record.message + "; " if record.message else "") + self.notes[job_id]
                del self.handles[job_id]
                if record.wall_s:
                    walls.append(record.wall_s)
                self._final(job_id, record)
        return running

    def counts(self, counts: PlanProgress, running: int) -> tuple[int, int, int, int]:
        """Update the plan's counts; (done, failed, running, queued)."""
        counts.done = sum(1 for r in self.records.values() if r.status == JobStatus.succeeded)
        counts.failed = len(self.records) - counts.done
        # the polls are not one snapshot: a job can end and the next start between two polls, so
        # both may read as running; the executor never runs more than its workers
        if hasattr(self.executor, "workers"):
            running = min(running, self.executor.workers + len(self.adopted))
        counts.running, counts.queued = running, len(self.jobs) - len(self.records) - running
        return counts.done, counts.failed, counts.running, counts.queued


def run_plan(
    plan: Plan,
    root: Path,
    executor: Executor | None = None,
    progress: ProgressFn | None = None,
    poll_s: float = 0.05,
    notice: NoticeFn | None = None,
    status: Callable[[PlanProgress], None] | None = None,
) -> dict[str, JobRecord]:
    """Run every job of the plan under root/<job id>; independent jobs run concurrently.

    Returns the final record of each job. A job whose dependency failed is cancelled, not run.
    A job folder whose earlier engine process is still alive (a crash of an earlier run, or another
    simagent working on the same folder) is never started twice: when that process's owner still
    runs, the job is adopted (we wait for it and take its result); when the owner is gone, the
    orphaned process is stopped first. `notice` (default: a log warning) says which.
    `status` gets the plan's counts (done, running, queued, ETA) whenever they change."""
    own = executor is None
    executor = executor or LocalExecutor()
    run = _PlanRun(root, executor, {job.id: job for job in plan.topological_order()}, notice or log.warning, progress)
    counts = PlanProgress(total=len(run.jobs), workers=getattr(executor, "workers", 1))
    shown: tuple | None = None
    try:
        while len(run.records) < len(run.jobs):
            run.settle_adopted()
            run.start_ready()
            running = run.poll(counts.walls)
            if status is not None and run.counts(counts, running) != shown:
                shown = (counts.done, counts.failed, counts.running, counts.queued)
                status(counts)
            if run.handles or run.adopted:
                time.sleep(poll_s)
    finally:
        if own:
            executor.shutdown()
    for job_id, record in run.records.items():
        run.jobs[job_id].status = record.status
        run.jobs[job_id].message = record.message
    return run.records
