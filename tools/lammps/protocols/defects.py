"""lammps/point_defects: vacancy and self-interstitial formation energies at 0 K.

A 'perfect' job relaxes the supercell to zero pressure and writes it; one job per defect
configuration (run in parallel, the perfect crystal staged in) removes or adds atoms at a lattice
site near the box centre and relaxes the atoms: at the perfect crystal's volume (default,
'constant volume', as usual for EAM defect energetics) or also the box at zero pressure
('constant pressure'). E_f = E_def - (N_def / N) E_perfect (N_def = N - 1 for a vacancy,
N + 1 for an interstitial). For interstitials several starting configurations are relaxed (fcc:
<100> dumbbell, octahedral, tetrahedral; bcc: <110> and <111> dumbbells, octahedral, tetrahedral)
and the lowest energy is the formation energy; all are reported in a data file.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, RequestError
from simagent.materials.defects import formation_energy
from simagent.models import Job, Result, TaskSpec
from simagent.protocols import register
from tools.lammps.inputs import render
from tools.lammps.protocols.solid_common import (
    DEFAULT_SEED,
    SolidBase,
    SolidProtocol,
    check_minimization,
    cubic_repetitions,
    minimization_stats,
    need,
    pick,
    read_job,
    solid_base,
    static_temperature_note,
)

PERFECT_JOB = "perfect"
VACANCY = "vacancy_formation_energy"
INTERSTITIAL = "interstitial_formation_energy"


class Defect(BaseModel):
    """A point defect at a lattice site: remove the site's atom and/or add atoms at offsets
    (units of the cubic lattice constant) from the site."""

    name: str
    remove: bool = False
    add: list[tuple[float, float, float]] = Field(default_factory=list)

    @property
    def atoms_change(self) -> int:
        return len(self.add) - int(self.remove)


_S2, _S3 = 1 / math.sqrt(2), 1 / math.sqrt(3)
# Starting geometries. Dumbbell half-separations 0.3 a (fcc) / 0.35 a (bcc) are near the relaxed
# EAM values; the minimiser finds the exact ones. The <100> split dumbbell is the ground state of
# self-interstitials in fcc metals (Al, Cu: diffuse X-ray scattering, Ehrhart, Landolt-Boernstein
# III/25, 1991), <110> in most bcc metals.
INTERSTITIALS: dict[str, list[Defect]] = {
    "fcc": [
        Defect(name="dumbbell_100", remove=True, add=[(0, 0, 0.3), (0, 0, -0.3)]),
        Defect(name="octahedral", add=[(0.5, 0, 0)]),
        Defect(name="tetrahedral", add=[(0.25, 0.25, 0.25)]),
    ],
    "bcc": [
        Defect(name="dumbbell_110", remove=True, add=[(0.35 * _S2, 0.35 * _S2, 0), (-0.35 * _S2, -0.35 * _S2, 0)]),
        Defect(name="dumbbell_111", remove=True, add=[(0.35 * _S3,) * 3, (-0.35 * _S3,) * 3]),
        Defect(name="octahedral", add=[(0.5, 0.5, 0)]),
        Defect(name="tetrahedral", add=[(0.5, 0.25, 0)]),
    ],
}


class PointDefectParams(SolidBase):
    # Defaults, each with its reason (the interstitial sites are INTERSTITIALS, above)
    DEFAULTS: ClassVar[dict[str, Default]] = {
        **SolidBase.DEFAULTS,
        "supercell": Default("5 cells a side (fcc, bcc), else 4", "E_f converges to ~0.01 eV by ~250-500 atoms for "
                             "short-ranged EAM potentials", shown="{cells} cells ({atoms} atoms)"),
        "interstitial configurations": Default("INTERSTITIALS", "the lowest relaxed energy is the formation energy; "
                                               "all are listed in the data file", shown="{names}"),
        "relaxation": Default(False, "the usual convention for EAM formation energies; set relax_volume for zero "
                              "pressure", shown="constant volume (atoms relax in the perfect crystal's box)"),
        "minimiser": Default("cg", "symmetry breaking lets unstable starting sites relax to the nearest minimum",
                             shown="cg, ftol {p.ftol:g} eV/A, random start displacement {p.perturbation:g} A "
                             "(seed {p.seed})"),
    }

    repetitions: tuple[int, int, int]
    defects: list[Defect]
    relax_volume: bool = Field(
        default=False,
        description="False: constant volume (perfect crystal's box); True: the box also relaxes to zero pressure",
    )
    box_relax: Literal["iso", "aniso"] = "iso"
    relax_passes: int = Field(default=2, ge=1, le=5)
    ftol: float = Field(default=1e-8, gt=0, description="minimiser force tolerance, eV/angstrom")
    maxiter: int = 20000
    maxeval: int = 200000
    perturbation: float = Field(default=0.01, ge=0, description="random displacement amplitude, angstrom")
    seed: int = DEFAULT_SEED
    max_force_eV_per_A: float = Field(default=1e-3, gt=0, description="gate on the largest force after relaxation")
    thermo_every: int = 1000

    @property
    def site(self) -> tuple[int, int, int]:
        return tuple(n // 2 for n in self.repetitions)  # type: ignore[return-value]



@register
class PointDefects(SolidProtocol):
    name = "lammps/point_defects"
    engine = "lammps"
    properties: ClassVar[frozenset[str]] = frozenset({VACANCY, INTERSTITIAL})
    Params = PointDefectParams
    description = (
        "Vacancy and self-interstitial formation energies at 0 K: relaxed defect supercells, "
        "E_f = E_def - (N_def/N) E_perfect (interstitial: lowest of several relaxed configurations)"
    )

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> PointDefectParams:
        wanted = {p.name for p in spec.properties} or set(self.properties)
        lattices = ("fcc", "bcc") if INTERSTITIAL in wanted else ("fcc", "bcc", "hcp", "diamond", "sc")
        fields = solid_base(spec, self.name, log, lattices=lattices)
        lattice = fields["lattice"]
        static_temperature_note(spec, self.name, log)
        reps = cubic_repetitions(spec, lattice, 5 if lattice in ("fcc", "bcc") else 4, log)
        defects: list[Defect] = []
        if VACANCY in wanted:
            defects.append(Defect(name="vacancy", remove=True))
        if INTERSTITIAL in wanted:
            if lattice not in INTERSTITIALS:
                raise RequestError(f"interstitials are set up for fcc and bcc crystals, not {lattice}")
            defects += INTERSTITIALS[lattice]
            log.report("interstitial configurations", names=", ".join(d.name for d in INTERSTITIALS[lattice]))
        params = PointDefectParams(
            **fields, repetitions=reps, defects=defects, box_relax="aniso" if lattice == "hcp" else "iso",
            **({"seed": spec.controls.seed} if spec.controls.seed is not None else {}),
        )
        log.report("relaxation")
        log.report("minimiser", p=params)
        return params

    def jobs(self, params: BaseModel) -> list[Job]:
        p = self.as_params(params)
        values = p.model_dump()
        jobs = [
            Job(
                id=PERFECT_JOB,
                protocol=self.name,
                stage="perfect",
                params=values,
                inputs={"in.lammps": render("point_defects_perfect.lmp.j2", **values)},
                time_limit_s=600.0,
            )
        ]
        for defect in p.defects:
            jobs.append(
                Job(
                    id=defect.name,
                    protocol=self.name,
                    stage="defect",
                    params=values,
                    inputs={
                        "in.lammps": render(
                            "point_defects_defect.lmp.j2", defect=defect.model_dump(), site=p.site, **values
                        )
                    },
                    depends_on=[PERFECT_JOB],
                    stage_in={PERFECT_JOB: ["perfect.data"]},
                    time_limit_s=1200.0,
                )
            )
        return jobs

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = self.as_params(params)
        _, lines, text = read_job(job_dirs[PERFECT_JOB], PERFECT_JOB)
        perfect = pick(lines, case="perfect")
        n, e_perfect, v_perfect, press = need(perfect, "natoms", "pe_eV", "vol_A3", "press_bar")
        if abs(press) > 100:
            raise CalculationFailed(f"perfect crystal not relaxed: pressure {press:.1f} bar")
        a = need(perfect, "lx_A")[0] / p.repetitions[0]
        rows = []
        for defect in p.defects:
            job_dir = job_dirs[defect.name]
            _, dlines, dtext = read_job(job_dir, defect.name)
            line = pick(dlines, case="defect", kind=defect.name)
            n_def, e_def, v_def = need(line, "natoms", "pe_eV", "vol_A3")
            if round(n_def) != round(n) + defect.atoms_change:
                raise CalculationFailed(f"{defect.name}: {n_def:.0f} atoms, expected {n + defect.atoms_change:.0f}")
            stats = minimization_stats(dtext)
            check_minimization(stats[-1], p.max_force_eV_per_A, defect.name)
            e_f = formation_energy(e_def, n_def, e_perfect, n)
            rows.append(
                {
                    "configuration": defect.name,
                    "natoms": int(n_def),
                    "energy_eV": e_def,
                    "formation_energy_eV": e_f,
                    "formation_volume_atomic": (v_def - n_def / n * v_perfect) / (v_perfect / n),
                    "fmax_eV_per_A": stats[-1]["fmax"],
                    "iterations": stats[-1].get("iterations"),
                    "job": defect.name,
                    "log": str(job_dir / "log.lammps"),
                }
            )
        home = job_dirs[PERFECT_JOB]
        table = home / "point_defects.csv"
        with table.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        for row in rows:
            if row["formation_energy_eV"] <= 0:
                raise CalculationFailed(
                    f"{row['configuration']}: negative formation energy {row['formation_energy_eV']:.3f} eV; the "
                    "defect cell is more stable than the crystal (wrong structure for this potential?)"
                )
        volume = "box relaxed to zero pressure" if p.relax_volume else "constant volume (perfect crystal's box)"
        base = (
            f"0 K, {'x'.join(map(str, p.repetitions))} {p.lattice} supercell ({n:.0f} sites, a = {a:.5f} A) of "
            f"{p.potential_text()} relaxed at zero pressure; defect near the centre, atoms relaxed by cg (ftol "
            f"{p.ftol:g} eV/A) at {volume}; E_f = E_def - (N_def/N) E_perfect; deterministic (finite-size error "
            f"not estimated)"
        )
        results = []
        wanted = {r.name for r in spec.properties} or set(self.properties)
        vac = next((r for r in rows if r["configuration"] == "vacancy"), None)
        if vac and VACANCY in wanted:
            results.append(
                Result(
                    quantity=VACANCY,
                    value=vac["formation_energy_eV"],
                    unit="eV",
                    job="vacancy",
                    log=vac["log"],
                    data_file=str(table),
                    method=base
                    + (
                        f"; formation volume {vac['formation_volume_atomic']:.2f} atomic volumes"
                        if p.relax_volume
                        else ""
                    ),
                )
            )
        inter = [r for r in rows if r["configuration"] != "vacancy"]
        if inter and INTERSTITIAL in wanted:
            # energies equal within 1e-4 eV are one relaxed configuration: name the first listed start
            best = min(enumerate(inter), key=lambda ir: (round(ir[1]["formation_energy_eV"], 4), ir[0]))[1]
            others = ", ".join(f"{r['configuration']} {r['formation_energy_eV']:.3f}" for r in inter)
            results.append(
                Result(
                    quantity=INTERSTITIAL,
                    value=best["formation_energy_eV"],
                    unit="eV",
                    job=best["job"],
                    log=best["log"],
                    data_file=str(table),
                    method=f"{base}; lowest of the relaxed starting configurations ({others} eV): "
                    f"{best['configuration']} start (configurations may relax into each other)",
                )
            )
        return results
