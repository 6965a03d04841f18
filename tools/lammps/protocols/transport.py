"""Protocols lammps/shear_viscosity and lammps/thermal_conductivity: transport coefficients of a
Lennard-Jones fluid (reduced units) or of a real monatomic fluid such as argon (metal units).

Shear viscosity, two methods; the request picks one (Green-Kubo unless it names another):
- Green-Kubo (equilibrium MD, NVE): eta = V/(kB T) int_0^inf <P_ab(0) P_ab(t)> dt with the
  autocorrelation of the off-diagonal pressure tensor averaged over xy, xz and yz (tidynamics,
  all time origins). The running integral is read on a plateau window that starts where the
  autocorrelation has decayed into its own noise; the error comes from independent blocks.
- Muller-Plathe reverse NEMD (Phys. Rev. E 59, 4894 (1999)), `fix viscosity`: x momentum is
  swapped between the bottom and the middle slab, so a known momentum flux j = P / (2 t A)
  crosses the box; eta = j / |dv_x/dz| with the gradient from linear fits in the two halves.
Thermal conductivity, three methods (Muller-Plathe unless the request names eHEX or Green-Kubo):
- Muller-Plathe reverse NEMD (J. Chem. Phys. 106, 6082 (1997)), `fix thermal/conductivity`:
  kinetic energy swaps impose the heat flux J = E / (2 t A); kappa = J / |dT/dz| from the
  temperature profile (compute chunk/atom + fix ave/chunk).
- eHEX (enhanced heat exchange, Wirnsberger, Frenkel & Dellago, J. Chem. Phys. 143, 124104
  (2015)), `fix ehex`: heat is added at a constant rate F to the middle slab and removed from the
  bottom slab, with a correction that removes the energy drift of the plain HEX algorithm;
  kappa = F / (2 A |dT/dz|) from the same slab temperature profile as Muller-Plathe.
- Green-Kubo (equilibrium MD, NVE): kappa = 1/(V kB T^2) int_0^inf <(JV)_a(0) (JV)_a(t)> dt,
  averaged over x, y, z, with JV = sum_i e_i v_i - sum_i S_i v_i from `compute heat/flux` (per-atom
  energy and the virial part of the centroid per-atom stress). Same plateau and block analysis as
  the viscosity. For one species with zero total momentum the partial-enthalpy term of the heat
  current vanishes, so no correction is needed (mixtures would need one).
Both NEMD runs are NVE: the swaps conserve energy and momentum, a thermostat would remove the
imposed flux. The factor 2: with periodic boundaries the flux leaves the source slab both ways.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, Field, model_validator

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, ReadError, RequestError
from simagent.models import Job, PotentialSpec, Result, TaskSpec
from simagent.protocols import Protocol, register
from simagent.stats import block_average, detect_equilibration, linear_fit
from tools.lammps.inputs import render
from tools.lammps.protocols.fluid import (
    DEFAULT_SEED,
    FLUID_KINDS,
    K_B_EV,
    REDUCED,
    SKIN_SIGMA,
    check_temperature,
    fixed_density_state,
    fluid_units,
    is_lj_fluid_task,
    lj_cutoff_sigma,
    monatomic_particle,
    norm_unit,
    plot,
    timestep_in,
    velocity_seed,
)
from tools.lammps.protocols.fluid_common import (
    as_params,
    check_columns,
    check_full_production,
    finished_output,
    md_job,
)

VISCOSITY = "shear_viscosity"
CONDUCTIVITY = "thermal_conductivity"

# CODATA 2018 exact values
K_B_J = 1.380649e-23  # J/K
EV_J = 1.602176634e-19  # J
AMU_KG = 1.66053906660e-27  # kg per g/mol / N_A
# metal units: (g/mol) angstrom^2 / ps^2 in eV (LAMMPS `units metal` mvv2e)
MVV2E_METAL = 1.0364269e-4

# Metal-unit results -> SI-based output units (per unit of the protocol's base unit).
# viscosity base: mPa s. Green-Kubo: V [A^3] / (kB T [J]) * int P^2 [bar^2] dt [ps]
GK_METAL_PA_S = 1e-30 * 1e10 * 1e-12 / K_B_J  # Pa s per (A^3 bar^2 ps / K)
# Muller-Plathe: momentum flux / shear rate in (g/mol)/(A ps)
MP_METAL_PA_S = AMU_KG / (1e-10 * 1e-12)  # Pa s per (g/mol)/(A ps)
# thermal conductivity base: W/(m K); eV / (ps A K)
KAPPA_METAL_W_MK = EV_J / (1e-12 * 1e-10)

OUTPUT_UNITS: dict[str, dict[str, tuple[float, str]]] = {
    VISCOSITY: {"mpa*s": (1.0, "mPa*s"), "cp": (1.0, "cP"), "centipoise": (1.0, "cP"),
                "pa*s": (1e-3, "Pa*s"), "upa*s": (1e3, "uPa*s"), "µpa*s": (1e3, "uPa*s")},
    CONDUCTIVITY: {"w/(m*k)": (1.0, "W/(m*K)"), "w/m/k": (1.0, "W/(m*K)"), "w/(mk)": (1.0, "W/(m*K)"),
                   "w/mk": (1.0, "W/(m*K)"), "w/m*k": (1.0, "W/(m*K)"), "mw/(m*k)": (1e3, "mW/(m*K)"),
                   "mw/m/k": (1e3, "mW/(m*K)")},
}  # fmt: skip

# Method words in a request (the first match wins; see `requested_method`).
METHOD_PATTERNS: dict[str, str] = {
    "ehex": r"\be?hex\b|(?:enhanced )?heat[- ]exchange algorithm",
    "muller_plathe": r"m(?:u|ü|ue)ller[- ]?plathe|\bnemd\b|\brnemd\b|non-?equilibrium|reverse perturbation",
    "green_kubo": r"green[- ]?kubo|\bgk\b|stress (?:auto)?correlation|equilibrium md|\bemd\b",
}
METHOD_LABEL = {"green_kubo": "Green-Kubo", "muller_plathe": "Muller-Plathe reverse NEMD", "ehex": "eHEX NEMD"}

# Defaults are declared on the parameter models (FLUID_RUN_DEFAULTS, NEMD_DEFAULTS, GREEN_KUBO_DEFAULTS
# and each protocol's DEFAULTS per method), in LJ time units tau = sigma sqrt(m/eps) so that both unit
# styles get the same physics (argon: tau = 2.15 ps). Every one applied is reported with its reason.


def tau_in(units: str, mass: float, epsilon: float, sigma: float) -> float:
    """The LJ time unit sigma sqrt(m/eps) in the units style's time unit (tau or ps)."""
    if units == "lj":
        return sigma * math.sqrt(mass / epsilon)
    return sigma * math.sqrt(mass * MVV2E_METAL / epsilon)


def _unit_key(text: str) -> str:
    """'mPa s', 'mPa·s', 'Pa.s' -> 'mpa*s'; 'W/(m K)', 'W m-1 K-1' -> 'w/(m*k)'."""
    key = text.strip().lower().replace("·", "*").replace("µ", "u").replace("μ", "u")
    key = re.sub(r"\s*\*\s*|\s+", "*", key)
    key = re.sub(r"(?<=pa)\.(?=s\b)", "*", key)
    return key.replace("w*m-1*k-1", "w/(m*k)").replace("w*m^-1*k^-1", "w/(m*k)")


def output_unit(prop: str, units: str, requested: str | None) -> tuple[float, str]:
    """(factor, label) from the protocol's base unit (reduced, mPa*s, W/(m*K)) to the request's."""
    if units == "lj":
        if norm_unit(requested) not in REDUCED | {"eta*", "kappa*", "lambda*"}:
            raise RequestError(f"an LJ fluid reports {prop} in reduced units, not {requested!r}")
        return 1.0, "reduced"
    table = OUTPUT_UNITS[prop]
    key = _unit_key(requested) if requested else next(iter(table))
    if key not in table:
        raise RequestError(f"unknown {prop} unit {requested!r}; use one of {', '.join(table)}")
    return table[key]


def requested_method(spec: TaskSpec, prop: str) -> str | None:
    """The method the request names for a property, or None.

    A `method` on the PropertyRequest wins (proposed field); otherwise the request text is read
    for method words (Green-Kubo, Muller-Plathe, NEMD...)."""
    for req in spec.properties:
        explicit = getattr(req, "method", None)
        if req.name == prop and explicit:
            key = explicit.lower().replace("-", "_").replace(" ", "_").replace("ü", "u")
            for method in METHOD_LABEL:
                if key in (method, method.replace("_", "")) or re.search(METHOD_PATTERNS[method], explicit.lower()):
                    return method
            raise RequestError(f"unknown method {explicit!r} for {prop}; use Green-Kubo or Muller-Plathe")
    low = spec.request.lower()
    for method, pattern in METHOD_PATTERNS.items():
        if re.search(pattern, low):
            return method
    return None


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------


class TransportParams(BaseModel):
    """The fluid and the run. Units style lj: sigma, epsilon, tau, reduced T; metal: angstrom, eV,
    ps, K, mass in g/mol. The box is an fcc lattice of `cells` at the requested density."""

    units: Literal["lj", "metal"]
    element: str | None = None
    mass: float = Field(gt=0)
    epsilon: float = Field(gt=0)
    sigma: float = Field(gt=0)
    temperature: float = Field(gt=0)
    number_density: float = Field(gt=0, description="atoms per length^3")
    cells: tuple[int, int, int]
    cutoff_sigma: float = Field(gt=1.0)
    tail_correction: bool = False
    shifted: bool = False
    skin_sigma: float = Field(default=SKIN_SIGMA, gt=0)
    timestep: float = Field(gt=0)
    thermostat_damp_steps: int = Field(default=100, gt=0, description="Nose-Hoover damping (equilibration)")
    melt_steps: int = Field(ge=0)
    melt_temperature_factor: float = Field(default=2.0, ge=1.0)
    equilibration_steps: int = Field(ge=2)
    production_steps: int = Field(gt=0)
    thermo_every: int = Field(default=100, gt=0)
    seed: int = Field(default=DEFAULT_SEED, gt=0)
    temperature_tolerance: float = Field(default=0.05, gt=0)
    time_limit_s: float = Field(default=3600.0, gt=0)

    @property
    def n_atoms(self) -> int:
        return 4 * math.prod(self.cells)

    @property
    def lattice_constant(self) -> float:
        return (4.0 / self.number_density) ** (1.0 / 3.0)

    @property
    def box(self) -> tuple[float, float, float]:
        a = self.lattice_constant
        return (self.cells[0] * a, self.cells[1] * a, self.cells[2] * a)

    @property
    def cutoff(self) -> float:
        return self.cutoff_sigma * self.sigma

    @property
    def tau(self) -> float:
        return tau_in(self.units, self.mass, self.epsilon, self.sigma)

    def template_values(self) -> dict:
        return dict(
            units=self.units, lattice_constant=self.lattice_constant, number_density=self.number_density,
            cells=self.cells, mass=self.mass, cutoff=self.cutoff, epsilon=self.epsilon, sigma=self.sigma,
            shifted=self.shifted, tail_correction=self.tail_correction, skin=self.skin_sigma * self.sigma,
            timestep=self.timestep, thermo_every=self.thermo_every, seed=self.seed,
            melt_steps=self.melt_steps, melt_temperature=self.temperature * self.melt_temperature_factor,
            temperature=self.temperature, thermostat_damp=self.thermostat_damp_steps * self.timestep,
            equilibration_steps=self.equilibration_steps, production_steps=self.production_steps,
        )  # fmt: skip

    @model_validator(mode="after")
    def _box_holds_cutoff(self) -> TransportParams:
        if min(self.box) < 2 * self.cutoff + self.skin_sigma * self.sigma:
            raise ValueError(f"box edge {min(self.box):.4g} < 2 x cutoff + skin: use more cells")
        if self.equilibration_steps % 2:
            raise ValueError("equilibration_steps must be even (its second half is averaged)")
        return self


class NemdParams(BaseModel):
    """Muller-Plathe swap settings shared by both NEMD protocols."""

    swap_every: int = Field(default=40, gt=0, description="steps between swaps (fix ... N)")
    n_slabs: int = Field(default=20, ge=8, description="slabs along z (even)")
    skip_slabs: int = Field(default=1, ge=0, description="slabs next to each swap slab left out of the fits")
    profile_every: int = Field(default=10, gt=0, description="steps between profile samples")
    profile_blocks: int = Field(default=25, ge=8, description="profile output blocks in production")
    steady_fraction: float = Field(default=0.2, ge=0.0, lt=0.8, description="production share discarded")

    def _check_nemd(self, production_steps: int, thermo_every: int) -> None:
        if self.n_slabs % 2:
            raise ValueError("n_slabs must be even (fix viscosity / thermal/conductivity)")
        if self.n_slabs // 2 - 1 - 2 * self.skip_slabs < 3:
            raise ValueError("too few slabs left for the linear fits: more slabs or fewer skipped")
        block = production_steps // self.profile_blocks
        if production_steps % self.profile_blocks or block % self.profile_every or block % thermo_every:
            raise ValueError(
                "production_steps must split into profile_blocks blocks that are multiples of "
                "profile_every and thermo_every"
            )
        if thermo_every % self.swap_every:
            raise ValueError("thermo_every must be a multiple of swap_every (the swap total is output then)")


class GreenKuboParams(BaseModel):
    """Flux sampling and correlation settings shared by both Green-Kubo protocols."""

    sample_every: int = Field(default=2, gt=0, description="Green-Kubo: steps between flux samples")
    correlation_steps: int = Field(default=1000, gt=0, description="Green-Kubo: longest lag in steps")
    gk_blocks: int = Field(default=10, ge=4, description="Green-Kubo: independent blocks for the error")
    noise_level: float = Field(default=2.0, gt=0, description="plateau starts where |C| < this x its error")

    def _check_green_kubo(self, production_steps: int) -> None:
        if self.correlation_steps % self.sample_every:
            raise ValueError("correlation_steps must be a multiple of sample_every")
        if production_steps < 2 * self.gk_blocks * self.correlation_steps:
            raise ValueError(
                "each Green-Kubo block must be at least twice the correlation window: "
                "more production_steps or fewer gk_blocks"
            )


class ShearViscosityParams(TransportParams, NemdParams, GreenKuboParams):
    method: Literal["green_kubo", "muller_plathe"] = "green_kubo"

    # per method; each table holds the method's own default (reported when the request names none)
    DEFAULTS: ClassVar[dict[str, dict[str, Default]]] = {}

    @model_validator(mode="after")
    def _consistent(self) -> ShearViscosityParams:
        if self.method == "green_kubo":
            self._check_green_kubo(self.production_steps)
        else:
            self._check_nemd(self.production_steps, self.thermo_every)
        return self


class ThermalConductivityParams(TransportParams, NemdParams, GreenKuboParams):
    method: Literal["muller_plathe", "green_kubo", "ehex"] = "muller_plathe"

    DEFAULTS: ClassVar[dict[str, dict[str, Default]]] = {}  # per method, filled below the shared tables
    ehex_flux: float = Field(default=0.0, ge=0, description="eHEX: heat added per time to the middle slab")

    @property
    def ehex_rate(self) -> float:
        """Energy per time unit that crosses the box: the heat input F of the hot slab."""
        return self.ehex_flux

    @model_validator(mode="after")
    def _consistent(self) -> ThermalConductivityParams:
        if self.method == "green_kubo":
            self._check_green_kubo(self.production_steps)
        else:
            self._check_nemd(self.production_steps, self.thermo_every)
            if self.method == "ehex" and self.ehex_flux <= 0:
                raise ValueError("eHEX needs a positive ehex_flux")
        return self


# What every transport-style fluid run declares (lammps/shear_viscosity, thermal_conductivity and the
# fluid branch of energy_components): the timestep and the melt/equilibration lengths, in tau.
FLUID_RUN_DEFAULTS: dict[str, Default] = {
    "timestep": Default(0.005, "about {value:g} tau (Allen & Tildesley)", "Allen & Tildesley", shown="{dt}"),
    # in metal units the timestep is rounded down to 1, 2 or 5 x 10^k ps: 10.8 fs -> 10 fs for argon
    "timestep_metal": Default(0.005, "about {value:g} tau (Allen & Tildesley), rounded down; tau = {tau:.3g} ps "
                              "(Rahman 1964 used 10 fs for argon)", "Allen & Tildesley", shown="{dt}",
                              parameter="timestep"),
    "melt_steps": Default(5.0, "{value:g} tau at twice the target T melts the fcc start", shown="{steps}"),
    "equilibration_steps": Default(20.0, "{value:g} tau NVT at the target temperature", shown="{steps}"),
}
# Muller-Plathe / eHEX slab settings (the swap interval and the box are per protocol)
NEMD_DEFAULTS: dict[str, Default] = {
    "n_cells": Default(4, "4 x 4 x 12 fcc cells (N = 768): the z edge 3x longer, as in Muller-Plathe's boxes",
                       shown="{n_atoms}", parameter="n_atoms"),
    "n_slabs": Default(20, "20 slabs along z (Muller-Plathe 1997/1999)", "Muller-Plathe 1997/1999"),
    "profile_blocks": Default(25, "25 profile blocks: error by blocking of the per-block gradients"),
    "steady_fraction": Default(0.2, "first 20 % of production discarded: the profile builds up in ~(L_z/2)^2 rho/eta"),
    "production_steps": Default(500.0, "500 tau: the flux/gradient ratio to a few % (measured block error)",
                                shown="{steps}"),
}
GREEN_KUBO_DEFAULTS: dict[str, Default] = {
    "n_cells": Default(5, "N = 500 (5^3 fcc cells): the Green-Kubo error does not shrink with N, the cost grows",
                       shown="{n_atoms}", parameter="n_atoms"),
    "sample_every": Default(0.01, "0.01 tau between stress samples resolves the fast initial decay (~0.1 tau)",
                            shown="{steps}"),
    "gk_blocks": Default(10, "10 independent blocks for the error (each block 10x longer than the window)"),
}
# A request's box (controls.n_atoms) is rounded to the nearest fcc box, and enlarged so the cutoff fits:
# decisions derived from the request, reported with these reasons.
_VISCOSITY_METHOD = Default("green_kubo", "equilibrium MD, no imposed flow; ask for Muller-Plathe/NEMD for the "
                            "reverse nonequilibrium method", shown="Green-Kubo")
ShearViscosityParams.DEFAULTS.update({
    "green_kubo": {**FLUID_RUN_DEFAULTS, **GREEN_KUBO_DEFAULTS, "method": _VISCOSITY_METHOD,
                   "correlation_steps": Default(5.0, "5 tau of lag: the LJ liquid's stress correlation decays within "
                                                "~2 tau", shown="{steps}"),
                   "production_steps": Default(1000.0, "1000 tau: eta to about 5 % at the triple point (measured "
                                               "block error)", shown="{steps}")},
    "muller_plathe": {**FLUID_RUN_DEFAULTS, **NEMD_DEFAULTS, "method": _VISCOSITY_METHOD,
                      "swap_every": Default(0.2, "0.2 tau between swaps: shear rate ~0.05/tau at the triple point "
                                            "(linear response; Muller-Plathe 1999 saw shear thinning only at higher "
                                            "rates)", "Muller-Plathe 1999", shown="{steps}")},
})
_CONDUCTIVITY_METHOD = Default("muller_plathe", "imposed heat flux, rapidly converging temperature gradient "
                               "(Muller-Plathe 1997); ask for Green-Kubo for the equilibrium heat-flux "
                               "autocorrelation", "Muller-Plathe 1997", shown="Muller-Plathe reverse NEMD")
ThermalConductivityParams.DEFAULTS.update({
    "muller_plathe": {**FLUID_RUN_DEFAULTS, **NEMD_DEFAULTS, "method": _CONDUCTIVITY_METHOD,
                      "swap_every": Default(0.3, "0.3 tau between swaps: the slab temperatures span ~25 % of T (a "
                                            "clear gradient, still linear; near the triple point the cold slab stays "
                                            "liquid for the run)", shown="{steps}")},
    "ehex": {**FLUID_RUN_DEFAULTS, **NEMD_DEFAULTS, "method": _CONDUCTIVITY_METHOD,
             "swap_every": Default(None, "eHEX acts every step", shown="{steps}"),
             "ehex_flux": Default(0.12, "heat flux 0.12 eps/(sigma^2 tau) per face (F = 2 A J): at the triple point "
                                  "(kappa* ~ 7) a gradient of ~0.02 eps/kB per sigma, about the one the Muller-Plathe "
                                  "default imposes", shown="{flux:.4g} energy/time")},
    "green_kubo": {**FLUID_RUN_DEFAULTS, **GREEN_KUBO_DEFAULTS, "method": _CONDUCTIVITY_METHOD,
                   "correlation_steps": Default(5.0, "5 tau of lag: the LJ liquid's heat-flux correlation decays into "
                                                "its noise within ~0.5 tau", shown="{steps}"),
                   "production_steps": Default(1000.0, "1000 tau: kappa* to ~2 % at the triple point (measured 6.95 "
                                               "+/- 0.16 at N = 500; 4 % after 200 tau at N = 256)", shown="{steps}")},
})
NEAREST_BOX = "nearest fcc box of n x n x {aspect}n cells"
BOX_FITS_CUTOFF = "box edge must exceed 2 x cutoff + skin"


def fluid_basis(spec: TaskSpec, name: str, record: DefaultsLog) -> dict:
    """Particle, state point, potential and timestep of a transport run (same rules and defaults
    as lammps/fluid_md), as a dict of TransportParams fields."""
    system = spec.system
    if system is None or system.kind not in FLUID_KINDS:
        raise RequestError(f"{name} needs an LJ fluid or a monatomic fluid")
    units = fluid_units(system, spec.units_style, record)
    pot = spec.potential or PotentialSpec(family="lj")
    if pot.family not in (None, "lj"):
        raise RequestError(f"{name} uses a Lennard-Jones potential, not {pot.family}")
    element, epsilon_k = None, None
    if units == "lj":
        mass, epsilon, sigma = 1.0, 1.0, 1.0
        record("mass, epsilon, sigma", 1, "reduced LJ units define them as 1")
        if pot.lj_epsilon is not None and norm_unit(pot.lj_epsilon.unit) == "k":
            epsilon_k = pot.lj_epsilon.value
    else:
        element, mass, epsilon, sigma = monatomic_particle(system, pot, record, "Rahman, Phys. Rev. 136, A405 (1964)")
    cond = spec.conditions
    if cond.temperature is None:
        raise RequestError(f"{name} needs a temperature")
    temperature, number_density = fixed_density_state(cond, units, mass, sigma, epsilon_k, name, record)
    cutoff_sigma = lj_cutoff_sigma(
        pot,
        units,
        sigma,
        record,
        "usual LJ truncation; the reference transport data "
        "(Ferrario et al. 1991, Muller-Plathe 1997/1999) use 2.5 sigma",
    )
    if not pot.tail_correction:
        record("tail_correction", "no", "not requested (no effect on forces, hence on transport)")
    if not pot.shifted:
        record("shifted", "no", "not requested: truncated, unshifted LJ")
    tau = tau_in(units, mass, epsilon, sigma)
    ctrl = spec.controls
    if ctrl.timestep is not None:
        timestep = timestep_in(ctrl.timestep, units)
    else:
        key = "timestep" if units == "lj" else "timestep_metal"
        timestep = nice_floor(record.default(key).value * tau)
        record.report(key, dt=timestep, tau=tau)
    if ctrl.ensemble == "npt":
        raise RequestError(f"{name} runs at fixed density (NVE production), not NPT")
    if ctrl.ensemble == "nvt":
        record(
            "ensemble", "nve", "NVT requested, but a thermostat perturbs transport: NVT equilibration, NVE production"
        )
    seed = velocity_seed(ctrl.seed, record)
    phase_solid = system.phase == "solid"
    return dict(
        units=units,
        element=element,
        mass=mass,
        epsilon=epsilon,
        sigma=sigma,
        temperature=temperature,
        number_density=number_density,
        cutoff_sigma=cutoff_sigma,
        tail_correction=pot.tail_correction,
        shifted=pot.shifted,
        timestep=timestep,
        seed=seed,
        _tau=tau,
        _solid=phase_solid,
    )


def nice_floor(value: float) -> float:
    """The largest 1, 2 or 5 x 10^k not above value (a timestep people recognise)."""
    power = 10.0 ** math.floor(math.log10(value))
    return max(m * power for m in (1, 2, 5) if m * power <= value * (1 + 1e-9))


def steps_for(tau_time: float, tau: float, timestep: float, multiple: int = 1) -> int:
    """Steps covering `tau_time` LJ time units, rounded up to a multiple."""
    steps = max(1, math.ceil(tau_time * tau / timestep - 1e-9))
    return multiple * math.ceil(steps / multiple)


def box_cells(spec: TaskSpec, basis: dict, aspect: int, record: DefaultsLog) -> tuple[int, int, int]:
    """fcc cells (n, n, aspect n): from controls.n_atoms or the declared n_cells, at least 2 cutoffs + skin."""
    a = (4.0 / basis["number_density"]) ** (1.0 / 3.0)
    min_cells = math.ceil((2 * basis["cutoff_sigma"] + SKIN_SIGMA) * basis["sigma"] / a - 1e-9)
    n_atoms = spec.controls.n_atoms
    if n_atoms is not None:
        if n_atoms < 4 * aspect:
            raise RequestError(f"need at least {4 * aspect} atoms")
        n = max(1, round((n_atoms / (4 * aspect)) ** (1 / 3)))
        if 4 * aspect * n**3 != n_atoms:
            record("n_atoms", 4 * aspect * n**3, NEAREST_BOX.format(aspect=aspect))
    else:
        n = record.default("n_cells").value
        record.report("n_cells", n_atoms=4 * aspect * n**3)
    if n < min_cells:
        n = min_cells
        record("n_atoms", 4 * aspect * n**3, BOX_FITS_CUTOFF)
    return (n, n, aspect * n)


def run_lengths(spec: TaskSpec, basis: dict, multiple: int, record: DefaultsLog) -> dict:
    """Melt, equilibration and production steps (production a multiple of `multiple`); the defaults
    (in tau) are the declared melt_steps, equilibration_steps and production_steps."""
    tau, dt = basis["_tau"], basis["timestep"]
    ctrl = spec.controls
    if basis["_solid"]:
        melt = 0
        record("melt_steps", 0, "a solid was asked for: the fcc lattice is kept")
    else:
        melt = steps_for(record.default("melt_steps").value, tau, dt)
        record.report("melt_steps", steps=melt)
    if ctrl.equilibration_steps is not None:
        equil = max(2, ctrl.equilibration_steps + ctrl.equilibration_steps % 2)
    else:
        equil = steps_for(record.default("equilibration_steps").value, tau, dt, 2)
        record.report("equilibration_steps", steps=equil)
    if ctrl.production_steps is not None:
        production = multiple * max(1, math.ceil(ctrl.production_steps / multiple))
        if production != ctrl.production_steps:
            record("production_steps", production, f"rounded up to a multiple of {multiple} (sampling blocks)")
    else:
        production = steps_for(record.default("production_steps").value, tau, dt, multiple)
        record.report("production_steps", steps=production)
    return dict(melt_steps=melt, equilibration_steps=equil, production_steps=production)


def _check_properties(spec: TaskSpec, prop_name: str, units: str, protocol: str) -> None:
    names = {p.name for p in spec.properties}
    if names != {prop_name}:
        raise RequestError(f"{protocol} computes {prop_name} only")
    for prop in spec.properties:
        if prop.at != "average":
            raise RequestError(f"{prop_name} is a time integral/average; at={prop.at!r} is not possible")
        output_unit(prop_name, units, prop.unit)


def _applies(spec: TaskSpec, prop_name: str) -> bool:
    return is_lj_fluid_task(spec) and bool(spec.properties) and {p.name for p in spec.properties} == {prop_name}


def _nemd_settings(basis: dict, record: DefaultsLog) -> dict:
    """Slab settings of a Muller-Plathe or eHEX run: the declared swap_every (in tau; None: every
    step), n_slabs, profile_blocks and steady_fraction."""
    tau, dt = basis["_tau"], basis["timestep"]
    swap = record.default("swap_every").value
    swap_every = steps_for(swap, tau, dt) if swap is not None else 1
    record.report("swap_every", steps=swap_every)
    n_slabs, blocks, steady = (record.report(name) for name in ("n_slabs", "profile_blocks", "steady_fraction"))
    thermo_every = swap_every * max(1, round(100 / swap_every))
    profile_every = math.gcd(10, thermo_every)
    multiple = blocks * thermo_every * profile_every // math.gcd(thermo_every, profile_every)
    return dict(
        swap_every=swap_every,
        n_slabs=n_slabs,
        profile_blocks=blocks,
        steady_fraction=steady,
        thermo_every=thermo_every,
        profile_every=profile_every,
        _multiple=multiple,
    )


def _green_kubo_settings(spec: TaskSpec, basis: dict, record: DefaultsLog) -> tuple[dict, dict]:
    """Sampling interval, correlation window, blocks and run lengths of a Green-Kubo run (the declared
    sample_every and correlation_steps in tau, gk_blocks, production_steps)."""
    tau, dt = basis["_tau"], basis["timestep"]
    sample_every = steps_for(record.default("sample_every").value, tau, dt)
    record.report("sample_every", steps=sample_every)
    correlation_steps = steps_for(record.default("correlation_steps").value, tau, dt, sample_every)
    record.report("correlation_steps", steps=correlation_steps)
    blocks = record.report("gk_blocks")
    extra = dict(sample_every=sample_every, correlation_steps=correlation_steps, gk_blocks=blocks, thermo_every=100)
    multiple = blocks * sample_every * 100 // math.gcd(sample_every, 100)
    lengths = run_lengths(spec, basis, multiple, record)
    if lengths["production_steps"] < 2 * blocks * correlation_steps:
        raise RequestError(
            f"a Green-Kubo run needs at least {2 * blocks * correlation_steps} production steps "
            f"({blocks} blocks of twice the {correlation_steps}-step correlation window)"
        )
    return extra, lengths


def _public(values: dict) -> dict:
    return {k: v for k, v in values.items() if not k.startswith("_")}


def fluid_title(p: TransportParams) -> str:
    """Title line of a fluid run's input: the fluid, N, T and the number density."""
    what = f"{p.element} fluid" if p.element else "LJ fluid"
    return f"{what}, N = {p.n_atoms}, T = {p.temperature:g}, n = {p.number_density:.6g}"


def nve_run_summary(p: TransportParams, temperature: float) -> str:
    """The run as a result's method text states it (temperature: the NVE production mean)."""
    return (
        f"N = {p.n_atoms}, T = {temperature:.4g} (NVE mean), LJ cutoff {p.cutoff_sigma:g} sigma, "
        f"dt = {p.timestep:g}, {p.production_steps} production steps"
    )


def flux_over_gradient(mp: dict, p: TransportParams) -> tuple[float, float]:
    """(coefficient, standard error) = |J| / gradient of a slab NEMD run, J = rate / (2 Lx Ly): with
    periodic boundaries the flux leaves the source slab both ways."""
    area = p.box[0] * p.box[1]
    flux, flux_se = mp["rate"] / (2 * area), mp["rate_se"] / (2 * area)
    value = abs(flux) / mp["gradient"]
    se = value * math.hypot(flux_se / abs(flux), mp["gradient_se"] / mp["gradient"])
    return value, se


class FluidTransportProtocol(Protocol):
    """What both transport protocols share: they answer one coefficient (`quantity`) of an LJ or
    monatomic fluid, resolve the fluid like lammps/fluid_md, and gate the NVE production run."""

    engine = "lammps"
    quantity: ClassVar[str]

    def applies_to(self, spec: TaskSpec) -> bool:
        return _applies(spec, self.quantity)

    def _fluid(self, spec: TaskSpec, record: DefaultsLog) -> dict:
        """The fluid basis after the property checks (its defaults from FLUID_RUN_DEFAULTS)."""
        record.declared = FLUID_RUN_DEFAULTS
        basis = fluid_basis(spec, self.name, record)
        _check_properties(spec, self.quantity, basis["units"], self.name)
        return basis

    def _production(self, params: BaseModel, job_dirs: dict[str, Path]) -> tuple:
        """(params, job folder, gated production thermo, its mean temperature)."""
        p = as_params(self.Params, params)
        job_dir = Path(job_dirs["md"])
        thermo = production_thermo(job_dir, p)
        return p, job_dir, thermo, float(np.mean(thermo["Temp"]))

    def _result(
        self, spec: TaskSpec, p: TransportParams, job_dir: Path, value: float, se: float, how: str,
        temperature: float, data_file: str,
    ) -> Result:  # fmt: skip
        """The coefficient (base unit) as a Result in the requested unit; the method text ends with the run."""
        factor, label = output_unit(self.quantity, p.units, spec.properties[0].unit if spec.properties else None)
        return Result(
            quantity=self.quantity,
            value=value * factor,
            unit=label,
            uncertainty=abs(se * factor),
            job="md",
            method=f"{how}; {nve_run_summary(p, temperature)}",
            log=str(job_dir / "log.lammps"),
            data_file=data_file,
        )


# ---------------------------------------------------------------------------------------------
# Shear viscosity
# ---------------------------------------------------------------------------------------------


@register
class ShearViscosity(FluidTransportProtocol):
    name = "lammps/shear_viscosity"
    quantity = VISCOSITY
    properties = frozenset({VISCOSITY})
    Params = ShearViscosityParams
    description = (
        "Shear viscosity of an LJ or monatomic fluid: Green-Kubo integral of the off-diagonal stress "
        "autocorrelation (NVE, plateau window, block errors) or Muller-Plathe reverse NEMD (fix "
        "viscosity, velocity-profile fits) when the request names it"
    )

    def choose(self, spec: TaskSpec, record: DefaultsLog) -> ShearViscosityParams:
        basis = self._fluid(spec, record)
        if basis["_solid"]:
            raise RequestError("a solid has no shear viscosity (its stress does not relax)")
        method = requested_method(spec, VISCOSITY)
        if method == "ehex":
            raise RequestError("eHEX imposes a heat flux: for viscosity use Green-Kubo or Muller-Plathe")
        record.declared = ShearViscosityParams.DEFAULTS[method or _VISCOSITY_METHOD.value]
        method = record.take("method", method)
        if method == "green_kubo":
            cells = box_cells(spec, basis, 1, record)
            extra, lengths = _green_kubo_settings(spec, basis, record)
        else:
            cells = box_cells(spec, basis, 3, record)
            extra = _nemd_settings(basis, record)
            lengths = run_lengths(spec, basis, extra["_multiple"], record)
        params = ShearViscosityParams(**_public(basis), **_public(extra), **lengths, cells=cells, method=method)
        return params

    def jobs(self, params: BaseModel) -> list[Job]:
        p = as_params(ShearViscosityParams, params)
        text = render(
            "shear_viscosity.lmp.j2", title=fluid_title(p), method=p.method, sample_every=p.sample_every,
            n_slabs=p.n_slabs, swap_every=p.swap_every, profile_every=p.profile_every,
            block_steps=p.production_steps // p.profile_blocks, **p.template_values(),
        )  # fmt: skip
        return [md_job(self.name, p, {"in.lammps": text}, p.time_limit_s)]

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p, job_dir, thermo, temperature = self._production(params, job_dirs)
        volume = float(np.mean(thermo["Volume"]))
        if p.method == "green_kubo":
            stress = read_time_columns(job_dir / "pressure_tensor.dat", 3)
            if stress.shape[0] < p.production_steps // p.sample_every:
                raise ReadError("pressure_tensor.dat is shorter than the production run")
            prefactor = volume / temperature if p.units == "lj" else volume / temperature * GK_METAL_PA_S * 1e3
            gk = green_kubo(
                stress[:, 1:],
                p.sample_every * p.timestep,
                prefactor,
                p.correlation_steps // p.sample_every,
                p.gk_blocks,
                p.noise_level,
            )
            write_green_kubo(job_dir, gk, "eta(t)")
            value, se, data_file = gk["value"], gk["se"], gk["table"]
            lo, hi = gk["window"]
            how = (
                f"Green-Kubo: V/(kB T) x integral of the xy/xz/yz stress autocorrelation (tidynamics, "
                f"all time origins, {stress.shape[0]} samples every {p.sample_every * p.timestep:g}); plateau "
                f"window {lo:.3g}-{hi:.3g} (starts where |C| < {p.noise_level:g} x its error), mean of the "
                f"running integral there; standard error from {p.gk_blocks} independent blocks"
                + (
                    f"; NOTE the running integral drifts by {gk['drift']:.2g} across the window"
                    if gk["drifting"]
                    else ""
                )
            )
        else:
            mp = muller_plathe(job_dir / "velocity_profile.dat", "vx", thermo, p)
            if mp["rate"] * mp["slope_lower"] > 0 or mp["rate"] * mp["slope_upper"] < 0:
                raise CalculationFailed(
                    "the velocity profile does not follow the imposed momentum flux "
                    "(wrong-sign gradient): no steady shear flow"
                )
            value, se = flux_over_gradient(mp, p)
            if p.units == "metal":
                value, se = value * MP_METAL_PA_S * 1e3, se * MP_METAL_PA_S * 1e3
            data_file = mp["table"]
            how = (
                f"Muller-Plathe reverse NEMD (fix viscosity every {p.swap_every} steps, {p.n_slabs} slabs): "
                f"eta = j / |dv_x/dz|, momentum flux j = dP/dt / (2 Lx Ly) from the cumulative swaps, "
                f"shear rate {mp['gradient']:.3g} +/- {mp['gradient_se']:.2g} from linear fits in both halves "
                f"(lower {mp['slope_lower']:.4g}, upper {mp['slope_upper']:.4g}) over production steps "
                f"{mp['start_step']}-{p.production_steps}; errors by blocking of {mp['n_blocks']} profile blocks"
            )
        return [self._result(spec, p, job_dir, value, se, how, temperature, data_file)]


# ---------------------------------------------------------------------------------------------
# Thermal conductivity
# ---------------------------------------------------------------------------------------------


@register
class ThermalConductivity(FluidTransportProtocol):
    name = "lammps/thermal_conductivity"
    quantity = CONDUCTIVITY
    properties = frozenset({CONDUCTIVITY})
    Params = ThermalConductivityParams
    description = (
        "Thermal conductivity of an LJ or monatomic fluid by Muller-Plathe reverse NEMD (fix "
        "thermal/conductivity, NVE): imposed heat flux over the temperature gradient of both halves; "
        "or by Green-Kubo (heat-flux autocorrelation, compute heat/flux, NVE) or eHEX (fix ehex, NVE) "
        "when the request names it"
    )

    def choose(self, spec: TaskSpec, record: DefaultsLog) -> ThermalConductivityParams:
        basis = self._fluid(spec, record)
        method = requested_method(spec, CONDUCTIVITY)
        record.declared = ThermalConductivityParams.DEFAULTS[method or _CONDUCTIVITY_METHOD.value]
        method = record.take("method", method)
        extra_ehex: dict = {}
        if method == "green_kubo":
            if basis["_solid"]:
                raise RequestError(
                    "Green-Kubo thermal conductivity of a solid needs long phonon correlation windows; "
                    "this protocol is for fluids (use Muller-Plathe)"
                )
            cells = box_cells(spec, basis, 1, record)
            extra, lengths = _green_kubo_settings(spec, basis, record)
        elif method == "ehex":
            cells = box_cells(spec, basis, 3, record)
            extra = _nemd_settings(basis, record)  # heat is exchanged every step: swap_every 1
            lengths = run_lengths(spec, basis, extra["_multiple"], record)
            a = (4.0 / basis["number_density"]) ** (1.0 / 3.0)
            area = (cells[0] * a) * (cells[1] * a)
            flux_unit = basis["epsilon"] / (basis["sigma"] ** 2 * basis["_tau"])  # eps/(sigma^2 tau)
            extra_ehex["ehex_flux"] = 2 * area * record.default("ehex_flux").value * flux_unit
            record.report("ehex_flux", flux=extra_ehex["ehex_flux"])
        else:
            cells = box_cells(spec, basis, 3, record)
            extra = _nemd_settings(basis, record)
            lengths = run_lengths(spec, basis, extra["_multiple"], record)
        params = ThermalConductivityParams(
            **_public(basis), **_public(extra), **lengths, **extra_ehex, cells=cells, method=method
        )
        return params

    def jobs(self, params: BaseModel) -> list[Job]:
        p = as_params(ThermalConductivityParams, params)
        text = render(
            "thermal_conductivity.lmp.j2", title=fluid_title(p), method=p.method, sample_every=p.sample_every,
            ehex_flux=p.ehex_flux, box_z=p.box[2],
            n_slabs=p.n_slabs, swap_every=p.swap_every, profile_every=p.profile_every,
            block_steps=p.production_steps // p.profile_blocks, **p.template_values(),
        )  # fmt: skip
        return [md_job(self.name, p, {"in.lammps": text}, p.time_limit_s)]

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p, job_dir, thermo, temperature = self._production(params, job_dirs)
        if p.method == "green_kubo":
            return [self._green_kubo(p, job_dir, thermo, spec)]
        known_rate = p.ehex_rate if p.method == "ehex" else None
        mp = muller_plathe(job_dir / "temperature_profile.dat", "temp", thermo, p, known_rate=known_rate)
        if mp["rate"] * mp["slope_lower"] < 0 or mp["rate"] * mp["slope_upper"] > 0:
            raise CalculationFailed(
                "the temperature profile does not follow the imposed heat flux (hot middle, cold bottom expected)"
            )
        spread = mp["profile_max"] - mp["profile_min"]
        if spread > 0.5 * temperature:
            raise CalculationFailed(
                f"temperature varies by {spread:.3g} across the box (> 50 % of T = {temperature:.3g}): far "
                f"from linear response; swap less often (larger swap_every)"
            )
        value, se = flux_over_gradient(mp, p)
        if p.units == "metal":
            value, se = value * KAPPA_METAL_W_MK, se * KAPPA_METAL_W_MK
        if p.method == "ehex":
            source = (
                f"eHEX NEMD (fix ehex: +/-{p.ehex_flux:.4g} energy/time into the middle / out of the bottom "
                f"slab, {p.n_slabs} slabs): kappa = J / |dT/dz|, heat flux J = F / (2 Lx Ly) with the imposed F"
            )
        else:
            source = (
                f"Muller-Plathe reverse NEMD (fix thermal/conductivity every {p.swap_every} steps, {p.n_slabs} "
                f"slabs): kappa = J / |dT/dz|, heat flux J = dE/dt / (2 Lx Ly) from the cumulative swaps"
            )
        how = (
            f"{source}, gradient "
            f"{mp['gradient']:.4g} +/- {mp['gradient_se']:.2g} from linear fits in both halves (lower "
            f"{mp['slope_lower']:.4g}, upper {mp['slope_upper']:.4g}; profile {mp['profile_min']:.4g}-"
            f"{mp['profile_max']:.4g}) over production steps {mp['start_step']}-{p.production_steps}; errors by "
            f"blocking of {mp['n_blocks']} profile blocks"
        )
        return [self._result(spec, p, job_dir, value, se, how, temperature, mp["table"])]

    def _green_kubo(self, p: ThermalConductivityParams, job_dir: Path, thermo: dict, spec: TaskSpec) -> Result:
        """kappa = 1/(V kB T^2) int <(JV)(0) (JV)(t)> dt from the heat_flux.dat columns (J V per axis)."""
        temperature = float(np.mean(thermo["Temp"]))
        volume = float(np.mean(thermo["Volume"]))
        flux = read_time_columns(job_dir / "heat_flux.dat", 3)
        if flux.shape[0] < p.production_steps // p.sample_every:
            raise ReadError("heat_flux.dat is shorter than the production run")
        # the temperature is the NVE mean: kappa's 1/T^2 uses the state actually simulated
        if p.units == "lj":
            prefactor = 1.0 / (volume * temperature**2)
        else:
            prefactor = KAPPA_METAL_W_MK / (volume * K_B_EV * temperature**2)
        gk = green_kubo(
            flux[:, 1:], p.sample_every * p.timestep, prefactor, p.correlation_steps // p.sample_every,
            p.gk_blocks, p.noise_level,
        )  # fmt: skip
        write_green_kubo(job_dir, gk, "kappa(t)")
        lo, hi = gk["window"]
        how = (
            f"Green-Kubo: 1/(V kB T^2) x integral of the heat-flux autocorrelation (compute heat/flux with "
            f"ke/atom, pe/atom and the virial of centroid/stress/atom; x, y, z averaged; tidynamics, all time "
            f"origins, {flux.shape[0]} samples every {p.sample_every * p.timestep:g}); plateau window "
            f"{lo:.3g}-{hi:.3g} (starts where |C| < {p.noise_level:g} x its error), mean of the running "
            f"integral there; standard error from {p.gk_blocks} independent blocks"
            + (f"; NOTE the running integral drifts by {gk['drift']:.2g} across the window" if gk["drifting"] else "")
        )
        return self._result(spec, p, job_dir, gk["value"], gk["se"], how, temperature, gk["table"])


# ---------------------------------------------------------------------------------------------
# Analysis helpers (module level so tests can feed them synthetic data)
# ---------------------------------------------------------------------------------------------


def production_thermo(job_dir: Path, p: TransportParams) -> dict[str, np.ndarray]:
    """The production run's thermo columns after the run-level gates (finished, finite, no atom
    lost, full length, temperature on target)."""
    thermo = finished_output(job_dir).last_run()  # refused when any thermo value is NaN or inf
    check_columns(thermo, ("Step", "Temp", "KinEng", "TotEng", "Volume", "Atoms"))
    check_full_production(thermo, p.n_atoms, p.production_steps)
    # NVE: the total energy must be conserved (the swaps conserve it exactly for equal masses)
    # (relative to the kinetic energy: the total energy of a liquid can lie near zero)
    energy = thermo["TotEng"]
    drift = abs(energy[-1] - energy[0]) / float(np.mean(thermo["KinEng"]))
    if drift > 0.01:
        raise CalculationFailed(
            f"total energy drifted by {100 * drift:.2g} % of the kinetic energy in NVE: timestep too large"
        )
    check_temperature(thermo["Temp"], p.temperature, p.temperature_tolerance)
    return thermo


def read_time_columns(path: Path, n_columns: int) -> np.ndarray:
    """A `fix ave/time` file: rows of (step, values...)."""
    if not path.is_file():
        raise ReadError(f"{path.name} was not written")
    try:
        data = np.loadtxt(path, comments="#", ndmin=2)
    except ValueError as exc:
        raise ReadError(f"cannot read {path.name}: {exc}") from None
    if data.shape[1] != n_columns + 1:
        raise ReadError(f"{path.name}: expected {n_columns + 1} columns, found {data.shape[1]}")
    if not np.all(np.isfinite(data)):
        raise CalculationFailed(f"NaN or infinite values in {path.name}")
    return data


def autocorrelation(series: np.ndarray, max_lag: int) -> np.ndarray:
    """<x(0) x(t)> averaged over all time origins and over the columns, lags 0..max_lag."""
    import tidynamics

    x = np.asarray(series, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    return tidynamics.acf(x)[: max_lag + 1] / x.shape[1]


def running_integral(c: np.ndarray, dt: float) -> np.ndarray:
    """Trapezoidal running integral int_0^t c dt', same length as c."""
    return np.concatenate([[0.0], np.cumsum(0.5 * (c[1:] + c[:-1])) * dt])


def green_kubo(
    series: np.ndarray, dt: float, prefactor: float, max_lag: int, n_blocks: int, noise_level: float = 2.0
) -> dict:
    """Green-Kubo coefficient prefactor x int_0^inf <J(0) J(t)> dt from flux columns (averaged).

    The autocorrelation C(t) uses the whole series; its standard error SE_C(t) comes from
    `n_blocks` consecutive blocks. The plateau starts at t1, the first lag where |C| falls below
    noise_level x SE_C (beyond it the integrand is indistinguishable from zero), and spans
    [t1, min(2 t1, t_max)]; the coefficient is the mean running integral there, its error the
    spread of the blocks' values over the same window. Fails when C never decays into its noise
    within the first half of the window (a solid or glass, or a window too short)."""
    x = np.asarray(series, dtype=float)
    n = x.shape[0]
    block = n // n_blocks
    if block < 2 * max_lag:
        raise CalculationFailed(f"{n} samples are too few for {n_blocks} blocks of twice the {max_lag}-lag window")
    c = autocorrelation(x, max_lag)
    blocks_c = np.array([autocorrelation(x[b * block : (b + 1) * block], max_lag) for b in range(n_blocks)])
    se_c = blocks_c.std(axis=0, ddof=1) / math.sqrt(n_blocks)
    t = np.arange(max_lag + 1) * dt
    integral = prefactor * running_integral(c, dt)
    quiet = np.nonzero(np.abs(c[1:]) < noise_level * se_c[1:])[0]
    if quiet.size == 0 or quiet[0] + 1 > max_lag // 2:
        raise CalculationFailed(
            f"the flux autocorrelation has not decayed into its noise within {t[max_lag // 2]:.3g} (half the "
            f"correlation window): no Green-Kubo plateau (a solid or glass, or a window too short)"
        )
    i1 = int(quiet[0]) + 1
    i2 = min(2 * i1, max_lag)
    window = slice(i1, i2 + 1)
    value = float(np.mean(integral[window]))
    per_block = np.array([np.mean(prefactor * running_integral(cb, dt)[window]) for cb in blocks_c])
    se = float(per_block.std(ddof=1) / math.sqrt(n_blocks))
    if value <= 0:
        raise CalculationFailed(f"Green-Kubo integral is not positive ({value:.3g}): no transport signal")
    drift = float(integral[i2] - integral[i1])
    blocks_integral = np.array([prefactor * running_integral(cb, dt) for cb in blocks_c])
    se_integral = blocks_integral.std(axis=0, ddof=1) / math.sqrt(n_blocks)
    return {
        "value": value,
        "se": se,
        "window": (float(t[i1]), float(t[i2])),
        "t": t,
        "acf": c,
        "acf_se": se_c,
        "integral": integral,
        "integral_se": se_integral,
        "drift": drift,
        "drifting": abs(drift) > 3 * max(se, 1e-300),
        "per_block": per_block,
    }


def write_green_kubo(job_dir: Path, gk: dict, label: str) -> None:
    """Table (t, C, SE_C, running integral, its SE) and a plot of the running integral."""
    table = job_dir / "green_kubo.csv"
    np.savetxt(
        table,
        np.column_stack([gk["t"], gk["acf"], gk["acf_se"], gk["integral"], gk["integral_se"]]),
        delimiter=",",
        header="t,acf,acf_se,running_integral,running_integral_se",
    )
    gk["table"] = str(table)
    plot(job_dir / "green_kubo.png", gk["t"], gk["integral"], "t", label, span=gk["window"])


def read_chunk_blocks(path: Path, column: str) -> tuple[np.ndarray, np.ndarray]:
    """A `fix ave/chunk` file: (block end steps, values of `column` per block and chunk)."""
    if not path.is_file():
        raise ReadError(f"{path.name} was not written")
    lines = path.read_text().splitlines()
    names: list[str] = []
    for line in lines:
        if line.startswith("#") and "Chunk" in line:
            names = line.lstrip("#").split()
    if column not in names:
        raise ReadError(f"{path.name} has no {column!r} column (columns: {', '.join(names) or 'none'})")
    col = names.index(column)
    rows = [ln for ln in lines if ln.strip() and not ln.startswith("#")]
    steps, values = [], []
    i = 0
    while i < len(rows):
        head = rows[i].split()
        n_chunks = int(head[1])
        body = rows[i + 1 : i + 1 + n_chunks]
        if len(body) != n_chunks:
            raise ReadError(f"{path.name}: truncated block at step {head[0]}")
        steps.append(int(head[0]))
        values.append([float(ln.split()[col]) for ln in body])
        i += 1 + n_chunks
    if not steps:
        raise ReadError(f"{path.name} holds no profile")
    return np.array(steps), np.array(values)


def half_slopes(profile: np.ndarray, box_z: float, skip: int) -> tuple[float, float]:
    """Slopes of linear fits to a slab profile in the lower half (between the bottom swap slab and
    the middle one) and the upper half, leaving out the swap slabs and `skip` slabs next to each."""
    n = profile.size
    z = (np.arange(n) + 0.5) * box_z / n
    lower = np.arange(1 + skip, n // 2 - skip)
    upper = np.arange(n // 2 + 1 + skip, n - skip)
    return linear_fit(z[lower], profile[lower])[0], linear_fit(z[upper], profile[upper])[0]


def muller_plathe(
    path: Path,
    column: str,
    thermo: dict[str, np.ndarray],
    p: ShearViscosityParams | ThermalConductivityParams,
    known_rate: float | None = None,
) -> dict:
    """Steady-state transfer rate (from the cumulative f_swap, or `known_rate` when the flux is
    imposed exactly, as by eHEX) and profile gradient with errors.

    Blocks before the steady state are dropped: the first `steady_fraction` of production, or
    more if equilibration detection (Chodera 2016) on the block gradients says so. The gradient is
    the mean of |lower slope| and |upper slope| of the block-averaged profile; errors come from
    Flyvbjerg-Petersen blocking of the per-block gradients and transfer rates."""
    steps, values = read_chunk_blocks(path, column)
    block_steps = p.production_steps // p.profile_blocks
    if steps.size != p.profile_blocks or steps[-1] != p.production_steps:
        raise ReadError(f"{path.name}: expected {p.profile_blocks} profile blocks to step {p.production_steps}")
    if known_rate is None and "f_swap" not in thermo:
        raise ReadError("thermo output lacks f_swap (the cumulative swap transfer)")
    box_z = p.box[2]
    slopes = np.array([half_slopes(v, box_z, p.skip_slabs) for v in values])
    gradients = 0.5 * (np.abs(slopes[:, 0]) + np.abs(slopes[:, 1]))
    first = math.ceil(p.steady_fraction * p.profile_blocks)
    first += detect_equilibration(gradients[first:]) if gradients.size - first >= 4 else 0
    if p.profile_blocks - first < 4:
        raise CalculationFailed("fewer than 4 steady-state profile blocks: run longer")
    kept = slice(first, None)
    start_step = int(first * block_steps)
    if known_rate is not None:
        rate, rate_se = known_rate, 0.0
    else:
        # transfer rate per block from the cumulative swap total at the block edges
        cumulative = dict(zip(thermo["Step"].astype(int), thermo["f_swap"], strict=False))
        edges = [first * block_steps + k * block_steps for k in range(p.profile_blocks - first + 1)]
        if any(e not in cumulative for e in edges):
            raise ReadError("f_swap is not in the thermo output at the profile block edges")
        transfers = np.diff([cumulative[e] for e in edges]) / (block_steps * p.timestep)
        rate = (cumulative[edges[-1]] - cumulative[edges[0]]) / ((edges[-1] - edges[0]) * p.timestep)
        rate_se = block_average(transfers)[1] if transfers.size >= 2 else 0.0
    profile = values[kept].mean(axis=0)
    lower, upper = half_slopes(profile, box_z, p.skip_slabs)
    gradient = 0.5 * (abs(lower) + abs(upper))
    if gradient <= 0 or lower * upper >= 0:
        raise CalculationFailed("no linear profile with opposite slopes in the two halves: no steady flux")
    gradient_se = block_average(gradients[kept])[1]
    table = Path(path).with_suffix(".csv")
    z = (np.arange(values.shape[1]) + 0.5) * box_z / values.shape[1]
    np.savetxt(
        table,
        np.column_stack([z, profile, values[kept].std(axis=0, ddof=1)]),
        delimiter=",",
        header=f"z,{column},{column}_block_std",
    )
    plot(Path(path).with_suffix(".png"), z, profile, "z", column)
    return {
        "rate": float(rate),
        "rate_se": float(rate_se),
        "gradient": float(gradient),
        "gradient_se": float(gradient_se),
        "slope_lower": float(lower),
        "slope_upper": float(upper),
        "start_step": start_step,
        "n_blocks": int(p.profile_blocks - first),
        "table": str(table),
        "profile_min": float(profile.min()),
        "profile_max": float(profile.max()),
    }
