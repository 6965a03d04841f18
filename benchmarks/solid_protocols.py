"""Solid-state protocols: wall time vs LAMMPS loop time, engine runs per answer, agreement with
published values.

Each case builds a TaskSpec directly, lets the protocol choose its parameters (optionally
overridden, as stated per case), runs the jobs with the local executor (2 in parallel) and
analyses them. Reported per case: wall time of run + analysis, the LAMMPS loop time summed over
jobs, the engine processes' wall time (start-up and potential reading included), the number of
engine runs, and each number next to its reference with the relative deviation.

Usage: .venv/bin/python benchmarks/solid_protocols.py [--quick] [--only NAME ...] [--out FILE]
  --quick skips the finite-temperature cases run with full default settings.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from simagent.jobrun import run_plan  # noqa: E402
from simagent.models import Plan, PotentialSpec, PropertyRequest, Quantity, SystemSpec, TaskSpec  # noqa: E402
from simagent.protocols import get_protocol  # noqa: E402
from tools.lammps.parse import read_output  # noqa: E402

MISHIN_AL = "Mishin et al., PRB 59, 3393 (1999)"
MISHIN_CU = "Mishin et al., PRB 63, 224106 (2001)"


def spec(element, properties, request="x", temperature=None, lattice="fcc", hint="mishin"):
    task = TaskSpec(
        request=request,
        system=SystemSpec(name=element, kind="crystal", elements=[element], lattice=lattice),
        potential=PotentialSpec(name_hint=hint),
        properties=[PropertyRequest(name=p) for p in properties],
    )
    if temperature is not None:
        task.conditions.temperature = Quantity(value=temperature, unit="K")
    return task


def e100(c11: float, c12: float) -> float:
    """Young's modulus along [100] of a cubic crystal."""
    return (c11 - c12) * (c11 + 2 * c12) / (c11 + c12)


E100_AL_0K = e100(113.54, 61.30)  # from this benchmark's 0 K C_ij
E100_AL_300K = e100(110.99, 65.04)  # from this benchmark's 300 K C_ij (+/- 0.6 GPa)

# name: (protocol, spec, parameter overrides, {quantity: (reference, source)}, slow)
CASES = {
    "elastic Al 0 K": (
        "lammps/elastic_constants",
        spec("Al", ["elastic_constants", "bulk_modulus", "shear_modulus", "youngs_modulus", "poisson_ratio"]),
        {},
        {
            "elastic_constants_C11": (114.0, MISHIN_AL),
            "elastic_constants_C12": (61.6, MISHIN_AL),
            "elastic_constants_C44": (31.6, MISHIN_AL),
            "bulk_modulus": (79.0, MISHIN_AL),
        },
        False,
    ),
    "elastic Cu 0 K": (
        "lammps/elastic_constants",
        spec("Cu", ["elastic_constants", "bulk_modulus"]),
        {},
        {
            "elastic_constants_C11": (169.9, MISHIN_CU),
            "elastic_constants_C12": (122.6, MISHIN_CU),
            "elastic_constants_C44": (76.2, MISHIN_CU),
            "bulk_modulus": (138.3, MISHIN_CU),
        },
        False,
    ),
    "tensile Al 10 K (108 atoms, 2e9/s)": (
        "lammps/tensile_test",
        spec("Al", ["youngs_modulus"], "tensile test", 10),
        {
            "repetitions": (3, 3, 3),
            "strain_rate_per_s": 2e9,
            "equilibration_steps": 500,
            "average_steps": 500,
            "samples_per_point": 5,
        },
        {"youngs_modulus": (E100_AL_0K, "E_100 from the 0 K C_ij of the same potential")},
        False,
    ),
    "point defects Al": (
        "lammps/point_defects",
        spec("Al", ["vacancy_formation_energy", "interstitial_formation_energy"]),
        {},
        {"vacancy_formation_energy": (0.68, MISHIN_AL)},
        False,
    ),
    "surfaces Al (111)/(100)/(110)": (
        "lammps/planar_defects",
        spec("Al", ["surface_energy"], "(111), (100) and (110) surfaces"),
        {},
        {
            "surface_energy_111": (0.870, MISHIN_AL),
            "surface_energy_100": (0.943, MISHIN_AL),
            "surface_energy_110": (1.006, MISHIN_AL),
        },
        False,
    ),
    "stacking fault Al": (
        "lammps/planar_defects",
        spec("Al", ["stacking_fault_energy"]),
        {},
        {"stacking_fault_energy": (146.0, MISHIN_AL)},
        False,
    ),
    "gamma line Al (25 shifts)": (
        "lammps/planar_defects",
        spec("Al", ["generalized_stacking_fault_energy"]),
        {},
        {
            "generalized_stacking_fault_energy_unstable": (168.0, MISHIN_AL),
            "generalized_stacking_fault_energy_intrinsic": (146.0, MISHIN_AL),
        },
        False,
    ),
    "surface Cu (111)": (
        "lammps/planar_defects",
        spec("Cu", ["surface_energy"], "(111) surface"),
        {},
        {"surface_energy": (1.239, MISHIN_CU)},
        False,
    ),
    "minimize Cu (cg, box)": (
        "lammps/minimize",
        spec("Cu", ["minimized_energy"]),
        {},
        {"minimized_energy": (-3.54, MISHIN_CU + " (-E_coh)")},
        False,
    ),
    "thermal expansion Cu 300 K (defaults)": (
        "lammps/thermal_expansion",
        spec("Cu", ["thermal_expansion_coefficient"], temperature=300),
        {},
        {"thermal_expansion_coefficient": (1.65e-5, "experiment, CRC Handbook (Mishin 2001 Fig. 3: EAM1 follows it)")},
        True,
    ),
    "elastic Al 300 K (defaults)": (
        "lammps/elastic_constants",
        spec("Al", ["elastic_constants", "bulk_modulus"], temperature=300),
        {},
        {},
        True,
    ),
    "tensile Al 300 K (defaults)": (
        "lammps/tensile_test",
        spec("Al", ["youngs_modulus"], "tensile test", 300),
        {},
        {"youngs_modulus": (E100_AL_300K, "E_100 from the 300 K C_ij of the same potential (case 'elastic Al 300 K')")},
        True,
    ),
}


def measure(name: str, root: Path) -> dict:
    protocol_name, task, overrides, references, _ = CASES[name]
    protocol = get_protocol(protocol_name)
    params, defaults = protocol.parameters(task)
    if overrides:
        params = protocol.validate_params({**params.model_dump(), **overrides})
    jobs = protocol.jobs(params)
    start = time.perf_counter()
    records = run_plan(Plan(jobs=jobs), root)
    run_wall = time.perf_counter() - start
    failed = {k: r.message for k, r in records.items() if r.status != "succeeded"}
    out = {
        "protocol": protocol_name,
        "engine_runs": len(jobs),
        "run_wall_s": round(run_wall, 2),
        "loop_s": round(sum(read_output(root / j.id).engine_time_s for j in jobs), 2),
        "engine_process_s": round(sum(r.wall_s or 0.0 for r in records.values()), 2),
        "overrides": {k: list(v) if isinstance(v, tuple) else v for k, v in overrides.items()},
    }
    if failed:
        return {**out, "status": "failed", "error": failed}
    try:
        t0 = time.perf_counter()
        results = protocol.analyze(params, {j.id: root / j.id for j in jobs}, task)
        out["analysis_s"] = round(time.perf_counter() - t0, 2)
    except Exception as err:  # report and go on with the other cases
        return {**out, "status": "failed", "error": str(err)}
    out["wall_s"] = round(run_wall + out["analysis_s"], 2)
    values = {}
    for r in results:
        entry = {"value": r.value, "unit": r.unit, "uncertainty": r.uncertainty}
        if r.quantity in references:
            ref, source = references[r.quantity]
            entry.update(reference=ref, source=source, deviation_pct=round(100 * (r.value - ref) / abs(ref), 2))
        values[r.quantity] = entry
    return {**out, "status": "ok", "results": values, "defaults": len(defaults)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="skip the slow finite-temperature default runs")
    parser.add_argument("--only", nargs="*", help="case names (substring match)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "solid_protocols.json"))
    args = parser.parse_args()
    names = [n for n, case in CASES.items() if not (args.quick and case[4])]
    if args.only:
        names = [n for n in names if any(o.lower() in n.lower() for o in args.only)]
    report = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, name in enumerate(names):
            report[name] = measure(name, Path(tmp) / f"case{i}")
            row = report[name]
            summary = ", ".join(
                f"{q} {v['value']:.4g}" + (f" ({v['deviation_pct']:+.1f} %)" if "deviation_pct" in v else "")
                for q, v in row.get("results", {}).items()
            )
            print(
                f"{name}: {row['status']}, {row['engine_runs']} runs, wall {row.get('wall_s', row['run_wall_s'])} s, "
                f"loop {row['loop_s']} s; {summary or row.get('error')}",
                flush=True,
            )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.only and out.is_file():  # a partial rerun updates its cases in the existing report
        report = {**json.loads(out.read_text()), **report}
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
