"""mlp/vacancy: vacancy formation energy and the vacancy migration barrier (nudged elastic band,
ase.mep.NEB with a climbing image) in an fcc or bcc metal with a universal ML potential
(tools/mlp/vacancy.py runs it: relaxed lattice constant, a 2x2x2 conventional supercell, relaxed
end points, NEB between them)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed
from simagent.models import Job, Result, TaskSpec
from simagent.protocols import register
from tools import crystals
from tools.mlp import models
from tools.mlp.run import JOB_FILE, RESULTS_FILE, read_results
from tools.mlp.vacancy import VacancyJob

JOB_ID = "vacancy"
MIGRATION = "vacancy_migration_energy"
FORMATION = "vacancy_formation_energy"


class MlpVacancyParams(BaseModel):
    # Defaults reported in the answer, each with its reason
    DEFAULTS: ClassVar[dict[str, Default]] = {
        "supercell": Default(2, "small enough for one core; finite-size effects not corrected",
                             shown="{p.repeat}x{p.repeat}x{p.repeat} conventional cells ({sites} sites, {atoms} atoms "
                             "with the vacancy) at the model's relaxed lattice constant, cell fixed"),
        "relaxation": Default("BFGS", "atoms relax around the vacancy in the fixed cell",
                              shown="BFGS to fmax {p.fmax:g} eV/A (at most {p.max_steps} steps)"),
        "NEB": Default(3, "nearest-neighbour hop of the vacancy", shown="{p.images} moving images, climbing image, "
                       "IDPP interpolation, FIRE to fmax {p.fmax:g} eV/A (ase.mep.NEB)"),
    }

    model: Literal["chgnet", "sevennet"]
    element: str
    lattice: Literal["fcc", "bcc"]
    a_initial: float = Field(gt=0)
    repeat: int = Field(default=2, ge=2, le=4)
    images: int = Field(default=3, ge=0, le=9)
    fmax: float = Field(default=0.05, gt=0, description="eV/angstrom")
    max_steps: int = Field(default=400, gt=0)
    time_limit_s: float = 3600.0


@register
class MlpVacancy(crystals.NamedEngineCrystalProtocol):
    name = "mlp/vacancy"
    engine = "mlp"
    properties: ClassVar[frozenset[str]] = frozenset({MIGRATION, FORMATION})
    Params = MlpVacancyParams
    description = ("vacancy formation energy and migration barrier (nudged elastic band, climbing image) in an fcc "
                   "or bcc metal with a universal ML potential (CHGNet or SevenNet), small supercell")

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> MlpVacancyParams:
        choice = crystals.crystal_from_spec(spec, log, lattices=("fcc", "bcc"))
        info = models.requested_model(spec, log)
        wanted = {p.name for p in spec.properties}
        params = MlpVacancyParams(model=info.key, element=choice.element, lattice=choice.lattice,
                                  a_initial=choice.a_initial)
        if MIGRATION not in wanted:
            params.images = 0
        sites = {"fcc": 4, "bcc": 2}[params.lattice] * params.repeat**3
        log.report("supercell", p=params, sites=sites, atoms=sites - 1)
        log.report("relaxation", p=params)
        if params.images:
            log.report("NEB", p=params)
        return params

    def jobs(self, params: BaseModel) -> list[Job]:
        p = self.as_params(params)
        job = VacancyJob(model=p.model, element=p.element, lattice=p.lattice, a_initial=p.a_initial, repeat=p.repeat,
                         images=p.images, fmax=p.fmax, max_steps=p.max_steps)
        return [Job(id=JOB_ID, protocol=self.name, engine="mlp", stage="neb" if p.images else "relax",
                    params=p.model_dump(mode="json"), inputs={JOB_FILE: job.model_dump_json(indent=1)},
                    time_limit_s=p.time_limit_s)]

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = self.as_params(params)
        job_dir = job_dirs[JOB_ID]
        data = read_results(job_dir)
        if not (data["cell_converged"] and data["endpoints_converged"]):
            raise CalculationFailed(f"the relaxations did not reach fmax {p.fmax:g} eV/A in {p.max_steps} steps")
        model = f"{data['model']} ({data['package']}; {data['citation']})"
        cell = (f"{data['atoms']}-atom {p.lattice} supercell ({p.repeat}x{p.repeat}x{p.repeat} conventional cells) at "
                f"the model's relaxed a = {data['a_relaxed_A']:.4f} A, fixed cell, atoms relaxed to fmax {p.fmax:g} "
                f"eV/A; {model}; 0 K static energies, no finite-size correction, deterministic (no statistical "
                "uncertainty); the model's own error against DFT is not included")
        wanted = {r.name for r in spec.properties} or set(self.properties)
        results = []
        if FORMATION in wanted:
            results.append(Result(
                quantity=FORMATION, value=data["formation_energy_eV"], unit="eV", job=JOB_ID,
                log=str(job_dir / "initial.log"), data_file=str(job_dir / RESULTS_FILE),
                method=f"E_f = E(N-1 atoms, relaxed vacancy) - (N-1)/N E(N atoms, perfect); {cell}"))
        if MIGRATION in wanted:
            if not data.get("neb_converged"):
                raise CalculationFailed(f"the nudged elastic band did not reach fmax {p.fmax:g} eV/A in {p.max_steps} "
                                        "steps")
            energies = data["path_energies_eV"]
            if not 0 < data["saddle_image"] < len(energies) - 1:
                raise CalculationFailed("the highest point of the band is an end point: no barrier between the two "
                                        "vacancy positions (the end points did not relax to minima)")
            path = ", ".join(f"{e - energies[0]:.3f}" for e in energies)
            results.append(Result(
                quantity=MIGRATION, value=data["barrier_eV"], unit="eV", job=JOB_ID, log=str(job_dir / "neb.log"),
                data_file=str(job_dir / RESULTS_FILE),
                method=f"nudged elastic band (ase.mep.NEB, climbing image, {p.images} moving images, IDPP "
                f"interpolation, FIRE to fmax {p.fmax:g} eV/A, {data['neb_steps']} steps) for the hop of a "
                f"nearest-neighbour atom into the vacancy ({data['hop_distance_A']:.3f} A); barrier = highest image - "
                f"initial state; energies along the path {path} eV (plot neb.png); {cell}"))
        return results
