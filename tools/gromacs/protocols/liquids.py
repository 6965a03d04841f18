"""Protocol gromacs/liquid_md: a pure liquid (water models, OPLS-AA methanol/ethanol, LJ argon)
through the standard GROMACS chain EM -> (melt) -> NVT -> NPT -> production.

Each stage is its own job; a stage reads the previous stage's structure and checkpoint
(`stage_in`: <stage>.gro, <stage>.cpt), so every file a job touches is in its own folder. With a
pressure (default 1 bar) the production run is NPT (C-rescale barostat, Bernetti & Bussi 2020);
with a density and no pressure the box is built at that density and all stages are NVT.
Analysis of the production run, chosen by the request:
- thermodynamic averages (density, volume, T, P, energies) from the .edr (pyedr), after the
  equilibration detected by simagent.stats (Chodera 2016), errors by Flyvbjerg-Petersen blocking;
- energy components (bond, angle, dihedral, LJ, Coulomb, dispersion correction...) per molecule;
- g(r) of one site per molecule (water: O-O) and the coordination number;
- self-diffusion from the Einstein MSD of that site (gmx trjconv -pbc nojump, MDAnalysis
  FFT MSD via tidynamics, linear fit in a window of lag times), without a finite-size correction;
- the molecular radius of gyration (mass weighted, averaged over molecules and frames).
grompp notes and accepted warnings are listed in every Result's method text.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, Field, model_validator

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, InputError, ReadError, RequestError, set_point_missed
from simagent.models import (
    Conditions,
    Job,
    PotentialSpec,
    Quantity,
    Result,
    SimulationControls,
    SystemSpec,
    TaskSpec,
)
from simagent.protocols import Protocol, register
from simagent.stats import block_average, detect_equilibration, linear_fit
from simagent.units import to_canonical
from tools.gromacs import build
from tools.gromacs.driver import Step, StepList
from tools.gromacs.mdp import MdpOptions
from tools.gromacs.parse import read_energies, read_output

R_KJ_PER_MOL_K = build.R_KJ_PER_MOL_K
# Rahman, Phys. Rev. 136, A405 (1964): argon as LJ with eps/kB = 120 K, sigma = 3.4 A.
ARGON_EPSILON_K = 120.0
ARGON_SIGMA_NM = 0.34

THERMO = {
    "density": ("Density", 1e-3, "g/cm^3"),  # kg/m^3 -> g/cm^3
    "volume": ("Volume", 1.0, "nm^3"),
    "temperature": ("Temperature", 1.0, "K"),
    "pressure": ("Pressure", 1.0, "bar"),
    "potential_energy_per_atom": ("Potential", 1.0, "kJ/mol"),
    "kinetic_energy_per_atom": ("Kinetic En.", 1.0, "kJ/mol"),
    "total_energy_per_atom": ("Total Energy", 1.0, "kJ/mol"),
}
PER_ATOM = {"potential_energy_per_atom", "kinetic_energy_per_atom", "total_energy_per_atom"}
# Terms that follow the box under a barostat: their correlation time is at least tau_p.
BOX_TERMS = {"Density", "Volume"}
# .edr terms reported as energy components (GROMACS names -> result suffix)
COMPONENTS = {
    "Bond": "bond", "Angle": "angle", "Proper Dih.": "proper_dihedral", "Ryckaert-Bell.": "ryckaert_bellemans",
    "Improper Dih.": "improper_dihedral", "LJ-14": "lj_14", "Coulomb-14": "coulomb_14", "LJ (SR)": "lj_sr",
    "Disper. corr.": "dispersion_correction", "Coulomb (SR)": "coulomb_sr", "Coul. recip.": "coulomb_recip",
    "Potential": "potential",
}
STRUCTURE = {"rdf", "coordination_number"}
SUPPLIED = "supplied"
DIFFUSION = "self_diffusion_coefficient"
GYRATION = "radius_of_gyration"
PROPERTIES = frozenset(THERMO) | {"energy_components", DIFFUSION, GYRATION} | STRUCTURE
SUPPLIED_PROPERTIES = frozenset(THERMO) | {"energy_components"}

# Isothermal compressibilities near ambient conditions, 1/bar (only the barostat's response time
# depends on them): water 4.5e-5 (GROMACS manual); methanol 1.25e-4, ethanol 1.1e-4 (CRC
# Handbook); liquid argon near its triple point about 2e-4.
COMPRESSIBILITY = {"water": 4.5e-5, "methanol": 1.25e-4, "ethanol": 1.1e-4, "argon": 2.0e-4}

# Barostat coupling time of the NPT equilibration stage, ps (the production keeps tau_p).
NPT_EQUILIBRATION_TAU_P = 1.0
# v-rescale coupling time of the equilibration stages (melt, NVT, NPT), ps (the production keeps tau_t).
# The stochastic velocity rescaling samples the canonical ensemble for any tau_t (Bussi et al. 2007),
# so the equilibration may couple tightly: with argon's 1 ps, a lattice start that cools to ~90 K
# while melting, or a melt at 2T, needs ~10 ps to reach T (measured, 256 atoms at 120 K).
NVT_EQUILIBRATION_TAU_T = 0.1

def _barostat_error_floor(series: np.ndarray, times: np.ndarray, tau_p: float) -> float:
    """Smallest credible standard error of a box-following average: a barostat with coupling time
    tau_p decorrelates the volume no faster than every ~2 tau_p, so a window of length T holds at
    most T / (2 tau_p) independent samples. Short runs of small boxes are where blocking (which
    cannot see correlations as long as the series) would otherwise report errors several times
    too small: 216 waters over 8 ps gave 0.002 g/cm^3 while repeated runs spread by 0.01."""
    span = float(times[-1] - times[0]) if times.size > 1 else 0.0
    if span <= 0 or series.size < 2:
        return 0.0
    independent = max(span / (2.0 * tau_p), 1.0)
    return float(np.std(series, ddof=1) / np.sqrt(independent))


class LiquidParams(BaseModel):
    """Everything that fixes the runs. GROMACS units: nm, ps, K, bar, kJ/mol, g/cm^3."""

    # Run defaults by kind of system, each with its reason (every one applied is reported in the answer)
    DEFAULTS: ClassVar[dict[str, dict[str, Default]]] = {
        "molecular": {
            "n_molecules": Default(500, "500 molecules: box edge ~2.5 nm (water), more than twice the cutoff"),
            "timestep": Default(0.002, "2 fs with rigid water (SETTLE) / h-bond constraints (LINCS)"),
            "cutoff": Default(1.0, "1.0 nm LJ and real-space Coulomb cutoff, PME beyond, dispersion correction"),
            "em_steps": Default(5000, "steepest descent until Fmax < 100 kJ/mol/nm or 5000 steps"),
            "melt_steps": Default(0, "a molecular start is disordered already: no melting stage"),
            "nvt_steps": Default(5000, "10 ps NVT (v-rescale) to thermalise the minimised start"),
            "npt_steps": Default(10000, "20 ps NPT (C-rescale) to reach the density"),
            "production_steps": Default(25000, "50 ps production; equilibration detection trims its start"),
            "energy_every": Default(50, "energies every 0.1 ps"),
            "trajectory_every": Default(100, "compressed coordinates every 0.2 ps (g(r), MSD, Rg)"),
            "tau_t": Default(0.1, "v-rescale, tau_t = 0.1 ps (Bussi et al. 2007); a global stochastic thermostat "
                                  "barely perturbs diffusion (Basconi & Shirts, JCTC 9, 2887 (2013))",
                             "Bussi et al., J. Chem. Phys. 126, 014101 (2007); Basconi & Shirts, JCTC 9, 2887 (2013)"),
        },
        "atomic": {
            "n_molecules": Default(864, "N = 864, as in Rahman's argon simulation (Phys. Rev. 136, A405, 1964)",
                                   "Rahman, Phys. Rev. 136, A405 (1964)"),
            "timestep": Default(0.01, "10 fs (about 0.005 tau), as Rahman used for argon",
                                "Rahman, Phys. Rev. 136, A405 (1964)"),
            "cutoff": Default(0.85, "2.5 sigma, the usual LJ truncation (Allen & Tildesley)", "Allen & Tildesley"),
            "em_steps": Default(500, "a short minimisation of the lattice start"),
            "melt_steps": Default(1000, "10 ps NVT at twice the target temperature to melt the fcc start"),
            "nvt_steps": Default(3000, "30 ps NVT at the target temperature"),
            "npt_steps": Default(5000, "50 ps NPT when a pressure is given"),
            "production_steps": Default(10000, "100 ps production"),
            "energy_every": Default(10, "energies every 0.1 ps"),
            "trajectory_every": Default(10, "coordinates every 0.1 ps"),
            "tau_t": Default(1.0, "v-rescale, tau_t = 1 ps (100 steps, like the LAMMPS protocol's damping)"),
        },
    }

    model: str = Field(description="key of tools.gromacs.build.MODELS, e.g. 'tip4p2005', or 'supplied'")
    supplied_gro: str | None = Field(default=None, description="user's .gro (model 'supplied'), copied into the job")
    supplied_top: str | None = Field(default=None, description="user's .top; .itp files it includes from its folder")
    n_molecules: int = Field(ge=1)
    builder: Literal["lattice", "solvate"] = "lattice"
    temperature: float = Field(gt=0)
    pressure: float | None = Field(default=None, description="bar; None: fixed density (NVT)")
    density: float | None = Field(default=None, gt=0, description="g/cm^3 of the built box")
    lj_sigma: float | None = Field(default=None, gt=0, description="nm (argon)")
    lj_epsilon: float | None = Field(default=None, gt=0, description="kJ/mol (argon)")
    cutoff: float = Field(gt=0.3, description="nm")
    vdw_modifier: Literal["Potential-shift", "None"] = "Potential-shift"
    dispersion_correction: bool = True
    coulomb: Literal["PME", "Cut-off"] = "PME"
    timestep: float = Field(gt=0, le=0.02)
    em_steps: int = Field(default=5000, ge=1)
    em_tolerance: float = Field(default=100.0, gt=0)
    melt_steps: int = Field(default=0, ge=0)
    melt_temperature_factor: float = Field(default=2.0, ge=1.0)
    nvt_steps: int = Field(ge=1)
    npt_steps: int = Field(default=0, ge=0)
    production_steps: int = Field(gt=0)
    production_ensemble: Literal["npt", "nvt", "nve"] = "npt"
    thermostat: Literal["v-rescale", "nose-hoover"] = "v-rescale"
    tau_t: float = Field(default=0.1, gt=0)
    barostat: Literal["C-rescale", "Parrinello-Rahman", "Berendsen"] = "C-rescale"
    tau_p: float = Field(default=2.0, gt=0)
    compressibility: float = Field(default=4.5e-5, gt=0)
    energy_every: int = Field(default=50, gt=0)
    trajectory_every: int = Field(default=0, ge=0, description="0: no trajectory")
    seed: int = Field(default=12345, ge=0)
    threads: int = Field(default=1, ge=1, le=64)
    max_warnings: int = Field(default=0, ge=0, le=5, description="grompp warnings accepted (-maxwarn)")
    has_hydrogen: bool = True
    rdf: bool = False
    rdf_bins: int = Field(default=200, ge=20)
    rdf_blocks: int = Field(default=5, ge=1)
    msd: bool = False
    msd_blocks: int = Field(default=5, ge=2)
    msd_fit_window: tuple[float, float] = (0.2, 0.6)
    gyration: bool = False
    temperature_tolerance: float = Field(default=0.05, gt=0)
    time_limit_s: float = Field(default=1800.0, gt=0)

    @property
    def molecule(self) -> build.MoleculeModel:
        if self.model == SUPPLIED:
            return build.MoleculeModel(
                key=SUPPLIED, label=f"system from {Path(self.supplied_gro or '').name}", molecule=SUPPLIED,
                residue="", atoms=(), template_angstrom=(), molar_mass=0.0, real_atoms=1,
                citation=f"user files {self.supplied_gro}, {self.supplied_top}")
        return build.MODELS[self.model]

    def supplied(self) -> build.SuppliedSystem:
        return build.supplied_system(Path(self.supplied_gro or ""), Path(self.supplied_top or ""))

    @property
    def box_edge(self) -> float:
        if self.model == SUPPLIED:
            return min(self.supplied().box_nm)
        density = self.density or self.molecule.start_density
        return build.box_edge_nm(self.n_molecules, self.molecule.molar_mass, density)

    @model_validator(mode="after")
    def _consistent(self) -> LiquidParams:
        if self.model not in build.MODELS and self.model != SUPPLIED:
            raise ValueError(f"unknown model {self.model!r}; known: {', '.join(build.MODELS)}, {SUPPLIED}")
        if (self.model == SUPPLIED) != bool(self.supplied_gro and self.supplied_top):
            raise ValueError("supplied_gro and supplied_top go with model 'supplied' (and only with it)")
        if self.model == SUPPLIED and (self.rdf or self.msd or self.gyration or self.builder != "lattice"):
            raise ValueError("a supplied system gets thermodynamic averages and energy components only")
        if self.pressure is None and self.density is None:
            raise ValueError("give a pressure (NPT) or a density (fixed volume)")
        if self.production_ensemble == "npt" and self.pressure is None:
            raise ValueError("an NPT production needs a pressure")
        if self.pressure is None and self.npt_steps:
            raise ValueError("npt_steps without a pressure")
        if self.box_edge < 2.1 * self.cutoff:
            raise ValueError(f"box edge {self.box_edge:.3g} nm is shorter than 2.1 x the cutoff "
                             f"({self.cutoff:g} nm): use more molecules or a shorter cutoff")
        if self.model == "argon-lj" and (self.lj_sigma is None or self.lj_epsilon is None):
            raise ValueError("argon needs lj_sigma and lj_epsilon")
        if self.builder == "solvate" and self.molecule.solvate_box is None:
            raise ValueError(f"gmx solvate has no equilibrated box for {self.molecule.label}")
        if (self.rdf or self.msd or self.gyration) and self.trajectory_every == 0:
            raise ValueError("g(r), MSD and Rg need a trajectory (trajectory_every > 0)")
        lo, hi = self.msd_fit_window
        if not 0.0 < lo < hi <= 1.0:
            raise ValueError("msd_fit_window must satisfy 0 < start < end <= 1 (fractions of a block)")
        if self.thermostat == "nose-hoover" and self.tau_t < 20 * 10 * self.timestep:
            # grompp warns below 20 x nsttcouple x dt (nsttcouple = nstlist = 10 here)
            raise ValueError(f"Nose-Hoover needs tau_t >= {200 * self.timestep:g} ps at dt = {self.timestep:g} ps")
        return self

    def stages(self) -> list[str]:
        names = ["em"] + (["melt"] if self.melt_steps else []) + ["nvt"]
        if self.pressure is not None and self.npt_steps:
            names.append("npt")
        return names + ["prod"]


# the declared run defaults (benchmarks/gromacs_protocols.py and a test shorten them here)
_DEFAULTS = LiquidParams.DEFAULTS


def _timestep_ps(q: Quantity) -> float:
    factors = {"fs": 1e-3, "ps": 1.0}
    unit = q.unit.strip().lower()
    if unit not in factors:
        raise RequestError(f"give the GROMACS timestep in fs or ps, not {q.unit!r}")
    return q.value * factors[unit]


# SimulationControls names -> GROMACS tcoupl / pcoupl values
THERMOSTATS = {"velocity-rescale": "v-rescale", "csvr": "v-rescale", "nose-hoover": "nose-hoover"}
BAROSTATS = {"c-rescale": "C-rescale", "parrinello-rahman": "Parrinello-Rahman", "berendsen": "Berendsen"}


def _time_ps(q: Quantity, timestep: float) -> float:
    unit = q.unit.strip().lower()
    if unit == "steps":
        return q.value * timestep
    factors = {"fs": 1e-3, "ps": 1.0, "ns": 1e3}
    if unit not in factors:
        raise RequestError(f"give coupling times in fs, ps or steps, not {q.unit!r}")
    return q.value * factors[unit]


def _length_nm(q: Quantity) -> float:
    unit = q.unit.strip().lower().replace("å", "angstrom")
    factors = {"nm": 1.0, "angstrom": 0.1, "a": 0.1, "pm": 1e-3}
    if unit not in factors:
        raise RequestError(f"unknown length unit {q.unit!r} (use nm or angstrom)")
    return q.value * factors[unit]


def _energy_kj(q: Quantity) -> float:
    unit = q.unit.strip().lower()
    if unit in ("k", "kelvin"):
        return q.value * R_KJ_PER_MOL_K
    factors = {"kj/mol": 1.0, "kcal/mol": 4.184, "ev": 96.48533212, "mev": 0.09648533212}
    if unit not in factors:
        raise RequestError(f"unknown LJ epsilon unit {q.unit!r} (use K for eps/kB, kJ/mol, eV...)")
    return q.value * factors[unit]


def _supplied_paths(structure: str) -> tuple[str, str]:
    """The .gro and its topology: <stem>.top next to it, else topol.top in the same folder."""
    gro = Path(structure).expanduser().resolve()
    for top in (gro.with_suffix(".top"), gro.parent / "topol.top"):
        if top.is_file():
            return str(gro), str(top)
    raise RequestError(f"no topology for {gro.name}: put {gro.stem}.top or topol.top next to it")


# -- the parts of gromacs/liquid_md's parameters (each reports the defaults it applies to `log`) ------


def _system_model(system: SystemSpec, pot: PotentialSpec, names: set[str], log: DefaultsLog) -> tuple[
        str, build.MoleculeModel | None, tuple[str | None, str | None], tuple[float | None, float | None]]:
    """(kind 'molecular' or 'atomic', the molecule model (None: supplied files), (supplied .gro, .top),
    (LJ epsilon in kJ/mol, sigma in nm) of argon)."""
    if system.structure and system.structure.endswith(".gro"):
        unsupported = names - SUPPLIED_PROPERTIES
        supplied = _supplied_paths(system.structure)
        if unsupported:
            raise RequestError(f"for a supplied .gro/.top system gromacs/liquid_md computes thermodynamic "
                               f"averages and energy components, not {', '.join(sorted(unsupported))}")
        return "molecular", None, supplied, (None, None)
    if system.kind == "atomic_fluid":
        if pot.lj_epsilon is not None and pot.lj_sigma is not None:
            lj = _energy_kj(pot.lj_epsilon), _length_nm(pot.lj_sigma)
        elif system.elements == ["Ar"]:
            lj = ARGON_EPSILON_K * R_KJ_PER_MOL_K, ARGON_SIGMA_NM
            log("lj_epsilon, lj_sigma", "120 K (eps/kB), 3.4 angstrom", "Rahman (1964) argon")
        else:
            raise RequestError(f"give the LJ epsilon and sigma for {system.elements[0]}")
        if system.elements != ["Ar"]:
            raise RequestError("gromacs/liquid_md builds LJ argon only; give other fluids as .gro/.top files")
        return "atomic", build.MODELS["argon-lj"], (None, None), lj
    molecule = (system.molecule or system.name).lower()
    try:
        model = build.model_for(molecule, pot.force_field)
    except InputError as err:
        raise RequestError(str(err)) from None
    if pot.force_field is None:
        log("force_field", model.label,
            "TIP4P/2005: the best rigid model for condensed-phase water (Vega & Abascal, "
            "PCCP 13, 19663, 2011)" if molecule == "water" else "the model GROMACS ships")
    return "molecular", model, (None, None), (None, None)


def _state_point(cond: Conditions, ensemble: str | None, kind: str, supplied_gro: str | None,
                 log: DefaultsLog) -> tuple[float, float | None, float | None, str]:
    """(temperature K, pressure bar or None, density g/cm^3 or None, production ensemble)."""
    if cond.temperature is None:
        raise RequestError("a liquid MD run needs a temperature")
    temperature = to_canonical(cond.temperature, "temperature").value
    if cond.temperature.unit == "reduced":
        raise RequestError("give the temperature in K for a GROMACS run")
    pressure = density = None
    if cond.pressure is not None:
        if cond.pressure.unit == "reduced":
            raise RequestError("give the pressure in bar (or atm, Pa...) for a GROMACS run")
        pressure = to_canonical(cond.pressure, "pressure").value
    if cond.density is not None:
        if cond.density.unit == "reduced":
            raise RequestError("give the density in g/cm^3 or kg/m^3 for a GROMACS run")
        density = to_canonical(cond.density, "density").value
    if supplied_gro and density is not None:
        raise RequestError("a supplied system runs in its own box (NVT) or at a pressure (NPT), not at a "
                           "given density")
    if density is not None and pressure is not None:
        if ensemble == "npt":
            log("density", f"{density:g} g/cm^3 (starting box only)", "NPT run requested")
        else:
            log("conditions.pressure", "ignored", "fixed-density run: pressure is an output")
            pressure = None
    if density is None and pressure is None:
        if kind == "atomic":
            raise RequestError("liquid argon needs a density (fixed volume) or a pressure")
        pressure = 1.0
        log("pressure", "1 bar", "ambient pressure")
    if pressure is None and ensemble == "npt":
        raise RequestError("an NPT run needs a pressure")
    if ensemble is None:
        ensemble = "npt" if pressure is not None else "nvt"
        log("production_ensemble", ensemble.upper(),
            "pressure given" if pressure is not None else "density given: fixed volume")
    return temperature, pressure, density, ensemble


def _molecule_count(ctrl: SimulationControls, model: build.MoleculeModel | None, supplied_gro: str | None,
                    supplied_top: str | None, density: float | None, cutoff: float, log: DefaultsLog) -> int:
    """Molecules in the box: those of a supplied system, else as requested (or the default), at least
    as many as a box 2.1 cutoffs wide holds."""
    if supplied_gro:
        try:
            system_files = build.supplied_system(Path(supplied_gro), Path(supplied_top))
        except InputError as err:
            raise RequestError(str(err)) from None
        if min(system_files.box_nm) < 2.1 * cutoff:
            raise RequestError(f"the supplied box ({min(system_files.box_nm):g} nm) is shorter than 2.1 x the "
                               f"cutoff ({cutoff:g} nm): give a shorter cutoff or a larger system")
        return sum(count for _, count in system_files.molecules) or 1
    n_molecules = int(log.take("n_molecules", ctrl.n_atoms))
    start_density = density or model.start_density
    min_n = math.ceil(n_molecules * (2.1 * cutoff / build.box_edge_nm(n_molecules, model.molar_mass,
                                                                      start_density)) ** 3)
    if min_n > n_molecules:
        n_molecules = min_n
        log("n_molecules", n_molecules, "box edge must exceed 2.1 x the cutoff")
    return n_molecules


def _fcc_count(n_molecules: int, log: DefaultsLog) -> int:
    """The nearest 4 k^3 atoms (an fcc start lattice of k^3 cells) at or above n_molecules."""
    k = round((n_molecules / 4) ** (1 / 3))
    if 4 * k**3 < n_molecules:
        k += 1
    if 4 * k**3 != n_molecules:
        n_molecules = 4 * k**3
        log("n_molecules", n_molecules, "nearest 4 k^3 (fcc start lattice)")
    return n_molecules


def _thermostat(ctrl: SimulationControls, timestep: float, log: DefaultsLog) -> tuple[str, float]:
    """(GROMACS tcoupl, tau_t in ps)."""
    thermostat, tau_t = "v-rescale", float(log.default("tau_t").value)
    if ctrl.thermostat is None:
        log("thermostat", "v-rescale", log.default("tau_t").reason)
    elif ctrl.thermostat in THERMOSTATS:
        thermostat = THERMOSTATS[ctrl.thermostat]
        if thermostat == "nose-hoover" and ctrl.thermostat_damping is None:
            tau_t = max(1.0, 200 * timestep)
            log("tau_t", f"{tau_t:g} ps", "Nose-Hoover needs tau_t >= 20 x nsttcouple x dt")
    else:
        raise RequestError(f"gromacs/liquid_md offers the v-rescale and Nose-Hoover thermostats, "
                           f"not {ctrl.thermostat}")
    if ctrl.thermostat_damping is not None:
        tau_t = _time_ps(ctrl.thermostat_damping, timestep)
    return thermostat, tau_t


def _barostat(ctrl: SimulationControls, pressure: float | None, timestep: float,
              log: DefaultsLog) -> tuple[str, float, int]:
    """(GROMACS pcoupl, tau_p in ps, grompp warnings accepted)."""
    barostat, tau_p, max_warnings = "C-rescale", 2.0, 0
    if pressure is None:
        return barostat, tau_p, max_warnings
    if ctrl.barostat is None:
        log("barostat", "C-rescale, tau_p = 2 ps",
            "correct NPT ensemble and robust from a non-equilibrated start (Bernetti & Bussi, "
            "J. Chem. Phys. 153, 114107, 2020)")
    elif ctrl.barostat in BAROSTATS:
        barostat = BAROSTATS[ctrl.barostat]
        if barostat == "Parrinello-Rahman" and ctrl.barostat_damping is None:
            tau_p = 5.0
            log("tau_p", "5 ps", "Parrinello-Rahman oscillates with short tau_p")
        if barostat == "Berendsen":
            max_warnings = 1
            log("max_warnings", 1, "requested Berendsen barostat: grompp warns that it "
                "does not sample the NPT ensemble; the warning is accepted and listed in the results")
    else:
        raise RequestError(f"gromacs/liquid_md offers C-rescale, Parrinello-Rahman and Berendsen "
                           f"barostats, not {ctrl.barostat}")
    if ctrl.barostat_damping is not None:
        tau_p = _time_ps(ctrl.barostat_damping, timestep)
    return barostat, tau_p, max_warnings


@register
class LiquidMD(Protocol):
    name = "gromacs/liquid_md"
    engine = "gromacs"
    properties = PROPERTIES
    Params = LiquidParams
    description = (
        "GROMACS MD of a pure liquid (SPC/E, TIP3P, TIP4P/2005 water; OPLS-AA methanol, ethanol; LJ "
        "argon): EM, NVT, NPT, production; density and thermo averages with block errors, energy "
        "components, O-O g(r) and coordination number, self-diffusion (MSD), radius of gyration"
    )

    def applies_to(self, spec: TaskSpec) -> bool:
        system = spec.system
        if system is None or spec.engine != "gromacs":
            return False
        if system.structure and system.structure.endswith(".gro"):
            return bool(spec.properties) and {p.name for p in spec.properties} <= SUPPLIED_PROPERTIES
        if system.kind == "molecular_fluid":
            molecule = (system.molecule or system.name or "").lower()
            if not any(m.molecule == molecule for m in build.MODELS.values()):
                return False
        elif system.kind == "atomic_fluid":
            if system.elements != ["Ar"] and not (spec.potential and spec.potential.lj_epsilon
                                                  and spec.potential.lj_sigma and len(system.elements) == 1):
                return False
            if system.phase == "solid":
                return False
        else:
            return False
        return bool(spec.properties) and {p.name for p in spec.properties} <= self.properties

    # -- parameters ---------------------------------------------------------------------------

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> LiquidParams:
        system = spec.system
        if system is None or system.kind not in ("molecular_fluid", "atomic_fluid"):
            raise RequestError("gromacs/liquid_md needs a molecular liquid (e.g. water) or liquid argon")
        pot = spec.potential or PotentialSpec()
        names = {p.name for p in spec.properties}
        unknown = names - self.properties
        if unknown:
            raise RequestError(f"gromacs/liquid_md cannot compute {', '.join(sorted(unknown))}")
        for prop in spec.properties:
            if prop.at == "step":
                raise RequestError("gromacs/liquid_md reports averages or the last frame, not a given step")
            if prop.at == "last_step" and prop.name not in THERMO:
                raise RequestError(f"{prop.name} is a time average; at={prop.at!r} is not available")
        kind, model, (supplied_gro, supplied_top), (lj_epsilon, lj_sigma) = _system_model(system, pot, names, log)
        log.declared = LiquidParams.DEFAULTS[kind]
        temperature, pressure, density, production_ensemble = _state_point(
            spec.conditions, spec.controls.ensemble, kind, supplied_gro, log)

        ctrl = spec.controls
        timestep = float(log.take("timestep", _timestep_ps(ctrl.timestep) if ctrl.timestep else None))
        cutoff = float(log.take("cutoff", _length_nm(pot.cutoff) if pot.cutoff and pot.cutoff.unit != "sigma"
                                else (pot.cutoff.value * lj_sigma if pot.cutoff and lj_sigma else None)))
        n_molecules = _molecule_count(ctrl, model, supplied_gro, supplied_top, density, cutoff, log)
        if kind == "atomic":
            n_molecules = _fcc_count(n_molecules, log)
            vdw_modifier = "Potential-shift" if pot.shifted else "None"
            dispersion = bool(pot.tail_correction)
            log("vdw_modifier", vdw_modifier, "shifted LJ requested" if pot.shifted
                else "plain truncated LJ, as in the LAMMPS protocol (pair_modify shift no)")
            log("dispersion_correction", "EnerPres" if dispersion else "no",
                "tail correction requested" if dispersion else "no tail correction requested")
            coulomb, has_h = "Cut-off", False
        else:
            vdw_modifier, dispersion, coulomb = "Potential-shift", True, "PME"
            has_h = model.has_hydrogen if model else True  # supplied: constrain bonds to H (2 fs)
        melt_steps = int(log.take("melt_steps"))
        nvt_steps = int(log.take("nvt_steps"))
        npt_steps = int(log.take("npt_steps", ctrl.equilibration_steps)) if pressure is not None else 0
        production_steps = int(log.take("production_steps", ctrl.production_steps))
        seed = ctrl.seed if ctrl.seed is not None else 12345
        if ctrl.seed is None:
            log("seed", seed, "fixed seed for the start structure and velocities")
        thermostat, tau_t = _thermostat(ctrl, timestep, log)
        barostat, tau_p, max_warnings = _barostat(ctrl, pressure, timestep, log)
        want_traj = bool(names & (STRUCTURE | {DIFFUSION, GYRATION}))
        if GYRATION in names and kind == "atomic":
            raise RequestError("the radius of gyration of a single atom is zero: ask for it for molecules")
        if model is None:
            log("compressibility", "4.5e-5 1/bar", "water's value; it only sets the barostat's response time")
        params = LiquidParams(
            model=model.key if model else SUPPLIED, supplied_gro=supplied_gro, supplied_top=supplied_top,
            n_molecules=n_molecules, temperature=temperature, pressure=pressure,
            density=density, lj_sigma=lj_sigma, lj_epsilon=lj_epsilon, cutoff=cutoff,
            vdw_modifier=vdw_modifier, dispersion_correction=dispersion, coulomb=coulomb, timestep=timestep,
            em_steps=int(log.take("em_steps")), melt_steps=melt_steps, nvt_steps=nvt_steps, npt_steps=npt_steps,
            production_steps=production_steps, production_ensemble=production_ensemble,
            thermostat=thermostat, tau_t=tau_t, barostat=barostat, tau_p=tau_p, max_warnings=max_warnings,
            compressibility=COMPRESSIBILITY[model.molecule] if model else 4.5e-5,
            energy_every=int(log.default("energy_every").value),
            trajectory_every=int(log.default("trajectory_every").value) if want_traj else 0,
            seed=seed, has_hydrogen=has_h, rdf=bool(names & STRUCTURE), msd=DIFFUSION in names,
            gyration=GYRATION in names,
        )
        return params

    # -- jobs ---------------------------------------------------------------------------------

    def mdp(self, p: LiquidParams, stage: str) -> MdpOptions:
        """The .mdp options of one stage (em, melt, nvt, npt, prod)."""
        common = dict(
            cutoff_scheme="Verlet", coulombtype=p.coulomb, rcoulomb=p.cutoff, rvdw=p.cutoff,
            vdw_modifier=p.vdw_modifier, DispCorr="EnerPres" if p.dispersion_correction else "no",
            constraints="h-bonds" if p.has_hydrogen else "none",
            constraint_algorithm="lincs" if p.has_hydrogen else None,
        )
        if p.coulomb == "PME":
            common["fourierspacing"] = 0.12
        title = f"simagent gromacs/liquid_md, stage {stage}: {p.n_molecules} x {p.molecule.label}"
        if stage == "em":
            return MdpOptions(title=title, integrator="steep", nsteps=p.em_steps, emtol=p.em_tolerance,
                              emstep=0.01, nstenergy=0, nstlog=0, comm_mode=None, nstcomm=None, **common)
        energy_every = p.energy_every
        md = dict(integrator="md", dt=p.timestep, nstenergy=energy_every, nstlog=max(energy_every, 1000),
                  nstcalcenergy=min(100, energy_every), nstcomm=min(100, energy_every), **common)
        thermostat = dict(tcoupl=p.thermostat, tau_t=p.tau_t, ref_t=p.temperature)
        first_md = p.stages()[1]
        velocities = (dict(gen_vel=True, gen_temp=p.temperature * (p.melt_temperature_factor
                                                                   if stage == "melt" else 1.0),
                           gen_seed=p.seed, continuation=False)
                      if stage == first_md else dict(continuation=True))
        if stage == "nvt" and p.melt_steps:
            # After the melt at melt_temperature_factor x T, the NVT stage starts from fresh velocities at
            # T (as the LAMMPS protocols rescale after their melt). Continuing the melt's velocities left
            # the v-rescale thermostat (tau_t = 1 ps for argon) to drain the whole excess energy: the
            # temperature relaxes over ~10 ps, and a short NVT stage handed a hot system to production.
            velocities = dict(gen_vel=True, gen_temp=p.temperature, gen_seed=p.seed + 1, continuation=False)
        if stage in ("melt", "nvt", "npt") and p.thermostat == "v-rescale":
            thermostat["tau_t"] = min(p.tau_t, NVT_EQUILIBRATION_TAU_T)
        if stage == "melt":
            thermostat["ref_t"] = p.temperature * p.melt_temperature_factor
            return MdpOptions(title=title, nsteps=p.melt_steps, **md, **thermostat, **velocities)
        if stage == "nvt":
            return MdpOptions(title=title, nsteps=p.nvt_steps, **md, **thermostat, **velocities)
        barostat = dict(pcoupl=p.barostat, tau_p=p.tau_p, ref_p=p.pressure, compressibility=p.compressibility)
        if stage == "npt":
            # Equilibration always with C-rescale (Parrinello-Rahman needs an equilibrated box), and
            # with tau_p of at most 1 ps: first-order scaling is stable there and the box relaxes
            # within a few ps (Bernetti & Bussi 2020).
            return MdpOptions(title=title, nsteps=p.npt_steps, **md, **thermostat, **velocities,
                              pcoupl="C-rescale", tau_p=min(p.tau_p, NPT_EQUILIBRATION_TAU_P), ref_p=p.pressure,
                              compressibility=p.compressibility)
        prod = dict(nsteps=p.production_steps, nstxout_compressed=p.trajectory_every, **md, **velocities)
        if p.production_ensemble == "nve":
            return MdpOptions(title=title, **prod)
        if p.production_ensemble == "nvt":
            return MdpOptions(title=title, **prod, **thermostat)
        return MdpOptions(title=title, **prod, **thermostat, **barostat)

    def jobs(self, params: BaseModel) -> list[Job]:
        p = LiquidParams.model_validate(params.model_dump() if isinstance(params, BaseModel) else params)
        model = p.molecule
        title = f"{p.n_molecules} {model.label}"
        supplied = p.supplied() if p.model == SUPPLIED else None
        if supplied:  # the user's topology and its local includes go to every job, the .gro to EM
            local = {k: v for k, v in supplied.files.items() if k != "conf.gro"}
        else:
            local = build.local_files(model, p.lj_sigma, p.lj_epsilon)
        stages = p.stages()
        jobs: list[Job] = []
        grompp_tail = ["-maxwarn", str(p.max_warnings)]
        common = dict(protocol=self.name, engine="gromacs", params={**p.model_dump(mode="json")},
                      time_limit_s=p.time_limit_s, threads=p.threads)  # the executor reserves the threads
        build_id = None
        if p.builder == "solvate":
            build_id = "build"
            steps = StepList(threads=p.threads, steps=[
                Step(name="solvate", tool="solvate", args=["-cs", model.solvate_box, "-box", *[f"{p.box_edge:.4f}"] * 3,
                                                           "-maxsol", str(p.n_molecules), "-o", "conf.gro"]),
                Step(name="sync", action="sync_molecules", args=["gro=conf.gro", "top=topol.top"]),
            ])
            jobs.append(Job(id="build", stage="build", **common, inputs={
                "topol.top": build.topology(model, None, title), **local, "steps.json": steps.render()}))
        previous = None
        for stage in stages:
            mdp = self.mdp(p, stage)
            inputs = {f"{stage}.mdp": mdp.render(), **local}
            stage_in: dict[str, list[str]] = {}
            depends = []
            if build_id:
                stage_in[build_id] = ["topol.top"] + (["conf.gro"] if stage == "em" else [])
                depends.append(build_id)
            elif not supplied:
                inputs["topol.top"] = build.topology(model, p.n_molecules, title)
            if stage == "em":
                if supplied:
                    inputs["conf.gro"] = supplied.files["conf.gro"]
                elif not build_id:
                    inputs["conf.gro"] = build.lattice_box(model, p.n_molecules, p.box_edge, p.seed)
                start, checkpoint = "conf.gro", None
            else:
                names = [f"{previous}.gro"] + ([f"{previous}.cpt"] if previous != "em" else [])
                stage_in[previous] = names
                depends.append(previous)
                start, checkpoint = names[0], (names[1] if len(names) > 1 else None)
            grompp = ["-f", f"{stage}.mdp", "-c", start, "-p", "topol.top", "-o", f"{stage}.tpr", *grompp_tail]
            if checkpoint:
                grompp[4:4] = ["-t", checkpoint]
            steps = [Step(name="grompp", tool="grompp", args=grompp),
                     Step(name="mdrun", tool="mdrun", args=["-deffnm", stage])]
            if stage == "prod" and p.msd:
                steps.append(Step(name="nojump", tool="trjconv", stdin="0\n",
                                  args=["-f", "prod.xtc", "-s", "prod.tpr", "-pbc", "nojump", "-o", "nojump.xtc"]))
            inputs["steps.json"] = StepList(threads=p.threads, steps=steps).render()
            jobs.append(Job(id=stage, stage=stage, depends_on=list(dict.fromkeys(depends)), stage_in=stage_in,
                            inputs=inputs, **common))
            previous = stage
        return jobs

    # -- analysis -----------------------------------------------------------------------------

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = LiquidParams.model_validate(params.model_dump() if isinstance(params, BaseModel) else params)
        job_dir = Path(job_dirs["prod"])
        notes, warnings, engine_s = [], [], 0.0
        for stage, folder in job_dirs.items():
            out = read_output(Path(folder))
            if out.record_problem:
                raise ReadError(out.record_problem)
            if not out.finished:
                raise CalculationFailed(f"GROMACS job {stage} did not finish: "
                                        + ("; ".join(out.step_errors[:2]) or f"step {out.failed_step} failed"))
            notes += [f"{stage}/{n}" for n in out.step_notes]
            warnings += [f"{stage}/{w}" for w in out.step_warnings]
            engine_s += out.engine_time_s(Path(folder))
        energies = read_energies(job_dir / "prod.edr")
        molecules = build.molecules_section((job_dir / "topol.top").read_text())
        n_molecules = sum(count for _, count in molecules)
        if p.model == SUPPLIED:  # all particles of the .gro (virtual sites, if any, included)
            n_atoms, _ = build.read_gro_header((Path(job_dirs["em"]) / "conf.gro").read_text())
            per_molecule = f"{n_atoms / max(n_molecules, 1):.3g}"
        else:
            n_atoms, per_molecule = n_molecules * p.molecule.real_atoms, str(p.molecule.real_atoms)
        check_energies(energies, p)
        ensemble = p.production_ensemble.upper()
        key = "Density" if ensemble == "NPT" else "Potential"
        # the production window starts after both the observable (density or potential energy) and the
        # temperature have settled: a thermostat still relaxing from the previous stage shows up in T first
        t0 = max(detect_equilibration(energies[key]), detect_equilibration(energies["Temperature"]))
        check_temperature(energies["Temperature"][t0:], p.temperature, p.temperature_tolerance)
        times = energies["Time"]
        from tools.gromacs import engine

        run = (f"GROMACS {engine.version()}, {n_molecules} x {p.molecule.label} ({p.molecule.citation}); "
               f"{ensemble} production of {p.production_steps} steps (dt = {p.timestep:g} ps) at "
               f"{p.temperature:g} K" + (f", {p.pressure:g} bar" if p.pressure is not None else
                                        f", {p.density:g} g/cm^3") +
               f"; cutoff {p.cutoff:g} nm, {p.coulomb}, vdw-modifier {p.vdw_modifier}, DispCorr "
               f"{'EnerPres' if p.dispersion_correction else 'no'}; mdrun time {engine_s:.1f} s")
        if warnings:
            run += f"; grompp warnings accepted (max_warnings = {p.max_warnings}): " + " | ".join(warnings)
        if notes:
            run += "; grompp notes: " + " | ".join(notes)
        averaged = (f"mean over production frames {t0}..{times.size - 1} (t >= {times[t0]:g} ps; equilibration "
                    f"of {key} and temperature detected as in Chodera 2016), standard error by Flyvbjerg-Petersen "
                    "blocking")
        log = str(job_dir / "prod.log")
        results: list[Result] = []
        structure = diffusion = gyration = None
        for prop in spec.properties:
            if prop.name in THERMO:
                term, factor, unit = THERMO[prop.name]
                if term not in energies:
                    raise ReadError(f"prod.edr has no {term!r} term")
                series = energies[term] * factor
                what = ""
                if prop.name in PER_ATOM:
                    series = series / n_atoms
                    what = f" per atom (/{n_atoms} atoms; x {per_molecule} per molecule)"
                if prop.at == "last_step":
                    value, se, how = float(series[-1]), None, f"value at the last frame (t = {times[-1]:g} ps)"
                else:
                    value, se = block_average(series[t0:])
                    if term in BOX_TERMS and ensemble == "NPT":
                        se = max(se, _barostat_error_floor(series[t0:], times[t0:], p.tau_p))
                    se, how = (se if se > 0 else None), averaged
                results.append(Result(quantity=prop.name, value=value, unit=unit, uncertainty=se, job="prod",
                                      statistic="last_step" if prop.at == "last_step" else "average",
                                      method=f"{term} from prod.edr{what}, {how}; {run}", log=log))
            elif prop.name == "energy_components":
                for term, suffix in COMPONENTS.items():
                    if term not in energies:
                        continue
                    value, se = block_average(energies[term][t0:] / n_molecules)
                    results.append(Result(
                        quantity=f"energy_components_{suffix}", value=value, unit="kJ/mol",
                        uncertainty=se if se > 0 else None, job="prod",
                        method=f"{term} from prod.edr per molecule, {averaged}; {run}", log=log))
            elif prop.name in STRUCTURE:
                structure = structure or analyze_rdf(job_dir, p)
                if prop.name == "rdf":
                    results.append(Result(quantity="rdf_first_peak", value=structure["peak"], unit="angstrom",
                                          uncertainty=structure["peak_se"], job="prod", log=log,
                                          method=f"first maximum of {structure['how']}; {run}",
                                          data_file=structure["table"]))
                else:
                    results.append(Result(quantity="coordination_number", value=structure["cn"], unit="",
                                          uncertainty=structure["cn_se"], job="prod", log=log,
                                          method=(f"4 pi rho int_0^r_min g(r) r^2 dr to the first minimum r_min = "
                                                  f"{structure['r_min']:.3f} angstrom of {structure['how']}; {run}"),
                                          data_file=structure["table"]))
            elif prop.name == DIFFUSION:
                diffusion = diffusion or analyze_msd(job_dir, p)
                results.append(Result(quantity=DIFFUSION, value=diffusion["D"], unit="cm^2/s",
                                      uncertainty=diffusion["D_se"], job="prod", log=log,
                                      method=f"{diffusion['how']}; {run}", data_file=diffusion["table"]))
            elif prop.name == GYRATION:
                gyration = gyration or analyze_gyration(job_dir, p)
                results.append(Result(quantity=GYRATION, value=gyration["rg"], unit="angstrom",
                                      uncertainty=gyration["rg_se"], job="prod", log=log,
                                      method=f"{gyration['how']}; {run}"))
        return results


# ---------------------------------------------------------------------------------------------
# Helpers (module level so tests can call them)
# ---------------------------------------------------------------------------------------------


def check_energies(energies: dict[str, np.ndarray], p: LiquidParams) -> None:
    """Physics gates on the production energies: complete, finite, long enough."""
    needed = ["Time", "Potential", "Temperature", "Pressure"] + (["Density"] if p.production_ensemble == "npt" else [])
    missing = [k for k in needed if k not in energies]
    if missing:
        raise ReadError(f"prod.edr lacks {', '.join(missing)}")
    for key in needed:
        if not np.all(np.isfinite(energies[key])):
            raise CalculationFailed(f"NaN or infinite {key} in the production run (unstable dynamics)")
    expected = p.production_steps * p.timestep
    if abs(energies["Time"][-1] - energies["Time"][0] - expected) > 1e-6 * max(expected, 1.0) + p.timestep:
        raise CalculationFailed(f"production covers {energies['Time'][0]:g}..{energies['Time'][-1]:g} ps, "
                                f"expected {expected:g} ps")
    if energies["Time"].size < 20:
        raise CalculationFailed("fewer than 20 energy frames in production: too short to average")


def check_temperature(temps: np.ndarray, target: float, tolerance: float = 0.05) -> None:
    mean, se = block_average(temps)
    if abs(mean - target) > tolerance * target and abs(mean - target) > 3 * se:
        set_point_missed(f"mean temperature {mean:.4g} +/- {se:.2g} K misses the target {target:g} K by "
                                f"{100 * abs(mean / target - 1):.1f} % (limit {100 * tolerance:g} %)")


def _universe(job_dir: Path, trajectory: str):
    import MDAnalysis as mda

    if not (job_dir / trajectory).is_file():
        raise ReadError(f"{trajectory} was not written")
    return mda.Universe(str(job_dir / "prod.tpr"), str(job_dir / trajectory))


# g(r) uses at most this many evenly spaced frames (neighbouring frames are strongly correlated)
# and distances up to this range in angstrom (past the first two shells of water or argon).
RDF_MAX_FRAMES = 200
RDF_MAX_RANGE = 10.0


def site_trajectory(job_dir: Path, trajectory: str, site: str) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the site atoms (frames, atoms, 3) and box edges (frames, 3), in angstrom."""
    u = _universe(job_dir, trajectory)
    sites = u.select_atoms(f"name {site}")
    if len(sites) == 0:
        raise ReadError(f"no atoms named {site} in prod.tpr")
    positions, boxes = [], []
    for ts in u.trajectory:
        positions.append(sites.positions.astype(float))
        boxes.append(ts.dimensions[:3].astype(float))
    return np.asarray(positions), np.asarray(boxes)


def pair_histograms(positions: np.ndarray, boxes: np.ndarray, r_max: float, bins: int) -> np.ndarray:
    """Per-frame histograms of distinct-pair distances (minimum image) up to r_max."""
    from MDAnalysis.lib.distances import self_capped_distance

    edges = np.linspace(0.0, r_max, bins + 1)
    counts = np.zeros((len(positions), bins))
    for frame, (x, box) in enumerate(zip(positions, boxes, strict=True)):
        _, distances = self_capped_distance(x.astype(np.float32), r_max,
                                            box=np.array([*box, 90.0, 90.0, 90.0], dtype=np.float32))
        counts[frame] = np.histogram(distances, bins=edges)[0]
    return counts


def gofr_from_counts(counts: np.ndarray, volumes: np.ndarray, n_sites: int,
                     r_max: float) -> tuple[np.ndarray, np.ndarray]:
    """g(r) = <pair count in the shell> / (N (N-1) / 2 V^-1 x shell volume), averaged over frames."""
    bins = counts.shape[1]
    edges = np.linspace(0.0, r_max, bins + 1)
    shells = 4.0 / 3.0 * np.pi * (edges[1:] ** 3 - edges[:-1] ** 3)
    ideal = 0.5 * n_sites * (n_sites - 1) * shells[None, :] / volumes[:, None]
    g = (counts / ideal).mean(axis=0)
    return 0.5 * (edges[1:] + edges[:-1]), g


def analyze_rdf(job_dir: Path, p: LiquidParams) -> dict:
    """g(r) of the model's site (water: O-O) over production, its peak, first minimum and
    coordination number; errors from the spread of `rdf_blocks` blocks of frames."""
    from simagent.materials.rdf import rdf_peak_and_cn

    positions, boxes = site_trajectory(job_dir, "prod.xtc", p.molecule.site)
    stride = max(1, math.ceil(len(positions) / RDF_MAX_FRAMES))
    positions, boxes = positions[::stride], boxes[::stride]
    n_frames, n_sites = positions.shape[:2]
    if n_frames < 2 * p.rdf_blocks:
        raise CalculationFailed("too few trajectory frames for g(r): run a longer production")
    r_max = min(0.49 * float(boxes.min()), RDF_MAX_RANGE)
    volumes = boxes.prod(axis=1)
    rho = n_sites / float(volumes.mean())  # sites per angstrom^3
    counts = pair_histograms(positions, boxes, r_max, p.rdf_bins)
    r, g = gofr_from_counts(counts, volumes, n_sites, r_max)
    peak, r_min, cn = rdf_peak_and_cn(r, g, rho)
    dr = float(r[1] - r[0])
    peak_se, cn_se = dr / 2, None
    if p.rdf_blocks > 1:
        size = n_frames // p.rdf_blocks
        per_block = [rdf_peak_and_cn(r, gofr_from_counts(counts[b * size:(b + 1) * size],
                                                         volumes[b * size:(b + 1) * size], n_sites, r_max)[1], rho)
                     for b in range(p.rdf_blocks)]
        peak_se = max(dr / 2, float(np.std([x[0] for x in per_block], ddof=1) / np.sqrt(p.rdf_blocks)))
        cn_se = float(np.std([x[2] for x in per_block], ddof=1) / np.sqrt(p.rdf_blocks))
    cumulative = 4 * np.pi * rho * np.cumsum(g * r**2) * dr
    table = job_dir / "gr.csv"
    np.savetxt(table, np.column_stack([r, g, cumulative]), delimiter=",", header="r_angstrom,g,coordination",
               comments="")
    how = (f"the {p.molecule.site}-{p.molecule.site} g(r) ({p.rdf_bins} bins to {r_max:.2f} angstrom, minimum "
           f"image, {n_frames} frames, stride {stride}; errors from {p.rdf_blocks} blocks, peak error at least "
           "half a bin)")
    return {"peak": peak, "peak_se": peak_se, "r_min": r_min, "cn": cn, "cn_se": cn_se, "table": str(table),
            "how": how}


def einstein_msd(positions: np.ndarray) -> np.ndarray:
    """MSD(lag) averaged over all time origins and atoms, by FFT (tidynamics); positions (frames,
    atoms, 3) unwrapped. (MDAnalysis 2.11 EinsteinMSD treats XTC frames as unevenly spaced because
    float32 times differ in the last digits, and then averages per unique time difference.)"""
    import tidynamics

    return np.mean([tidynamics.msd(positions[:, atom, :]) for atom in range(positions.shape[1])], axis=0)


def analyze_msd(job_dir: Path, p: LiquidParams) -> dict:
    """D = slope / 6 of the Einstein MSD of the site atoms (unwrapped by trjconv -pbc nojump), fitted
    over a window of lag times (msd_fit_window of a block); error from `msd_blocks` blocks; gate:
    log-log slope 0.8-1.2 in the window (diffusive)."""
    positions, _ = site_trajectory(job_dir, "nojump.xtc", p.molecule.site)
    n_frames = len(positions)
    frame_dt = p.trajectory_every * p.timestep  # ps
    block = n_frames // p.msd_blocks
    lo = max(1, math.ceil(p.msd_fit_window[0] * (block - 1)))
    hi = math.floor(p.msd_fit_window[1] * (block - 1))
    if hi - lo < 4:
        raise CalculationFailed("trajectory too short for an MSD fit: run a longer production")
    lags = np.arange(lo, hi + 1)
    times = lags * frame_dt
    full = einstein_msd(positions)
    slope, _, _ = linear_fit(times, full[lags])
    alpha, _, _ = linear_fit(np.log(times), np.log(full[lags]))
    if not 0.8 <= alpha <= 1.2:
        raise CalculationFailed(f"MSD is not diffusive in the fit window {times[0]:.3g}-{times[-1]:.3g} ps: "
                                f"log-log slope {alpha:.2f} (need 0.8-1.2)")
    per_block = [linear_fit(times, einstein_msd(positions[b * block:(b + 1) * block])[lags])[0] / 6
                 for b in range(p.msd_blocks)]
    to_cm2_s = 1e-4  # angstrom^2/ps -> cm^2/s
    d_se = float(np.std(per_block, ddof=1) / np.sqrt(p.msd_blocks)) * to_cm2_s
    table = job_dir / "msd.csv"
    np.savetxt(table, np.column_stack([np.arange(full.size) * frame_dt, full]), delimiter=",",
               header="t_ps,msd_angstrom2", comments="")
    how = (f"Einstein MSD of {p.molecule.site} (trjconv -pbc nojump; FFT over all origins, {n_frames} frames "
           f"every {frame_dt:g} ps), linear fit MSD = 6 D t over lag {times[0]:.3g}-{times[-1]:.3g} ps "
           f"(log-log slope {alpha:.2f}); error from {p.msd_blocks} blocks; {p.production_ensemble.upper()} "
           "production, no finite-size (Yeh-Hummer) correction")
    return {"D": slope / 6 * to_cm2_s, "D_se": d_se, "table": str(table), "how": how}


def analyze_gyration(job_dir: Path, p: LiquidParams) -> dict:
    """Mass-weighted radius of gyration of each molecule (minimum image inside the molecule),
    averaged over molecules per frame; mean and blocking error over frames."""
    u = _universe(job_dir, "prod.xtc")
    per_mol = len(p.molecule.atoms)
    masses = u.atoms.masses.reshape(-1, per_mol)[0]
    total = masses.sum()
    series = []
    for ts in u.trajectory:
        box = ts.dimensions[:3]
        x = u.atoms.positions.reshape(-1, per_mol, 3)
        rel = x - x[:, :1, :]
        rel -= box * np.round(rel / box)
        com = np.einsum("a,nai->ni", masses, rel) / total
        rg2 = np.einsum("a,na->n", masses, ((rel - com[:, None, :]) ** 2).sum(axis=2)) / total
        series.append(float(np.mean(np.sqrt(rg2))))
    rg, se = block_average(np.asarray(series))
    how = (f"mass-weighted radius of gyration of each {p.molecule.molecule} molecule, averaged over the "
           f"molecules in each of {len(series)} frames; error by blocking over frames")
    return {"rg": rg, "rg_se": se if se > 0 else None, "how": how}
