"""Ranks and threads through EngineAdapter.launch() (issue 15): the same LAMMPS job on 1 rank, 2 MPI
ranks (the mpich wheel's mpiexec) and 1 rank x 2 OpenMP threads (-sf omp), and a GROMACS mdrun on 1
and 2 thread-MPI ranks; wall and the engine's own loop time, and what the engine's log says it used.

On a shared 2-core machine the figures depend on the load (recorded with each run): the check here is
that the requested ranks/threads were used, the times are context, not a scaling claim.

Usage: nice -n 10 .venv/bin/python benchmarks/engine_parallel.py [--steps 500] [--md-steps 2000]
       [--out benchmarks/results/engine_parallel.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from plan_scale import MELT  # noqa: E402  (benchmarks/ is first on sys.path; 4000 LJ atoms)

from simagent.executor import LocalExecutor  # noqa: E402
from simagent.jobrun import run_plan  # noqa: E402
from simagent.models import Job, Plan  # noqa: E402

MD_MDP = """integrator = md
dt = 0.002
nsteps = {steps}
cutoff-scheme = Verlet
coulombtype = PME
rcoulomb = 0.8
rvdw = 0.8
tcoupl = v-rescale
tc-grps = System
tau-t = 0.1
ref-t = 298
constraints = h-bonds
"""


def run(job: Job) -> tuple[Path, float]:
    root = Path(tempfile.mkdtemp(prefix="engine-parallel-"))
    executor = LocalExecutor(max_parallel=2)
    start = time.monotonic()
    try:
        record = run_plan(Plan(jobs=[job]), root, executor)[job.id]
    finally:
        executor.shutdown()
    if record.status.value != "succeeded":
        raise SystemExit(f"{job.id} failed: {record.message}")
    return root / job.id, time.monotonic() - start


def lammps(steps: int, ranks: int, threads: int) -> dict:
    job = Job(id=f"lj-{ranks}x{threads}", protocol="benchmark/lj", engine="lammps", ranks=ranks, threads=threads,
              inputs={"in.lammps": MELT.format(seed=87287, steps=steps)})
    folder, wall = run(job)
    log = (folder / "log.lammps").read_text()
    loop = re.search(r"Loop time of ([\d.eE+-]+) on (\d+) procs", log)
    used = re.search(r"(\d+) MPI tasks x (\d+) OpenMP threads", log)
    command = json.loads((folder / "status.json").read_text())["command"]
    shutil.rmtree(folder.parent, ignore_errors=True)
    return {"engine": "lammps", "atoms": 4000, "steps": steps, "ranks": ranks, "threads": threads,
            "command": " ".join(Path(command[0]).name if i == 0 else w for i, w in enumerate(command)),
            "log_says": used.group(0) if used else None, "loop_s": float(loop.group(1)) if loop else None,
            "wall_s": round(wall, 2), "load_average": round(os.getloadavg()[0], 2)}


def gromacs(steps: int, ranks: int) -> dict:
    from tools.gromacs.driver import Step, StepList

    box = ROOT / "tests" / "files" / "gromacs" / "spce_box"
    steps_list = StepList(steps=[
        Step(name="grompp", tool="grompp", args=["-f", "md.mdp", "-c", "conf.gro", "-p", "topol.top", "-o", "md.tpr"]),
        Step(name="mdrun", tool="mdrun", args=["-s", "md.tpr", "-deffnm", "md"])])
    inputs = {name: (box / name).read_text() for name in ("conf.gro", "topol.top", "water.itp")}
    job = Job(id=f"md-{ranks}", protocol="benchmark/md", engine="gromacs", ranks=ranks,
              inputs={**inputs, "md.mdp": MD_MDP.format(steps=steps), "steps.json": steps_list.render()})
    folder, wall = run(job)
    log = (folder / "md.log").read_text()
    used = re.search(r"Using (\d+) MPI threads?", log)
    perf = re.search(r"Performance:\s+([\d.]+)", log)
    core = re.search(r"Time:\s+([\d.]+)\s+([\d.]+)", log)
    shutil.rmtree(folder.parent, ignore_errors=True)
    return {"engine": "gromacs", "molecules": 256, "steps": steps, "ranks": ranks, "threads": 1,
            "log_says": used.group(0) if used else "1 rank (no 'Using N MPI threads' line)",
            "ns_per_day": float(perf.group(1)) if perf else None,
            "mdrun_wall_s": float(core.group(2)) if core else None, "wall_s": round(wall, 2),
            "load_average": round(os.getloadavg()[0], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--md-steps", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "engine_parallel.json")
    args = parser.parse_args()
    runs = [lammps(args.steps, r, t) for r, t in ((1, 1), (2, 1), (1, 2))]
    if shutil.which("gmx"):
        runs += [gromacs(args.md_steps, r) for r in (1, 2)]
    report = {"cores": os.cpu_count(), "nice": os.getpriority(os.PRIO_PROCESS, 0), "runs": runs,
              "note": "shared 2-core machine: times depend on the load average recorded with each run"}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
