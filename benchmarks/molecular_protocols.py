"""TraPPE-UA molecular liquids and polymer melts (lammps/trappe_alkane): cost and agreement with
published values.

Each case builds a TaskSpec, lets the protocol choose its default parameters (the settings a user
gets), runs the job with the local executor and analyses it. Reported per case: the density with its
standard error next to the published value (cited), the wall time, the CPU time of the engine
processes (children), the LAMMPS loop time, the system size and run lengths, and the 1-minute load
average at the start and end (the machine is shared: CPU time is the figure to trust).

Usage: .venv/bin/python benchmarks/molecular_protocols.py [--only NAME ...] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from simagent.jobrun import run_plan  # noqa: E402
from simagent.models import Conditions, Plan, PropertyRequest, Quantity, SystemSpec, TaskSpec  # noqa: E402
from simagent.protocols import get_protocol  # noqa: E402
from tools.lammps.parse import read_output  # noqa: E402

# Published values (experiment), with their sources; the tolerance used by the slow tests is
# stated in tests/test_alkane_protocol.py
HEXANE_298 = (0.655, "n-hexane, 298.15 K, 0.101 MPa: Span & Wagner, Int. J. Thermophys. 24, 41 (2003) "
              "reference EOS (NIST WebBook)")


def spec(molecule: str, kind: str, kelvin: float) -> TaskSpec:
    return TaskSpec(
        request=f"density of {molecule} at {kelvin} K and 1 atm",
        system=SystemSpec(name=molecule, kind=kind, molecule=molecule),
        properties=[PropertyRequest(name="density")], units_style="real", engine="lammps",
        conditions=Conditions(temperature=Quantity(value=kelvin, unit="K"), pressure=Quantity(value=1.0, unit="atm")),
    )  # fmt: skip


# Linear polyethylene melt (high molecular weight) at 450 K and 0.101325 MPa: the Tait equation of HDPE,
# Danner & High, Handbook of Polymer Solution Thermodynamics (1993), Table 3B-1 (A0 = 1.1567e-3 m^3/kg,
# A1 = 6.2888e-7, A2 = 1.1268e-9, B0 = 1.7867e8 Pa, B1 = 4.7254e-3; valid 415-472 K), as tabulated in the
# polykin databank: 1.3030 cm^3/g (tests/test_alkane_protocol.py shows the evaluation)
PE_450 = (0.7675, "linear PE melt (high MW), 450 K, 0.1 MPa: Tait equation of HDPE PVT data, Danner & High, "
          "Handbook of Polymer Solution Thermodynamics (1993), Table 3B-1; the simulated chains are C100")

# the settings of the fast machinery test (tests/test_alkane_protocol.py): its cost, not a physics result
FAST_TEST = {"n_molecules": 40, "cutoff": 9.0, "pushoff_steps": 300, "relax_steps": 300, "equilibration_steps": 500,
             "production_steps": 2000}

# name: (spec, (reference, source) or None, parameter overrides)
CASES = {
    "n-hexane 298.15 K": (spec("n-hexane", "molecular_fluid", 298.15), HEXANE_298, {}),
    "polyethylene C100 450 K": (spec("polyethylene", "polymer", 450.0), PE_450, {}),
    "n-butane 273 K, fast-test settings": (spec("n-butane", "molecular_fluid", 273.0), None, FAST_TEST),
}


def run_case(name: str, root: Path) -> dict:
    task, published, overrides = CASES[name]
    reference, source = published or (None, "none: a cost measurement")
    protocol = get_protocol("lammps/trappe_alkane")
    params, defaults = protocol.parameters(task)
    params = params.model_copy(update=overrides)
    load0 = os.getloadavg()[0]
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    records = run_plan(Plan(jobs=protocol.jobs(params)), root)
    if records["md"].status != "succeeded":
        return {"case": name, "status": records["md"].status, "message": records["md"].message}
    (result,) = protocol.analyze(params, {"md": root / "md"}, task)
    wall = time.perf_counter() - start
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "case": name,
        "value": round(result.value, 5), "uncertainty": round(result.uncertainty or 0.0, 5), "unit": result.unit,
        "reference": reference, "source": source,
        "deviation_percent": round(100 * (result.value - reference) / reference, 2) if reference else None,
        "overrides": overrides,
        "sites": params.n_atoms, "molecules": params.n_molecules, "carbons_per_molecule": params.n_carbons,
        "steps": params.pushoff_steps + params.relax_steps + params.equilibration_steps + params.production_steps,
        "timestep_fs": params.timestep,
        "wall_s": round(wall, 1),
        "cpu_s": round((cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime), 1),
        "lammps_loop_s": round(read_output(root / "md").engine_time_s, 1),
        "load_average_start_end": [round(load0, 1), round(os.getloadavg()[0], 1)],
        "method": result.method,
        "defaults": {d.parameter: d.value for d in defaults},
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "molecular_protocols.json"))
    args = parser.parse_args()
    out = Path(args.out)
    results = json.loads(out.read_text()) if out.is_file() else {}
    for name in args.only or list(CASES):
        with tempfile.TemporaryDirectory(prefix="molecular-bench-") as tmp:
            row = run_case(name, Path(tmp))
        print(json.dumps(row, indent=1))
        results[name] = row
        out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
