"""Transport, chain and energy-term protocols: wall time vs LAMMPS loop time, and agreement with
published values.

Each case builds a TaskSpec directly (the request text only selects the viscosity method), lets
the protocol choose its parameters (controls overridden where a case says so), runs its job with
the local executor and analyses it. Reported per case: wall time of run + analysis, the LAMMPS
loop time, the result with its standard error, the reference, the deviation in standard errors
(combined with the reference's own error where one is published) and in percent.

Usage: .venv/bin/python benchmarks/transport_protocols.py [--quick] [--only NAME ...] [--out FILE]
  --quick runs the short settings of the engine tests instead of the protocol defaults.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from simagent.jobrun import run_plan  # noqa: E402
from simagent.models import (  # noqa: E402
    Conditions,
    Plan,
    PotentialSpec,
    PropertyRequest,
    Quantity,
    SimulationControls,
    SystemSpec,
    TaskSpec,
)
from simagent.protocols import get_protocol  # noqa: E402
from tools.lammps.parse import read_output  # noqa: E402

FERRARIO = "Ferrario, Ciccotti, Holian & Ryckaert, Phys. Rev. A 44, 6936 (1991): GK, N = 2048"
MULLER_PLATHE_97 = "Muller-Plathe, J. Chem. Phys. 106, 6082 (1997): kappa* ~ 6.6-7.0 near the triple point"
VISCARDY_07 = "Viscardy, Servantie & Gaspard, J. Chem. Phys. 126, 184513 (2007): GK and Helfand moment"
NIST = "NIST SRSW LJ fluid, T* = 0.85, rho* = 0.86, rc = 3 sigma + LRC"
KREMER_GREST = "Kremer & Grest, J. Chem. Phys. 92, 5057 (1990): bond 0.97 sigma"


def lj(prop, request="x", t=0.722, rho=0.8442, cutoff=2.5, tail=False, **controls):
    return TaskSpec(
        request=request,
        system=SystemSpec(name="LJ fluid", kind="lj_fluid"),
        potential=PotentialSpec(family="lj", cutoff=Quantity(value=cutoff, unit="sigma"), tail_correction=tail),
        conditions=Conditions(
            temperature=Quantity(value=t, unit="reduced"), density=Quantity(value=rho, unit="reduced")
        ),
        properties=[PropertyRequest(name=p) for p in ([prop] if isinstance(prop, str) else prop)],
        units_style="lj",
        controls=SimulationControls(**controls),
    )


def kg(props, n=10, **controls):
    return TaskSpec(
        request="x",
        system=SystemSpec(name="Kremer-Grest melt", kind="polymer", molecule=f"bead-spring chain of {n} beads"),
        conditions=Conditions(
            temperature=Quantity(value=1.0, unit="reduced"), density=Quantity(value=0.85, unit="reduced")
        ),
        properties=[PropertyRequest(name=p) for p in props],
        units_style="lj",
        controls=SimulationControls(**controls),
    )


# name: (protocol, spec (default run), quick controls, {quantity: (reference, reference se, source)})
CASES = {
    "viscosity LJ Green-Kubo": (
        "lammps/shear_viscosity",
        lj("shear_viscosity", "Green-Kubo"),
        {"n_atoms": 256, "production_steps": 40000},
        {"shear_viscosity": (3.24, 0.04, FERRARIO)},
    ),
    "viscosity LJ Muller-Plathe": (
        "lammps/shear_viscosity",
        lj("shear_viscosity", "Muller-Plathe"),
        {"production_steps": 20000},
        {"shear_viscosity": (3.24, 0.04, FERRARIO)},
    ),
    "thermal conductivity LJ Muller-Plathe": (
        "lammps/thermal_conductivity",
        lj("thermal_conductivity"),
        {"production_steps": 20000},
        {"thermal_conductivity": (6.8, 0.2, MULLER_PLATHE_97)},
    ),
    "thermal conductivity LJ Green-Kubo": (
        "lammps/thermal_conductivity",
        lj("thermal_conductivity", "Green-Kubo"),
        {"n_atoms": 256, "production_steps": 40000},
        {"thermal_conductivity": (6.8, 0.2, MULLER_PLATHE_97 + "; " + VISCARDY_07)},
    ),
    "thermal conductivity LJ eHEX": (
        "lammps/thermal_conductivity",
        lj("thermal_conductivity", "eHEX"),
        {"production_steps": 21000},
        {"thermal_conductivity": (6.8, 0.2, MULLER_PLATHE_97)},
    ),
    "chain conformation KG N=10": (
        "lammps/chain_conformation",
        kg(["radius_of_gyration", "end_to_end_distance"]),
        {"equilibration_steps": 10000, "production_steps": 20000},
        {},
    ),
    "energy components LJ fluid": (
        "lammps/energy_components",
        lj("energy_components", t=0.85, rho=0.86, cutoff=3.0, tail=True),
        {"production_steps": 10000},
        {"energy_components_vdwl": (-6.0305, 0.0, NIST)},
    ),
}


def lammps_cpu_seconds(log: Path) -> float:
    """CPU time of the LAMMPS runs: each loop time times its '% CPU use' (the machine is shared, so
    wall time alone overstates the cost)."""
    total, loop = 0.0, None
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("Loop time of"):
            loop = float(line.split()[3])
        elif "% CPU use" in line and loop is not None:
            total += loop * float(line.split("%")[0]) / 100
            loop = None
    return total


def run_case(name: str, quick: bool, root: Path) -> dict:
    protocol_name, spec, quick_controls, references = CASES[name]
    if quick:
        spec = spec.model_copy(deep=True)
        for key, value in quick_controls.items():
            setattr(spec.controls, key, value)
    protocol = get_protocol(protocol_name)
    params, _ = protocol.parameters(spec)
    start = time.perf_counter()
    records = run_plan(Plan(jobs=protocol.jobs(params)), root)
    if records["md"].status != "succeeded":
        return {"case": name, "error": records["md"].message}
    results = protocol.analyze(params, {"md": root / "md"}, spec)
    wall = time.perf_counter() - start
    out = read_output(root / "md")
    rows = []
    for result in results:
        row = {
            "quantity": result.quantity,
            "value": result.value,
            "uncertainty": result.uncertainty,
            "unit": result.unit,
        }
        if result.quantity in references:
            ref, ref_se, source = references[result.quantity]
            se = math.hypot(result.uncertainty or 0.0, ref_se)
            row |= {
                "reference": ref,
                "reference_se": ref_se,
                "source": source,
                "deviation_percent": 100 * (result.value / ref - 1),
                "deviation_in_se": (result.value - ref) / se if se else None,
            }
        rows.append(row)
    if protocol_name == "lammps/chain_conformation":
        bond = float(results[0].method.split("mean bond length ")[1].split()[0])
        rows.append(
            {
                "quantity": "mean_bond_length",
                "value": bond,
                "reference": 0.97,
                "source": KREMER_GREST,
                "deviation_percent": 100 * (bond / 0.97 - 1),
            }
        )
    return {
        "case": name,
        "protocol": protocol_name,
        "quick": quick,
        "wall_s": wall,
        "lammps_loop_s": out.engine_time_s,
        "lammps_cpu_s": lammps_cpu_seconds(root / "md" / "log.lammps"),
        "overhead_s": wall - out.engine_time_s,
        "results": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "transport_protocols.json"))
    args = parser.parse_args()
    names = args.only or list(CASES)
    report = []
    with tempfile.TemporaryDirectory(prefix="transport_bench_") as tmp:
        for name in names:
            entry = run_case(name, args.quick, Path(tmp) / name.replace(" ", "_"))
            report.append(entry)
            print(json.dumps(entry, indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    print(f"{'case':42s} {'wall s':>8s} {'loop s':>8s} {'cpu s':>7s}  results")
    for entry in report:
        if "error" in entry:
            print(f"{entry['case']:42s} ERROR {entry['error']}")
            continue
        shown = "; ".join(
            f"{r['quantity']} = {r['value']:.4g}"
            + (f" +/- {r['uncertainty']:.2g}" if r.get("uncertainty") else "")
            + (f" (ref {r['reference']:g}, {r['deviation_percent']:+.1f} %)" if "reference" in r else "")
            for r in entry["results"]
            if "reference" in r or r["quantity"] in ("radius_of_gyration_squared", "end_to_end_distance_squared")
        )
        print(
            f"{entry['case']:42s} {entry['wall_s']:8.1f} {entry['lammps_loop_s']:8.1f} "
            f"{entry['lammps_cpu_s']:7.1f}  {shown}"
        )


if __name__ == "__main__":
    main()
