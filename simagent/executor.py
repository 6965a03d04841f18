"""Job execution behind a small interface (submit -> handle; poll; cancel).

Job state lives in the job folder (status.json, inputs, logs), never only in process memory, so a
later process (`simagent resume`) or another executor (a cluster one, later) can pick it up.
The local executor runs independent jobs concurrently, each with a wall-time and memory limit.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import subprocess
import threading
import time
from abc import ABC, abstractmethod
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from simagent.models import Job, JobStatus

STATUS_FILE = "status.json"
STDOUT_FILE = "stdout.txt"
STDERR_FILE = "stderr.txt"


class JobRecord(BaseModel):
    """What status.json holds."""

    job: str
    status: JobStatus
    inputs_sha256: str
    command: list[str] = []
    returncode: int | None = None
    wall_s: float | None = None
    timed_out: bool = False
    stalled: bool = False
    message: str = ""


def inputs_digest(job: Job) -> str:
    h = hashlib.sha256()
    for name in sorted(job.inputs):
        h.update(name.encode() + b"\0" + job.inputs[name].encode() + b"\0")
    return h.hexdigest()


def read_record(job_dir: Path) -> JobRecord | None:
    path = job_dir / STATUS_FILE
    if not path.is_file():
        return None
    try:
        return JobRecord.model_validate_json(path.read_text())
    except ValueError:
        return None


def write_record(job_dir: Path, record: JobRecord) -> None:
    tmp = job_dir / (STATUS_FILE + ".tmp")
    tmp.write_text(record.model_dump_json(indent=2))
    tmp.replace(job_dir / STATUS_FILE)


def finished_ok(job: Job, job_dir: Path) -> bool:
    """True when this exact input already ran to success in this folder (resume skips it)."""
    record = read_record(job_dir)
    return bool(record and record.status == JobStatus.succeeded and record.inputs_sha256 == inputs_digest(job))


@dataclass(frozen=True)
class JobHandle:
    job_id: str
    workdir: Path


class Executor(ABC):
    @abstractmethod
    def submit(self, job: Job, job_dir: Path, command: list[str], env: dict[str, str]) -> JobHandle:
        """Start the job's command in job_dir (inputs already written there)."""

    @abstractmethod
    def poll(self, handle: JobHandle) -> JobRecord:
        """Current state, read from the job folder."""

    @abstractmethod
    def cancel(self, handle: JobHandle) -> None:
        """Stop a running job; its record says cancelled."""


def _limit_memory(limit_mb: int | None):
    def apply() -> None:
        os.setsid()  # own process group, so a time-out kills the engine's children too
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crashing engine leaves no core file
        if limit_mb:
            size = limit_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    return apply


# A job is hung when neither its folder's files grow nor its processes use CPU for this long
# (a busy engine that buffers its output is never killed by this, only by the wall-time limit).
STALL_LIMIT_S = 300.0
_WATCH_S = 0.5
_OOM_SIGNS = ("bad_alloc", "MemoryError", "Cannot allocate memory", "Failed to allocate", "out of memory",
              "Out of memory", "std::length_error")


def _progress_state(job_dir: Path, pgid: int) -> tuple[int, int]:
    """(bytes in the job folder, CPU clock ticks used by the job's process group)."""
    size = 0
    try:
        for entry in os.scandir(job_dir):
            if entry.is_file(follow_symlinks=False):
                size += entry.stat(follow_symlinks=False).st_size
    except OSError:
        pass
    ticks = 0
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after the command: state ppid pgrp ... utime(11) stime(12)
            ticks += int(fields[11]) + int(fields[12])
    return size, ticks


def _out_of_memory(job_dir: Path) -> bool:
    for name in (STDERR_FILE, STDOUT_FILE):
        path = job_dir / name
        try:
            with open(path, "rb") as handle:
                handle.seek(max(0, path.stat().st_size - 8192))
                tail = handle.read().decode(errors="replace")
        except OSError:
            continue
        if any(sign in tail for sign in _OOM_SIGNS):
            return True
    return False


class LocalExecutor(Executor):
    """Runs jobs as local subprocesses, at most `max_parallel` at once."""

    def __init__(self, max_parallel: int = 2, memory_limit_mb: int | None = 16384,
                 stall_limit_s: float | None = STALL_LIMIT_S) -> None:
        self._pool = ThreadPoolExecutor(max_workers=max_parallel, thread_name_prefix="simagent-job")
        self._memory_limit_mb = memory_limit_mb
        self._stall_limit_s = stall_limit_s
        self._procs: dict[str, subprocess.Popen] = {}
        self._futures: dict[str, Future] = {}
        self._lock = threading.Lock()
        self._cancelled: set[str] = set()

    def submit(self, job: Job, job_dir: Path, command: list[str], env: dict[str, str]) -> JobHandle:
        record = JobRecord(job=job.id, status=JobStatus.pending, inputs_sha256=inputs_digest(job), command=command)
        write_record(job_dir, record)
        self._futures[job.id] = self._pool.submit(self._run, job, job_dir, command, env, record)
        return JobHandle(job.id, job_dir)

    def _run(self, job: Job, job_dir: Path, command: list[str], env: dict[str, str], record: JobRecord) -> None:
        start = time.monotonic()
        record.status = JobStatus.running
        write_record(job_dir, record)
        try:
            with open(job_dir / STDOUT_FILE, "wb") as out, open(job_dir / STDERR_FILE, "wb") as err:
                proc = subprocess.Popen(
                    command, cwd=job_dir, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env,
                    preexec_fn=_limit_memory(self._memory_limit_mb),
                )
                with self._lock:
                    self._procs[job.id] = proc
                self._watch(proc, job, job_dir, record, start)
        except OSError as exc:
            record.status = JobStatus.failed
            record.message = f"could not start {command[0]}: {exc}"
            record.wall_s = time.monotonic() - start
            write_record(job_dir, record)
            return
        record.wall_s = round(time.monotonic() - start, 3)
        if job.id in self._cancelled:
            record.status, record.message = JobStatus.cancelled, "cancelled"
        elif record.timed_out:
            record.status = JobStatus.failed
            record.message = f"killed after the wall-time limit of {job.time_limit_s:g} s"
        elif record.stalled:
            record.status = JobStatus.failed
            record.message = (f"killed as hung: no output and no CPU use for {self._stall_limit_s:g} s "
                              "(no output progress)")
        elif record.returncode == 0:
            record.status = JobStatus.succeeded
        else:
            record.status = JobStatus.failed
            record.message = f"engine exited with code {record.returncode}"
            if record.returncode and record.returncode < 0:
                record.message += f" (signal {signal.Signals(-record.returncode).name})"
            if _out_of_memory(job_dir) or record.returncode == -signal.SIGKILL:
                limit = f" (limit {self._memory_limit_mb} MB)" if self._memory_limit_mb else ""
                record.message += f"; out of memory{limit}" if _out_of_memory(job_dir) else "; killed (out of memory?)"
        write_record(job_dir, record)

    def _watch(self, proc: subprocess.Popen, job: Job, job_dir: Path, record: JobRecord, start: float) -> None:
        """Wait for the engine; kill it at the wall-time limit or when it makes no progress."""
        deadline = start + job.time_limit_s
        last_state, last_change = None, time.monotonic()
        while True:
            now = time.monotonic()
            try:
                record.returncode = proc.wait(timeout=max(0.0, min(_WATCH_S, deadline - now)))
                return
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if now >= deadline:
                record.timed_out = True
            elif self._stall_limit_s:
                state = _progress_state(job_dir, proc.pid)
                if state != last_state:
                    last_state, last_change = state, now
                elif now - last_change > self._stall_limit_s:
                    record.stalled = True
            if record.timed_out or record.stalled:
                _kill_group(proc)
                record.returncode = proc.wait()
                return

    def poll(self, handle: JobHandle) -> JobRecord:
        record = read_record(handle.workdir)
        if record is None:
            raise RuntimeError(f"job folder {handle.workdir} has no {STATUS_FILE}")
        future = self._futures.get(handle.job_id)
        if future is not None and future.done() and future.exception() is not None:
            record.status, record.message = JobStatus.failed, f"executor error: {future.exception()}"
        return record

    def cancel(self, handle: JobHandle) -> None:
        self._cancelled.add(handle.job_id)
        with self._lock:
            proc = self._procs.get(handle.job_id)
        if proc is not None and proc.poll() is None:
            _kill_group(proc)

    def shutdown(self) -> None:
        for job_id in list(self._procs):
            self.cancel(JobHandle(job_id, Path(".")))
        self._pool.shutdown(wait=True)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def write_inputs(job: Job, job_dir: Path) -> None:
    job_dir.mkdir(parents=True, exist_ok=True)
    for name, text in job.inputs.items():
        (job_dir / name).write_text(text)
    (job_dir / "job.json").write_text(json.dumps(job.model_dump(mode="json", exclude={"inputs"}), indent=2))
