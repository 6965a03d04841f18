"""lammps/thermal_expansion: linear thermal expansion coefficient from NPT runs at several temperatures.

One job per temperature (run in parallel): the crystal is equilibrated NPT at zero pressure and
its lattice parameter sampled; <a>(T) with block-averaged standard errors. A weighted least-squares
line (or parabola) a(T) gives alpha(T_ref) = (1/a(T_ref)) da/dT at the requested temperature (or
the middle of the list). Its error is the larger of the error propagated from the block averages
and the one from the fit residuals. hcp crystals also give alpha along c. Classical MD: no
quantum freezing-out of phonons, so below the Debye temperature alpha is overestimated.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, Field, model_validator

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, RequestError
from simagent.models import Job, Result, TaskSpec
from simagent.protocols import register
from simagent.stats import block_average
from tools.lammps.inputs import render
from tools.lammps.protocols.solid_common import (
    DEFAULT_SEED,
    SolidMDBase,
    SolidProtocol,
    check_solid,
    check_temperature,
    cubic_repetitions,
    kelvin,
    md_controls,
    pick,
    plot_xy,
    read_job,
    read_table,
    requested_temperature,
    solid_base,
)

PROPERTY = "thermal_expansion_coefficient"
TEMPLATE = "thermal_expansion_npt.lmp.j2"
DEFAULT_CENTRE = 300.0
# five temperatures, +/-100 K around the centre (+/-50 % below 200 K): a(T) is close to linear over
# such a window, and the spread gives a lattice change ~10x the statistical error of each mean
OFFSETS = (-1.0, -0.5, 0.0, 0.5, 1.0)
HALF_WIDTH_K = 100.0
RANGE_POINTS = 5
MAX_MEAN_PRESSURE_BAR = 200.0


_TEMPERATURES = {"shown": "{temps} K", "parameter": "temperatures"}


class ExpansionParams(SolidMDBase):
    # Defaults, each with its reason: the temperatures around the one asked (or a range's points),
    # the cell, the NPT schedule and the fit
    DEFAULTS: ClassVar[dict[str, Default]] = {
        **SolidMDBase.DEFAULTS,
        "temperatures (range)": Default(RANGE_POINTS, f"{RANGE_POINTS} points spanning the requested range",
                                        **_TEMPERATURES),
        "temperatures": Default(OFFSETS, f"{len(OFFSETS)} temperatures, +/-{{half:g}} K around {{centre:g}} K",
                                **_TEMPERATURES),
        "temperatures (none given)": Default(DEFAULT_CENTRE, f"{len(OFFSETS)} temperatures, +/-{{half:g}} K around "
                                             "{centre:g} K (room temperature: none given)", **_TEMPERATURES),
        "supercell": Default(4, "256-atom fcc cell: 20 ps averages give <a> to ~1e-5 relative",
                             shown="{cells} cells ({atoms} atoms)"),
        "MD schedule": Default("NPT per temperature", "LAMMPS fix nh guidance (100 / 1000 timesteps); block-averaged "
                               "errors", shown="NPT 0 bar, {p.equilibration_steps} + {p.production_steps} steps at dt "
                               "{p.timestep:g} ps per temperature; Tdamp {p.tdamp:g} ps, Pdamp {p.pdamp:g} ps"),
        "fit": Default(1, "a(T) is nearly linear over a +/-100 K window", shown="weighted straight line a(T)"),
    }

    repetitions: tuple[int, int, int]
    temperatures: list[float] = Field(min_length=2, description="K, one NPT job each")
    reference_temperature: float = Field(gt=0, description="K, where alpha is evaluated")
    fit_order: Literal[1, 2] = 1
    box_relax: Literal["iso", "aniso"] = "iso"
    seed: int = DEFAULT_SEED
    equilibration_steps: int = 2500
    production_steps: int = 10000
    sample_every: int = 10
    thermo_every: int = 1000

    @model_validator(mode="after")
    def _temperatures(self) -> ExpansionParams:
        if min(self.temperatures) <= 0:
            raise ValueError("temperatures must be above 0 K")
        if len(set(self.temperatures)) < self.fit_order + 1:
            raise ValueError(f"a fit of order {self.fit_order} needs {self.fit_order + 1} distinct temperatures")
        return self



def job_id(temperature: float) -> str:
    return f"npt_{temperature:g}K".replace(".", "p")


def temperature_list(spec: TaskSpec, log: DefaultsLog) -> tuple[list[float], float]:
    """Temperatures to simulate and the reference temperature (a chosen list is reported to `log`)."""
    given = sorted(kelvin(q) for q in spec.conditions.temperatures)
    single = requested_temperature(spec)
    if len(given) >= 3:
        ref = single if single is not None else given[len(given) // 2]
        return given, ref
    if len(given) == 2:
        lo, hi = given
        temps = [round(lo + (hi - lo) * i / (RANGE_POINTS - 1), 2) for i in range(RANGE_POINTS)]
        ref = single if single is not None and lo <= single <= hi else temps[RANGE_POINTS // 2]
        log.report("temperatures (range)", temps=", ".join(f"{t:g}" for t in temps))
        return temps, ref
    centre = single if single is not None else DEFAULT_CENTRE
    if centre <= 0:
        raise RequestError("thermal expansion needs a temperature above 0 K")
    half = min(HALF_WIDTH_K, 0.5 * centre)
    temps = [round(centre + f * half, 2) for f in OFFSETS]
    log.report("temperatures" if single is not None else "temperatures (none given)",
               temps=", ".join(f"{t:g}" for t in temps), half=half, centre=centre)
    return temps, centre


@register
class ThermalExpansion(SolidProtocol):
    name = "lammps/thermal_expansion"
    engine = "lammps"
    properties: ClassVar[frozenset[str]] = frozenset({PROPERTY})
    Params = ExpansionParams
    description = (
        "Linear thermal expansion coefficient alpha = (1/a) da/dT of a crystal from NPT runs at several "
        "temperatures (one job each), lattice parameter vs T fitted, block-averaged errors"
    )

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> ExpansionParams:
        fields = solid_base(spec, self.name, log)
        temps, ref = temperature_list(spec, log)
        reps = cubic_repetitions(spec, fields["lattice"], 4, log)
        extra = md_controls(spec, fields["mass"], log, production="production_steps")
        params = ExpansionParams(**fields, repetitions=reps, temperatures=temps, reference_temperature=ref,
                                 box_relax="aniso" if fields["lattice"] == "hcp" else "iso", **extra)
        log.report("MD schedule", p=params)
        log.report("fit")
        return params

    def jobs(self, params: BaseModel) -> list[Job]:
        p = self.as_params(params)
        values = {**p.model_dump(), "tdamp": p.tdamp, "pdamp": p.pdamp}
        jobs = []
        for i, t in enumerate(sorted(set(p.temperatures))):
            values.update(temperature=t, seed=p.seed + i)
            jobs.append(
                Job(
                    id=job_id(t),
                    protocol=self.name,
                    stage="npt",
                    params=p.model_dump(),
                    inputs={"in.lammps": render(TEMPLATE, **values)},
                    time_limit_s=3600.0,
                )
            )
        return jobs

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = self.as_params(params)
        rows = []
        for t in sorted(set(p.temperatures)):
            job = job_id(t)
            job_dir = job_dirs[job]
            _, lines, _ = read_job(job_dir, job)
            pick(lines, case="npt")  # the run reached its end
            table = read_table(job_dir / "lattice.dat")
            check_solid(float(table[-1, 7]), p.nn_distance, job)
            t_mean = check_temperature(table[:, 4], t, job)
            p_mean, p_se = block_average(table[:, 5])
            if abs(p_mean) > MAX_MEAN_PRESSURE_BAR + 5 * p_se:
                raise CalculationFailed(
                    f"{job}: mean pressure {p_mean:.0f} +/- {p_se:.0f} bar, not 0: not equilibrated"
                )
            (a, a_se), (b, b_se), (c, c_se) = (block_average(table[:, k]) for k in (1, 2, 3))
            rows.append(
                {
                    "T_K": t,
                    "T_mean_K": t_mean,
                    "a_A": a,
                    "a_se_A": a_se,
                    "b_A": b,
                    "b_se_A": b_se,
                    "c_A": c,
                    "c_se_A": c_se,
                    "P_bar": p_mean,
                    "samples": len(table),
                    "job": job,
                }
            )
        home = job_dirs[job_id(min(p.temperatures))]
        table_file = home / "lattice_vs_T.csv"
        with table_file.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        temps = np.array([r["T_K"] for r in rows])
        cubic = p.lattice != "hcp"
        if cubic:  # iso barostat: the three cube edges move together, a = L_x / n_x
            axes = {"": (np.array([r["a_A"] for r in rows]), np.array([r["a_se_A"] for r in rows]), "a")}
        else:  # orthogonal hcp cell: a along x (b = sqrt(3) a along y), c along z
            values_a = np.array([(r["a_A"] + r["b_A"] / math.sqrt(3)) / 2 for r in rows])
            errors_a = np.array([math.hypot(r["a_se_A"], r["b_se_A"] / math.sqrt(3)) / 2 for r in rows])
            axes = {
                "": (values_a, errors_a, "a"),
                "_c": (np.array([r["c_A"] for r in rows]), np.array([r["c_se_A"] for r in rows]), "c"),
            }
        results = []
        curves = []
        for suffix, (vals, errs, label) in axes.items():
            alpha, alpha_se, a_ref, fit_text = fit_alpha(temps, vals, errs, p.reference_temperature, p.fit_order)
            curves.append((temps, vals, "o", f"<{label}>", errs))
            fine = np.linspace(temps.min(), temps.max(), 50)
            coeffs = np.polyfit(temps, vals, p.fit_order, w=1 / np.maximum(errs, 1e-12))
            curves.append((fine, np.polyval(coeffs, fine), "-", f"fit ({label})"))
            method = (
                f"NPT at 0 bar (Nose-Hoover, Tdamp {p.tdamp:g} ps, Pdamp {p.pdamp:g} ps, dt {p.timestep:g} ps) of a "
                f"{'x'.join(map(str, p.repetitions))} {p.lattice} supercell of {p.potential_text()} at "
                f"{', '.join(f'{t:g}' for t in temps)} K, one job each ({p.equilibration_steps} equilibration + "
                f"{p.production_steps} production steps); <{label}> per temperature with block-averaged errors; "
                f"{fit_text}; alpha = (1/{label}) d{label}/dT at {p.reference_temperature:g} K "
                f"({label} = {a_ref:.5f} A); classical MD (no quantum phonon freezing)"
            )
            if alpha <= 0:
                method += "; note: negative expansion along this axis"
            results.append(
                Result(
                    quantity=PROPERTY + suffix,
                    value=alpha,
                    unit="1/K",
                    uncertainty=alpha_se,
                    job=rows[0]["job"],
                    method=method,
                    data_file=str(table_file),
                )
            )
        plot_xy(
            home / "lattice_vs_T.png",
            curves,
            "T (K)",
            "lattice parameter (A)",
            f"{p.element} {p.lattice}, {p.potential_file}",
        )
        return results


def fit_alpha(
    temps: np.ndarray, values: np.ndarray, errors: np.ndarray, t_ref: float, order: int
) -> tuple[float, float, float, str]:
    """alpha(T_ref) and its standard error from a weighted polynomial fit of the lattice parameter.

    Error: the larger of the propagated one (weights from the block errors) and the one scaled by
    the residual chi^2 per degree of freedom (when the points scatter more than their errors)."""
    sigma = np.maximum(errors, 1e-12)
    coeffs, cov = np.polyfit(temps, values, order, w=1 / sigma, cov="unscaled")
    dof = len(temps) - (order + 1)
    if dof > 0:
        chi2 = float(np.sum(((values - np.polyval(coeffs, temps)) / sigma) ** 2)) / dof
        cov = cov * max(1.0, chi2)
    else:
        chi2 = float("nan")
    deriv = np.polyder(coeffs)
    slope = float(np.polyval(deriv, t_ref))
    a_ref = float(np.polyval(coeffs, t_ref))
    # gradient of the slope at T_ref with respect to the coefficients (highest power first)
    grad = np.array([(order - k) * t_ref ** (order - k - 1) if order - k >= 1 else 0.0 for k in range(order + 1)])
    slope_se = float(math.sqrt(max(grad @ cov @ grad, 0.0)))
    text = (
        f"weighted least-squares {'line' if order == 1 else 'parabola'} a(T) (chi^2/dof = {chi2:.2g}, error scaled "
        f"by it when > 1), slope {slope:.4e} +/- {slope_se:.1e} A/K"
    )
    return slope / a_ref, slope_se / a_ref, a_ref, text
