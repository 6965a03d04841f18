"""Executors by name (issue 15): parsl-local and Slurm through Parsl's real SlurmProvider, with fake
sbatch/squeue/sacct/scancel scripts (tests/files/fake_slurm) that start each block on this machine.

Real LAMMPS jobs (500-atom LJ melts, a second or two each)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest
from test_process_safety import gone, lmp_binaries, melt_input, wait_for_engine

from simagent import supervise
from simagent.cluster import ClusterSettings, ParslExecutor, cores_per_slot
from simagent.config import load_settings
from simagent.errors import RequestError
from simagent.executor import read_record, write_inputs
from simagent.jobrun import engine_command, run_plan
from simagent.models import Job, JobStatus, Plan

pytest.importorskip("parsl")
HAVE_LMP = (Path(sys.executable).parent / "lmp").exists()
FAKE_SLURM = Path(__file__).parent / "files" / "fake_slurm"


def melt_job(job_id: str, steps: int, depends_on: list[str] | None = None) -> Job:
    return Job(id=job_id, protocol="test/melt", engine="lammps", inputs={"in.lammps": melt_input(steps)},
               depends_on=depends_on or [], time_limit_s=300)


# ---------------------------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------------------------


def test_cluster_settings_with_missing_fields_name_them(tmp_path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text('executor = "slurm"\n[cluster]\npartition = "debug"\n')
    monkeypatch.setenv("SIMAGENT_CONFIG", str(config))
    with pytest.raises(RequestError) as err:
        load_settings()
    assert "account, walltime" in str(err.value) and "'slurm'" in str(err.value)
    config.write_text('executor = "pbs"\n')
    with pytest.raises(RequestError, match="queue, account, walltime"):
        load_settings()
    config.write_text('executor = "slurm"\n[cluster]\npartition = "debug"\naccount = ""\nwalltime = "01:00:00"\n')
    settings = load_settings()
    assert settings.executor == "slurm" and settings.cluster.account == ""  # '' states: no account here


def test_bad_walltime_is_a_clear_error(tmp_path):
    cluster = ClusterSettings(partition="debug", account="", walltime="90 minutes")
    with pytest.raises(RequestError, match="HH:MM:SS"):
        ParslExecutor("slurm", cluster, tmp_path / "parsl")


# ---------------------------------------------------------------------------------------------
# parsl-local
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def parsl_local(tmp_path):
    executor = ParslExecutor("parsl-local", ClusterSettings(heartbeat_period_s=1, heartbeat_threshold_s=6),
                             tmp_path / "parsl", max_parallel=2)
    yield executor
    executor.shutdown()


@pytest.mark.skipif(not HAVE_LMP, reason="LAMMPS not installed")
@pytest.mark.slow  # Parsl start-up + engine runs: 20-70 s on a loaded 2-core machine
def test_parsl_local_runs_a_plan_in_order_and_reuses_finished_jobs(tmp_path, parsl_local):
    plan = Plan(jobs=[melt_job("a", 300), melt_job("b", 300), melt_job("c", 300, depends_on=["a", "b"])])
    records = run_plan(plan, tmp_path / "runs", parsl_local)
    assert {k: r.status for k, r in records.items()} == {k: JobStatus.succeeded for k in "abc"}
    starts = {k: json.loads((tmp_path / "runs" / k / supervise.PROCESS_FILE).read_text()) for k in "abc"}
    ends = {k: (tmp_path / "runs" / k / "status.json").stat().st_mtime for k in "abc"}
    # the dependent job started only after both of its dependencies had finished
    assert starts["c"]["started"] >= max(ends["a"], ends["b"]) - 0.05
    # the engines ran in Parsl workers (their owner), not in this process
    assert all(info["owner_pid"] != os.getpid() for info in starts.values())
    again = run_plan(Plan(jobs=[melt_job("a", 300), melt_job("b", 300), melt_job("c", 300, ["a", "b"])]),
                     tmp_path / "runs", parsl_local)
    assert all(r.status == JobStatus.succeeded for r in again.values())
    assert {k: (tmp_path / "runs" / k / "status.json").stat().st_mtime for k in "abc"} == ends  # cache hit


@pytest.mark.skipif(not HAVE_LMP, reason="LAMMPS not installed")
@pytest.mark.slow  # Parsl start-up + engine runs: 20-70 s on a loaded 2-core machine
def test_parsl_local_a_lost_worker_s_job_runs_again(tmp_path, parsl_local):
    root = tmp_path / "runs"
    job = melt_job("melt", 5000)
    job_dir = root / "melt"
    write_inputs(job, job_dir)
    command, env = engine_command(job)
    handle = parsl_local.submit(job, job_dir, command, env)
    first = wait_for_engine(job_dir)
    os.kill(first["owner_pid"], signal.SIGKILL)  # the Parsl worker that runs the job
    for pid in first["lmp_pids"]:
        assert gone(pid, timeout=15.0), "the engine outlived its worker"
    deadline = time.monotonic() + 240
    record = parsl_local.poll(handle)
    while record.status not in (JobStatus.succeeded, JobStatus.failed, JobStatus.cancelled):
        assert time.monotonic() < deadline, "the job was not run again"
        time.sleep(0.2)
        record = parsl_local.poll(handle)
    assert record.status == JobStatus.succeeded, record.message
    second = json.loads((job_dir / supervise.PROCESS_FILE).read_text())
    assert second["owner_pid"] != first["owner_pid"] and "Loop time" in (job_dir / "log.lammps").read_text()


@pytest.mark.skipif(not HAVE_LMP, reason="LAMMPS not installed")
@pytest.mark.slow  # Parsl start-up + engine runs: 20-70 s on a loaded 2-core machine
def test_parsl_local_cancel_stops_the_engine(tmp_path, parsl_local):
    cancel_a_running_job(parsl_local, tmp_path / "runs")


def cancel_a_running_job(executor, root: Path) -> None:  # noqa: ANN001 - an Executor
    """Submit a LAMMPS run that would take hours, cancel it once the engine runs: the engine stops and
    the record says cancelled."""
    job = melt_job("long", 10_000_000)
    job_dir = root / "long"
    write_inputs(job, job_dir)
    command, env = engine_command(job)
    handle = executor.submit(job, job_dir, command, env)
    info = wait_for_engine(job_dir)
    executor.cancel(handle)
    assert all(gone(pid, timeout=15.0) for pid in info["lmp_pids"])
    deadline = time.monotonic() + 30
    while executor.poll(handle).status != JobStatus.cancelled:
        assert time.monotonic() < deadline
        time.sleep(0.1)


# ---------------------------------------------------------------------------------------------
# Slurm (Parsl's SlurmProvider against fake batch commands)
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def fake_slurm(tmp_path, monkeypatch):
    bin_dir, state = tmp_path / "fake-bin", tmp_path / "slurm-state"
    bin_dir.mkdir()
    for script in FAKE_SLURM.iterdir():
        shutil.copy(script, bin_dir / script.name)
        (bin_dir / script.name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SLURM_STATE", str(state))
    yield state
    for pid_file in state.glob("*.pid"):  # whatever a test left running
        try:
            os.killpg(int(pid_file.read_text()), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


SLURM = ClusterSettings(partition="debug", account="chem42", walltime="00:20:00", worker_init="export SIMAGENT_TEST=1",
                        address="127.0.0.1", heartbeat_period_s=1, heartbeat_threshold_s=6, workers_per_node=2)


@pytest.mark.skipif(not HAVE_LMP, reason="LAMMPS not installed")
def test_slurm_submit_poll_cancel_and_cache_hit(tmp_path, fake_slurm):
    executor = ParslExecutor("slurm", SLURM, tmp_path / "parsl")
    try:
        plan = Plan(jobs=[melt_job("a", 300), melt_job("b", 300)])
        records = run_plan(plan, tmp_path / "runs", executor)
        assert all(r.status == JobStatus.succeeded for r in records.values()), records
        script = next(fake_slurm.glob("*.script")).read_text()
        assert "#SBATCH --partition=debug" in script and "#SBATCH --account=chem42" in script
        assert "#SBATCH --time=20" in script and "export SIMAGENT_TEST=1" in script
        assert "process_worker_pool.py" in script
        # cache hit: the same inputs are not run again
        ends = {k: (tmp_path / "runs" / k / "status.json").stat().st_mtime for k in "ab"}
        run_plan(Plan(jobs=[melt_job("a", 300), melt_job("b", 300)]), tmp_path / "runs", executor)
        assert {k: (tmp_path / "runs" / k / "status.json").stat().st_mtime for k in "ab"} == ends
        cancel_a_running_job(executor, tmp_path / "runs")
        # a job wider than a worker slot (SLURM states no cores_per_node: 1 core per slot) is refused
        with pytest.raises(RequestError, match="2 cores .* worker slot .* has 1"):
            run_plan(Plan(jobs=[melt_job("wide", 300).model_copy(update={"ranks": 2})]), tmp_path / "runs", executor)
    finally:
        executor.shutdown()
    # shutting down gives the block back to the batch system
    assert (fake_slurm / "cancelled").read_text().split() == [next(fake_slurm.glob("*.script")).stem]


SLURM_OWNER = """
import sys
from pathlib import Path
from simagent.cluster import ClusterSettings, ParslExecutor
from simagent.jobrun import run_plan
from simagent.models import Plan
plan = Plan.model_validate_json(Path(sys.argv[1]).read_text())
cluster = ClusterSettings.model_validate_json(Path(sys.argv[3]).read_text())
run_plan(plan, Path(sys.argv[2]), ParslExecutor("slurm", cluster, Path(sys.argv[2]).parent / "parsl"))
"""


@pytest.mark.skipif(not HAVE_LMP, reason="LAMMPS not installed")
@pytest.mark.slow  # Parsl start-up + engine runs: 20-70 s on a loaded 2-core machine
def test_slurm_resume_after_sigkill_adopts_the_running_job(tmp_path, fake_slurm):
    """simagent is killed while its job runs in a batch block: the block's worker finishes the job;
    resume waits for it and takes its result instead of running the job a second time."""
    (tmp_path / "cluster.json").write_text(SLURM.model_dump_json())
    plan = Plan(jobs=[melt_job("melt", 4000)])
    root = tmp_path / "runs"
    owner = _start_slurm_owner(tmp_path, plan, root)
    try:
        first = wait_for_engine(root / "melt")
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        assert lmp_binaries(first["pgid"]), "the job in the batch block stopped with its submitter"
        notices: list[str] = []
        executor = ParslExecutor("slurm", SLURM, tmp_path / "parsl2")
        try:
            records = run_plan(Plan(jobs=[melt_job("melt", 4000)]), root, executor, notice=notices.append)
        finally:
            executor.shutdown()
    finally:
        owner.kill()
    assert records["melt"].status == JobStatus.succeeded
    assert "adopted" in records["melt"].message and any("adopting" in n for n in notices)
    assert json.loads((root / "melt" / supervise.PROCESS_FILE).read_text())["engine_pid"] == first["engine_pid"]
    assert read_record(root / "melt").status == JobStatus.succeeded


def _start_slurm_owner(tmp_path: Path, plan: Plan, root: Path):
    import subprocess

    plan_file = tmp_path / "plan.json"
    plan_file.write_text(plan.model_dump_json())
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]) + os.pathsep
           + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-c", SLURM_OWNER, str(plan_file), str(root),
                             str(tmp_path / "cluster.json")], env=env)



def test_a_worker_slot_stands_for_cores_per_node_over_workers_per_node():
    assert cores_per_slot(None) == 1 and cores_per_slot(SLURM) == 1
    assert cores_per_slot(SLURM.model_copy(update={"cores_per_node": 64, "workers_per_node": 16})) == 4


def test_pbs_configuration_reaches_parsl_s_provider(tmp_path):
    """Not run against a batch system here: the PBS Pro provider gets the queue, account, walltime,
    nodes, worker init and launcher the settings state."""
    from parsl.launchers import MpiExecLauncher
    from parsl.providers import PBSProProvider

    from simagent.cluster import parsl_config

    cluster = ClusterSettings(queue="workq", account="chem42", walltime="02:00:00", nodes_per_block=2,
                              cores_per_node=32, worker_init="module load raspa", launcher="mpiexec")
    config = parsl_config("pbs", cluster, tmp_path, max_parallel=2)
    provider = config.executors[0].provider
    assert isinstance(provider, PBSProProvider) and isinstance(provider.launcher, MpiExecLauncher)
    assert (provider.queue, provider.account, provider.walltime) == ("workq", "chem42", "02:00:00")
    assert provider.nodes_per_block == 2 and "module load raspa" in provider.worker_init
    assert config.executors[0].max_workers_per_node == 32 and config.retries == 2
