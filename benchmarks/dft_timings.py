"""DFT (Quantum ESPRESSO) and ML-potential timings and convergence studies on this machine.

Parts (each optional with --only):
  launch   time of one Si2 SCF (60 Ry, 7x7x7) serial and with `mpirun.openmpi -np 2`, and per SCF step
  cutoff   energy per atom vs plane-wave cutoff (Si2 and Al1, 4x4x4 k-points), relative to 100 Ry
  kpoints  energy per atom vs Monkhorst-Pack mesh (Si2 at 50 Ry; Al1 at 90 Ry with 0.02 Ry MP smearing),
           relative to the densest mesh
  protocols  the full protocols with their defaults: qe/eos (Si), qe/band_gap (Si), mlp/crystal (Cu,
           CHGNet); --with-al adds qe/eos for Al (about 10 minutes on 2 loaded cores)
  energies cohesive energies (qe/eos for Si with its isolated atom; mlp/crystal for Cu, CHGNet) and the
           vacancy migration barrier by nudged elastic band (mlp/vacancy, Cu, CHGNet)
Each pw.x run is serial (1 core). Results go to benchmarks/results/dft_timings.json.

Usage: .venv/bin/python benchmarks/dft_timings.py [--only launch cutoff kpoints protocols energies] [--with-al]
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
from simagent.models import Plan, PotentialSpec, PropertyRequest, SystemSpec, TaskSpec  # noqa: E402
from simagent.protocols import get_protocol  # noqa: E402
from tools.crystals import crystal  # noqa: E402
from tools.qe import pseudos  # noqa: E402
from tools.qe.inputs import PwInput, sites_of  # noqa: E402
from tools.qe.run import Runner  # noqa: E402
from tools.qe.workflow import QeWorkflow  # noqa: E402

OUT = Path(__file__).parent / "results" / "dft_timings.json"
CASES = {"Si": ("diamond", 5.43, "fixed"), "Al": ("fcc", 4.04, "smearing")}


def pw_input(element: str, ecut: float, kpts: tuple[int, int, int]) -> PwInput:
    lattice, a, occupations = CASES[element]
    atoms = crystal(element, lattice, a)
    pp = pseudos.pseudo(element)
    return PwInput(pseudo_dir=str(pp.path.parent), pseudopotentials={element: pp.file},
                   cell=[tuple(v) for v in atoms.cell.array], sites=sites_of(atoms), ecutwfc=ecut,
                   occupations=occupations, kpts=kpts)


def run_scf(folder: Path, inp: PwInput, ranks: int = 1) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    runner = Runner(folder, QeWorkflow(kind="scf", base=inp, ranks=ranks))
    start = time.monotonic()
    out = runner.pw("scf", inp)
    wall = time.monotonic() - start
    return {"wall_s": round(wall, 2), "scf_steps": out.scf_iterations,
            "s_per_scf_step": round(wall / max(1, out.scf_iterations), 3), "energy_per_atom_eV": out.energy_per_atom_eV}


def launch(root: Path) -> dict:
    inp = pw_input("Si", 60.0, (7, 7, 7))
    return {"system": "Si2, 60 Ry, 7x7x7", "serial": run_scf(root / "serial", inp, 1),
            "mpirun_np2": run_scf(root / "mpi2", inp, 2)}


def convergence(root: Path, element: str, values: list, make) -> list[dict]:
    rows = []
    for v in values:
        r = run_scf(root / f"{element}_{v}", make(v))
        rows.append({"value": v, **r})
    ref = rows[-1]["energy_per_atom_eV"]
    for r in rows:
        r["delta_meV_per_atom"] = round((r["energy_per_atom_eV"] - ref) * 1000, 3)
    return rows


def protocol_case(root: Path, name: str, element: str, lattice: str, props: list[str], engine_name: str,
                  request: str, hint: str | None = None) -> dict:
    task = TaskSpec(request=request, engine=engine_name, potential=PotentialSpec(name_hint=hint) if hint else None,
                    system=SystemSpec(name=element, kind="crystal", elements=[element], lattice=lattice),
                    properties=[PropertyRequest(name=p) for p in props])
    protocol = get_protocol(name)
    params, _ = protocol.parameters(task)
    jobs = protocol.jobs(params)
    folder = root / name.replace("/", "_") / element
    start = time.monotonic()
    records = run_plan(Plan(jobs=jobs), folder)
    wall = time.monotonic() - start
    if any(r.status != "succeeded" for r in records.values()):
        return {"protocol": name, "element": element, "failed": {k: r.message for k, r in records.items()}}
    results = protocol.analyze(params, {j.id: folder / j.id for j in jobs}, task)
    row = {"protocol": name, "element": element, "wall_s": round(wall, 1),
           "results": {r.quantity: [round(r.value, 4), r.unit] for r in results}}
    steps = folder / jobs[0].id / "steps.json"
    if steps.is_file():
        data = json.loads(steps.read_text())
        row["pw_runs"] = len(data)
        row["scf_steps"] = sum(s["scf_iterations"] for s in data)
        row["s_per_scf_step"] = round(sum(s["wall_s"] for s in data) / max(1, row["scf_steps"]), 3)
        row["pw_wall_s"] = {s["step"]: s["wall_s"] for s in data if s["step"] == "atom"}
    mlp = folder / jobs[0].id / "results.json"
    if mlp.is_file():
        data = json.loads(mlp.read_text())
        row.update({key: data[key] for key in ("load_s", "relax_s", "relax_steps", "eos_s", "neb_s", "neb_steps",
                                               "images", "atoms") if key in data})
    return row


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", default=["launch", "cutoff", "kpoints", "protocols", "energies"])
    parser.add_argument("--with-al", action="store_true")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"
    report: dict = json.loads(OUT.read_text()) if OUT.is_file() else {}
    report["machine"] = f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if "launch" in args.only:
            report["launch"] = launch(root / "launch")
        if "cutoff" in args.only:
            cuts = [30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0]
            report["cutoff_Ry"] = {el: convergence(root / "cut", el, cuts, lambda c, el=el: pw_input(el, c, (4, 4, 4)))
                                   for el in ("Si", "Al")}
        if "kpoints" in args.only:
            report["kpoints"] = {
                "Si (50 Ry)": convergence(root / "k", "Si", [3, 5, 7, 9, 11],
                                          lambda n: pw_input("Si", 50.0, (n, n, n))),
                "Al (90 Ry, MP 0.02 Ry)": convergence(root / "k", "Al", [6, 10, 14, 18],
                                                      lambda n: pw_input("Al", 90.0, (n, n, n))),
            }
        if "protocols" in args.only:
            cases = [("qe/eos", "Si", "diamond", ["lattice_constant", "bulk_modulus"], "qe", "PBE", None),
                     ("qe/band_gap", "Si", "diamond", ["band_gap"], "qe", "PBE", None),
                     ("mlp/crystal", "Cu", "fcc", ["lattice_constant", "bulk_modulus"], "mlp", "CHGNet", "chgnet")]
            if args.with_al:
                cases.append(("qe/eos", "Al", "fcc", ["lattice_constant", "bulk_modulus"], "qe", "PBE", None))
            report["protocols"] = [protocol_case(root / "p", *case) for case in cases]
        if "energies" in args.only:
            cases = [("qe/eos", "Si", "diamond", ["cohesive_energy"], "qe", "cohesive energy, PBE", None),
                     ("mlp/crystal", "Cu", "fcc", ["cohesive_energy"], "mlp", "CHGNet", "chgnet"),
                     ("mlp/vacancy", "Cu", "fcc", ["vacancy_migration_energy", "vacancy_formation_energy"], "mlp",
                      "CHGNet", "chgnet")]
            report["energies"] = [protocol_case(root / "e", *case) for case in cases]
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
