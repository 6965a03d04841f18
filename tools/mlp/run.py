"""Runs one ML-potential job folder: `python -m tools.mlp.run mlp_job.json`.

The primitive cell is relaxed (atoms and cell: ASE FrechetCellFilter + BFGS to `fmax`, forces in
eV/A and stress times volume per atom), then E(V) is computed at the strained volumes around the
relaxed cell. Everything measured goes to results.json; the log to stdout."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from pydantic import BaseModel, Field

from tools.jobfile import read_job_file

RESULTS_FILE = "results.json"
JOB_FILE = "mlp_job.json"
ATOM_BOX_A = 12.0  # wider than the models' neighbour cutoffs (CHGNet 6 A, SevenNet-0 5 A): no neighbours


class MlpJob(BaseModel):
    model: str
    element: str
    lattice: str
    a_initial: float = Field(gt=0)
    fmax: float = Field(default=1e-3, gt=0, description="eV/angstrom (cell filter: stress x volume too)")
    max_steps: int = Field(default=500, gt=0)
    strains: list[float] = Field(default_factory=list)
    isolated_atom: bool = Field(default=False, description="also one atom alone in a box (cohesive energy)")


def read_results(job_dir: Path) -> dict:
    """The results.json an ML-potential job wrote (ReadError when the job left none)."""
    from simagent.errors import ReadError

    path = job_dir / RESULTS_FILE
    if not path.is_file():
        raise ReadError(f"{path}: the ML-potential job left no results")
    return json.loads(path.read_text())


def main(argv: list[str]) -> int:
    loaded = read_job_file(argv, JOB_FILE, None)
    if loaded is None:
        return 2
    path, raw = loaded
    try:
        kind = raw.get("kind")
        job = None if kind in ("guest_binding", "vacancy") else MlpJob.model_validate(raw)
    except ValueError as err:
        print(f"cannot read {path}: {err}", file=sys.stderr)
        return 2
    if kind == "guest_binding":
        from tools.mlp import guest_binding

        return guest_binding.main(path)
    if kind == "vacancy":
        from tools.mlp import vacancy

        return vacancy.main(path)
    from ase.filters import FrechetCellFilter
    from ase.optimize import BFGS

    from tools.crystals import crystal
    from tools.mlp.models import calculator, model_info, package_version

    info = model_info(job.model)
    start = time.monotonic()
    calc = calculator(info)
    load_s = time.monotonic() - start
    atoms = crystal(job.element, job.lattice, job.a_initial)
    atoms.calc = calc
    cell0 = atoms.cell.array.copy()
    start = time.monotonic()
    opt = BFGS(FrechetCellFilter(atoms), logfile=str(path.parent / "relax.log"))
    converged = bool(opt.run(fmax=job.fmax, steps=job.max_steps))
    relax_s = time.monotonic() - start
    scale = (atoms.get_volume() / abs(float(__import__("numpy").linalg.det(cell0)))) ** (1 / 3)
    relaxed = atoms.copy()
    results = {
        "model": info.label, "package": f"{info.package} {package_version(info)}", "citation": info.citation,
        "natoms": len(atoms), "relax_converged": converged, "relax_steps": opt.get_number_of_steps(),
        "relaxed_cell": atoms.cell.array.tolist(), "relaxed_volume_A3": atoms.get_volume(),
        "relaxed_energy_eV": float(atoms.get_potential_energy()), "a_relaxed_A": job.a_initial * scale,
        "max_force_eV_per_A": float(abs(atoms.get_forces()).max()),
        "max_stress_GPa": float(abs(atoms.get_stress()).max() / 0.006241509074460763),
        "load_s": round(load_s, 3), "relax_s": round(relax_s, 3), "volumes_A3": [], "energies_eV": [],
    }
    start = time.monotonic()
    for s in job.strains:
        strained = relaxed.copy()
        strained.set_cell(relaxed.cell.array * s, scale_atoms=True)
        strained.calc = calc
        results["volumes_A3"].append(strained.get_volume())
        results["energies_eV"].append(float(strained.get_potential_energy()))
    results["eos_s"] = round(time.monotonic() - start, 3)
    if job.isolated_atom:
        from ase import Atoms

        atom = Atoms(job.element, positions=[(0.0, 0.0, 0.0)], cell=[ATOM_BOX_A, ATOM_BOX_A * 1.05, ATOM_BOX_A * 1.1],
                     pbc=True)
        atom.calc = calc
        results["isolated_atom_energy_eV"] = float(atom.get_potential_energy())
        results["isolated_atom_box_A"] = ATOM_BOX_A
    (path.parent / RESULTS_FILE).write_text(json.dumps(results, indent=1))
    print(f"{info.label}: relaxation {'converged' if converged else 'NOT converged'} in {results['relax_steps']} steps")
    return 0 if converged else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
