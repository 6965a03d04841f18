"""lammps/minimize: energy minimisation of a crystal, or inherent structures of MD snapshots.

No temperature: the crystal (optionally with random start displacements) is minimised with CG
(with fix box/relax to zero pressure by default) or FIRE (fixed box: LAMMPS' damped-dynamics
minimisers cannot change the box). A temperature: MD at that temperature (NPT at 0 bar, then NVT),
and every `snapshot_every` steps the configuration is quenched to its nearest local minimum, its
inherent structure (Stillinger and Weber, Phys. Rev. A 25, 978 (1982)); the trajectory continues
from the unquenched snapshot. The answer reports the minimiser, its tolerances, the stopping
criterion and the final force norm of every minimisation.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, Field, model_validator

from simagent.defaults import Default, DefaultsLog
from simagent.errors import ReadError
from simagent.models import Job, Result, TaskSpec
from simagent.protocols import register
from tools.lammps.inputs import render
from tools.lammps.protocols.solid_common import (
    DEFAULT_SEED,
    SolidMDBase,
    SolidProtocol,
    check_minimization,
    cubic_repetitions,
    md_controls,
    minimization_stats,
    need,
    pick,
    read_job,
    requested_temperature,
    solid_base,
)

PROPERTY = "minimized_energy"
JOB_ID = "minimize"
TEMPLATE = "minimize_crystal.lmp.j2"
_FIRE_WORDS = ("fire", "fast inertial relaxation")


class MinimizeParams(SolidMDBase):
    # Defaults, each with its reason: cell, minimiser, and the settings the parameters fix
    DEFAULTS: ClassVar[dict[str, Default]] = {
        **SolidMDBase.DEFAULTS,
        "supercell": Default(3, "a perfect crystal needs only a few cells", shown="{cells} cells ({atoms} atoms)"),
        "supercell (snapshots)": Default(4, "256-atom cell for MD snapshots", shown="{cells} cells ({atoms} atoms)",
                                         parameter="supercell"),
        "minimiser": Default("cg", "LAMMPS' default and robust line-search minimiser",
                             shown="cg (Polak-Ribiere conjugate gradient)"),
        "tolerances": Default("force criterion", "force criterion decides; final largest force gated at "
                              "{p.max_force_eV_per_A:g} eV/A", shown="etol {p.etol:g}, ftol {p.ftol:g} eV/A (force "
                              "2-norm), maxiter {p.maxiter}, maxeval {p.maxeval}"),
        "snapshots": Default("MD quenches", "snapshots 1 ps apart are nearly independent in a dense solid or liquid",
                             shown="{p.n_snapshots} quenches every {p.snapshot_every} steps after "
                             "{p.equilibration_steps} NPT steps (NVT between snapshots)"),
        "box": Default("box/relax", "the minimum of the crystal includes its volume",
                       shown="fix box/relax {p.box_relax} to 0 bar"),
        "box (FIRE)": Default(None, "FIRE cannot relax the box in LAMMPS", shown="fixed (initial lattice constant)",
                              parameter="box"),
    }

    repetitions: tuple[int, int, int]
    temperature: float = Field(default=0.0, ge=0, description="K; > 0: inherent structures of MD snapshots")
    min_style: Literal["cg", "fire", "sd"] = "cg"
    etol: float = Field(default=0.0, ge=0, description="relative energy tolerance (0: force criterion only)")
    ftol: float = Field(default=1e-8, gt=0, description="global force 2-norm tolerance, eV/angstrom")
    maxiter: int = Field(default=10000, gt=0)
    maxeval: int = Field(default=100000, gt=0)
    fire_timestep: float = Field(default=0.001, gt=0, description="FIRE's initial step, ps (LAMMPS' metal default)")
    box_relax: Literal["iso", "aniso"] | None = Field(default="iso", description="crystal mode: relax the box to 0 bar")
    perturbation: float = Field(default=0.0, ge=0, description="random start displacement, angstrom (crystal mode)")
    seed: int = DEFAULT_SEED
    max_force_eV_per_A: float = Field(default=1e-4, gt=0, description="gate on the largest final force component")
    # inherent structures
    equilibration_steps: int = 2500
    n_snapshots: int = Field(default=10, ge=2, le=200)
    snapshot_every: int = Field(default=500, gt=0)
    thermo_every: int = 1000

    @model_validator(mode="after")
    def _box(self) -> MinimizeParams:
        if self.box_relax and self.min_style == "fire" and self.temperature == 0:
            raise ValueError("fix box/relax needs a line-search minimiser (cg or sd); use box_relax=None with FIRE")
        return self



def named_minimiser(spec: TaskSpec) -> str | None:
    """The minimiser the request names: a typed field when the spec has one (proposed
    SimulationControls.minimizer), else the words of the request; None when it names none."""
    named = getattr(spec.controls, "minimizer", None)
    if named in ("cg", "fire", "sd"):
        return named
    return "fire" if any(w in spec.request.lower() for w in _FIRE_WORDS) else None


@register
class Minimize(SolidProtocol):
    name = "lammps/minimize"
    engine = "lammps"
    properties: ClassVar[frozenset[str]] = frozenset({PROPERTY})
    Params = MinimizeParams
    description = (
        "Energy minimisation (CG or FIRE) of a crystal, or inherent-structure energies from quenches of MD "
        "snapshots at a temperature; reports the minimiser, tolerances and final force norm"
    )

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> MinimizeParams:
        fields = solid_base(spec, self.name, log)
        temperature = requested_temperature(spec) or 0.0
        quench = temperature > 0
        reps = cubic_repetitions(spec, fields["lattice"], 4 if quench else 3, log,
                                 "supercell (snapshots)" if quench else "supercell")
        min_style = log.take("minimiser", named_minimiser(spec))
        fire = min_style == "fire"
        box = None if (quench or fire) else ("aniso" if fields["lattice"] == "hcp" else "iso")
        extra = md_controls(spec, fields["mass"], log) if quench else {}
        if spec.controls.seed is not None:  # also the seed of a perturbed 0 K start
            extra["seed"] = spec.controls.seed
        params = MinimizeParams(
            **fields, repetitions=reps, temperature=temperature, min_style=min_style, box_relax=box, **extra
        )
        log.report("tolerances", p=params)
        log.report("snapshots" if quench else "box" if box else "box (FIRE)", p=params)
        return params

    def jobs(self, params: BaseModel) -> list[Job]:
        p = self.as_params(params)
        values = {**p.model_dump(), "tdamp": p.tdamp, "pdamp": p.pdamp}
        return [
            Job(
                id=JOB_ID,
                protocol=self.name,
                stage="minimize",
                params=p.model_dump(),
                inputs={"in.lammps": render(TEMPLATE, **values)},
                time_limit_s=3600.0,
            )
        ]

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = self.as_params(params)
        job_dir = job_dirs[JOB_ID]
        _, lines, text = read_job(job_dir, JOB_ID)
        stats = minimization_stats(text)
        minimiser = (
            f"{p.min_style} minimiser (etol {p.etol:g}, ftol {p.ftol:g} eV/A on the force 2-norm, maxiter "
            f"{p.maxiter}, maxeval {p.maxeval})"
        )
        log = str(job_dir / "log.lammps")
        if p.temperature == 0:
            if not stats:
                raise ReadError(f"{log}: no minimisation summary")
            check_minimization(stats[-1], p.max_force_eV_per_A, JOB_ID)
            final = pick(lines, case="minimized")
            n, energy, fnorm, fmax = need(final, "natoms", "pe_eV", "fnorm", "fmax")
            start = pick(lines, case="start")
            box = f"box relaxed to 0 bar (fix box/relax {p.box_relax})" if p.box_relax else "fixed box"
            method = (
                f"0 K {minimiser} of a {'x'.join(map(str, p.repetitions))} {p.lattice} supercell ({n:.0f} atoms) of "
                f"{p.potential_text()}, {box}"
                + (f", from random start displacements of {p.perturbation:g} A" if p.perturbation else "")
                + f"; stopped on '{stats[-1]['stop']}' after {stats[-1].get('iterations')} iterations, "
                f"{stats[-1].get('evaluations')} force evaluations; energy {need(start, 'pe_eV')[0] / n:.6f} -> "
                f"{energy / n:.6f} eV/atom; final force 2-norm {fnorm:.2e} eV/A, largest component {fmax:.2e} eV/A; "
                "deterministic"
            )
            return [
                Result(quantity=PROPERTY, value=energy / n, unit="eV/atom", job=JOB_ID, method=method, log=log),
                Result(quantity=f"{PROPERTY}_total", value=energy, unit="eV", job=JOB_ID, method=method, log=log),
            ]
        snaps = [line for line in lines if line.get("case") == "snapshot"]
        mds = {int(line["index"]): line for line in lines if line.get("case") == "md"}
        if len(snaps) != p.n_snapshots or len(stats) != p.n_snapshots:
            raise ReadError(f"{log}: {len(snaps)} quenched snapshots of {p.n_snapshots}")
        rows = []
        for line, st in zip(snaps, stats, strict=True):
            i = int(line["index"])
            check_minimization(st, p.max_force_eV_per_A, f"{JOB_ID} snapshot {i}")
            n, energy, fnorm, fmax = need(line, "natoms", "pe_eV", "fnorm", "fmax")
            md = mds[i]
            rows.append(
                {
                    "index": i,
                    "step": int(md["step"]),
                    "md_energy_eV": float(md["pe_eV"]),
                    "md_temperature_K": float(md["temp_K"]),
                    "is_energy_eV": energy,
                    "is_energy_eV_per_atom": energy / n,
                    "fnorm": fnorm,
                    "fmax": fmax,
                    "iterations": st.get("iterations"),
                    "stop": st["stop"],
                }
            )
        table = job_dir / "inherent_structures.csv"
        with table.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        per_atom = np.array([r["is_energy_eV_per_atom"] for r in rows])
        n_atoms = rows[0]["is_energy_eV"] / rows[0]["is_energy_eV_per_atom"]
        se = float(per_atom.std(ddof=1) / math.sqrt(len(per_atom)))
        method = (
            f"inherent structures: MD of a {'x'.join(map(str, p.repetitions))} {p.lattice} supercell ({n_atoms:.0f} "
            f"atoms) of {p.potential_text()} at {p.temperature:g} K (NPT 0 bar {p.equilibration_steps} steps, then "
            f"NVT, dt {p.timestep:g} ps); {p.n_snapshots} snapshots {p.snapshot_every} steps apart each quenched by "
            f"the {minimiser}; mean over snapshots, error = std/sqrt(n) (snapshots taken as independent); largest "
            f"final force {max(r['fmax'] for r in rows):.1e} eV/A, force 2-norm up to "
            f"{max(r['fnorm'] for r in rows):.1e} eV/A"
        )
        return [
            Result(
                quantity=PROPERTY,
                value=float(per_atom.mean()),
                unit="eV/atom",
                uncertainty=se,
                job=JOB_ID,
                method=method,
                log=log,
                data_file=str(table),
            ),
            Result(
                quantity=f"{PROPERTY}_total",
                value=float(per_atom.mean() * n_atoms),
                unit="eV",
                uncertainty=se * n_atoms,
                job=JOB_ID,
                method=method,
                log=log,
                data_file=str(table),
            ),
        ]
