"""One guest molecule in a framework with a universal ML potential (runs inside the job process).

Placements: random points of the cell whose every guest atom keeps `min_distance_A` from every
framework atom (minimum image), with random orientations (uniform rotations, scipy). Each placement
gets a single-point energy; the lowest few are relaxed with the framework held fixed (ase FixAtoms +
BFGS to `fmax`, at most `max_steps`). E_bind = E(framework+guest) - E(framework) - E(guest), the
isolated guest relaxed alone in a cubic box of `box_A`, the framework at its CIF geometry."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

EV_TO_KJ_PER_MOL = 96.48533212


class GuestBindingJob(BaseModel):
    kind: str = "guest_binding"
    model: str
    cell: list[list[float]]
    symbols: list[str]
    fractional: list[list[float]]
    guest: str = Field(description="ASE molecule name (ase.build.molecule)")
    placements: int = Field(default=20, gt=0)
    relaxations: int = Field(default=3, gt=0)
    min_distance_A: float = Field(default=2.5, gt=0)
    fmax: float = Field(default=0.05, gt=0, description="eV/angstrom")
    max_steps: int = Field(default=200, gt=0)
    box_A: float = Field(default=20.0, gt=0)
    seed: int = 0


def framework_atoms(cell, symbols, fractional):
    from ase import Atoms

    return Atoms(symbols=symbols, scaled_positions=fractional, cell=cell, pbc=True)


def guest_molecule(name: str):
    from ase.build import molecule

    guest = molecule(name)
    guest.positions -= guest.get_center_of_mass()
    return guest


def min_distance_to_framework(framework, points: np.ndarray) -> float:
    """Smallest minimum-image distance between any point (cartesian, N x 3) and any framework atom."""
    cell = framework.cell.array
    inverse = np.linalg.inv(cell)
    delta = points[:, None, :] - framework.positions[None, :, :]
    frac = delta @ inverse
    frac -= np.round(frac)
    # minimum image over the 27 neighbouring images (correct for skewed cells too)
    shifts = np.array([[i, j, k] for i in (-1, 0, 1) for j in (-1, 0, 1) for k in (-1, 0, 1)], dtype=float)
    cart = (frac[:, :, None, :] + shifts[None, None, :, :]) @ cell
    return float(np.sqrt((cart ** 2).sum(axis=-1)).min())


def place(framework, guest, count: int, min_distance_A: float, rng: np.random.Generator,
          max_tries: int = 20000) -> list[np.ndarray]:
    """Up to `count` cartesian guest geometries clear of the framework (fewer when the pore is too small)."""
    from scipy.spatial.transform import Rotation

    found = []
    for _ in range(max_tries):
        if len(found) == count:
            break
        centre = rng.random(3) @ framework.cell.array
        rotation = Rotation.random(random_state=rng)
        positions = rotation.apply(guest.positions) + centre
        if min_distance_to_framework(framework, positions) >= min_distance_A:
            found.append(positions)
    return found


def run(job: GuestBindingJob, folder: Path, calc) -> dict:
    from ase import Atoms
    from ase.constraints import FixAtoms
    from ase.optimize import BFGS

    start = time.monotonic()
    framework = framework_atoms(job.cell, job.symbols, job.fractional)
    framework.calc = calc
    e_framework = float(framework.get_potential_energy())
    guest = guest_molecule(job.guest)
    isolated = Atoms(guest.get_chemical_symbols(), positions=guest.positions + job.box_A / 2,
                     cell=[job.box_A] * 3, pbc=True)
    isolated.calc = calc
    opt = BFGS(isolated, logfile=str(folder / "guest_relax.log"))
    guest_converged = bool(opt.run(fmax=job.fmax, steps=job.max_steps))
    e_guest = float(isolated.get_potential_energy())
    rng = np.random.default_rng(job.seed)
    geometries = place(framework, guest, job.placements, job.min_distance_A, rng)
    n_frame = len(framework)
    screened = []
    for positions in geometries:
        system = framework.copy() + Atoms(guest.get_chemical_symbols(), positions=positions)
        system.calc = calc
        screened.append((float(system.get_potential_energy()) - e_framework - e_guest, positions))
    screen_s = time.monotonic() - start
    screened.sort(key=lambda item: item[0])
    relaxed = []
    for rank, (e_single, positions) in enumerate(screened[:job.relaxations]):
        system = framework.copy() + Atoms(guest.get_chemical_symbols(), positions=positions)
        system.set_constraint(FixAtoms(indices=range(n_frame)))
        system.calc = calc
        opt = BFGS(system, logfile=str(folder / f"relax_{rank}.log"))
        converged = bool(opt.run(fmax=job.fmax, steps=job.max_steps))
        e_bind = float(system.get_potential_energy()) - e_framework - e_guest
        system.write(folder / f"relaxed_{rank}.xyz", format="extxyz")
        relaxed.append({"rank": rank, "screen_eV": e_single, "binding_eV": e_bind,
                        "binding_kJ_mol": e_bind * EV_TO_KJ_PER_MOL, "converged": converged,
                        "steps": opt.get_number_of_steps(),
                        "guest_centre_A": system.positions[n_frame:].mean(axis=0).tolist()})
    return {"framework_energy_eV": e_framework, "guest_energy_eV": e_guest, "guest_converged": guest_converged,
            "natoms_framework": n_frame, "placements_requested": job.placements, "placements": len(geometries),
            "screen_binding_eV": [e for e, _ in screened], "relaxed": relaxed,
            "screen_s": round(screen_s, 3), "wall_s": round(time.monotonic() - start, 3)}


def main(path: Path) -> int:
    from tools.mlp.models import calculator, model_info, package_version

    job = GuestBindingJob.model_validate_json(path.read_text())
    info = model_info(job.model)
    start = time.monotonic()
    calc = calculator(info)
    load_s = time.monotonic() - start
    results = run(job, path.parent, calc)
    results.update({"model": info.label, "package": f"{info.package} {package_version(info)}",
                    "citation": info.citation, "load_s": round(load_s, 3)})
    from tools.mlp.run import RESULTS_FILE

    (path.parent / RESULTS_FILE).write_text(json.dumps(results, indent=1))
    ok = results["placements"] > 0 and any(r["converged"] for r in results["relaxed"])
    print(f"{info.label}: {results['placements']} placements screened, {len(results['relaxed'])} relaxed "
          f"in {results['wall_s']:.1f} s")
    return 0 if ok else 1
