"""Running a list of jobs in dependency order through an Executor, with resume.

Used by the runner agent and directly by tests. A job whose folder already holds a successful run
of the same inputs is not run again; files named in `stage_in` are copied from finished
dependencies into the job's own folder, so an input never reads outside its folder."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

from simagent.engines import get_engine
from simagent.errors import CalculationFailed, InputError
from simagent.executor import Executor, JobRecord, LocalExecutor, finished_ok, read_record, write_inputs
from simagent.models import Job, JobStatus, Plan

ProgressFn = Callable[[Job, JobRecord], None]


def engine_command(job: Job) -> tuple[list[str], dict[str, str]]:
    """Command and environment from the engine adapter (simagent.engines)."""
    try:
        adapter = get_engine(job.engine)
    except InputError:
        raise CalculationFailed(f"no adapter for engine {job.engine!r}") from None
    launch = adapter.launch(job)
    return launch.argv, launch.env


def run_plan(
    plan: Plan,
    root: Path,
    executor: Executor | None = None,
    progress: ProgressFn | None = None,
    poll_s: float = 0.05,
) -> dict[str, JobRecord]:
    """Run every job of the plan under root/<job id>; independent jobs run concurrently.

    Returns the final record of each job. A job whose dependency failed is cancelled, not run."""
    own = executor is None
    executor = executor or LocalExecutor()
    records: dict[str, JobRecord] = {}
    jobs = {job.id: job for job in plan.topological_order()}
    handles = {}
    try:
        while len(records) < len(jobs):
            for job in jobs.values():
                if job.id in records or job.id in handles:
                    continue
                deps = [records.get(d) for d in job.depends_on]
                if any(r is not None and r.status != JobStatus.succeeded for r in deps):
                    records[job.id] = JobRecord(
                        job=job.id, status=JobStatus.cancelled, inputs_sha256="",
                        message="not run: a job it depends on did not succeed",
                    )
                    continue
                if any(r is None for r in deps):
                    continue
                job_dir = root / job.id
                job.workdir = str(job_dir)
                if finished_ok(job, job_dir):
                    records[job.id] = read_record(job_dir)  # resume: already done
                    if progress:
                        progress(job, records[job.id])
                    continue
                if job_dir.exists():
                    shutil.rmtree(job_dir)
                write_inputs(job, job_dir)
                for dep_id, names in job.stage_in.items():
                    for name in names:
                        shutil.copy2(root / dep_id / name, job_dir / name)
                command, env = engine_command(job)
                handles[job.id] = executor.submit(job, job_dir, command, env)
            for job_id, handle in list(handles.items()):
                record = executor.poll(handle)
                if record.status in (JobStatus.succeeded, JobStatus.failed, JobStatus.cancelled):
                    records[job_id] = record
                    del handles[job_id]
                    if progress:
                        progress(jobs[job_id], record)
            if handles:
                time.sleep(poll_s)
    finally:
        if own:
            executor.shutdown()
    for job_id, record in records.items():
        jobs[job_id].status = record.status
        jobs[job_id].message = record.message
    return records
