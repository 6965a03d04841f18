"""Vacancy formation and migration in a one-element cubic crystal with a universal ML potential
(run by `python -m tools.mlp.run mlp_job.json` when the job's kind is "vacancy").

1. The primitive cell is relaxed (FrechetCellFilter + BFGS): the lattice constant of the model.
2. A cubic supercell (conventional cell repeated `repeat` times) loses the atom at the origin; the
   initial state is that vacancy, the final state has its nearest neighbour moved into the empty site.
   Both are relaxed at fixed cell (BFGS, `fmax`).
3. Nudged elastic band (ase.mep.NEB, climbing image, IDPP interpolation, FIRE) between them with
   `images` moving images; the barrier is the highest image energy above the initial state.
Everything measured goes to results.json."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from simagent.materials.defects import formation_energy

RESULTS_FILE = "results.json"


class VacancyJob(BaseModel):
    kind: Literal["vacancy"] = "vacancy"
    model: str
    element: str
    lattice: Literal["fcc", "bcc"]
    a_initial: float = Field(gt=0)
    repeat: int = Field(default=2, ge=2, le=4, description="conventional cells per edge of the supercell")
    images: int = Field(default=3, ge=0, le=9, description="moving NEB images (0: formation energy only)")
    fmax: float = Field(default=0.05, gt=0, description="eV/angstrom, endpoints and the NEB")
    max_steps: int = Field(default=400, gt=0)


def main(path: Path) -> int:
    from ase.build import bulk
    from ase.filters import FrechetCellFilter
    from ase.mep import NEB
    from ase.optimize import BFGS, FIRE

    from tools.crystals import crystal
    from tools.mlp.models import calculator, model_info, package_version

    job = VacancyJob.model_validate_json(path.read_text())
    folder = path.parent
    info = model_info(job.model)
    start = time.monotonic()
    calc = calculator(info)
    load_s = time.monotonic() - start
    start = time.monotonic()
    prim = crystal(job.element, job.lattice, job.a_initial)
    prim.calc = calc
    cell_ok = bool(BFGS(FrechetCellFilter(prim), logfile=str(folder / "cell.log")).run(fmax=1e-3, steps=300))
    per_cell = {"fcc": 4, "bcc": 2}[job.lattice]
    a = (prim.get_volume() / len(prim) * per_cell) ** (1 / 3)
    perfect = bulk(job.element, job.lattice, a=a, cubic=True).repeat(job.repeat)
    perfect.calc = calc
    e_perfect = float(perfect.get_potential_energy())
    n = len(perfect)
    distances = perfect.get_distances(0, list(range(1, n)), mic=True)
    hop = 1 + int(np.argmin(distances))
    initial = perfect.copy()
    del initial[0]
    final = perfect.copy()
    final.positions[hop] = perfect.positions[0]
    del final[0]
    endpoints_ok = True
    for name, atoms in (("initial", initial), ("final", final)):
        atoms.calc = calc
        endpoints_ok &= bool(BFGS(atoms, logfile=str(folder / f"{name}.log")).run(fmax=job.fmax,
                                                                                 steps=job.max_steps))
    e_initial, e_final = float(initial.get_potential_energy()), float(final.get_potential_energy())
    relax_s = time.monotonic() - start
    results = {
        "model": info.label, "package": f"{info.package} {package_version(info)}", "citation": info.citation,
        "a_relaxed_A": a, "cell_converged": cell_ok, "supercell_sites": n, "atoms": n - 1,
        "hop_distance_A": float(distances[hop - 1]), "e_perfect_eV": e_perfect, "e_initial_eV": e_initial,
        "e_final_eV": e_final, "endpoints_converged": endpoints_ok,
        "formation_energy_eV": formation_energy(e_initial, n - 1, e_perfect, n), "load_s": round(load_s, 3),
        "relax_s": round(relax_s, 3), "images": job.images,
    }
    if job.images:
        start = time.monotonic()
        images = [initial] + [initial.copy() for _ in range(job.images)] + [final]
        for image in images[1:-1]:
            image.calc = calc
        band = NEB(images, climb=True, allow_shared_calculator=True)
        band.interpolate(method="idpp", mic=True)
        opt = FIRE(band, logfile=str(folder / "neb.log"))
        neb_ok = bool(opt.run(fmax=job.fmax, steps=job.max_steps))
        energies = [e_initial] + [float(im.get_potential_energy()) for im in images[1:-1]] + [e_final]
        results.update(neb_converged=neb_ok, neb_steps=opt.get_number_of_steps(), path_energies_eV=energies,
                       barrier_eV=max(energies) - e_initial, saddle_image=int(np.argmax(energies)),
                       neb_s=round(time.monotonic() - start, 3), force_calls_per_step=job.images)
        _plot(folder / "neb.png", energies, job.element)
    (folder / RESULTS_FILE).write_text(json.dumps(results, indent=1))
    ok = cell_ok and endpoints_ok and results.get("neb_converged", True)
    print(f"{info.label}: vacancy in {job.element}, {n - 1} atoms; " +
          (f"barrier {results['barrier_eV']:.3f} eV" if job.images else "no NEB") + ("" if ok else " (NOT converged)"))
    return 0 if ok else 1


def _plot(path: Path, energies: list[float], element: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(4.5, 3.5))
    ax.plot(range(len(energies)), [e - energies[0] for e in energies], "o-")
    ax.set_xlabel("image")
    ax.set_ylabel("E - E_initial (eV)")
    ax.set_title(f"vacancy migration in {element} (NEB)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
