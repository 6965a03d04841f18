"""RASPA throughput per protocol: job wall time (executor) vs RASPA's own CPU time, and MC cycles per
second of the production run.

Cases (small runs, as the tests use them): helium void fraction of IRMOF-1, GCMC of CH4 in IRMOF-1
(35 bar), GCMC of CO2 in MFI with Ewald (1 bar), Widom insertion of CO2 in IRMOF-1, a CO2/CH4 mixture
in IRMOF-1 (1 bar). 'overhead' is wall minus RASPA's CPU time: Python start-up of the runner, loading
libraspa2, reading the CIF and writing RASPA's initial structure files. On a loaded machine wall time
also includes waiting for a CPU, so compare cycles/s (RASPA's CPU clock) across machines.

Usage: .venv/bin/python benchmarks/raspa_throughput.py [--scale S] [--out benchmarks/results/raspa_throughput.json]
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
from simagent.jobrun import run_plan  # noqa: E402
from simagent.models import (  # noqa: E402
    Component,
    Conditions,
    JobStatus,
    Plan,
    PotentialSpec,
    PropertyRequest,
    Quantity,
    SimulationControls,
    SystemSpec,
    TaskSpec,
)
from simagent.protocols import get_protocol  # noqa: E402
from tools.raspa import engine  # noqa: E402
from tools.raspa.parse import read_output  # noqa: E402


def spec(structure: str, guests: list[str], prop: str, temperature: float, pressure: float | None,
         cycles: tuple[int, int], composition: dict[str, float] | None = None,
         force_field: str | None = None) -> TaskSpec:
    conditions = Conditions(temperature=Quantity(value=temperature, unit="K"))
    if pressure is not None:
        conditions.pressure = Quantity(value=pressure, unit="bar")
    if composition:
        conditions.composition = [Component(species=k, mole_fraction=v) for k, v in composition.items()]
    return TaskSpec(
        request="benchmark", engine="raspa",
        system=SystemSpec(name=structure, kind="framework", structure=structure, guests=guests),
        potential=PotentialSpec(force_field=force_field) if force_field else None,
        properties=[PropertyRequest(name=prop)], conditions=conditions,
        controls=SimulationControls(equilibration_steps=cycles[0], production_steps=cycles[1]))


def cases(scale: float) -> list[tuple[str, str, TaskSpec, dict]]:
    irmof = str(engine.shipped_structure("IRMOF-1"))
    mfi = str(engine.shipped_structure("MFI_SI"))

    def c(n: int) -> int:
        return max(10, int(n * scale))

    return [
        ("CH4/IRMOF-1 GCMC 35 bar (+ helium job)", "raspa/gcmc_uptake",
         spec(irmof, ["CH4"], "uptake", 298, 35, (c(200), c(800))), {"helium_cycles": c(500)}),
        ("CO2/MFI GCMC 1 bar, Ewald, 2x2x2", "raspa/gcmc_uptake",
         spec(mfi, ["CO2"], "uptake", 353, 1, (c(100), c(300)), force_field="RASPA3-MFI-CO2"),
         {"helium_void_fraction": 0.29}),
        ("CO2/IRMOF-1 Widom", "raspa/widom", spec(irmof, ["CO2"], "henry_coefficient", 298, None, (0, c(300))), {}),
        ("CO2+CH4/IRMOF-1 mixture 1 bar", "raspa/gcmc_mixture",
         spec(irmof, ["CO2", "CH4"], "selectivity", 298, 1, (c(200), c(1000)), {"CO2": 0.5, "CH4": 0.5}),
         {"helium_void_fraction": 0.822}),
    ]


def measure(name: str, protocol_name: str, task: TaskSpec, overrides: dict, root: Path) -> dict:
    protocol = get_protocol(protocol_name)
    t0 = time.perf_counter()
    params, _ = protocol.parameters(task)
    if overrides:
        params = protocol.validate_params({**params.model_dump(), **overrides})
    jobs = protocol.jobs(params)
    prepare = time.perf_counter() - t0
    t0 = time.perf_counter()
    records = run_plan(Plan(jobs=jobs), root)
    plan_wall = time.perf_counter() - t0
    rows = []
    for job in jobs:
        record = records[job.id]
        out = read_output(root / job.id)
        cycles = out.cycles or 0
        production = out.production_cpu_time_s or 0.0
        rows.append({
            "job": job.id, "status": record.status.value, "wall_s": record.wall_s,
            "raspa_cpu_s": out.cpu_time_s, "production_cpu_s": production,
            "initialization_cycles": out.initialization_cycles, "production_cycles": cycles,
            "cycles_per_s": cycles / production if production else None,
            "overhead_s": (record.wall_s or 0.0) - (out.cpu_time_s or 0.0),
        })
    t0 = time.perf_counter()
    ok = all(records[j.id].status == JobStatus.succeeded for j in jobs)
    results = protocol.analyze(params, {j.id: root / j.id for j in jobs}, task) if ok else []
    analyse = time.perf_counter() - t0
    return {"case": name, "protocol": protocol_name, "prepare_s": prepare, "plan_wall_s": plan_wall,
            "analysis_s": analyse, "jobs": rows,
            "results": [{"quantity": r.quantity, "value": r.value, "uncertainty": r.uncertainty, "unit": r.unit}
                        for r in results]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply all cycle counts")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "raspa_throughput.json")
    args = parser.parse_args()
    if engine.package_dir() is None:
        sys.exit("RASPA2 is not installed: pip install raspa2==2.0.4")
    report = {"raspa": engine.version(), "cpus": os.cpu_count(), "load_average": os.getloadavg(),
              "scale": args.scale, "cases": []}
    with tempfile.TemporaryDirectory(prefix="raspa-bench-") as tmp:
        for index, (name, protocol, task, overrides) in enumerate(cases(args.scale)):
            row = measure(name, protocol, task, overrides, Path(tmp) / f"case{index}")
            report["cases"].append(row)
            print(f"{name}: plan wall {row['plan_wall_s']:.1f} s (prepare {row['prepare_s']:.1f} s, analysis "
                  f"{row['analysis_s']:.2f} s)")
            for job in row["jobs"]:
                rate = f"{job['cycles_per_s']:.0f} cycles/s" if job["cycles_per_s"] else "-"
                print(f"    {job['job']:<12} wall {job['wall_s']:.1f} s, RASPA CPU {job['raspa_cpu_s'] or 0:.1f} s, "
                      f"overhead {job['overhead_s']:.1f} s, {job['production_cycles']} cycles, {rate}")
            for result in row["results"]:
                print(f"    {result['quantity']} = {result['value']:.4g} +/- {result['uncertainty'] or 0:.2g} "
                      f"{result['unit']}")
    report["load_average_after"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
