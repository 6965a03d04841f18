"""GROMACS protocols through the whole graph: wall time per answer against GROMACS' own time.

For each request the expert backend reads the sentence, gromacs/liquid_md plans EM -> NVT -> NPT
-> production jobs, the local executor runs them (driver -> grompp, mdrun [, trjconv]) and the
analysis answers. Reported per request:
- wall_s: Session.ask from the sentence to the answer;
- jobs, gmx_runs: engine jobs and gmx invocations per answer (grompp, mdrun, trjconv, ...);
- mdrun_s: mdrun's own wall time summed over the jobs ('Time:' line of each .log), ns_per_day;
- gmx_other_s: the other gmx steps (grompp, trjconv) as timed by the driver;
- job_process_s: the job processes' wall time (driver start-up included);
- overhead_s: wall_s - mdrun_s (graph, driver start-up, grompp, analysis), and per job.

Usage: .venv/bin/python benchmarks/gromacs_protocols.py [--quick] [--only LABEL] [--out FILE]
  --quick: 216 molecules, 0.85 nm cutoff, 8 ps production (the protocol defaults otherwise:
           500 waters, 1.0 nm, 50 ps; 864 argon atoms, 100 ps), as in tests/test_gromacs.py.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REQUESTS = {
    "argon D and U (GROMACS)": "Self-diffusion coefficient and potential energy of liquid argon at 94.4 K and "
    "1.374 g/cm3 with GROMACS",
    "SPC/E water D (50 ps)": "Self-diffusion coefficient of SPC/E water at 298 K and 1 bar",
    "TIP4P/2005 water density": "Density of TIP4P/2005 water at 298 K and 1 bar",
    "SPC/E water density, g(r), CN": "Density, radial distribution function and coordination number of SPC/E "
    "water at 298 K and 1 bar",
    "methanol density (OPLS-AA)": "Density of liquid methanol with OPLS-AA at 298 K and 1 bar",
}
QUICK = {
    "molecular": {"n_molecules": 216, "cutoff": 0.85, "em_steps": 500, "nvt_steps": 500, "npt_steps": 2000,
                  "production_steps": 4000, "energy_every": 20},
    "atomic": {"nvt_steps": 2000, "production_steps": 4000},
}


def shorten_defaults() -> None:
    from tools.gromacs.protocols import liquids

    for kind, values in QUICK.items():
        table = dict(liquids._DEFAULTS[kind])
        for name, value in values.items():
            table[name] = (value, "benchmark --quick")
        liquids._DEFAULTS[kind] = table


def job_times(job_dir: Path) -> dict:
    from tools.gromacs.parse import mdrun_timing, read_output

    out = read_output(job_dir)
    mdrun = other = 0.0
    perf = []
    for step in out.steps:
        if step.tool == "mdrun":
            timing = mdrun_timing(job_dir / f"{job_dir.name.split('-')[-1]}.log")
            if timing:
                mdrun += timing.wall_s
                if timing.ns_per_day:
                    perf.append(timing.ns_per_day)
        else:
            other += step.wall_s or 0.0
    status = json.loads((job_dir / "status.json").read_text())
    return {"mdrun_s": mdrun, "gmx_other_s": other, "gmx_runs": len(out.steps),
            "process_s": status.get("wall_s") or 0.0, "ns_per_day": perf}


def measure(session, request: str) -> dict:
    start = time.perf_counter()
    outcome = session.ask(request)
    wall = time.perf_counter() - start
    answer = outcome.answer
    totals = {"mdrun_s": 0.0, "gmx_other_s": 0.0, "gmx_runs": 0, "process_s": 0.0}
    perf: list[float] = []
    other_engine = []
    for job in answer.jobs:
        if not (Path(job) / "driver.json").is_file():  # a job of another engine (protocol chosen elsewhere)
            other_engine.append(Path(job).name)
            continue
        times = job_times(Path(job))
        perf += times.pop("ns_per_day")
        for key, value in times.items():
            totals[key] += value
    jobs = max(1, len(answer.jobs))
    return {
        "status": answer.status, "error": answer.error,
        "protocols": [d.detail for d in answer.decisions if d.decision == "protocols"],
        "non_gromacs_jobs": other_engine,
        "answers": {r.quantity: [r.value, r.uncertainty, r.unit] for r in answer.answers},
        "jobs": len(answer.jobs), "gmx_runs": totals["gmx_runs"], "wall_s": round(wall, 2),
        "mdrun_s": round(totals["mdrun_s"], 2), "gmx_other_s": round(totals["gmx_other_s"], 2),
        "job_process_s": round(totals["process_s"], 2), "overhead_s": round(wall - totals["mdrun_s"], 2),
        "overhead_per_job_s": round((wall - totals["mdrun_s"]) / jobs, 2),
        "ns_per_day_production": perf[-1] if perf else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", help="substring of a request label; results are added to an existing --out")
    parser.add_argument("--out", type=Path, help="default: results/gromacs_protocols[_quick].json")
    args = parser.parse_args()
    if args.out is None:
        args.out = Path(__file__).parent / "results" / f"gromacs_protocols{'_quick' if args.quick else ''}.json"
    for name in ("SIMAGENT_BACKEND", "SIMAGENT_BASE_URL", "OPENAI_BASE_URL"):
        os.environ.pop(name, None)
    if args.quick:
        shorten_defaults()
    from simagent.config import load_settings
    from simagent.session import Session
    from tools.gromacs import engine

    results = {}
    if args.only and args.out.is_file():  # add to an earlier report
        results = json.loads(args.out.read_text()).get("requests", {})

    def write() -> None:
        report = {
            "gromacs": engine.version(), "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "load_average_1min": os.getloadavg()[0], "quick": args.quick,
            "threads_per_mdrun": engine.DEFAULT_THREADS, "requests": results,
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")

    with tempfile.TemporaryDirectory(prefix="simagent-bench-gmx-") as tmp:
        settings = load_settings(workdir=Path(tmp), backend="expert")
        with Session(settings) as session:
            for label, request in REQUESTS.items():
                if args.only and args.only.lower() not in label.lower():
                    continue
                if args.quick and "50 ps" in label:
                    continue
                results[label] = measure(session, request)
                r = results[label]
                print(f"{label:32s} {r['status']:9s} wall {r['wall_s']:7.1f} s  mdrun {r['mdrun_s']:7.1f} s  "
                      f"overhead {r['overhead_s']:5.1f} s ({r['overhead_per_job_s']:.1f}/job)  "
                      f"jobs {r['jobs']}  gmx runs {r['gmx_runs']}", flush=True)
                write()  # after each request: a long run keeps what it measured
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
