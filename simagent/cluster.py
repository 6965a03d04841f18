"""Executors chosen by name in the settings: `local` (threads on this machine), `parsl-local`
(Parsl HighThroughputExecutor with a LocalProvider), `slurm` and `pbs` (Parsl's SlurmProvider and
PBSProProvider: blocks of nodes from the batch system, workers pulling jobs).

Whatever runs a job, its state stays in the job folder (status.json written by the worker that ran
it, process.json + heartbeat by its supervisor), so a restarted simagent resumes without redoing
finished jobs and never starts a job whose earlier process still runs (simagent.jobrun). A worker
that is lost (killed, node failure) fails its task with Parsl's ManagerLost/WorkerLost; Parsl then
runs the task again (`retries`), in the same job folder.

Cluster settings live in the config file's [cluster] table (see README, "Running on a cluster").
"""

from __future__ import annotations

import os
import shlex
import sys
import threading
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from simagent import supervise
from simagent.errors import RequestError
from simagent.executor import (
    CANCEL_FILE,
    STALL_LIMIT_S,
    Executor,
    JobHandle,
    JobRecord,
    JobWatch,
    inputs_digest,
    previous_process,
    read_record,
    stop_previous,
    supervised,
    write_record,
)
from simagent.models import Job, JobStatus

ExecutorName = Literal["local", "parsl-local", "slurm", "pbs"]
LauncherName = Literal["single", "srun", "mpiexec", "mpirun", "aprun", "simple"]

# Fields a batch-system configuration must state (a present but empty string means "none at this site").
REQUIRED: dict[str, tuple[str, ...]] = {
    "slurm": ("partition", "account", "walltime"),
    "pbs": ("queue", "account", "walltime"),
}


class ClusterSettings(BaseModel):
    """The [cluster] table of the config file: how Parsl gets workers."""

    partition: str | None = Field(default=None, description="Slurm partition")
    queue: str | None = Field(default=None, description="PBS queue")
    account: str | None = Field(default=None, description="allocation/project charged ('' for none)")
    walltime: str | None = Field(default=None, description="per block, HH:MM:SS")
    nodes_per_block: int = Field(default=1, ge=1)
    cores_per_node: int | None = Field(default=None, ge=1, description="cores a node gives the workers")
    workers_per_node: int | None = Field(default=None, ge=1, description="jobs at once per node "
                                         "(default: cores_per_node, or max_parallel for parsl-local)")
    init_blocks: int = Field(default=1, ge=0)
    max_blocks: int = Field(default=1, ge=1)
    worker_init: str = Field(default="", description="shell lines run before the workers start, e.g. "
                             "'module load gromacs; source /path/to/simagent/.venv/bin/activate'")
    launcher: LauncherName = Field(default="single", description="how a block starts its workers on its nodes")
    scheduler_options: str = Field(default="", description="extra '#SBATCH'/'#PBS' lines")
    address: str | None = Field(default=None, description="address the workers reach the interchange at "
                                "(default: this host's name; 127.0.0.1 for parsl-local)")
    heartbeat_period_s: int = Field(default=5, ge=1)
    heartbeat_threshold_s: int = Field(default=60, ge=2, description="a silent worker is lost after this")
    retries: int = Field(default=2, ge=0, description="re-runs of a job whose worker was lost")
    run_dir: Path | None = Field(default=None, description="Parsl's logs and submit scripts "
                                 "(default: <workdir>/parsl)")


def missing_fields(name: str, cluster: ClusterSettings | None, given: set[str] | None = None) -> list[str]:
    """Required fields the configuration does not state (None = not given)."""
    required = REQUIRED.get(name, ())
    if cluster is None:
        return list(required)
    given = given if given is not None else cluster.model_fields_set
    return [f for f in required if f not in given or getattr(cluster, f) is None]


def _launcher(name: LauncherName):
    from parsl import launchers

    return {"single": launchers.SingleNodeLauncher, "srun": launchers.SrunLauncher,
            "mpiexec": launchers.MpiExecLauncher, "mpirun": launchers.MpiRunLauncher,
            "aprun": launchers.AprunLauncher, "simple": launchers.SimpleLauncher}[name]()


def _walltime(text: str) -> str:
    parts = text.split(":")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise RequestError(f"cluster walltime {text!r} is not HH:MM:SS")
    return text


def parsl_config(name: ExecutorName, cluster: ClusterSettings | None, run_dir: Path, max_parallel: int):
    """The parsl.Config for an executor name; raises RequestError naming missing fields."""
    from parsl.config import Config
    from parsl.executors import HighThroughputExecutor
    from parsl.executors.high_throughput.executor import DEFAULT_LAUNCH_CMD
    from parsl.providers import LocalProvider, PBSProProvider, SlurmProvider

    missing = missing_fields(name, cluster)
    if missing:
        raise RequestError(f"the '{name}' executor needs these [cluster] settings: {', '.join(missing)} "
                           "(see README, 'Running on a cluster')")
    cluster = cluster or ClusterSettings()
    common = {"nodes_per_block": cluster.nodes_per_block, "init_blocks": cluster.init_blocks,
              "min_blocks": 0, "max_blocks": cluster.max_blocks, "worker_init": cluster.worker_init,
              "launcher": _launcher(cluster.launcher)}
    if name == "parsl-local":
        provider = LocalProvider(**{**common, "init_blocks": 1, "max_blocks": 1, "nodes_per_block": 1})
        workers = cluster.workers_per_node or max_parallel
        address = cluster.address or "127.0.0.1"
    elif name == "slurm":
        provider = SlurmProvider(partition=cluster.partition, account=cluster.account or None,
                                 walltime=_walltime(cluster.walltime), cores_per_node=cluster.cores_per_node,
                                 scheduler_options=cluster.scheduler_options, **common)
        workers = cluster.workers_per_node or cluster.cores_per_node or 1
        address = cluster.address
    elif name == "pbs":
        provider = PBSProProvider(queue=cluster.queue, account=cluster.account or None,
                                  walltime=_walltime(cluster.walltime), cpus_per_node=cluster.cores_per_node or 1,
                                  scheduler_options=cluster.scheduler_options, **common)
        workers = cluster.workers_per_node or cluster.cores_per_node or 1
        address = cluster.address
    else:
        raise RequestError(f"unknown executor {name!r}: local, parsl-local, slurm or pbs")
    htex = {"label": "simagent", "provider": provider, "max_workers_per_node": workers, "cores_per_worker": 1,
            "heartbeat_period": cluster.heartbeat_period_s, "heartbeat_threshold": cluster.heartbeat_threshold_s,
            "worker_logdir_root": str(run_dir),
            # the interchange runs here: it dies with simagent (supervisor, PR_SET_PDEATHSIG)
            "interchange_launch_cmd": supervised(_folder(run_dir / "interchange"), ["interchange.py"])}
    if name == "parsl-local":  # the worker pool, started in the background, watches simagent itself
        me = f"{os.getpid()}:{supervise.start_ticks(os.getpid())}"
        wrapper = shlex.join(supervised(_folder(run_dir / "workers"), [], owner=me))
        htex["launch_cmd"] = f"{wrapper} {DEFAULT_LAUNCH_CMD}"
    if address:
        htex["address"] = address
    return Config(executors=[HighThroughputExecutor(**htex)], retries=cluster.retries, run_dir=str(run_dir),
                  strategy="simple", initialize_logging=False, usage_tracking=0)


def _folder(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def run_job_in_worker(job_dir: str, record_json: str, command: list[str], env_delta: dict[str, str],
                      time_limit_s: float, memory_limit_mb: int | None, stall_limit_s: float | None) -> str:
    """The Parsl app body: runs one job in its folder on a worker and returns the final record.

    A retry after a lost worker lands here again: an engine the lost worker left alive is stopped
    first (normally it died with its worker already), then the job runs from its inputs."""
    folder = Path(job_dir)
    previous = previous_process(folder)
    if previous is not None and previous.local:
        stop_previous(previous)
    record = JobRecord.model_validate_json(record_json)
    record.message = ""
    if (folder / CANCEL_FILE).exists():  # cancelled while queued
        record.status, record.message = JobStatus.cancelled, "cancelled"
        write_record(folder, record)
        return record.model_dump_json()
    env = {**os.environ, **env_delta}
    return JobWatch(folder, record, time_limit_s, memory_limit_mb, stall_limit_s).run(command, env).model_dump_json()


class ParslExecutor(Executor):
    """Jobs as Parsl tasks on a HighThroughputExecutor (local processes or batch-system blocks)."""

    def __init__(self, name: ExecutorName, cluster: ClusterSettings | None, run_dir: Path,
                 max_parallel: int = 2, memory_limit_mb: int | None = 16384,
                 stall_limit_s: float | None = STALL_LIMIT_S) -> None:
        import parsl
        from parsl.app.python import PythonApp

        venv_bin = str(Path(sys.executable).parent)  # HTEX starts interchange.py and the worker pool from PATH
        if venv_bin not in os.environ.get("PATH", "").split(os.pathsep):
            os.environ["PATH"] = venv_bin + os.pathsep + os.environ.get("PATH", "")
        run_dir.mkdir(parents=True, exist_ok=True)
        self.name = name
        self.config = parsl_config(name, cluster, run_dir, max_parallel)
        self.workers = self.config.executors[0].max_workers_per_node * (cluster.nodes_per_block if cluster else 1)
        self._dfk = parsl.DataFlowKernel(self.config)
        self._app = PythonApp(run_job_in_worker, data_flow_kernel=self._dfk, executors=["simagent"])
        self._memory_limit_mb, self._stall_limit_s = memory_limit_mb, stall_limit_s
        self.cores_per_slot = cores_per_slot(cluster)
        self._futures: dict[str, object] = {}
        self._handles: dict[str, JobHandle] = {}
        self._lock = threading.Lock()

    def submit(self, job: Job, job_dir: Path, command: list[str], env: dict[str, str], cores: int = 1) -> JobHandle:
        # A Parsl task takes one worker slot: a job wider than a slot would crowd its neighbours.
        if cores > self.cores_per_slot:
            raise RequestError(f"job {job.id} uses {cores} cores (MPI ranks x threads), but a worker slot of the "
                               f"{self.name} executor has {self.cores_per_slot}: set [cluster] cores_per_node and "
                               f"workers_per_node so that cores_per_node // workers_per_node >= {cores}")
        record = JobRecord(job=job.id, status=JobStatus.pending, inputs_sha256=inputs_digest(job), command=command)
        write_record(job_dir, record)
        (job_dir / CANCEL_FILE).unlink(missing_ok=True)
        delta = {k: v for k, v in env.items() if os.environ.get(k) != v}  # the worker's own environment + ours
        future = self._app(str(job_dir.resolve()), record.model_dump_json(), command, delta, job.time_limit_s,
                           self._memory_limit_mb, self._stall_limit_s)
        handle = JobHandle(job.id, job_dir)
        with self._lock:
            self._futures[job.id], self._handles[job.id] = future, handle
        return handle

    def poll(self, handle: JobHandle) -> JobRecord:
        record = read_record(handle.workdir)
        if record is None:
            raise RuntimeError(f"job folder {handle.workdir} has no status.json")
        future = self._futures.get(handle.job_id)
        if future is None or not future.done():
            if record.status in (JobStatus.succeeded, JobStatus.failed, JobStatus.cancelled):
                record.status = JobStatus.running  # a retry may still overwrite a lost worker's record
            return record
        error = future.exception()
        if error is not None:
            record.status = JobStatus.failed
            record.message = f"{self.name} executor: {type(error).__name__}: {error}"
            write_record(handle.workdir, record)
            return record
        return JobRecord.model_validate_json(future.result())

    def cancel(self, handle: JobHandle) -> None:
        (handle.workdir / CANCEL_FILE).touch()  # seen by the worker before and while it runs the job

    def shutdown(self) -> None:
        for job_id, future in list(self._futures.items()):
            if not future.done():
                self.cancel(self._handles[job_id])
        self._dfk.cleanup()


def cores_per_slot(cluster: ClusterSettings | None) -> int:
    """Cores one Parsl worker slot stands for: cores_per_node // workers_per_node on a cluster that
    states both, else 1 (parsl-local: one worker per core)."""
    if cluster and cluster.cores_per_node and cluster.workers_per_node:
        return max(1, cluster.cores_per_node // cluster.workers_per_node)
    return 1


def executor_for(settings) -> Executor:  # noqa: ANN001 - simagent.config.Settings (imports this module)
    """The executor the settings name, with their limits."""
    from simagent.executor import LocalExecutor

    if settings.executor == "local":
        return LocalExecutor(max_parallel=settings.max_parallel)
    run_dir = (settings.cluster.run_dir if settings.cluster and settings.cluster.run_dir
               else Path(settings.workdir).resolve() / "parsl")
    return ParslExecutor(settings.executor, settings.cluster, run_dir, max_parallel=settings.max_parallel)
