"""Scale-out benchmark (issue 15): speedup of independent LAMMPS jobs on 2 workers against 1, and the
orchestration overhead per job of each executor.

1. Speedup: a plan of N independent LAMMPS jobs (LJ melt, 4000 atoms) run by run_plan on 1 worker and
   on 2 workers, for the `local` and `parsl-local` executors. Reports wall time, the engines' CPU time
   (from /proc of each job's process group while it runs, so it works for Parsl workers too) and the
   speedup. Target: >= 1.8 on 2 workers. The machine may be shared: compare CPU time with wall time.
2. Overhead: M jobs whose command does nothing (`true`), one worker, through executor.submit/poll;
   overhead per job = wall / M (supervisor start-up, status files, Parsl task round trip).

Usage: nice -n 10 .venv/bin/python benchmarks/plan_scale.py [--jobs 8] [--steps 2000] [--noop 40]
       [--executors local,parsl-local] [--out benchmarks/results/plan_scale.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from simagent.cluster import ClusterSettings, ParslExecutor  # noqa: E402
from simagent.executor import Executor, LocalExecutor, write_inputs  # noqa: E402
from simagent.jobrun import run_plan  # noqa: E402
from simagent.models import Job, JobStatus, Plan  # noqa: E402

MELT = """units lj
atom_style atomic
lattice fcc 0.8442
region box block 0 10 0 10 0 10
create_box 1 box
create_atoms 1 box
mass 1 1.0
velocity all create 3.0 {seed} loop geom
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
neighbor 0.3 bin
fix 1 all nve
thermo 500
run {steps}
"""


def make_executor(name: str, workers: int, run_dir: Path) -> Executor:
    if name == "local":
        return LocalExecutor(max_parallel=workers)
    return ParslExecutor(name, ClusterSettings(), run_dir, max_parallel=workers)


def job_cpu_s(job_dir: Path) -> float:
    """CPU seconds of the job's engine: LAMMPS' own 'Loop time' x '%CPU use' from its log."""
    text = (job_dir / "log.lammps").read_text()
    loop = cpu = 0.0
    for line in text.splitlines():
        if line.startswith("Loop time of"):
            loop = float(line.split()[3])
        if "% CPU use" in line:
            cpu = float(line.split("%")[0].split()[-1]) / 100
    return loop * cpu


def speedup(name: str, n_jobs: int, steps: int, workdir: Path) -> dict:
    result = {}
    for workers in (1, 2):
        root = workdir / f"{name}-{workers}"
        executor = make_executor(name, workers, workdir / f"parsl-{name}-{workers}")
        jobs = [Job(id=f"melt{i}", protocol="bench/melt", engine="lammps",
                    inputs={"in.lammps": MELT.format(seed=1000 + i, steps=steps)}) for i in range(n_jobs)]
        cpu0 = os.times()
        start = time.perf_counter()
        try:
            records = run_plan(Plan(jobs=jobs), root, executor)
        finally:
            executor.shutdown()
        wall = time.perf_counter() - start
        cpu1 = os.times()
        assert all(r.status == JobStatus.succeeded for r in records.values()), records
        engine_cpu = sum(job_cpu_s(root / j.id) for j in jobs)
        result[workers] = {"wall_s": round(wall, 2), "engine_cpu_s": round(engine_cpu, 2),
                           "load_average_1min_after": round(os.getloadavg()[0], 2),
                           "job_wall_s": round(sum(r.wall_s or 0 for r in records.values()), 2),
                           "children_cpu_s": round((cpu1.children_user + cpu1.children_system)
                                                   - (cpu0.children_user + cpu0.children_system), 2)}
    result["speedup"] = round(result[1]["wall_s"] / result[2]["wall_s"], 2)
    result["cpu_efficiency_2_workers"] = round(result[2]["engine_cpu_s"] / (2 * result[2]["wall_s"]), 2)
    return result


def overhead(name: str, n_jobs: int, workdir: Path) -> dict:
    cpu0 = os.times()
    executor = make_executor(name, 1, workdir / f"parsl-noop-{name}")
    try:
        handles = []
        start = time.perf_counter()
        for i in range(n_jobs):
            job = Job(id=f"noop{i}", protocol="bench/noop", engine="lammps", inputs={"in.txt": str(i)})
            job_dir = workdir / f"noop-{name}" / job.id
            write_inputs(job, job_dir)
            handles.append(executor.submit(job, job_dir, ["true"], dict(os.environ)))
        for handle in handles:
            while executor.poll(handle).status not in (JobStatus.succeeded, JobStatus.failed):
                time.sleep(0.01)
        wall = time.perf_counter() - start
    finally:
        executor.shutdown()
    cpu1 = os.times()
    own = (cpu1.user + cpu1.system) - (cpu0.user + cpu0.system)
    children = (cpu1.children_user + cpu1.children_system) - (cpu0.children_user + cpu0.children_system)
    # CPU: this process (submit/poll, status files) and its reaped children (supervisors, Parsl workers);
    # executor start-up and shutdown included
    return {"jobs": n_jobs, "wall_s": round(wall, 2), "per_job_s": round(wall / n_jobs, 3),
            "cpu_s": round(own + children, 2), "cpu_per_job_s": round((own + children) / n_jobs, 3),
            "load_average_1min_after": round(os.getloadavg()[0], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--noop", type=int, default=40)
    parser.add_argument("--executors", default="local,parsl-local")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "plan_scale.json")
    args = parser.parse_args()
    report = {"machine": {"cpus": os.cpu_count(), "load_before": os.getloadavg()}, "jobs": args.jobs,
              "steps": args.steps, "speedup": {}, "overhead": {}}
    with tempfile.TemporaryDirectory(prefix="simagent-plan-scale-") as tmp:
        for name in args.executors.split(","):
            report["overhead"][name] = overhead(name, args.noop, Path(tmp))
            print(f"{name}: overhead {report['overhead'][name]}", flush=True)
            report["speedup"][name] = speedup(name, args.jobs, args.steps, Path(tmp))
            print(f"{name}: speedup {report['speedup'][name]}", flush=True)
    report["machine"]["load_after"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
