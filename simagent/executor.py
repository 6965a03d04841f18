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
import socket
import subprocess
import sys
import threading
import time
from abc import ABC, abstractmethod
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from simagent import supervise
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
    clean_stop_s: int | None = None  # when the engine was told to stop itself (CLEAN_STOP_ENV)
    message: str = ""

    def may_have_stopped_itself(self) -> bool:
        """True when the run lasted past the time its engine was told to end itself at: an engine that
        honours CLEAN_STOP_ENV exits normally there, with its prescribed run cut short."""
        return self.clean_stop_s is not None and self.wall_s is not None and self.wall_s >= self.clean_stop_s


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
    """True when this exact input already ran to success in this folder (resume skips it). A run whose
    inputs read CLEAN_STOP_ENV and that lasted past that time is not taken as done: its engine may have
    ended it early, and a resumed solve may have more time for it."""
    record = read_record(job_dir)
    stops_itself = any(CLEAN_STOP_ENV in text for text in job.inputs.values())
    return bool(record and record.status == JobStatus.succeeded and record.inputs_sha256 == inputs_digest(job)
                and not (stops_itself and record.may_have_stopped_itself()))


@dataclass(frozen=True)
class JobHandle:
    job_id: str
    workdir: Path


class Executor(ABC):
    @abstractmethod
    def submit(self, job: Job, job_dir: Path, command: list[str], env: dict[str, str], cores: int = 1) -> JobHandle:
        """Start the job's command in job_dir (inputs already written there); `cores` is what the job
        uses (threads or MPI ranks, simagent.engines.Launch), so the executor can reserve them."""

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
# An engine that can end its run cleanly before a deadline (LAMMPS `timer timeout`, tools.lammps.described)
# reads this variable: the wall seconds from its start after which it should stop, a margin before the
# runner kills it at its time limit, so that its outputs are whole up to the step it stopped at.
CLEAN_STOP_ENV = "SIMAGENT_CLEAN_STOP_S"
CLEAN_STOP_MARGIN_S = 30.0  # at least (the last steps before the engine's check, writing its outputs)
CLEAN_STOP_MARGIN = 0.05  # of the time limit, when that is more
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
    # fields after the command: state ppid pgrp ... utime(11) stime(12)
    ticks = sum(int(f[11]) + int(f[12]) for f in supervise.group_processes(pgid).values())
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


CANCEL_FILE = "cancel.request"


def clean_stop_s(time_limit_s: float) -> int:
    """Whole wall seconds after which an engine should stop itself, for a job killed at `time_limit_s`:
    the limit less max(CLEAN_STOP_MARGIN_S, CLEAN_STOP_MARGIN of it), never less than half the limit
    (a short limit keeps half its time), and at least 1 s."""
    margin = min(0.5 * time_limit_s, max(CLEAN_STOP_MARGIN_S, CLEAN_STOP_MARGIN * time_limit_s))
    return max(1, int(time_limit_s - margin))


def supervised(job_dir: Path, command: list[str], owner: str | None = None) -> list[str]:
    """The command wrapped in the per-job supervisor (simagent.supervise), which ties the engine's
    life to its owner's and records pid, start time and boot id in the job folder."""
    extra = ["--owner", owner] if owner else []
    return [sys.executable, "-E", "-s", str(Path(supervise.__file__)), str(job_dir), *extra, "--", *command]


class JobWatch:
    """Runs one job's command in its folder to the end and keeps status.json up to date: wall-time
    and stall limits, cancellation (in-process, or a cancel.request file from any process), the
    final record. The local executor calls it in a thread, the Parsl executor in a worker. The engine's
    environment carries CLEAN_STOP_ENV, the time after which it should stop itself (clean_stop_s)."""

    def __init__(self, job_dir: Path, record: JobRecord, time_limit_s: float,
                 memory_limit_mb: int | None = None, stall_limit_s: float | None = STALL_LIMIT_S,
                 owner: str | None = None) -> None:
        self.job_dir, self.record = job_dir, record
        self.time_limit_s, self.memory_limit_mb, self.stall_limit_s = time_limit_s, memory_limit_mb, stall_limit_s
        self.owner = owner
        self.proc: subprocess.Popen | None = None
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True
        if self.proc is not None and self.proc.poll() is None:
            _kill_group(self.proc)

    def run(self, command: list[str], env: dict[str, str]) -> JobRecord:
        job_dir, record = self.job_dir, self.record
        start = time.monotonic()
        record.status = JobStatus.running
        record.clean_stop_s = clean_stop_s(self.time_limit_s)
        write_record(job_dir, record)
        try:
            with open(job_dir / STDOUT_FILE, "wb") as out, open(job_dir / STDERR_FILE, "wb") as err:
                self.proc = subprocess.Popen(
                    supervised(job_dir, command, self.owner), cwd=job_dir, stdout=out, stderr=err,
                    stdin=subprocess.DEVNULL, env={**env, CLEAN_STOP_ENV: str(record.clean_stop_s)},
                    preexec_fn=_limit_memory(self.memory_limit_mb),
                )
                self._watch(self.proc, start)
        except OSError as exc:
            record.status = JobStatus.failed
            record.message = f"could not start {command[0]}: {exc}"
            record.wall_s = time.monotonic() - start
            write_record(job_dir, record)
            return record
        record.wall_s = round(time.monotonic() - start, 3)
        if record.returncode == 127 and _could_not_start(job_dir):
            record.status, record.message = JobStatus.failed, f"could not start {command[0]}"
        elif self.cancelled:
            record.status, record.message = JobStatus.cancelled, "cancelled"
        elif record.timed_out:
            record.status = JobStatus.failed
            record.message = f"killed after the wall-time limit of {self.time_limit_s:g} s"
        elif record.stalled:
            record.status = JobStatus.failed
            record.message = (f"killed as hung: no output and no CPU use for {self.stall_limit_s:g} s "
                              "(no output progress)")
        elif record.returncode == 0:
            record.status = JobStatus.succeeded
        else:
            record.status = JobStatus.failed
            record.message = f"engine exited with code {record.returncode}"
            if record.returncode and record.returncode < 0:
                record.message += f" (signal {signal.Signals(-record.returncode).name})"
            if _out_of_memory(job_dir) or record.returncode == -signal.SIGKILL:
                limit = f" (limit {self.memory_limit_mb} MB)" if self.memory_limit_mb else ""
                record.message += f"; out of memory{limit}" if _out_of_memory(job_dir) else "; killed (out of memory?)"
        write_record(job_dir, record)
        return record

    def _watch(self, proc: subprocess.Popen, start: float) -> None:
        """Wait for the engine; kill it at the wall-time limit, on a cancel request, or when it makes
        no progress."""
        record = self.record
        deadline = start + self.time_limit_s
        last_state, last_change = None, time.monotonic()
        while True:
            now = time.monotonic()
            try:
                record.returncode = proc.wait(timeout=max(0.0, min(_WATCH_S, deadline - now)))
                return
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            if (self.job_dir / CANCEL_FILE).exists():
                self.cancelled = True
            if now >= deadline:
                record.timed_out = True
            elif self.stall_limit_s:
                state = _progress_state(self.job_dir, proc.pid)
                if state != last_state:
                    last_state, last_change = state, now
                elif now - last_change > self.stall_limit_s:
                    record.stalled = True
            if record.timed_out or record.stalled or self.cancelled:
                _kill_group(proc)
                record.returncode = proc.wait()
                return


def _could_not_start(job_dir: Path) -> bool:
    try:
        return "simagent.supervise: could not start" in (job_dir / STDERR_FILE).read_text(errors="replace")
    except OSError:
        return False


class LocalExecutor(Executor):
    """Runs jobs as local subprocesses using at most `max_parallel` cores at once: a job of n cores
    (threads or MPI ranks) takes n of them (a job wider than the machine runs alone)."""

    def __init__(self, max_parallel: int = 2, memory_limit_mb: int | None = 16384,
                 stall_limit_s: float | None = STALL_LIMIT_S) -> None:
        self._pool = ThreadPoolExecutor(max_workers=max_parallel, thread_name_prefix="simagent-job")
        self._memory_limit_mb = memory_limit_mb
        self._stall_limit_s = stall_limit_s
        self._watches: dict[str, JobWatch] = {}
        self._futures: dict[str, Future] = {}
        self._lock = threading.Lock()
        self.workers = max_parallel
        self._free = max_parallel
        self._cores_freed = threading.Condition()

    def submit(self, job: Job, job_dir: Path, command: list[str], env: dict[str, str], cores: int = 1) -> JobHandle:
        record = JobRecord(job=job.id, status=JobStatus.pending, inputs_sha256=inputs_digest(job), command=command)
        write_record(job_dir, record)
        watch = JobWatch(job_dir, record, job.time_limit_s, self._memory_limit_mb, self._stall_limit_s)
        with self._lock:
            self._watches[job.id] = watch
        self._futures[job.id] = self._pool.submit(self._run, watch, command, env, min(max(1, cores), self.workers))
        return JobHandle(job.id, job_dir)

    def _run(self, watch: JobWatch, command: list[str], env: dict[str, str], cores: int) -> None:
        with self._cores_freed:
            self._cores_freed.wait_for(lambda: self._free >= cores or watch.cancelled)
            if watch.cancelled:  # cancelled while queued
                watch.record.status, watch.record.message = JobStatus.cancelled, "cancelled"
                write_record(watch.job_dir, watch.record)
                return
            self._free -= cores
        try:
            watch.run(command, env)
        finally:
            with self._cores_freed:
                self._free += cores
                self._cores_freed.notify_all()

    def poll(self, handle: JobHandle) -> JobRecord:
        record = read_record(handle.workdir)
        if record is None:
            raise RuntimeError(f"job folder {handle.workdir} has no {STATUS_FILE}")
        future = self._futures.get(handle.job_id)
        if future is not None and future.done() and future.exception() is not None:
            record.status, record.message = JobStatus.failed, f"executor error: {future.exception()}"
        return record

    def cancel(self, handle: JobHandle) -> None:
        with self._lock:
            watch = self._watches.get(handle.job_id)
        if watch is not None:
            watch.cancel()
            with self._cores_freed:
                self._cores_freed.notify_all()

    def shutdown(self) -> None:
        for job_id in list(self._watches):
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


# ---------------------------------------------------------------------------------------------
# A previous process of a job folder (resume after a crash)
# ---------------------------------------------------------------------------------------------

# Another host's supervisor counts as alive while its heartbeat is younger than this.
HEARTBEAT_STALE_S = 5 * supervise.HEARTBEAT_S


@dataclass(frozen=True)
class PreviousProcess:
    """The supervisor recorded in a job folder whose process is still alive."""

    pid: int
    pgid: int
    host: str
    local: bool  # on this machine (same boot): it can be signalled; else only its heartbeat is seen
    owner_alive: bool  # its owner (the simagent or Parsl worker that started it) still runs
    owner_pid: int = 0
    owner_start: int | None = None

    def owner_still_alive(self) -> bool:
        """For a local process: is its owner (which writes the final status.json) still running?"""
        return self.local and supervise.same_process_alive(self.owner_pid, self.owner_start)

    def describe(self) -> str:
        where = "" if self.local else f" on {self.host}"
        owner = "its owner is still running" if self.owner_alive else "its owner is gone"
        return f"engine process {self.pid}{where} ({owner})"


def previous_process(job_dir: Path) -> PreviousProcess | None:
    """The job's earlier supervisor if it is still alive, judged by pid + start time + boot id on
    this machine, or by a fresh heartbeat file for another host."""
    try:
        info = json.loads((job_dir / supervise.PROCESS_FILE).read_text())
    except (OSError, ValueError):
        return None
    local = info.get("boot_id") == supervise.boot_id() and info.get("host") == socket.gethostname()
    if local:
        if not supervise.same_process_alive(info["supervisor_pid"], info.get("supervisor_start")):
            return None
        owner_alive = supervise.same_process_alive(info["owner_pid"], info.get("owner_start"))
    else:
        try:
            age = time.time() - (job_dir / supervise.HEARTBEAT_FILE).stat().st_mtime
        except OSError:
            return None
        if age > HEARTBEAT_STALE_S:
            return None
        owner_alive = True  # cannot be checked from here
    return PreviousProcess(info["supervisor_pid"], info.get("pgid", info["supervisor_pid"]),
                           info.get("host", "?"), local, owner_alive, info.get("owner_pid", 0), info.get("owner_start"))


def stop_previous(previous: PreviousProcess, grace_s: float = 5.0) -> None:
    """Stop a local previous process group: SIGTERM, then SIGKILL after grace_s."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 2.0)):
        try:
            os.killpg(previous.pgid, sig)
            os.killpg(previous.pgid, signal.SIGCONT)  # a stopped supervisor must run to act on it
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if supervise.start_ticks(previous.pid) is None:
                return
            time.sleep(0.05)


def wait_previous(job_dir: Path, previous: PreviousProcess, poll_s: float = 0.5,
                  timeout_s: float | None = None) -> bool:
    """Wait until the previous process has exited; False on timeout."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while previous_process(job_dir) is not None:
        if deadline is not None and time.monotonic() > deadline:
            return False
        time.sleep(poll_s)
    return True
