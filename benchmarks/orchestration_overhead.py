"""Orchestration overhead per request: wall time of `simagent ask` minus LAMMPS' own loop time.

Also reports Python start-up (`simagent --help`) and the engine processes' wall time (start-up of
`lmp` included), so the overhead can be split into start-up, engine launch and graph/analysis.
Target (issue 2): below 3 s per job besides Python start-up.

Usage: .venv/bin/python benchmarks/orchestration_overhead.py [--repeat N] [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tools.lammps.parse import read_output  # noqa: E402

SIMAGENT = str(Path(sys.executable).parent / "simagent")
REQUESTS = {
    "Ni lattice/cohesive (Foiles)":
        "Cohesive energy and lattice constant of fcc nickel with the Foiles (u3) EAM potential",
    "Si lattice/cohesive (SW)":
        "Lattice constant and cohesive energy of diamond silicon with the Stillinger-Weber potential",
    "LJ fluid U/N and P": "Average potential energy per particle and pressure of a Lennard-Jones fluid at T* = 0.85 "
    "and rho* = 0.86 with a 3 sigma cutoff and tail corrections",
    "Ar self-diffusion": "Self-diffusion coefficient of liquid argon at 94.4 K and 1.374 g/cm3, Lennard-Jones with "
    "epsilon/kB = 120 K and sigma = 3.4 Å",
}


def measure(request: str, workdir: Path) -> dict:
    start = time.perf_counter()
    proc = subprocess.run([SIMAGENT, "ask", "--yes", "--json", "--quiet", "--workdir", str(workdir), request],
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    answer = json.loads(proc.stdout)
    loop = engine_wall = 0.0
    for job in answer["jobs"]:
        loop += read_output(Path(job)).engine_time_s
        engine_wall += json.loads((Path(job) / "status.json").read_text())["wall_s"]
    jobs = max(1, len(answer["jobs"]))
    return {"status": answer["status"], "jobs": len(answer["jobs"]), "wall_s": wall, "loop_s": loop,
            "engine_process_s": engine_wall, "overhead_s": wall - loop, "overhead_per_job_s": (wall - loop) / jobs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="only the 0 K crystal requests")
    args = parser.parse_args()
    starts = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([SIMAGENT, "--help"], capture_output=True)
        starts.append(time.perf_counter() - t0)
    startup = statistics.median(starts)
    print(f"Python start-up (simagent --help): {startup:.2f} s")
    print("| request | status | jobs | wall s | LAMMPS loop s | lmp process s | overhead s "
          "| overhead − start-up per job s |")
    print("|---|---|---|---|---|---|---|---|")
    requests = {k: v for k, v in REQUESTS.items() if not args.quick or "lattice" in k}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, request in requests.items():
            runs = [measure(request, Path(tmp) / f"{label[:2]}{i}") for i in range(args.repeat)]
            best = min(runs, key=lambda r: r["overhead_s"])
            net = (best["overhead_s"] - startup) / max(1, best["jobs"])
            rows.append({"request": label, **best, "net_overhead_per_job_s": net})
            print(f"| {label} | {best['status']} | {best['jobs']} | {best['wall_s']:.2f} | {best['loop_s']:.2f} | "
                  f"{best['engine_process_s']:.2f} | {best['overhead_s']:.2f} | {net:.2f} |")
    out = Path(__file__).parent / "results" / "orchestration_overhead.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"startup_s": startup, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
