"""mlp/guest_binding: binding energy of one guest molecule in a framework with a universal ML potential
(tools.mlp.guest_binding): random placements clear of the framework screened by single-point energies,
the lowest few relaxed with the framework fixed; the lowest E_bind is reported, in kJ/mol."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel

from simagent.defaults import DefaultsLog
from simagent.errors import CalculationFailed, RequestError
from simagent.materials.guest_binding import GuestBindingParams, framework_and_guest, is_guest_binding
from simagent.models import Job, Result, TaskSpec
from simagent.protocols import Protocol, register
from tools.mlp import models
from tools.mlp.guest_binding import GuestBindingJob
from tools.mlp.run import JOB_FILE, RESULTS_FILE, read_results

JOB_ID = "guest_binding"
MAX_FRAMEWORK_ATOMS = 300  # CHGNet on one core: ~2 s per energy+force at 57 atoms, here


@register
class MlpGuestBinding(Protocol):
    name = "mlp/guest_binding"
    engine = "mlp"
    properties: ClassVar[frozenset[str]] = frozenset({"interaction_energy"})
    Params = GuestBindingParams
    description = ("binding energy of one guest molecule in a framework with CHGNet/SevenNet: random placements "
                   "screened by single points, the best few relaxed with the framework fixed")

    def applies_to(self, spec: TaskSpec) -> bool:
        return spec.engine == self.engine and is_guest_binding(spec)

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> GuestBindingParams:
        resolved, structure, guest, ase_name = framework_and_guest(spec)
        if len(structure.symbols) > MAX_FRAMEWORK_ATOMS:
            raise RequestError(f"{resolved.name} has {len(structure.symbols)} atoms in its cell; the guest binding "
                               f"protocol runs up to {MAX_FRAMEWORK_ATOMS} framework atoms on this machine")
        info = models.requested_model(spec, log)
        p = GuestBindingParams(model=info.key, framework=resolved.name, source=resolved.source, guest=guest,
                               ase_name=ase_name, cell=structure.cell.tolist(), symbols=list(structure.symbols),
                               fractional=structure.fractional.tolist())
        for name in ("placements", "relaxations", "framework geometry"):
            log.report(name, p=p)
        return p

    def jobs(self, params: BaseModel) -> list[Job]:
        p = self.as_params(params)
        job = GuestBindingJob(model=p.model, cell=p.cell, symbols=p.symbols, fractional=p.fractional,
                              guest=p.ase_name, placements=p.placements, relaxations=p.relaxations,
                              min_distance_A=p.min_distance_A, fmax=p.fmax, max_steps=p.max_steps, seed=p.seed)
        return [Job(id=JOB_ID, protocol=self.name, engine="mlp", stage="binding", params=p.model_dump(mode="json"),
                    inputs={JOB_FILE: job.model_dump_json(indent=1)}, time_limit_s=p.time_limit_s)]

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = self.as_params(params)
        job_dir = job_dirs[JOB_ID]
        path = job_dir / RESULTS_FILE
        data = read_results(job_dir)
        relaxed = [r for r in data["relaxed"] if r["converged"]]
        if not relaxed:
            raise CalculationFailed(f"no placement of {p.guest} relaxed to fmax {p.fmax:g} eV/A in {p.max_steps} "
                                    f"steps ({data['placements']} placements found)")
        values = sorted(r["binding_kJ_mol"] for r in relaxed)
        best = values[0]
        spread = values[-1] - values[0] if len(values) > 1 else None
        unconverged = len(data["relaxed"]) - len(relaxed)
        method = (f"E_bind = E({p.framework}+{p.guest}) - E({p.framework}) - E({p.guest}) with {data['model']} "
                  f"({data['package']}; {data['citation']}): {data['placements']} placements screened by single "
                  f"points, the {len(data['relaxed'])} lowest relaxed with the framework fixed (BFGS, fmax "
                  f"{p.fmax:g} eV/A{f'; {unconverged} not converged, left out' if unconverged else ''}); the lowest "
                  f"relaxed E_bind is given, uncertainty = range of the relaxed placements "
                  f"({', '.join(f'{v:.1f}' for v in values)} kJ/mol), a measure of the search, not a statistical "
                  f"error; the model's own error is not included; static 0 K energy, not a heat of adsorption; "
                  f"framework {p.source}; cost {data['wall_s'] + data['load_s']:.0f} s wall on one core")
        return [Result(quantity="interaction_energy", value=best, unit="kJ/mol", uncertainty=spread, job=JOB_ID,
                       statistic="last_step", log=str(job_dir / "relax_0.log"),
                       data_file=str(path), method=method)]
