"""Every plan the protocols render, as one JSON file: a refactoring's before/after check.

For every request of the understanding benchmark (benchmarks/understanding/requests.jsonl) and a
few more wordings that reach the protocols that benchmark does not (EXTRA), read by the expert
backend, and for every protocol that applies to it (as the planner asks: the spec restricted to the
protocol's properties), record the typed parameters, the defaults_applied and every rendered input
file, or the error that protocol raised. Two snapshots taken before and after a change that must
not change behaviour are compared with `diff`:

    PYTHONPATH=. python benchmarks/plan_snapshot.py /tmp/before.json   # on the old commit
    PYTHONPATH=. python benchmarks/plan_snapshot.py /tmp/after.json    # on the new one
    PYTHONPATH=. python benchmarks/plan_snapshot.py --compare /tmp/before.json /tmp/after.json

`--compare` prints, per plan, any difference in parameters or rendered inputs (must be none) and
the defaults whose parameter, value or reason changed (to be read: equal or better worded).
No engine runs; structures and potentials are read from the checkout as the planner reads them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REQUESTS = ROOT / "benchmarks" / "understanding" / "requests.jsonl"
# Wordings for protocols the understanding set reaches rarely or never (solids, DFT, ML potentials).
EXTRA = [
    "Elastic constants of fcc aluminium",
    "Elastic constants of bcc iron at 300 K",
    "Vacancy formation energy of fcc copper",
    "Interstitial formation energy of bcc iron",
    "Stacking fault energy of fcc copper",
    "Surface energy of the (111) surface of nickel",
    "Thermal expansion coefficient of copper at 300 K",
    "Thermal expansion of aluminium between 100 and 500 K",
    "Minimized energy of fcc copper",
    "What is the melting temperature of copper with the Mishin EAM potential?",
    "Young's modulus of aluminium from a tensile test at 10 K",
    "Stress-strain curve of copper at 300 K with a strain rate of 1e9 1/s",
    "Lattice constant and bulk modulus of silicon with DFT",
    "Band gap of silicon with PBE",
    "Binding energy of CO2 in Mg-MOF-74 with DFT",
    "Vacancy migration barrier of copper with DFT",
    "Lattice constant of copper with CHGNet",
    "Lattice constant of copper with a machine-learned potential",
    "Cohesive energy of silicon with DFT",
    "Cohesive energy of aluminium with Quantum ESPRESSO",
    "Cohesive energy of aluminium with MACE",
    "Binding energy of CO2 in Mg-MOF-74 with CHGNet",
    "Vacancy migration barrier of copper with CHGNet",
    "Vacancy migration barrier of nickel with a universal ML potential",
    "Binding energy of CO2 in Mg-MOF-74 with a machine-learning potential",
    "Vacancy formation energy of nickel with CHGNet",
    "Lattice constant of silicon from DFT with VASP",
    "What is the band gap of bulk silicon from DFT with VASP?",
    "Density of liquid n-butane at 273 K and 1 atm",
    "Density of n-hexane at 298 K",
    "Density of a polyethylene melt of C100 chains at 450 K",
    "Density of polyethylene at 500 K and 10 MPa",
    "bulk modulus of IRMOF-1",
    "Self-diffusion coefficient of methane in IRMOF-1 at 298 K",
    "Self-diffusion coefficient of CH4 in IRMOF-1 at 300 K with 8 molecules per unit cell",
    "Diffusion of methane in ZIF-8 at 300 K with the DREIDING force field, timestep 2 fs, 50000 production steps",
    "Bulk modulus of ZIF-8",
    "Lattice constant of NaCl",
    "Lattice constant of MgO at 300 K",
    "Cohesive energy of diamond silicon with the Tersoff potential at 0 K",
    "Shear viscosity of a Lennard-Jones fluid at T* = 0.722 and rho* = 0.8442",
    "Viscosity of liquid argon at 90 K",
    "Thermal conductivity of a Lennard-Jones fluid at T* = 0.722 and rho* = 0.8442",
    "Thermal conductivity of liquid argon at 100 K and 1.4 g/cm3",
    "Radius of gyration and end-to-end distance of a Kremer-Grest melt of chains of 10 beads at T* = 1 and rho* = 0.85",
    "End-to-end distance of bead-spring chains of 30 beads",
    "Radius of gyration of 200 Kremer-Grest chains of 50 beads at rho* = 0.85, T* = 1.0, 3000 production steps",
    "Radius of gyration of a bead-spring melt of chains of 20 beads with 1010 beads, pair cutoff 1.5 sigma",
    "Energy components of a Kremer-Grest polymer melt with chains of 10 beads",
    # the transport and energy-component variants (method, units, box) the set above leaves out
    "Shear viscosity of a Lennard-Jones fluid at T* = 0.722 and rho* = 0.8442 by Muller-Plathe reverse NEMD",
    "Viscosity of liquid argon at 90 K and 1.4 g/cm3 with 864 atoms",
    "Thermal conductivity of a Lennard-Jones fluid at T* = 0.722 and rho* = 0.8442 by Green-Kubo",
    "Thermal conductivity of a Lennard-Jones fluid at T* = 0.722 and rho* = 0.8442 with eHEX",
    "Energy components of a Lennard-Jones fluid at T* = 0.722 and rho* = 0.8442",
    "Energy components of liquid argon at 100 K and 1.4 g/cm3 in kJ/mol",
    "Bond and pair energy per molecule of a Kremer-Grest melt of 20 chains of 50 beads at T* = 1.2",
]


# the date lammps-interface writes into a framework's data file changes from run to run
VOLATILE = re.compile(r"^Created on .*$", re.MULTILINE)


def requests() -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in REQUESTS.read_text().splitlines() if line.strip()]
    return [(row["id"], row["request"]) for row in rows] + [(f"extra-{i:02d}", text) for i, text in enumerate(EXTRA)]


def snapshot() -> dict[str, dict]:
    from agents.planner import restrict
    from simagent.backends.expert import ExpertBackend
    from simagent.errors import SimagentError
    from simagent.protocols import all_protocols, engine_allowed

    os.environ.setdefault("SIMAGENT_VASP_COMMAND", "true")  # VASP plans render inputs without VASP (as replay)
    backend, out = ExpertBackend(), {}
    for rid, text in requests():
        try:
            spec = backend.task_spec(text)
        except SimagentError as exc:
            out[rid] = {"request": text, "error": str(exc)}
            continue
        for protocol in all_protocols():
            sub = restrict(spec, list(protocol.properties))
            if not (engine_allowed(protocol, spec) and sub.properties and protocol.applies_to(sub)):
                continue
            key = f"{rid} {protocol.name}"
            try:
                params, applied = protocol.parameters(sub)
                jobs = protocol.jobs(params)
            except SimagentError as exc:
                out[key] = {"request": text, "error": str(exc)}
                continue
            out[key] = {
                "request": text,
                "params": params.model_dump(mode="json"),
                "defaults": [d.model_dump() for d in applied],
                "jobs": {job.id: {name: VOLATILE.sub("Created on @DATE@", text) for name, text in job.inputs.items()}
                         for job in jobs},
            }
    return out


def compare(before: dict, after: dict) -> int:
    """Print the differences; the count of plans whose parameters, inputs or errors differ."""
    broken = 0
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old is None or new is None:
            print(f"== {key}: {'only after' if old is None else 'only before'}")
            broken += 1
            continue
        for part in ("error", "params", "jobs"):
            if old.get(part) != new.get(part):
                print(f"== {key}: {part} differ")
                broken += 1
        if old.get("defaults") != new.get("defaults"):
            old_d = {(d["parameter"], d["value"], d["reason"]) for d in old.get("defaults", [])}
            new_d = {(d["parameter"], d["value"], d["reason"]) for d in new.get("defaults", [])}
            print(f"-- {key}: defaults")
            for d in sorted(old_d - new_d):
                print(f"   - {d}")
            for d in sorted(new_d - old_d):
                print(f"   + {d}")
            if old_d == new_d:
                print("   (same defaults, other order)")
    plans = sum(1 for value in after.values() if "jobs" in value)
    print(f"{len(after)} entries, {plans} rendered plans; {broken} differ in parameters, inputs or errors")
    return broken


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--compare", action="store_true", help="compare two snapshots (before, after)")
    args = parser.parse_args()
    if args.compare:
        before, after = (json.loads(p.read_text()) for p in args.paths)
        return 1 if compare(before, after) else 0
    args.paths[0].write_text(json.dumps(snapshot(), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
