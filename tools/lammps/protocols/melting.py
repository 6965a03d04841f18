"""lammps/melting_point: melting temperature of a one-element crystal by solid-liquid coexistence.

The interface method (Morris, Wang, Ho & Chan, Phys. Rev. B 49, 3109 (1994)): a box elongated along
z is equilibrated as a crystal (NPT) at a start temperature, its upper half is melted while the
lower half is held, that liquid is brought back to the start temperature and pressure (box free
along z only), then the whole box runs at constant enthalpy and pressure (NPH). Two solid-liquid
interfaces move: melting absorbs latent heat and freezing releases it, so the temperature settles
at the melting point of the potential as long as both phases remain.

Analysis: the crystalline fraction (common-neighbour analysis, relative to the all-solid box) is
sampled with T; samples after the detected equilibration of T average to Tm (block-averaged error).
The interfaces' drift is part of the uncertainty: a linear fit T(t) over that window gives the
change of T across it, and half of it is added in quadrature to the statistical error. Gates: the
solid fraction stays between 10 % and 90 % (else the box melted or froze: no coexistence), the
mean pressure is the set point.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import ClassVar

import numpy as np
from pydantic import BaseModel, Field, model_validator

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, RequestError
from simagent.models import Job, Result, TaskSpec
from simagent.protocols import register
from simagent.stats import block_average, detect_equilibration, linear_fit
from simagent.units import to_canonical
from tools.lammps.inputs import render
from tools.lammps.protocols.solid_common import (
    DEFAULT_SEED,
    SolidMDBase,
    SolidProtocol,
    kelvin,
    md_controls,
    need,
    pick,
    plot_xy,
    read_job,
    read_table,
    solid_base,
)

PROPERTY = "melting_point"
TEMPLATE = "melting_coexistence.lmp.j2"
# Steinhardt q6 bond order over the nearest neighbours of the lattice (12 in fcc/hcp, 8 + 6 in bcc),
# searched within 1.2 a (beyond the first two bcc shells, inside the third fcc shell) at a lattice
# ~2 % expanded near melting
ORDER_NEIGHBOURS = {"fcc": 12, "hcp": 12, "bcc": 14}
ORDER_CUTOFF_OVER_A = 1.2
THERMAL_EXPANSION_NEAR_TM = 1.02
MIN_SOLID_FRACTION, MAX_SOLID_FRACTION = 0.1, 0.9
MELT_FACTOR = 2.0  # the upper half is melted at twice the start temperature (a crystal superheats ~20 %)
MAX_PRESSURE_OFF_BAR = 500.0


class MeltingParams(SolidMDBase):
    # Defaults, each with its reason: start temperature, pressure, the coexistence box, MD schedule
    DEFAULTS: ClassVar[dict[str, Default]] = {
        **SolidMDBase.DEFAULTS,
        "start temperature (given)": Default("the request's", "the request's temperature starts both phases; NPH "
                                             "moves to Tm", shown="{guess:g} K", parameter="start temperature"),
        "start temperature": Default("measured Tm", "measured melting point of {element} (pymatgen data); the NPH "
                                     "coexistence run moves to the potential's own Tm", shown="{guess:g} K"),
        "pressure": Default(0.0, "no pressure given", shown="0 bar"),
        "supercell": Default((6, 6, 18), "two interfaces ~9 cells apart along z; coexistence Tm of EAM metals is "
                             "within ~10 K of the large-box value at this size", shown="6x6x18"),
        "MD schedule": Default("coexistence", "NPH interface method (Morris et al. 1994); LAMMPS fix nh damping advice",
                               "Morris et al., Phys. Rev. B 49, 3109 (1994)",
                               shown="NPT crystal {p.solid_steps}, melt upper half at " + f"{MELT_FACTOR:g}" +
                               " x start T {p.melt_steps}, liquid NPT(z) {p.liquid_steps}, NPH coexistence "
                               "{p.production_steps} steps at dt {p.timestep:g} ps"),
    }

    repetitions: tuple[int, int, int] = Field(description="conventional cells; z is the long axis")
    guess_temperature: float = Field(gt=0, description="K: start temperature of both phases")
    pressure_bar: float = 0.0
    seed: int = DEFAULT_SEED
    solid_steps: int = Field(default=5000, gt=0)
    melt_steps: int = Field(default=3000, gt=0)
    liquid_steps: int = Field(default=5000, gt=0)
    production_steps: int = Field(default=25000, gt=0)
    sample_every: int = Field(default=50, gt=0)
    thermo_every: int = Field(default=1000, gt=0)
    time_limit_s: float = Field(default=3600.0, gt=0)

    @model_validator(mode="after")
    def _shape(self) -> MeltingParams:
        if self.lattice not in ORDER_NEIGHBOURS:
            raise ValueError(f"coexistence needs an fcc, hcp or bcc crystal, not {self.lattice}")
        if self.repetitions[2] < 2 * max(self.repetitions[:2]):
            raise ValueError("the box must be at least twice as long along z as across (two interfaces)")
        if self.production_steps < 40 * self.sample_every:
            raise ValueError("production too short: fewer than 40 samples")
        return self

    @property
    def order_cutoff(self) -> float:
        return ORDER_CUTOFF_OVER_A * self.a_initial * THERMAL_EXPANSION_NEAR_TM

    @property
    def n_atoms(self) -> int:
        per_cell = {"fcc": 4, "bcc": 2, "hcp": 4}[self.lattice]
        return per_cell * math.prod(self.repetitions)


def experimental_melting_point(element: str) -> float | None:
    """The element's measured melting point in K (pymatgen's periodic-table data), or None."""
    from pymatgen.core.periodic_table import Element

    try:
        value = Element(element).melting_point
    except (ValueError, AttributeError):
        return None
    return float(value) if value else None


@register
class MeltingPoint(SolidProtocol):
    name = "lammps/melting_point"
    engine = "lammps"
    properties: ClassVar[frozenset[str]] = frozenset({PROPERTY})
    Params = MeltingParams
    description = (
        "Melting point of a one-element crystal (fcc, hcp, bcc) by solid-liquid coexistence: half-solid "
        "half-liquid box in NPH, Tm = mean T while both phases persist; error from blocking and the T drift"
    )

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> MeltingParams:
        fields = solid_base(spec, self.name, log, lattices=("fcc", "hcp", "bcc"))
        guess = self._start_temperature(spec, fields["element"], log)
        pressure = 0.0
        if spec.conditions.pressure is not None:
            bar = to_canonical(spec.conditions.pressure, "pressure")
            if bar.unit != "bar":
                raise RequestError(f"give the pressure in a unit of pressure, not {spec.conditions.pressure.unit!r}")
            pressure = bar.value
        else:
            log.report("pressure")
        n = 6
        if spec.controls.n_atoms:
            per_cell = {"fcc": 4, "bcc": 2, "hcp": 4}[fields["lattice"]]
            n = max(2, round((spec.controls.n_atoms / (3 * per_cell)) ** (1 / 3)))
        else:
            log.report("supercell")
        extra = md_controls(spec, fields["mass"], log, equilibration="solid_steps", production="production_steps")
        params = MeltingParams(**fields, repetitions=(n, n, 3 * n), guess_temperature=guess, pressure_bar=pressure,
                               **extra)
        log.report("MD schedule", p=params)
        return params

    @staticmethod
    def _start_temperature(spec: TaskSpec, element: str, log: DefaultsLog) -> float:
        """The request's temperature, else the element's measured melting point (either reported)."""
        if spec.conditions.temperature is not None:
            guess = kelvin(spec.conditions.temperature)
            log.report("start temperature (given)", guess=guess)
        else:
            guess = experimental_melting_point(element)
            if guess is None:
                raise RequestError(f"no measured melting point of {element} to start from: give a start temperature")
            log.report("start temperature", guess=guess, element=element)
        if guess <= 0:
            raise RequestError("the start temperature must be above 0 K")
        return guess

    def jobs(self, params: BaseModel) -> list[Job]:
        p = self.as_params(params)
        text = render(
            TEMPLATE, **p.model_dump(), tdamp=p.tdamp, pdamp=p.pdamp, order_cutoff=p.order_cutoff,
            order_neighbours=ORDER_NEIGHBOURS[p.lattice],
            melt_temperature=round(MELT_FACTOR * p.guess_temperature, 2),
        )
        return [Job(id="coexistence", protocol=self.name, stage="md", params=p.model_dump(mode="json"),
                    inputs={"in.lammps": text}, time_limit_s=p.time_limit_s)]

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = self.as_params(params)
        job_dir = Path(job_dirs["coexistence"])
        _, lines, _ = read_job(job_dir, "coexistence")
        pick(lines, case="coexistence")
        (solid_fraction_ref,) = need(pick(lines, case="solid"), "fxtal")
        if solid_fraction_ref < 0.5:
            raise CalculationFailed(
                f"only {100 * solid_fraction_ref:.0f} % of the start crystal is crystalline at "
                f"{p.guess_temperature:g} K: the crystal is unstable at the start temperature (give a lower one)")
        table = read_table(job_dir / "coexistence.dat")
        steps, temps, press, fxtal = table[:, 0], table[:, 1], table[:, 2], table[:, 4]
        if not np.all(np.isfinite(table)):
            raise CalculationFailed("non-finite values in the coexistence run")
        solid = fxtal / solid_fraction_ref
        result = coexistence_temperature(steps * p.timestep, temps, solid)
        t0 = result["first"]
        p_mean, p_se = block_average(press[t0:])
        if abs(p_mean - p.pressure_bar) > MAX_PRESSURE_OFF_BAR + 5 * p_se:
            raise CalculationFailed(f"mean pressure {p_mean:.0f} +/- {p_se:.0f} bar, not the set point "
                                    f"{p.pressure_bar:g} bar: not equilibrated")
        out_table = job_dir / "coexistence.csv"
        np.savetxt(out_table, np.column_stack([steps * p.timestep, temps, solid]), delimiter=",",
                   header="t_ps,T_K,solid_fraction")
        plot_xy(job_dir / "coexistence.png",
                [(steps * p.timestep, temps, "-", "T"), (steps[t0:] * p.timestep, temps[t0:], "-", "averaged")],
                "t (ps)", "T (K)", f"{p.element}, {p.potential_file}: NPH coexistence")
        reps = "x".join(map(str, p.repetitions))
        method = (
            f"solid-liquid coexistence (interface method, NPH at {p.pressure_bar:g} bar) of a {reps} {p.lattice} "
            f"box ({p.n_atoms} atoms, half melted at the start) with {p.potential_text()}; "
            f"start {p.guess_temperature:g} K; "
            f"Tm = mean T over {result['window_ps']:.1f} ps after equilibration detection, while the solid fraction "
            f"went {result['solid_start']:.2f} -> {result['solid_end']:.2f} (q6 bond order); uncertainty: blocking "
            f"({result['se']:.1f} K) and half the T drift of a linear fit over the window ({result['drift']:.1f} K), "
            f"in quadrature; NPH {p.production_steps} steps at dt {p.timestep:g} ps"
        )
        return [Result(quantity=PROPERTY, value=result["tm"], unit="K", uncertainty=result["uncertainty"],
                       job="coexistence", method=method, log=str(job_dir / "log.lammps"), data_file=str(out_table))]


def coexistence_temperature(times: np.ndarray, temps: np.ndarray, solid: np.ndarray) -> dict:
    """Tm and its uncertainty from an NPH coexistence run: the T samples after equilibration
    detection (at most the first half is discarded); error = blocking SE (+) half the drift of T
    across the window (linear fit). Raises when the solid fraction leaves 10-90 % in that window."""
    t0 = min(detect_equilibration(temps), temps.size // 2)
    window_solid = solid[t0:]
    if window_solid.min() < MIN_SOLID_FRACTION:
        raise CalculationFailed(
            f"the crystal melted completely (solid fraction {window_solid.min():.2f}): the start temperature is well "
            "above this potential's melting point; start lower")
    if window_solid.max() > MAX_SOLID_FRACTION:
        raise CalculationFailed(
            f"the liquid froze (solid fraction {window_solid.max():.2f}): the start temperature is well below this "
            "potential's melting point; start higher")
    tm, se = block_average(temps[t0:])
    slope = linear_fit(times[t0:], temps[t0:])[0]
    window = float(times[-1] - times[t0])
    drift = abs(slope) * window / 2
    return {"tm": tm, "se": se, "drift": drift, "uncertainty": math.hypot(se, drift), "first": t0,
            "window_ps": window, "solid_start": float(window_solid[0]), "solid_end": float(window_solid[-1])}
