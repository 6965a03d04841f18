"""lammps/tensile_test: Young's modulus from a uniaxial tensile (or compressive) MD test.

One job: the crystal is equilibrated NPT at the temperature and zero pressure, its box set to the
average (strain 0), then `fix deform` strains it along one cube axis at a constant engineering
strain rate while the other two axes follow zero stress (Berendsen barostat, a first-order
relaxation without the oscillations of a Nose-Hoover barostat) or stay fixed. E is the slope of
the stress-strain curve over its initial linear region: least squares over a window [start, end]
of strain; the window shrinks (halving its length) until the slopes of its two halves agree within
a tolerance, and is reported in the method string. The slope's standard error is the
least-squares one inflated by the statistical inefficiency of the residuals (correlated noise).
Along a cube axis of a cubic crystal E = E_100 = (C11 - C12)(C11 + 2 C12)/(C11 + C12).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, Field, model_validator

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, RequestError
from simagent.models import Job, Result, TaskSpec
from simagent.protocols import register
from simagent.stats import linear_fit, statistical_inefficiency
from tools.lammps.inputs import render
from tools.lammps.protocols.solid_common import (
    BAR_TO_GPA,
    DEFAULT_SEED,
    SolidMDBase,
    SolidProtocol,
    check_solid,
    check_temperature,
    cubic_repetitions,
    md_controls,
    need,
    pick,
    plot_xy,
    read_job,
    read_table,
    requested_method,
    requested_temperature,
    solid_base,
)

JOB_ID = "tensile"
TEMPLATE = "tensile_test.lmp.j2"
DEFAULT_TEMPERATURE = 300.0
# 1e9 /s is a common MD tensile rate (1e8-1e10 /s); far below the elastic-wave limit of a
# nanometre box (waves cross it in < 1 ps), so the elastic slope does not depend on it.
DEFAULT_STRAIN_RATE = 1e9
# Fit up to 0.5 % strain: for metals the slope falls by a few % per 1 % strain (third-order
# constants), so a wider window biases E low.
DEFAULT_FIT_END = 0.005
DEFAULT_MAX_STRAIN = 0.006
MIN_POINTS = 8
# The slope's statistical error falls as 1/sqrt(atoms): 6x6x6 fcc cells (864 atoms).
DEFAULT_CELLS = 6


class TensileParams(SolidMDBase):
    # Defaults, each with its reason: the test, its temperature and cell, then the settings the
    # parameters fix (loading, rate, lateral boundary, fit window, MD schedule)
    DEFAULTS: ClassVar[dict[str, Default]] = {
        **SolidMDBase.DEFAULTS,
        "mode": Default("tensile", "no test named in the request"),
        "temperature": Default(DEFAULT_TEMPERATURE, "room temperature; a tensile test is a finite-temperature MD run",
                               shown="{value:g} K"),
        "supercell": Default(DEFAULT_CELLS, f"{4 * DEFAULT_CELLS**3}-atom fcc cell: slope error ~5 % at 300 K and "
                             "1e9 /s over a 0.5 % strain window (256 atoms: ~10 %, measured for Al)",
                             shown="{cells} cells ({atoms} atoms)"),
        "loading axis": Default("x", "a cube axis: E_100 follows from C11 and C12, so the result can be cross-checked",
                                shown="{p.axis} ([100] for cubic lattices, the a axis for hcp)"),
        "strain rate": Default(DEFAULT_STRAIN_RATE, "usual MD rate; the elastic slope is rate-independent at it",
                               shown="{p.strain_rate_per_s:g} 1/s up to {p.max_strain:g}"),
        "lateral boundary": Default("stress_free", "uniaxial stress, as in a tensile test; first-order barostat has no "
                                    "oscillation", shown="stress-free (press/berendsen, {p.lateral_pdamp:g} ps, "
                                    "modulus {p.lateral_modulus_bar:g} bar)"),
        "fit window": Default(DEFAULT_FIT_END, "slope falls by a few % per 1 % strain in metals; start after the "
                              "barostat transient", shown="strain {p.start:.4g} to {p.fit_end:g}, shrunk until linear"),
        "MD schedule": Default("NPT, then loading", "LAMMPS fix nh guidance: Tdamp 100 steps, Pdamp 1000 steps",
                               shown="NPT {p.equilibration_steps} + {p.average_steps} steps (box averaged), then "
                               "{p.loading_steps} loading steps at dt {p.timestep:g} ps"),
    }

    repetitions: tuple[int, int, int]
    temperature: float = Field(gt=0, description="K")
    mode: Literal["tensile", "compressive"] = "tensile"
    axis: Literal["x", "y", "z"] = "x"
    lateral: Literal["stress_free", "fixed"] = "stress_free"
    strain_rate_per_s: float = Field(default=DEFAULT_STRAIN_RATE, gt=0, description="engineering strain rate, 1/s")
    max_strain: float = Field(default=DEFAULT_MAX_STRAIN, gt=0, le=0.2)
    fit_start: float | None = Field(
        default=None,
        ge=0,
        description="strain where the fit starts (None: after the lateral barostat's transient, 3 rate x Pdamp)",
    )
    fit_end: float = Field(default=DEFAULT_FIT_END, gt=0)
    min_fit_window: float = Field(default=0.001, gt=0, description="smallest window the linearity test may shrink to")
    linearity_tolerance: float = Field(default=0.05, gt=0, description="relative slope difference of the window halves")
    box_relax: Literal["iso", "aniso"] = "iso"
    seed: int = DEFAULT_SEED
    equilibration_steps: int = 2500
    average_steps: int = 2500
    sample_every: int = 5
    samples_per_point: int = 10
    lateral_pdamp: float = Field(
        default=0.05,
        gt=0,
        description="press/berendsen Pdamp, ps (its per-axis "
        "response time is ~3 Pdamp: LAMMPS scales each axis by the cube root)",
    )
    lateral_modulus_bar: float = Field(default=1e6, gt=0, description="modulus given to press/berendsen, bar")
    max_lateral_slope_fraction: float = Field(
        default=0.05, gt=0, description="gate: d(lateral stress)/d(strain) over E in the fit window"
    )
    thermo_every: int = 500

    @model_validator(mode="after")
    def _window(self) -> TensileParams:
        if self.fit_end > self.max_strain:
            raise ValueError("fit_end must not exceed max_strain")
        if self.average_steps % 10 or self.average_steps < 100:
            raise ValueError("average_steps must be a multiple of 10 and at least 100")
        if self.lattice not in ("fcc", "bcc", "sc", "diamond", "hcp"):
            raise ValueError(f"unsupported lattice {self.lattice}")
        return self

    @property
    def erate_per_ps(self) -> float:
        return (1 if self.mode == "tensile" else -1) * self.strain_rate_per_s * 1e-12

    @property
    def loading_steps(self) -> int:
        return math.ceil(self.max_strain / (abs(self.erate_per_ps) * self.timestep))

    @property
    def start(self) -> float:
        if self.fit_start is not None:
            return self.fit_start
        if self.lateral == "fixed":
            return 0.0
        return 3 * abs(self.erate_per_ps) * 3 * self.lateral_pdamp  # three response times of the barostat

    @property
    def lateral_axes(self) -> list[str]:
        return [a for a in "xyz" if a != self.axis]



@register
class TensileTest(SolidProtocol):
    name = "lammps/tensile_test"
    engine = "lammps"
    properties: ClassVar[frozenset[str]] = frozenset({"youngs_modulus"})
    Params = TensileParams
    description = (
        "Young's modulus from a uniaxial tensile/compressive MD test (fix deform at a constant strain rate, lateral "
        "stress-free); slope of the linear region of the stress-strain curve. Chosen when the request asks for a "
        "tensile, compressive or stress-strain test"
    )

    def applies_to(self, spec: TaskSpec) -> bool:
        """Only when the request names a stress-strain test: plain 'Young's modulus' requests go to
        lammps/elastic_constants (exact at 0 K, no rate or window choices)."""
        if spec.system is None or spec.system.kind != "crystal" or not spec.properties:
            return False
        return {p.name for p in spec.properties} <= self.properties and requested_method(spec) is not None

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> TensileParams:
        fields = solid_base(spec, self.name, log, lattices=("fcc", "bcc", "sc", "diamond", "hcp"))
        mode = log.take("mode", requested_method(spec))
        temperature = log.take("temperature", requested_temperature(spec))
        if temperature <= 0:
            raise RequestError("a tensile MD test needs a temperature above 0 K; for 0 K use the elastic constants")
        reps = cubic_repetitions(spec, fields["lattice"], DEFAULT_CELLS, log)
        extra = md_controls(spec, fields["mass"], log)
        params = TensileParams(**fields, repetitions=reps, temperature=temperature, mode=mode,
                               box_relax="aniso" if fields["lattice"] == "hcp" else "iso", **extra)
        for name in ("loading axis", "strain rate", "lateral boundary", "fit window", "MD schedule"):
            log.report(name, p=params)
        return params

    def jobs(self, params: BaseModel) -> list[Job]:
        p = self.as_params(params)
        values = {
            **p.model_dump(),
            "tdamp": p.tdamp,
            "pdamp": p.pdamp,
            "erate_per_ps": p.erate_per_ps,
            "loading_steps": p.loading_steps,
            "lateral_axes": p.lateral_axes,
        }
        return [
            Job(
                id=JOB_ID,
                protocol=self.name,
                stage="load",
                params=p.model_dump(),
                inputs={"in.lammps": render(TEMPLATE, **values)},
                time_limit_s=3600.0,
            )
        ]

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = self.as_params(params)
        job_dir = job_dirs[JOB_ID]
        _, lines, _ = read_job(job_dir, JOB_ID)
        ref, end = pick(lines, case="reference"), pick(lines, case="loaded")
        natoms = need(ref, "natoms")[0]
        if need(end, "natoms")[0] != natoms:
            raise CalculationFailed("atoms were lost during loading")
        table = read_table(job_dir / "stress_strain.dat")
        check_solid(float(table[-1, 6]), p.nn_distance, JOB_ID)
        k = "xyz".index(p.axis)
        strain = table[:, 1]
        stress = -table[:, 2 + k] * BAR_TO_GPA  # tensile stress positive (LAMMPS reports pressure)
        lateral = -table[:, [2 + i for i in range(3) if i != k]] * BAR_TO_GPA
        t_mean = check_temperature(table[:, 5], p.temperature, JOB_ID)
        sign = 1.0 if p.mode == "tensile" else -1.0
        fit = fit_linear_region(
            sign * strain, sign * stress, p.start, p.fit_end, p.min_fit_window, p.linearity_tolerance
        )
        if p.lateral == "stress_free":
            # uniaxial stress: the lateral stresses may carry a constant offset (barostat lag) but
            # must not grow with strain, or the slope would be C11-like rather than E
            for column in lateral.T:
                lat = _fit(sign * strain, column, fit["start"], fit["end"], MIN_POINTS)
                if lat and abs(lat["slope"]) > p.max_lateral_slope_fraction * fit["slope"] + 3 * lat["se"]:
                    raise CalculationFailed(
                        f"lateral stress grows with strain ({lat['slope']:.1f} GPa per unit strain, E = "
                        f"{fit['slope']:.1f} GPa): the barostat does not keep up; lower the strain rate"
                    )
        table_file = job_dir / "stress_strain.csv"
        np.savetxt(
            table_file,
            np.column_stack([strain, stress, lateral]),
            delimiter=",",
            fmt="%.8g",
            header=f"engineering strain along {p.axis}, stress {p.axis}{p.axis} (GPa, tension positive), "
            f"lateral stresses (GPa)",
        )
        xs = np.linspace(fit["start"], fit["end"], 2) * sign
        plot_xy(
            job_dir / "stress_strain.png",
            [
                (strain, stress, ".", "MD"),
                (xs, fit["slope"] * xs + sign * fit["intercept"], "-", f"fit: E = {fit['slope']:.1f} GPa"),
            ],
            "engineering strain",
            "stress (GPa)",
            f"{p.element} {p.mode} test along {p.axis}, {p.temperature:g} K",
        )
        lateral_text = (
            f"lateral stress-free (press/berendsen {p.lateral_pdamp:g} ps)"
            if p.lateral == "stress_free"
            else "lateral box fixed (uniaxial strain: the slope is C11-like, not E)"
        )
        method = (
            f"uniaxial {p.mode} MD test along {p.axis} of a {'x'.join(map(str, p.repetitions))} {p.lattice} supercell "
            f"({natoms:.0f} atoms) of {p.potential_text()} at {p.temperature:g} K (<T> = {t_mean:.1f} K): NPT "
            f"equilibration at 0 bar, box set to its average, fix deform at {p.strain_rate_per_s:g} 1/s "
            f"(dt {p.timestep:g} ps) to strain {p.max_strain:g}, {lateral_text}; E = slope of a least-squares line "
            f"over strain {fit['start']:.4g}-{fit['end']:.4g} ({fit['points']} points; window "
            f"{'shrunk from ' + format(p.fit_end, 'g') + ' ' if fit['shrunk'] else ''}until its halves agree within "
            f"{100 * p.linearity_tolerance:g} %: {fit['half_slopes'][0]:.1f} vs {fit['half_slopes'][1]:.1f} GPa); "
            f"error: least-squares slope error x sqrt(statistical inefficiency of the residuals)"
        )
        return [
            Result(
                quantity="youngs_modulus",
                value=fit["slope"],
                unit="GPa",
                uncertainty=fit["se"],
                job=JOB_ID,
                method=method,
                log=str(job_dir / "log.lammps"),
                data_file=str(table_file),
            )
        ]


class NoLinearRegion(CalculationFailed):
    """No window down to the smallest allowed has halves whose slopes agree."""


def fit_linear_region(
    strain: np.ndarray, stress: np.ndarray, start: float, end: float, min_window: float, tolerance: float
) -> dict:
    """Slope of the initial linear part of a (positive-strain) stress-strain curve.

    The window [start, end] is halved in length while the slopes of its two halves differ by more
    than `tolerance` (relative) plus three combined standard errors."""
    if strain.max() < end:
        raise CalculationFailed(f"loading reached strain {strain.max():.4g}, short of the fit window end {end:g}")
    shrunk = False
    while True:
        fit = _fit(strain, stress, start, end, MIN_POINTS)
        mid = 0.5 * (start + end)
        first, second = _fit(strain, stress, start, mid), _fit(strain, stress, mid, end)
        if fit is not None and first is not None and second is not None:
            diff = abs(first["slope"] - second["slope"])
            if diff <= tolerance * abs(fit["slope"]) + 3 * math.hypot(first["se"], second["se"]):
                if fit["slope"] <= 0:
                    raise CalculationFailed(f"stress does not rise with strain (slope {fit['slope']:.2f} GPa)")
                peak = float(strain[int(np.argmax(stress))])
                if peak < end:
                    raise CalculationFailed(
                        f"stress peaks at strain {peak:.4g}, inside the fit window: the crystal yielded or transformed"
                    )
                return {
                    **fit,
                    "start": start,
                    "end": end,
                    "shrunk": shrunk,
                    "half_slopes": (first["slope"], second["slope"]),
                }
        if end - start <= min_window or fit is None:
            raise NoLinearRegion(
                f"no linear region between strain {start:.4g} and {start + min_window:.4g} (noise too large or "
                "the response is non-linear): use a larger cell, a lower temperature or a slower rate"
            )
        end = start + max(min_window, 0.5 * (end - start))
        shrunk = True


def _fit(strain: np.ndarray, stress: np.ndarray, lo: float, hi: float, minimum: int = MIN_POINTS // 2) -> dict | None:
    mask = (strain >= lo) & (strain <= hi)
    if mask.sum() < minimum:
        return None
    x, y = strain[mask], stress[mask]
    slope, intercept, se = linear_fit(x, y)
    residuals = y - (slope * x + intercept)
    g = statistical_inefficiency(residuals) if residuals.std() > 0 else 1.0
    return {
        "slope": slope,
        "intercept": intercept,
        "se": se * math.sqrt(g),
        "points": int(mask.sum()),
        "noise": float(residuals.std()),
    }
