"""mlp/crystal: lattice constant and bulk modulus of a one-element cubic crystal with a universal ML
potential (CHGNet or SevenNet, ASE calculator): cell relaxation (FrechetCellFilter + BFGS), then
E(V) at seven volumes around the relaxed cell and a Birch-Murnaghan fit (ase.eos)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed
from simagent.models import Job, Result, TaskSpec
from simagent.protocols import register
from tools import crystals
from tools.mlp import models
from tools.mlp.run import ATOM_BOX_A, JOB_FILE, RESULTS_FILE, MlpJob, read_results

JOB_ID = "mlp"


class MlpCrystalParams(BaseModel):
    # Defaults reported in the answer, each with its reason
    DEFAULTS: ClassVar[dict[str, Default]] = {
        "isolated atom": Default(ATOM_BOX_A, "reference energy of the cohesive energy; the models were trained on "
                                 "crystals (MPtrj), not on isolated atoms", shown="one atom alone in a {value:g} A box "
                                 "(no neighbours within the model's cutoff)"),
        "relaxation": Default("BFGS", "atoms and cell relax together to the model's zero-stress crystal",
                              shown="BFGS with FrechetCellFilter to fmax {p.fmax:g} eV/A, at most {p.max_steps} steps"),
    }

    model: Literal["chgnet", "sevennet"]
    element: str
    lattice: Literal["fcc", "bcc", "diamond", "sc"]
    a_initial: float = Field(gt=0)
    fmax: float = Field(default=1e-3, gt=0, description="eV/angstrom")
    max_steps: int = 500
    strains: list[float] = Field(default_factory=lambda: list(crystals.DEFAULT_STRAINS))
    cohesive: bool = False
    time_limit_s: float = 900.0


@register
class MlpCrystal(crystals.NamedEngineCrystalProtocol):
    name = "mlp/crystal"
    engine = "mlp"
    properties: ClassVar[frozenset[str]] = frozenset({"lattice_constant", "bulk_modulus", "cohesive_energy"})
    Params = MlpCrystalParams
    description = ("lattice constant and bulk modulus of a one-element cubic crystal with a universal ML potential "
                   "(CHGNet or SevenNet): cell relaxation, then E(V) and a Birch-Murnaghan fit")

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> MlpCrystalParams:
        choice = crystals.crystal_from_spec(spec, log)
        info = models.requested_model(spec, log)
        params = MlpCrystalParams(model=info.key, element=choice.element, lattice=choice.lattice,
                                  a_initial=choice.a_initial,
                                  cohesive=any(p.name == "cohesive_energy" for p in spec.properties))
        if params.cohesive:
            log.report("isolated atom")
        log.report("relaxation", p=params)
        return params

    def jobs(self, params: BaseModel) -> list[Job]:
        p = self.as_params(params)
        job = MlpJob(model=p.model, element=p.element, lattice=p.lattice, a_initial=p.a_initial, fmax=p.fmax,
                     max_steps=p.max_steps, strains=p.strains, isolated_atom=p.cohesive)
        return [Job(id=JOB_ID, protocol=self.name, engine="mlp", stage="relax", params=p.model_dump(mode="json"),
                    inputs={JOB_FILE: job.model_dump_json(indent=1)}, time_limit_s=p.time_limit_s)]

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = self.as_params(params)
        job_dir = job_dirs[JOB_ID]
        path = job_dir / RESULTS_FILE
        data = read_results(job_dir)
        if not data["relax_converged"]:
            raise CalculationFailed(f"cell relaxation did not reach fmax {p.fmax:g} eV/A in {p.max_steps} steps")
        fit = crystals.fit_eos(data["volumes_A3"], data["energies_eV"], data["natoms"], plot=job_dir / "eos.png")
        a_eos = data["a_relaxed_A"] * (fit.v0 / data["relaxed_volume_A3"]) ** (1 / 3)
        if abs(a_eos / data["a_relaxed_A"] - 1) > 2e-3:
            raise CalculationFailed(f"relaxed a ({data['a_relaxed_A']:.4f} A) and the E(V) minimum ({a_eos:.4f} A) "
                                    "disagree by more than 0.2 %: the relaxation stopped early")
        model = f"{data['model']} ({data['package']}; {data['citation']})"
        relax = (f"{model}: {p.lattice} primitive cell relaxed with BFGS + FrechetCellFilter to fmax {p.fmax:g} eV/A "
                 f"in {data['relax_steps']} steps (residual stress {data['max_stress_GPa']:.2g} GPa); "
                 "deterministic, no statistical uncertainty; the model's own error against PBE is not included")
        table = job_dir / "eos.json"
        table.write_text(json.dumps({"volume_A3": fit.volumes, "energy_eV": fit.energies, "v0_A3": fit.v0,
                                     "bulk_modulus_GPa": fit.bulk_modulus_GPa}, indent=1))
        results = [
            Result(quantity="lattice_constant", value=data["a_relaxed_A"], unit="angstrom", job=JOB_ID,
                   log=str(job_dir / "relax.log"), data_file=str(path),
                   method=f"conventional cubic a of the relaxed cell (E(V) minimum {a_eos:.4f} A); {relax}"),
            Result(quantity="bulk_modulus", value=fit.bulk_modulus_GPa, unit="GPa", job=JOB_ID,
                   log=str(job_dir / "relax.log"), data_file=str(table),
                   method=f"E(V) at {len(fit.volumes)} volumes (linear strains {min(p.strains):g}-{max(p.strains):g}) "
                   f"around the relaxed cell, third-order Birch-Murnaghan fit (ase.eos); {relax}"),
        ]
        wanted = {r.name for r in spec.properties} or set(self.properties)
        if "cohesive_energy" in wanted:
            if "isolated_atom_energy_eV" not in data:
                raise CalculationFailed("the job computed no isolated-atom energy")
            e_bulk = fit.e0 / data["natoms"]
            results.append(Result(
                quantity="cohesive_energy", value=data["isolated_atom_energy_eV"] - e_bulk, unit="eV/atom", job=JOB_ID,
                log=str(job_dir / "relax.log"), data_file=str(path),
                warnings=[f"the isolated atom lies outside {data['model']}'s training data (MPtrj holds crystals, no "
                          "isolated atoms): its atom energy is the model's learned reference, not a DFT atom"],
                method=f"E_coh = E(one atom alone in a {data['isolated_atom_box_A']:g} A box) - E0 per atom at the "
                f"E(V) minimum (positive: bound), no zero-point energy; {relax}"))
        return [r for r in results if r.quantity in wanted]
