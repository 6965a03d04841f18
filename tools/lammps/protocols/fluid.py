"""Protocol lammps/fluid_md: molecular dynamics of a Lennard-Jones fluid (reduced units) or of a
real monatomic fluid such as argon (metal units) at fixed temperature and density.

One job: an fcc lattice at the requested density is melted (unless a solid was asked for),
equilibrated with a Nose-Hoover thermostat, then sampled in a production run: NVT, or NVE when a
diffusion coefficient is wanted (a thermostat perturbs the dynamics). Thermo averages use the
samples after the detected equilibration, with block-averaged errors (simagent.stats); g(r) comes
from LAMMPS `compute rdf`; D from the Einstein MSD of unwrapped coordinates (MDAnalysis, FFT).
`PropertyRequest.step` counts steps from the start of the production run.

Detailed protocol descriptions (SimulationControls) are honoured: start lattice (fcc, bcc, sc; sq
or hex in 2D) and box in unit cells or an exact atom count, 2D runs (`dimension 2`, `fix
enforce2d`), thermostat style and damping, initial velocity temperature, and the averaging window
(after automatic equilibration detection by default, or the whole production run, the whole
simulation, or its last N steps). A request that describes its run protocol gets no extra melting
stage.

One named binary mixture is supported: the Kob-Andersen 80:20 LJ mixture (Phys. Rev. Lett. 73,
1376 (1994); Phys. Rev. E 51, 4626 (1995)), chosen when the request names it. Its pair parameters
are part of the model's definition (reduced units of the A-A pair); other mixtures are refused.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, Field, model_validator

from simagent import plots
from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, ReadError, RequestError, set_point_missed
from simagent.materials.rdf import rdf_peak_and_cn
from simagent.models import (
    Conditions,
    Job,
    PotentialSpec,
    PropertyRequest,
    Quantity,
    Result,
    SimulationControls,
    SystemSpec,
    TaskSpec,
)
from simagent.protocols import Protocol, register
from simagent.stats import block_average, detect_equilibration, linear_fit
from simagent.units import to_canonical
from tools.lammps.inputs import render
from tools.lammps.protocols.fluid_common import (
    Record,
    as_params,
    check_columns,
    check_sample_count,
    finished_output,
    md_job,
)

# CODATA 2018 (exact SI values)
K_B_EV = 8.617333262e-5  # eV/K
AVOGADRO = 6.02214076e23  # 1/mol
KJ_MOL_PER_EV = 96.48533212
KCAL_MOL_PER_EV = KJ_MOL_PER_EV / 4.184

# Rahman, Phys. Rev. 136, A405 (1964): argon as LJ with eps/kB = 120 K, sigma = 3.4 A, N = 864.
ARGON_EPSILON_K = 120.0
ARGON_SIGMA_A = 3.4

THERMO_PROPERTIES = frozenset(
    {
        "potential_energy_per_atom",
        "kinetic_energy_per_atom",
        "total_energy_per_atom",
        "temperature",
        "pressure",
        "density",
        "volume",
    }
)
RDF_PROPERTIES = frozenset({"rdf", "coordination_number"})
DIFFUSION = "self_diffusion_coefficient"
HEAT_CAPACITY = "heat_capacity"
FLUID_KINDS = ("lj_fluid", "atomic_fluid")

# Defaults per units style with their reasons (each one applied is reported in the answer).
# the usual LJ truncation (Allen & Tildesley); requests may say "3 sigma"
DEFAULT_CUTOFF_SIGMA = 2.5
DEFAULT_SEED = 12345
SKIN_SIGMA = 0.3  # neighbor skin, LAMMPS' default in lj units
# Atoms per unit cell and cell edge lengths in units of the lattice constant (LAMMPS `lattice`:
# hex is the orthogonal 2-atom cell a x sqrt(3) a).
BASIS = {"fcc": 4, "bcc": 2, "sc": 1, "sq": 1, "sq2": 2, "hex": 2}  # atoms per cell (LAMMPS lattice)
CELL_SHAPE = {"fcc": (1.0, 1.0, 1.0), "bcc": (1.0, 1.0, 1.0), "sc": (1.0, 1.0, 1.0), "sq": (1.0, 1.0, 1.0),
              "sq2": (1.0, 1.0, 1.0),
              "hex": (1.0, math.sqrt(3.0), 1.0)}
LATTICES_2D = frozenset({"sq", "sq2", "hex"})
DEFAULT_ATOMS_2D = 500  # 2D start: about as many atoms as the 3D default (N = 500)
MAX_BOX_ASPECT = 2.0  # an exact atom count may use a non-cubic box up to this edge ratio
THERMOSTATS = ("nose-hoover", "langevin", "berendsen", "csvr")

# Named LJ mixtures: (epsilon, sigma) per type pair in units of the A-A pair, masses, the share of
# type B and the citation. Kob & Andersen (PRL 73, 1376 (1994); PRE 51, 4626 (1995)): A80B20,
# eps_AB = 1.5, eps_BB = 0.5, sigma_AB = 0.8, sigma_BB = 0.88, equal masses, each pair truncated at
# 2.5 sigma_ab and shifted to zero there.
MIXTURES: dict[str, dict] = {
    "kob_andersen": {
        "pairs": {(1, 1): (1.0, 1.0), (1, 2): (1.5, 0.8), (2, 2): (0.5, 0.88)},
        "masses": (1.0, 1.0),
        "fraction_b": 0.2,
        "cutoff_sigma": 2.5,
        "shifted": True,
        "citation": "Kob & Andersen, Phys. Rev. E 51, 4626 (1995)",
        "pattern": r"kob[- ]?(?:and|&)?[- ]?andersen|\bka (?:mixture|model|liquid|system)\b|\bka[- ]?lj\b",
    },
}
# ---------------------------------------------------------------------------------------------
# Units: requests arrive as strings; every conversion lives here, in code.
# ---------------------------------------------------------------------------------------------

REDUCED = {"", "reduced", "lj", "reducedunits", "ljunits", "dimensionless", "none"}
_SPELLING = {"a": "angstrom", "ang": "angstrom", "angstroms": "angstrom", "kelvin": "k"}
_SPELLING |= {"°c": "c", "degc": "c", "celsius": "c", "g/ml": "g/cm^3"}

# Results are computed in the metal base unit (first entry) and converted by a factor.
OUTPUT_UNITS: dict[str, dict[str, tuple[float, str]]] = {
    "energy": {"ev": (1.0, "eV/atom"), "ev/atom": (1.0, "eV/atom"), "mev": (1e3, "meV/atom"),
               "mev/atom": (1e3, "meV/atom"), "kj/mol": (KJ_MOL_PER_EV, "kJ/mol"),
               "kcal/mol": (KCAL_MOL_PER_EV, "kcal/mol"), "k": (1 / K_B_EV, "K")},
    "pressure": {"bar": (1.0, "bar"), "atm": (1 / 1.01325, "atm"), "pa": (1e5, "Pa"),
                 "kpa": (1e2, "kPa"), "mpa": (0.1, "MPa"), "gpa": (1e-4, "GPa")},
    "temperature": {"k": (1.0, "K"), "c": (1.0, "°C")},  # °C: offset applied in _to_unit
    "density": {"g/cm^3": (1.0, "g/cm^3"), "kg/m^3": (1e3, "kg/m^3")},
    "volume": {"angstrom^3": (1.0, "angstrom^3"), "nm^3": (1e-3, "nm^3")},
    "length": {"angstrom": (1.0, "angstrom"), "nm": (0.1, "nm"), "pm": (100.0, "pm")},
    "heat_capacity": {"j/(molk)": (1.0, "J/(mol K)"), "j/mol/k": (1.0, "J/(mol K)"), "j/molk": (1.0, "J/(mol K)"),
                      "k_b": (1 / (K_B_EV * KJ_MOL_PER_EV * 1e3), "k_B/atom"),
                      "kb": (1 / (K_B_EV * KJ_MOL_PER_EV * 1e3), "k_B/atom"),
                      "ev/k": (1 / (KJ_MOL_PER_EV * 1e3), "eV/(K atom)")},
    "diffusion": {"cm^2/s": (1.0, "cm^2/s"), "m^2/s": (1e-4, "m^2/s"),
                  "angstrom^2/ps": (1e4, "angstrom^2/ps"), "nm^2/ns": (1e5, "nm^2/ns")},
}  # fmt: skip
KIND = {
    "potential_energy_per_atom": "energy",
    "kinetic_energy_per_atom": "energy",
    "total_energy_per_atom": "energy",
    "temperature": "temperature",
    "pressure": "pressure",
    "density": "density",
    "volume": "volume",
    "rdf": "length",
    "coordination_number": "count",
    DIFFUSION: "diffusion",
    HEAT_CAPACITY: "heat_capacity",
}


def norm_unit(unit: str | None) -> str:
    """Lower-case unit spelling without spaces: 'g/cm3' -> 'g/cm^3', 'Å' -> 'angstrom'."""
    text = (unit or "").strip().lower().replace(" ", "").replace("**", "^")
    text = text.replace("³", "^3").replace("²", "^2").replace("å", "angstrom")
    for length in ("cm", "m", "angstrom", "nm"):
        for power in ("2", "3"):
            text = text.replace(f"{length}{power}", f"{length}^{power}")
    return _SPELLING.get(text, text)


def output_unit(kind: str, units: str, requested: str | None) -> tuple[float, str]:
    """(factor, label) taking a value in the protocol's base unit to the requested unit."""
    if kind == "count":
        return 1.0, ""
    if units == "lj":
        if norm_unit(requested) not in REDUCED:
            raise RequestError(f"an LJ fluid reports {kind} in reduced units, not {requested!r}")
        return 1.0, "reduced"
    table = OUTPUT_UNITS[kind]
    key = norm_unit(requested) if requested else next(iter(table))
    if key not in table:
        raise RequestError(f"unknown {kind} unit {requested!r}; use one of {', '.join(table)}")
    return table[key]


def temperature_in(q: Quantity, units: str, epsilon_k: float | None) -> float:
    unit = norm_unit(q.unit)
    if units == "lj":
        if unit in REDUCED | {"epsilon/k_b", "epsilon/kb", "t*"}:
            return q.value
        if unit == "k" and epsilon_k:  # T* = T / (eps/kB)
            return q.value / epsilon_k
        raise RequestError(f"give an LJ fluid's temperature in reduced units, not {q.unit!r}")
    if unit in ("k", "c"):
        return q.value + (273.15 if unit == "c" else 0.0)
    raise RequestError(f"unknown temperature unit {q.unit!r} (use K or °C)")


def number_density_in(q: Quantity, units: str, mass: float, sigma: float) -> float:
    """Atoms per (length unit)^3: n = rho N_A / M for a mass density (g/cm^3 -> 1/A^3)."""
    unit = norm_unit(q.unit)
    if units == "lj":
        if unit in REDUCED | {"sigma^-3", "1/sigma^3", "rho*"}:
            return q.value
        raise RequestError(f"give an LJ fluid's density in reduced units, not {q.unit!r}")
    per_g_cm3 = {"g/cm^3": 1.0, "kg/m^3": 1e-3}
    if unit in per_g_cm3:
        return q.value * per_g_cm3[unit] * AVOGADRO / mass * 1e-24
    if unit in REDUCED:
        return q.value / sigma**3
    if unit in ("1/angstrom^3", "angstrom^-3"):
        return q.value
    raise RequestError(f"unknown density unit {q.unit!r} (use g/cm^3, kg/m^3 or reduced)")


def energy_ev(q: Quantity) -> float:
    per = {"k": K_B_EV, "ev": 1.0, "mev": 1e-3, "kj/mol": 1 / KJ_MOL_PER_EV}
    per["kcal/mol"] = 1 / KCAL_MOL_PER_EV
    unit = norm_unit(q.unit)
    if unit not in per:
        raise RequestError(f"unknown LJ epsilon unit {q.unit!r} (K for eps/kB, eV, kJ/mol...)")
    return q.value * per[unit]


def length_angstrom(q: Quantity) -> float:
    per = {"angstrom": 1.0, "nm": 10.0, "pm": 0.01}
    unit = norm_unit(q.unit)
    if unit not in per:
        raise RequestError(f"unknown length unit {q.unit!r} (use angstrom or nm)")
    return q.value * per[unit]


def timestep_in(q: Quantity, units: str) -> float:
    unit = norm_unit(q.unit)
    if units == "lj":
        if unit in REDUCED | {"tau"}:
            return q.value
        raise RequestError(f"give an LJ timestep in tau, not {q.unit!r}")
    per = {"fs": 1e-3, "ps": 1.0}
    if unit not in per:
        raise RequestError(f"unknown timestep unit {q.unit!r} (use fs or ps)")
    return q.value * per[unit]


def damping_time(q: Quantity, timestep: float, units: str, what: str) -> float:
    """A thermostat or barostat relaxation time in the units style's time unit (given in steps or a time)."""
    value = q.value * timestep if q.unit == "steps" else timestep_in(q, units)
    if value <= 0:
        raise RequestError(f"{what} damping must be positive, got {q}")
    return value


# ---------------------------------------------------------------------------------------------
# Start configuration and run description (from SimulationControls)
# ---------------------------------------------------------------------------------------------

def lattice_constant(lattice: str, number_density: float, dimension: int) -> float:
    """Lattice constant for a number density: basis atoms per cell of (shape product) a^d."""
    cell = math.prod(CELL_SHAPE[lattice][:dimension])
    return (BASIS[lattice] / (number_density * cell)) ** (1.0 / dimension)


def requested_mixture(spec: TaskSpec) -> str | None:
    """The named mixture the request text asks for (e.g. 'kob_andersen'), or None."""
    import re

    low = spec.request.lower()
    for name, model in MIXTURES.items():
        if re.search(model["pattern"], low):
            return name
    return None


def check_one_species(ctrl: SimulationControls) -> None:
    types = max(ctrl.atom_types or 1, len(ctrl.type_counts), len(ctrl.masses))
    if types > 1:
        raise RequestError(
            f"lammps/fluid_md simulates one particle type; a {types}-component mixture"
            + (f" ({ctrl.mixing_rule} mixing)" if ctrl.mixing_rule else "")
            + " is not supported yet"
        )


def reduced_mass(q: Quantity) -> float:
    if norm_unit(q.unit) not in REDUCED:
        raise RequestError(f"give an LJ particle's mass in reduced units, not {q.unit!r}")
    if q.value <= 0:
        raise RequestError(f"mass must be positive, got {q.value:g}")
    return q.value


def molar_mass(q: Quantity) -> float:
    if norm_unit(q.unit) not in ("g/mol", "amu", "u", "da"):
        raise RequestError(f"give the atomic mass in g/mol, not {q.unit!r}")
    if q.value <= 0:
        raise RequestError(f"mass must be positive, got {q.value:g}")
    return q.value


# ---------------------------------------------------------------------------------------------
# Fluid, particle and state point of a request (also used by the transport and energy protocols)
# ---------------------------------------------------------------------------------------------


def fluid_units_style(kind: str) -> str:
    """lj for a reduced LJ fluid, metal for a real (monatomic) fluid."""
    return "lj" if kind == "lj_fluid" else "metal"


def is_lj_fluid_task(spec: TaskSpec) -> bool:
    """An LJ or monatomic fluid, with an LJ (or unnamed) potential, in its own units style."""
    if spec.system is None or spec.system.kind not in FLUID_KINDS:
        return False
    if spec.potential is not None and spec.potential.family not in (None, "lj"):
        return False
    return spec.units_style in (None, fluid_units_style(spec.system.kind))


def fluid_units(system: SystemSpec, units_style: str | None, record: Record) -> str:
    """The units style of a fluid: its own (recorded when the request names none), or refused."""
    units = fluid_units_style(system.kind)
    if units_style is None:
        record("units_style", units, "lj for a reduced LJ fluid, metal for a real fluid")
    elif units_style != units:
        raise RequestError(f"a {system.kind} runs in {units} units, not {units_style}")
    return units


def monatomic_particle(
    system: SystemSpec, pot: PotentialSpec, record: Record, argon_source: str, given_mass: Quantity | None = None
) -> tuple[str, float, float, float]:
    """(element, mass g/mol, epsilon eV, sigma angstrom) of a real monatomic fluid: the given or the
    standard atomic mass; the given LJ parameters, or for argon Rahman's (cited as argon_source)."""
    if len(system.elements) != 1:
        raise RequestError("a monatomic fluid needs one element, e.g. elements=['Ar']")
    element = system.elements[0]
    if given_mass is not None:
        mass = molar_mass(given_mass)
    else:
        mass = atomic_mass(element)
        record("mass", f"{mass} g/mol", "standard atomic weight (ase.data)")
    if pot.lj_epsilon is not None and pot.lj_sigma is not None:
        epsilon, sigma = energy_ev(pot.lj_epsilon), length_angstrom(pot.lj_sigma)
    elif element == "Ar" and pot.lj_epsilon is None and pot.lj_sigma is None:
        epsilon, sigma = ARGON_EPSILON_K * K_B_EV, ARGON_SIGMA_A
        record("lj_epsilon, lj_sigma", "120 K (eps/kB), 3.4 angstrom", argon_source)
    else:
        raise RequestError(f"give the LJ epsilon and sigma for {element}")
    if epsilon <= 0 or sigma <= 0:
        raise RequestError("LJ epsilon and sigma must be positive")
    return element, mass, epsilon, sigma


def fixed_density_state(
    cond: Conditions, units: str, mass: float, sigma: float, epsilon_k: float | None, protocol: str, record: Record
) -> tuple[float, float]:
    """(temperature, number density) of a fixed-density run in the units style; the caller has
    checked that a temperature is given. A pressure is ignored (it is an output)."""
    if cond.density is None:
        hint = " (constant pressure is not supported: give a density)" if cond.pressure else ""
        raise RequestError(f"{protocol} runs at fixed density and needs one" + hint)
    temperature = temperature_in(cond.temperature, units, epsilon_k)
    if temperature <= 0:
        raise RequestError(f"temperature must be above absolute zero, got {cond.temperature}")
    if cond.density.value <= 0:
        raise RequestError(f"density must be positive, got {cond.density}")
    number_density = number_density_in(cond.density, units, mass, sigma)
    if cond.pressure is not None:
        record("conditions.pressure", "ignored", "fixed-density run: pressure is an output")
    return temperature, number_density


# start density of an NPT run when the request gives none: liquid-like, rho* = 0.8 (the NPT
# equilibration relaxes it); a state that is dilute as an ideal gas starts at that density instead
NPT_START_REDUCED_DENSITY = 0.8
# above the LJ critical temperature, T*_c = 1.31 (Potoff & Panagiotopoulos, J. Chem. Phys. 109, 10914 (1998))
LJ_CRITICAL_TEMPERATURE = 1.31
BAR_A3_EV = 1e5 * 1e-30 / 1.602176634e-19  # bar x angstrom^3 in eV


def pressure_in(q: Quantity, units: str) -> float:
    """A pressure in the units style's pressure unit: reduced (lj) or bar (metal)."""
    unit = norm_unit(q.unit)
    if units == "lj":
        if unit in REDUCED | {"p*", "epsilon/sigma^3"}:
            return q.value
        raise RequestError(f"give an LJ fluid's pressure in reduced units, not {q.unit!r}")
    bar = to_canonical(q, "pressure")
    if bar.unit != "bar":
        raise RequestError(f"give a real fluid's pressure in bar, atm, Pa, MPa..., not {q.unit!r}")
    return bar.value


def constant_pressure_state(
    cond: Conditions, units: str, mass: float, epsilon: float, sigma: float, epsilon_k: float | None,
    phase: str | None, record: Record,
) -> tuple[float, float, float]:
    """(temperature, pressure, start number density) of an NPT run in the units style."""
    if cond.pressure is None:
        raise RequestError("an NPT run needs a pressure")
    temperature = temperature_in(cond.temperature, units, epsilon_k)
    if temperature <= 0:
        raise RequestError(f"temperature must be above absolute zero, got {cond.temperature}")
    pressure = pressure_in(cond.pressure, units)
    if pressure < 0:
        raise RequestError(f"a negative pressure ({cond.pressure}) is a metastable state lammps/fluid_md does not run")
    if cond.density is not None:
        if cond.density.value <= 0:
            raise RequestError(f"density must be positive, got {cond.density}")
        record("conditions.density", "start density only", "NPT run: the density is an output")
        return temperature, pressure, number_density_in(cond.density, units, mass, sigma)
    k_t = temperature if units == "lj" else K_B_EV * temperature
    ideal = pressure / k_t if units == "lj" else pressure * BAR_A3_EV / k_t
    liquid = NPT_START_REDUCED_DENSITY / sigma**3
    start = liquid
    if ideal > 0 and (phase == "gas" or k_t / epsilon > LJ_CRITICAL_TEMPERATURE):
        start = min(ideal, liquid)
    why = ("liquid-like start, rho* = 0.8" if start == liquid
           else "ideal-gas density at T and P (a gas or supercritical state)")
    record("start_density", f"{start * sigma**3:.4g} sigma^-3", why + "; the NPT equilibration relaxes it")
    return temperature, pressure, start


def lj_cutoff_sigma(pot: PotentialSpec, units: str, sigma: float, record: Record, default_reason: str) -> float:
    """The LJ cutoff in sigma: given in sigma (or reduced), in a length (metal units), or the
    default DEFAULT_CUTOFF_SIGMA recorded with `default_reason`."""
    if pot.cutoff is None:
        cutoff_sigma = DEFAULT_CUTOFF_SIGMA
        record("cutoff", f"{cutoff_sigma} sigma", default_reason)
    elif norm_unit(pot.cutoff.unit) in REDUCED | {"sigma", "σ"}:
        cutoff_sigma = pot.cutoff.value
    elif units == "metal":
        cutoff_sigma = length_angstrom(pot.cutoff) / sigma
    else:
        raise RequestError(f"give an LJ fluid's cutoff in sigma, not {pot.cutoff.unit!r}")
    if cutoff_sigma <= 1.0:
        raise RequestError("an LJ cutoff must lie beyond 1 sigma")
    return cutoff_sigma


def velocity_seed(seed: int | None, record: Record) -> int:
    """The requested velocity seed, or DEFAULT_SEED (recorded)."""
    if seed is None:
        seed = DEFAULT_SEED
        record("seed", seed, "fixed velocity seed: reruns are reproducible")
    return seed


def start_lattice(ctrl: SimulationControls, record: Record) -> tuple[str, int]:
    """(lattice, dimension) of the start configuration; 2D runs start on sq or hex."""
    lattice, dimension = ctrl.lattice, ctrl.dimension
    if dimension is None:
        dimension = 2 if lattice in LATTICES_2D else 3
    if lattice is None:
        lattice = "hex" if dimension == 2 else "fcc"
        record("lattice", lattice, "start lattice: " + ("triangular (densest 2D packing)" if dimension == 2
                                                        else "fcc, the LJ crystal; melted before sampling"))
    if (dimension == 2) != (lattice in LATTICES_2D):
        raise RequestError(f"a {lattice} lattice does not fit a {dimension}D run (2D: square or hexagonal)")
    return lattice, dimension


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def exact_cells(n_atoms: int, lattice: str, dimension: int) -> list[int] | None:
    """Unit cells per axis holding exactly n_atoms in the most cubic box (edge ratio at most
    MAX_BOX_ASPECT), or None."""
    if n_atoms % BASIS[lattice]:
        return None
    m = n_atoms // BASIS[lattice]
    shape = CELL_SHAPE[lattice][:dimension]
    options = ([[a, m // a] for a in _divisors(m)] if dimension == 2 else
               [[a, b, m // (a * b)] for a in _divisors(m) for b in _divisors(m // a)])
    best, best_aspect = None, math.inf
    for counts in options:
        edges = [c * s for c, s in zip(counts, shape, strict=True)]
        aspect = max(edges) / min(edges)
        if aspect < best_aspect - 1e-12:
            best, best_aspect = counts, aspect
    return best if best_aspect <= MAX_BOX_ASPECT + 1e-9 else None


def near_cubic_cells(n_atoms: int, lattice: str, dimension: int) -> list[int]:
    """Cells per axis for about n_atoms in a box as close to cubic (square) as the cell allows."""
    shape = CELL_SHAPE[lattice][:dimension]
    edge = (n_atoms / BASIS[lattice] * math.prod(shape)) ** (1.0 / dimension)
    return [max(1, round(edge / s)) for s in shape]


def box_cells(ctrl: SimulationControls, lattice: str, dimension: int, record: Record,
              default_n_cells: Default) -> list[int]:
    """Unit cells along each axis: as given, or for the requested N (exactly when a box with at
    most a 2:1 edge ratio holds it), or the protocol default."""
    basis = BASIS[lattice]
    if ctrl.cells:
        if len(ctrl.cells) not in (1, dimension):
            raise RequestError(f"a {dimension}D box needs {dimension} cell counts, got {ctrl.cells}")
        cells = list(ctrl.cells) * (dimension if len(ctrl.cells) == 1 else 1)
        n = basis * math.prod(cells)
        if ctrl.n_atoms is not None and ctrl.n_atoms != n:
            raise RequestError(f"{'x'.join(map(str, cells))} {lattice} cells hold {n} atoms, not the "
                               f"{ctrl.n_atoms} the request gives")
        return cells
    if ctrl.n_atoms is not None:
        if ctrl.n_atoms < basis:
            raise RequestError(f"need at least {basis} atoms (one {lattice} cell)")
        cells = exact_cells(ctrl.n_atoms, lattice, dimension)
        if cells is None:
            cells = near_cubic_cells(ctrl.n_atoms, lattice, dimension)
            record("n_atoms", basis * math.prod(cells),
                   f"nearest count a near-cubic box of {lattice} cells holds (requested {ctrl.n_atoms})")
        return cells
    if dimension == 2:
        cells = near_cubic_cells(DEFAULT_ATOMS_2D, lattice, 2)
        record("cells", "x".join(map(str, cells)), f"about {DEFAULT_ATOMS_2D} atoms in a near-square box")
        return cells
    n, reason = default_n_cells.value, default_n_cells.reason
    if lattice == "fcc":
        record("n_cells", n, reason)
        return [n, n, n]
    cells = near_cubic_cells(4 * n**3, lattice, 3)
    record("n_cells", cells[0], f"about {4 * n**3} atoms on the {lattice} lattice ({reason})")
    return cells


def averaging_window(window: str | None, production_steps: int, record: Record) -> tuple[str, int | None]:
    """SimulationControls.average_window -> (FluidMDParams.average_window, last steps)."""
    if window is None:
        record("average_window", "production after equilibration detection",
               "the start of production is trimmed until U/N is stationary (Chodera 2016)")
        return "detect", None
    if window in ("production", "all"):
        return window, None
    steps = int(window.split()[1])
    if not 0 < steps <= production_steps:
        raise RequestError(f"cannot average over the last {steps} steps of a {production_steps}-step production run")
    return "last", steps


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# The parts of lammps/fluid_md's parameters (each reports the defaults it applies to `record`)
# ---------------------------------------------------------------------------------------------


def check_mixture(mixture: str | None, units: str, names: set[str], ctrl: SimulationControls,
                  pot: PotentialSpec) -> None:
    """One species, or a named mixture with its own masses and pair parameters."""
    if mixture is None:
        check_one_species(ctrl)
        return
    if units != "lj":
        raise RequestError("the Kob-Andersen mixture is defined in reduced LJ units")
    if DIFFUSION in names:
        raise RequestError("self-diffusion of a mixture needs per-species MSDs, which "
                           "lammps/fluid_md does not compute yet")
    if ctrl.masses or pot.lj_epsilon is not None or pot.lj_sigma is not None or ctrl.mixing_rule:
        raise RequestError("the Kob-Andersen mixture fixes its own masses and pair parameters "
                           f"({MIXTURES[mixture]['citation']}); a different mixture is not supported")


def fluid_particle(system: SystemSpec, pot: PotentialSpec, ctrl: SimulationControls, units: str,
                   record: Record) -> tuple[str | None, float, float, float, float | None]:
    """(element, mass, epsilon, sigma, epsilon/kB in K or None) of the fluid's particle."""
    if units != "lj":
        element, mass, epsilon, sigma = monatomic_particle(
            system, pot, record, "Rahman (1964)", ctrl.masses[0] if ctrl.masses else None
        )
        return element, mass, epsilon, sigma, None
    mass, epsilon, sigma, epsilon_k = 1.0, 1.0, 1.0, None
    for name, q in (("epsilon", pot.lj_epsilon), ("sigma", pot.lj_sigma)):
        if q is not None and norm_unit(q.unit) in REDUCED and q.value != 1.0:
            raise RequestError(f"in reduced LJ units {name} is 1 by definition, not {q.value:g}")
    if ctrl.masses:
        mass = reduced_mass(ctrl.masses[0])
    stated = {"epsilon": pot.lj_epsilon is not None, "sigma": pot.lj_sigma is not None,
              "mass": bool(ctrl.masses)}
    unstated = [name for name, given in stated.items() if not given]
    if unstated:
        record(", ".join(unstated), 1, "reduced LJ units define them as 1")
    if pot.lj_epsilon is not None and norm_unit(pot.lj_epsilon.unit) == "k":
        epsilon_k = pot.lj_epsilon.value
    return None, mass, epsilon, sigma, epsilon_k


def pair_details(pot: PotentialSpec, ctrl: SimulationControls, units: str, sigma: float, mixture: str | None,
                 npt: bool, record: Record) -> tuple[float, bool, bool]:
    """(cutoff in sigma, tail correction, shifted): a cutoff only the protocol text gave, e.g. "cut at
    3 sigma", counts too."""
    if pot.cutoff is None and ctrl.pair_cutoff is not None:
        pot = pot.model_copy(update={"cutoff": ctrl.pair_cutoff})
    if pot.cutoff is None and mixture is not None:
        cutoff_sigma = MIXTURES[mixture]["cutoff_sigma"]
        record("cutoff", f"{cutoff_sigma} sigma_ab per pair", f"model definition ({MIXTURES[mixture]['citation']})")
    else:
        cutoff_sigma = lj_cutoff_sigma(pot, units, sigma, record, "usual LJ truncation (Allen & Tildesley)")
    tail = pot.tail_correction
    if npt and not tail and not pot.shifted and mixture is None:
        tail = True
        record("tail_correction", "yes", "constant pressure: the long-range correction restores the "
               "untruncated LJ pressure, without it the density is biased low")
    elif not tail:
        record("tail_correction", "no", "not requested (pair_modify tail no)")
    shifted = pot.shifted
    if mixture is not None and MIXTURES[mixture]["shifted"]:
        shifted = True
        if not pot.shifted:
            record("shifted", "yes", f"each pair shifted to zero at its cutoff ({MIXTURES[mixture]['citation']})")
    elif not pot.shifted:
        record("shifted", "no", "not requested: truncated, unshifted LJ")
    return cutoff_sigma, tail, shifted


def fitted_cells(ctrl: SimulationControls, lattice: str, dimension: int, number_density: float,
                 cutoff_sigma: float, sigma: float, log: DefaultsLog) -> list[int]:
    """The box's unit cells (box_cells), with cells added along the short edges so the cutoff fits."""
    cells = box_cells(ctrl, lattice, dimension, log, log.declared["n_cells"])
    a = lattice_constant(lattice, number_density, dimension)
    shape = CELL_SHAPE[lattice]
    wanted = [math.ceil((2 * cutoff_sigma + SKIN_SIGMA) * sigma / (a * shape[i]) - 1e-9) for i in range(dimension)]
    grown = [max(c, w) for c, w in zip(cells, wanted, strict=True)]
    if grown != cells:
        cells = grown
        log("n_atoms", BASIS[lattice] * math.prod(cells), "box edge must exceed 2 x cutoff + skin")
    return cells


def production_ensemble(ensemble: str | None, names: set[str], npt: bool, record: Record) -> str:
    """The production run's ensemble: as requested, else NVE for diffusion, NPT at a pressure, else NVT."""
    if HEAT_CAPACITY in names and (ensemble == "nve" or DIFFUSION in names):
        raise RequestError("a heat capacity comes from the energy fluctuations of a thermostatted run "
                           "(NVT: C_V, NPT: C_P), a diffusion coefficient from an NVE run: ask for them separately")
    if ensemble is not None:
        return ensemble
    if DIFFUSION in names:
        ensemble, why = "nve", "a thermostat perturbs the dynamics"
        if npt:
            why += "; run at the mean volume of the NPT equilibration"
    elif npt:
        ensemble, why = "npt", "the request gives a pressure, not a density"
    else:
        ensemble, why = "nvt", "canonical sampling"
    record("production_ensemble", ensemble, why)
    return ensemble


def barostat_damping_time(ctrl: SimulationControls, npt: bool, timestep: float, units: str,
                          record: Record) -> float | None:
    """The Nose-Hoover (MTK) barostat's relaxation time of an NPT run (None: fixed volume)."""
    if not npt:
        if ctrl.barostat is not None or ctrl.barostat_damping is not None:
            raise RequestError("a barostat needs a pressure to hold (the request gives a density)")
        return None
    if ctrl.barostat not in (None, "nose-hoover"):
        raise RequestError(f"lammps/fluid_md offers the Nose-Hoover (MTK) barostat, not {ctrl.barostat}")
    if ctrl.barostat_damping is not None:
        return damping_time(ctrl.barostat_damping, timestep, units, "barostat")
    damping = 1000 * timestep
    record("barostat_damping", f"{damping:g} (1000 timesteps)", "LAMMPS manual's advice for fix npt")
    return damping


def thermostat_settings(ctrl: SimulationControls, ensemble: str, pressure: float | None, timestep: float,
                        units: str, epsilon_k: float | None,
                        log: DefaultsLog) -> tuple[str, float | None, float | None, bool]:
    """(thermostat, its damping time or None, initial velocity temperature or None, thermostatted)."""
    thermostat = ctrl.thermostat or "nose-hoover"
    if thermostat not in THERMOSTATS:
        raise RequestError(f"lammps/fluid_md offers the {', '.join(THERMOSTATS)} thermostats, not {thermostat}")
    if ctrl.thermostat is None:
        log("thermostat", thermostat, "Nose-Hoover (fix nvt): deterministic canonical sampling")
    damping = None
    if ctrl.thermostat_damping is not None:
        damping = damping_time(ctrl.thermostat_damping, timestep, units, "thermostat")
    else:
        log("thermostat_damping", f"{100 * timestep:g} (100 timesteps)", "LAMMPS manual's advice for fix nvt")
    velocity_temperature = None
    if ctrl.velocity_temperature is not None:
        velocity_temperature = temperature_in(ctrl.velocity_temperature, units, epsilon_k)
        if velocity_temperature <= 0:
            raise RequestError(f"initial velocity temperature must be positive, got {ctrl.velocity_temperature}")
    # NVE started from velocities at a stated temperature, with no thermostat: that temperature
    # starts the run and is no target (the temperature it settles at is a result); the run is
    # executed as described
    thermostatted = not (ensemble == "nve" and not ctrl.holds_temperature and velocity_temperature is not None
                         and pressure is None)
    if not thermostatted:  # nothing thermostats this run: the thermostat defaults do not apply
        log.drop("thermostat", "thermostat_damping")
    return thermostat, damping, velocity_temperature, thermostatted


def sampled_thermo_every(properties: list[PropertyRequest], units: str, thermo_every: int,
                         production_steps: int) -> int:
    """The thermo output interval, so that every step a property is asked at is printed (and every
    requested unit can be given)."""
    for prop in properties:
        output_unit(KIND[prop.name], units, prop.unit)  # fail now on a unit we cannot give
        if prop.at != "average" and prop.name not in THERMO_PROPERTIES:
            raise RequestError(f"{prop.name} is a time average; at={prop.at!r} is not possible")
        if prop.at == "step":
            if prop.step is None or not 0 <= prop.step <= production_steps:
                raise RequestError(f"step must lie in 0..{production_steps} (production run)")
            thermo_every = math.gcd(thermo_every, prop.step) or thermo_every
    return thermo_every


def mixture_counts(mixture: str | None, ctrl: SimulationControls, n_atoms: int, record: Record) -> list[int] | None:
    """Atoms of types A and B of a named mixture: as requested when they add up to N, else the model's share."""
    if mixture is None:
        return None
    if len(ctrl.type_counts) == 2 and sum(ctrl.type_counts) == n_atoms:
        return list(ctrl.type_counts)
    n_b = round(MIXTURES[mixture]["fraction_b"] * n_atoms)
    type_counts = [n_atoms - n_b, n_b]
    record("type_counts", f"{type_counts[0]} A + {type_counts[1]} B",
           f"{100 * (1 - MIXTURES[mixture]['fraction_b']):g}:{100 * MIXTURES[mixture]['fraction_b']:g} "
           f"composition of the model" + (f" (the requested {ctrl.type_counts} do not add up to "
                                          f"N = {n_atoms})" if ctrl.type_counts else ""))
    return type_counts


class FluidMDParams(BaseModel):
    """Everything that fixes the run. Units style lj: sigma, epsilon, tau, reduced T; metal:
    angstrom, eV, ps, K, mass in g/mol."""

    # Run defaults per units style, each with its reason (every one applied is reported in the answer)
    DEFAULTS: ClassVar[dict[str, dict[str, Default]]] = {
        "lj": {
            "n_cells": Default(5, "N = 500, as in the NIST LJ reference simulations (SRSW)", "NIST SRSW"),
            "timestep": Default(0.005, "0.005 tau, usual for LJ MD (Allen & Tildesley)", "Allen & Tildesley"),
            "melt_steps": Default(1000, "5 tau at twice the target T melts the fcc start (~3 tau needed)"),
            "equilibration_steps": Default(3000, "15 tau NVT, then equilibration detection trims more"),
            "production_steps": Default(20000, "100 tau: U/N to ~0.05 %, P to ~1.5 % at N = 500"),
            "dump_every": Default(20, "0.1 tau between MSD frames"),
        },
        "metal": {
            "n_cells": Default(6, "N = 864, as in Rahman's argon MD (Phys. Rev. 136, A405, 1964)",
                               "Rahman, Phys. Rev. 136, A405 (1964)"),
            "timestep": Default(0.01, "10 fs as in Rahman (1964) for argon (~0.005 tau)",
                                "Rahman, Phys. Rev. 136, A405 (1964)"),
            "melt_steps": Default(1000, "10 ps at twice the target temperature melts the fcc start"),
            "equilibration_steps": Default(3000, "30 ps NVT, then equilibration detection trims more"),
            "production_steps": Default(10000, "100 ps: five 20 ps blocks for the diffusion error"),
            "dump_every": Default(10, "0.1 ps between MSD frames"),
        },
    }

    units: Literal["lj", "metal"]
    element: str | None = None
    mass: float = Field(gt=0)
    epsilon: float = Field(gt=0)
    sigma: float = Field(gt=0)
    temperature: float = Field(gt=0)
    number_density: float = Field(gt=0, description="atoms per length^3")
    n_cells: int = Field(ge=1, description="cells per box edge of a cubic (square) box: N = basis n^d")
    lattice: Literal["fcc", "bcc", "sc", "sq", "sq2", "hex"] = "fcc"
    dimension: Literal[2, 3] = 3
    cells: list[int] | None = Field(default=None, description="unit cells along x, y(, z); overrides n_cells")
    cutoff_sigma: float = Field(gt=1.0)
    tail_correction: bool = False
    shifted: bool = False
    skin_sigma: float = Field(default=SKIN_SIGMA, gt=0)
    timestep: float = Field(gt=0)
    thermostat_damp_steps: int = Field(default=100, gt=0, description="Nose-Hoover damping")
    thermostat: Literal["nose-hoover", "langevin", "berendsen", "csvr"] = "nose-hoover"
    thermostat_damping: float | None = Field(
        default=None, gt=0, description="thermostat damping in time units; None: thermostat_damp_steps x timestep"
    )
    velocity_temperature: float | None = Field(default=None, gt=0, description="initial velocities at this T")
    average_window: Literal["detect", "production", "all", "last"] = "detect"
    average_last_steps: int | None = Field(default=None, gt=0, description="steps averaged for window 'last'")
    melt_steps: int = Field(ge=0)
    melt_temperature_factor: float = Field(default=2.0, ge=1.0)
    equilibration_steps: int = Field(ge=0)
    production_steps: int = Field(gt=0)
    production_ensemble: Literal["nvt", "nve", "npt"] = "nvt"
    pressure: float | None = Field(
        default=None, description="NPT set point (reduced or bar); None: fixed density. Equilibration "
        "(after the fixed-volume melt) is NPT; an NVE production runs at the mean NPT volume")
    barostat_damping: float | None = Field(default=None, gt=0, description="barostat relaxation time")
    thermostatted: bool = Field(default=True, description="False: a described NVE run without a thermostat (the "
                                "velocity temperature starts it and is no target)")
    rescale_nve: bool = Field(default=True, description="scale velocities to the target before NVE production "
                              "(not when the request states the temperature its velocities start at)")
    thermo_every: int = Field(default=10, gt=0)
    seed: int = Field(default=DEFAULT_SEED, gt=0)
    mixture: Literal["kob_andersen"] | None = Field(default=None, description="a named LJ mixture (MIXTURES)")
    type_counts: list[int] | None = Field(default=None, description="atoms of types A, B of the mixture")
    rdf: bool = False
    rdf_bins: int = Field(default=200, ge=10)
    rdf_every: int = Field(default=100, gt=0)
    rdf_blocks: int = Field(default=5, ge=1)
    msd: bool = False
    dump_every: int = Field(default=10, gt=0)
    msd_blocks: int = Field(default=5, ge=2)
    msd_fit_window: tuple[float, float] = (0.2, 0.6)
    temperature_tolerance: float = Field(default=0.05, gt=0)
    time_limit_s: float = Field(default=600.0, gt=0)

    @property
    def cell_counts(self) -> tuple[int, int, int]:
        """Unit cells along x, y, z (z = 1 in 2D)."""
        counts = list(self.cells) if self.cells else [self.n_cells]
        if len(counts) == 1:
            counts = counts * self.dimension
        if self.dimension == 2:
            return counts[0], counts[1], 1
        return counts[0], counts[1], counts[2]

    @property
    def n_atoms(self) -> int:
        return BASIS[self.lattice] * math.prod(self.cell_counts)

    @property
    def lattice_constant(self) -> float:
        return lattice_constant(self.lattice, self.number_density, self.dimension)

    @property
    def box_lengths(self) -> tuple[float, ...]:
        shape = CELL_SHAPE[self.lattice]
        return tuple(n * s * self.lattice_constant for n, s in zip(self.cell_counts, shape, strict=True))

    @property
    def box_length(self) -> float:
        """The shortest periodic box edge (the one the cutoff must fit into)."""
        return min(self.box_lengths[: self.dimension])

    @property
    def damping(self) -> float:
        return self.thermostat_damping or self.thermostat_damp_steps * self.timestep

    @property
    def cutoff(self) -> float:
        return self.cutoff_sigma * self.sigma

    @model_validator(mode="after")
    def _consistent(self) -> FluidMDParams:
        if (self.dimension == 2) != (self.lattice in LATTICES_2D):
            raise ValueError(f"lattice {self.lattice} does not fit a {self.dimension}D run (2D: sq, hex)")
        if self.cells is not None and (len(self.cells) not in (1, self.dimension) or min(self.cells) < 1):
            raise ValueError(f"cells needs 1 or {self.dimension} positive counts, got {self.cells}")
        if self.box_length < 2 * self.cutoff + self.skin_sigma * self.sigma:
            raise ValueError(f"box edge {self.box_length:.4g} < 2 x cutoff + skin: use more cells")
        if self.average_window == "last" and not self.average_last_steps:
            raise ValueError("average_window 'last' needs average_last_steps")
        if self.production_ensemble == "npt" and self.pressure is None:
            raise ValueError("an NPT production needs a pressure")
        if self.pressure is not None and (self.barostat_damping is None or self.equilibration_steps < 2):
            raise ValueError("an NPT run needs a barostat damping and an equilibration stage")
        if self.rdf and self.production_steps % (self.rdf_blocks * self.rdf_every):
            raise ValueError("production_steps must be a multiple of rdf_blocks * rdf_every")
        lo, hi = self.msd_fit_window
        if not 0.0 < lo < hi <= 1.0:
            raise ValueError("msd_fit_window needs 0 < start < end <= 1 (fractions of a block)")
        if self.mixture is not None:
            if self.units != "lj" or self.dimension != 3:
                raise ValueError("a named LJ mixture runs in 3D reduced units")
            counts = self.type_counts or []
            if len(counts) != 2 or min(counts) < 1 or sum(counts) != self.n_atoms:
                raise ValueError(f"type_counts must give A and B atoms adding up to N = {self.n_atoms}")
        return self

    def pair_table(self) -> list[tuple[int, int, float, float, float]]:
        """(type i, type j, epsilon, sigma, cutoff) of every pair of a mixture (empty for one species)."""
        if self.mixture is None:
            return []
        return [(i, j, eps * self.epsilon, sig * self.sigma, self.cutoff_sigma * sig * self.sigma)
                for (i, j), (eps, sig) in MIXTURES[self.mixture]["pairs"].items()]


def _as_params(params: BaseModel | dict) -> FluidMDParams:
    return as_params(FluidMDParams, params)


@register
class FluidMD(Protocol):
    name = "lammps/fluid_md"
    engine = "lammps"
    properties = THERMO_PROPERTIES | RDF_PROPERTIES | {DIFFUSION, HEAT_CAPACITY}
    Params = FluidMDParams
    description = (
        "MD of an LJ or monatomic fluid at fixed T and density (NVT) or pressure (NPT): Nose-Hoover equilibration, "
        "NVT, NPT or NVE production; block-averaged thermo, heat capacity from energy fluctuations, g(r), CN, "
        "self-diffusion from the Einstein MSD; also the Kob-Andersen 80:20 binary LJ mixture (thermo, total g(r))"
    )

    def applies_to(self, spec: TaskSpec) -> bool:
        if spec.engine != "lammps":  # e.g. "argon with GROMACS" goes to gromacs/liquid_md
            return False
        if not is_lj_fluid_task(spec):
            return False
        return bool(spec.properties) and {p.name for p in spec.properties} <= self.properties

    # -- parameters ---------------------------------------------------------------------------

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> FluidMDParams:
        system = spec.system
        if system is None or system.kind not in FLUID_KINDS:
            raise RequestError("lammps/fluid_md needs an LJ fluid or a monatomic fluid")
        names = {p.name for p in spec.properties}
        if not names or not names <= self.properties:
            raise RequestError(f"lammps/fluid_md computes {', '.join(sorted(self.properties))}")
        units = fluid_units(system, spec.units_style, log)
        pot = spec.potential or PotentialSpec(family="lj")
        if pot.family not in (None, "lj"):
            raise RequestError(f"lammps/fluid_md uses a Lennard-Jones potential, not {pot.family}")
        ctrl = spec.controls
        mixture = requested_mixture(spec)
        check_mixture(mixture, units, names, ctrl, pot)
        element, mass, epsilon, sigma, epsilon_k = fluid_particle(system, pot, ctrl, units, log)

        # state point
        cond = spec.conditions
        if cond.temperature is None:
            raise RequestError("an MD run of a fluid needs a temperature")
        npt = ctrl.ensemble == "npt" or (cond.density is None and cond.pressure is not None)
        if cond.density is None and cond.pressure is None:
            raise RequestError("an MD run of a fluid needs a density (NVT) or a pressure (NPT)")
        pressure = None
        if npt:
            temperature, pressure, number_density = constant_pressure_state(
                cond, units, mass, epsilon, sigma, epsilon_k, system.phase, log)
        else:
            temperature, number_density = fixed_density_state(cond, units, mass, sigma, epsilon_k, self.name, log)
        cutoff_sigma, tail, shifted = pair_details(pot, ctrl, units, sigma, mixture, npt, log)

        # run controls: the request's values, else the model's declared defaults for the units style
        log.declared = FluidMDParams.DEFAULTS[units]
        timestep = log.take("timestep", timestep_in(ctrl.timestep, units) if ctrl.timestep else None)
        lattice, dimension = start_lattice(ctrl, log)
        if mixture is not None and len(ctrl.type_counts) == 2 and ctrl.n_atoms is None and not ctrl.cells:
            # "800 A and 200 B particles": the box holds their sum
            ctrl = ctrl.model_copy(update={"n_atoms": sum(ctrl.type_counts)})
        cells = fitted_cells(ctrl, lattice, dimension, number_density, cutoff_sigma, sigma, log)
        ensemble = production_ensemble(ctrl.ensemble, names, npt, log)
        barostat_damping = barostat_damping_time(ctrl, npt, timestep, units, log)
        thermostat, damping, velocity_temperature, thermostatted = thermostat_settings(
            ctrl, ensemble, pressure, timestep, units, epsilon_k, log)
        described = ctrl.velocity_temperature is not None or ctrl.equilibration_steps is not None
        if system.phase == "solid":
            melt_steps = 0
            log("melt_steps", 0, "a solid was asked for: the fcc lattice is kept")
        elif described:
            melt_steps = 0
            log("melt_steps", 0, "the request describes its run protocol: no extra melting stage")
        else:
            melt_steps = log.take("melt_steps")
        equilibration_steps = log.take("equilibration_steps", ctrl.equilibration_steps)
        if npt and log.applied and log.applied[-1].parameter == "equilibration_steps":  # the reasons say NVT
            last = log.applied[-1]
            log.applied[-1] = last.model_copy(update={"reason": last.reason.replace("NVT", "NPT")})
        production_steps = log.take("production_steps", ctrl.production_steps)
        seed = velocity_seed(ctrl.seed, log)
        window, last_steps = averaging_window(ctrl.average_window, production_steps, log)
        thermo_every = sampled_thermo_every(spec.properties, units, ctrl.thermo_every or 10, production_steps)
        rdf_blocks = 5 if production_steps % 5 == 0 else 1
        type_counts = mixture_counts(mixture, ctrl, BASIS[lattice] * math.prod(cells), log)
        params = FluidMDParams(
            units=units, element=element, mass=mass, epsilon=epsilon, sigma=sigma,
            temperature=temperature, number_density=number_density, n_cells=cells[0],
            lattice=lattice, dimension=dimension, cells=cells,
            cutoff_sigma=cutoff_sigma, tail_correction=tail, shifted=shifted,
            mixture=mixture, type_counts=type_counts,
            timestep=timestep, thermostat=thermostat, thermostat_damping=damping,
            velocity_temperature=velocity_temperature, melt_steps=melt_steps,
            equilibration_steps=equilibration_steps, production_steps=production_steps,
            production_ensemble=ensemble, pressure=pressure, barostat_damping=barostat_damping,
            average_window=window, average_last_steps=last_steps,
            thermostatted=thermostatted, rescale_nve=velocity_temperature is None,
            thermo_every=thermo_every, seed=seed, rdf=bool(names & RDF_PROPERTIES),
            rdf_blocks=rdf_blocks, rdf_every=math.gcd(100, production_steps // rdf_blocks),
            msd=DIFFUSION in names, dump_every=FluidMDParams.DEFAULTS[units]["dump_every"].value,
        )  # fmt: skip
        return params

    # -- jobs ---------------------------------------------------------------------------------

    def jobs(self, params: BaseModel) -> list[Job]:
        p = _as_params(params)
        nx, ny, nz = p.cell_counts
        text = render(
            "fluid_md.lmp.j2",
            title=(f"{p.element or 'LJ'} fluid" if p.mixture is None else f"{p.mixture} LJ mixture")
            + f", N = {p.n_atoms}, T = {p.temperature:g}",
            mixture=p.mixture, type_counts=p.type_counts, pairs=p.pair_table(),
            units=p.units, lattice_constant=p.lattice_constant, number_density=p.number_density,
            lattice=p.lattice, dimension=p.dimension, nx=nx, ny=ny, nz=nz,
            mass=p.mass, cutoff=p.cutoff, epsilon=p.epsilon, sigma=p.sigma,
            shifted=p.shifted, tail_correction=p.tail_correction, skin=p.skin_sigma * p.sigma,
            timestep=p.timestep, thermo_every=p.thermo_every, seed=p.seed,
            melt_steps=p.melt_steps, melt_temperature=p.temperature * p.melt_temperature_factor,
            temperature=p.temperature, thermostat=p.thermostat, thermostat_damp=p.damping,
            velocity_temperature=p.velocity_temperature,
            equilibration_steps=p.equilibration_steps, production_steps=p.production_steps,
            production_ensemble=p.production_ensemble, pressure=p.pressure, barostat_damp=p.barostat_damping,
            thermostatted=p.thermostatted, rescale_nve=p.rescale_nve,
            rdf=p.rdf, rdf_bins=p.rdf_bins,
            rdf_every=p.rdf_every, rdf_block_steps=p.production_steps // p.rdf_blocks,
            msd=p.msd, dump_every=p.dump_every,
        )  # fmt: skip
        return [md_job(self.name, p, {"in.lammps": text}, p.time_limit_s)]

    # -- analysis -----------------------------------------------------------------------------

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = _as_params(params)
        job_dir = Path(job_dirs["md"])
        out = finished_output(job_dir)
        thermo = out.last_run()
        check_thermo(thermo, p)
        averaged, t0, window = averaging_samples(out.runs, thermo, p)
        gate_from = t0 if p.average_window != "all" else 0
        if p.thermostatted:  # NVE without a thermostat has no temperature target
            check_temperature(thermo["Temp"][gate_from:], p.temperature, p.temperature_tolerance)
        plot_thermo(job_dir / "thermo.png", averaged, t0, p.units)
        if p.production_ensemble == "npt":
            check_pressure(thermo["Press"][gate_from:], p.pressure)

        start = f"{p.dimension}D {p.lattice} start" + (f" ({'x'.join(map(str, p.cell_counts[:p.dimension]))} cells)")
        thermostat = f"{p.thermostat} thermostat, damping {p.damping:g}" + (
            " (equilibration only)" if p.production_ensemble == "nve" else "")
        if not p.thermostatted:
            thermostat = f"no thermostat, velocities created at T = {p.velocity_temperature:g}"
        if p.pressure is not None:
            thermostat += f"; Nose-Hoover barostat at P = {p.pressure:g} {'reduced' if p.units == 'lj' else 'bar'}, " \
                f"damping {p.barostat_damping:g}" + ("" if p.production_ensemble == "npt" else
                                                     ", equilibration only, production at the mean NPT volume")
        run = (
            f"N = {p.n_atoms}, {start}, {p.production_ensemble.upper()} production of "
            f"{p.production_steps} steps (dt = {p.timestep:g}; {thermostat}), LJ cutoff {p.cutoff_sigma:g} sigma"
            f"{', tail correction' if p.tail_correction else ''}{', shifted' if p.shifted else ''}"
        )
        if p.mixture is not None:
            a, b = p.type_counts or (0, 0)
            run += (f"; {MIXTURES[p.mixture]['citation']} mixture, {a} A + {b} B (cutoff per pair "
                    f"{p.cutoff_sigma:g} sigma_ab); g(r) over all pairs")
        rdf = msd = None
        results = []
        for prop in spec.properties:
            data_file = None
            if prop.name in THERMO_PROPERTIES:
                if prop.at == "average":
                    value, se, how = thermo_value(averaged, prop, p.units, t0, window)
                else:
                    value, se, how = thermo_value(thermo, prop, p.units, 0)
                quantity = prop.name
            elif prop.name == HEAT_CAPACITY:
                quantity = prop.name
                value, se, how = heat_capacity(averaged, t0, p)
            elif prop.name in RDF_PROPERTIES:
                # LAMMPS normalises g(r) by the N - 1 other atoms: with rho = (N - 1)/V the
                # integral counts neighbours exactly (12 in fcc, not 12 N/(N - 1))
                rho = float(np.mean((thermo["Atoms"] - 1) / thermo["Volume"]))
                rdf = rdf or analyze_rdf(job_dir, p, rho)
                data_file, how = rdf["table"], rdf["how"]
                if prop.name == "rdf":
                    quantity, value, se = "rdf_first_peak", rdf["peak"], rdf["peak_se"]
                    how = f"first maximum of g(r) {how}"
                else:
                    quantity, value, se = prop.name, rdf["cn"], rdf["cn_se"]
                    shell = "4 pi rho int_0^r_min g(r) r^2 dr" if p.dimension == 3 else "2 pi rho int_0^r_min g(r) r dr"
                    how = f"{shell} to the first minimum after the first peak, r_min = {rdf['r_min']:.4g} {how}"
            else:
                msd = msd or analyze_msd(job_dir, p)
                to_base = 1.0 if p.units == "lj" else 1e-4  # angstrom^2/ps -> cm^2/s
                quantity, value, se = prop.name, msd["D"] * to_base, msd["D_se"] * to_base
                data_file, how = msd["table"], msd["how"]
            factor, label = output_unit(KIND[prop.name], p.units, prop.unit)
            offset = -273.15 if label == "°C" else 0.0
            point = prop.name in THERMO_PROPERTIES and prop.at != "average"
            results.append(
                Result(
                    quantity=quantity,
                    statistic=prop.at if point else "average",
                    step=prop.step if point and prop.at == "step" else None,
                    value=value * factor + offset,
                    unit=label,
                    uncertainty=None if se is None else abs(se * factor),
                    job="md",
                    method=f"{how}; {run}",
                    log=str(job_dir / "log.lammps"),
                    data_file=data_file,
                )
            )
        return results


# ---------------------------------------------------------------------------------------------
# Analysis helpers (module level so tests can feed them synthetic data)
# ---------------------------------------------------------------------------------------------


def atomic_mass(element: str) -> float:
    from ase.data import atomic_masses, atomic_numbers

    if element not in atomic_numbers:
        raise RequestError(f"unknown element {element!r}")
    return float(atomic_masses[atomic_numbers[element]])


def thermo_series(thermo: dict[str, np.ndarray], name: str, units: str) -> np.ndarray:
    """A property's time series from the thermo columns (norm no: divide by Atoms)."""
    per_atom = {"potential": "PotEng", "kinetic": "KinEng", "total": "TotEng"}
    if name.endswith("_energy_per_atom"):
        return thermo[per_atom[name.split("_")[0]]] / thermo["Atoms"]
    if name == "density":  # lj: number density N/V; metal: LAMMPS mass density in g/cm^3
        return thermo["Atoms"] / thermo["Volume"] if units == "lj" else thermo["Density"]
    return thermo[{"temperature": "Temp", "pressure": "Press", "volume": "Volume"}[name]]


def averaging_samples(
    runs: list[dict[str, np.ndarray]], production: dict[str, np.ndarray], p: FluidMDParams
) -> tuple[dict[str, np.ndarray], int, str]:
    """(thermo samples to average, first sample used, description) for the averaging window."""
    if p.average_window == "production":
        return production, 0, "the whole production run, as requested"
    if p.average_window == "last":
        last = production["Step"][-1]
        first = int(np.nonzero(production["Step"] >= last - p.average_last_steps)[0][0])
        return production, first, f"the last {p.average_last_steps} production steps, as requested"
    if p.average_window == "all":
        # every run of the input (melt, equilibration, production); each run's first row repeats
        # the previous run's last configuration and is dropped
        rescaled = p.pressure is not None and p.production_ensemble != "npt"  # + NVT at the mean NPT volume
        stages = runs[-(1 + (p.equilibration_steps > 0) + rescaled + (p.melt_steps > 0)):]
        keys = [k for k in production if all(k in r for r in stages)]
        joined = {k: np.concatenate([r[k] if i == 0 else r[k][1:] for i, r in enumerate(stages)]) for k in keys}
        return joined, 0, "the whole simulation (all runs), as requested"
    t0 = detect_equilibration(production["PotEng"] / production["Atoms"])
    return production, t0, "production after equilibration detection, Chodera 2016"


def thermo_value(
    thermo: dict[str, np.ndarray], prop: PropertyRequest, units: str, t0: int,
    window: str = "production after equilibration detection, Chodera 2016",
) -> tuple[float, float | None, str]:
    """(value, standard error or None, method) of a thermo property in the base unit."""
    series = thermo_series(thermo, prop.name, units)
    if prop.at == "last_step":
        step = int(thermo["Step"][-1])
        return float(series[-1]), None, f"value at the last production step ({step})"
    if prop.at == "step":
        rows = np.nonzero(thermo["Step"] == prop.step)[0]
        if rows.size == 0:
            raise ReadError(f"no thermo output at production step {prop.step}")
        return float(series[rows[0]]), None, f"value at production step {prop.step}"
    mean, se = block_average(series[t0:])
    how = (
        f"mean of samples {t0}..{series.size - 1} ({window}), standard error by Flyvbjerg-Petersen "
        f"blocking"
    )
    return mean, (se if se > 0 else None), how


def check_thermo(thermo: dict[str, np.ndarray], p: FluidMDParams) -> None:
    """Physics gates on the production thermo output (finite already: see LammpsOutput.runs): complete,
    no atoms lost."""
    check_columns(thermo, ("Step", "Temp", "PotEng", "KinEng", "TotEng", "Press", "Volume", "Atoms"))
    if np.any(thermo["Atoms"] != p.n_atoms):
        lost = p.n_atoms - int(thermo["Atoms"].min())
        raise CalculationFailed(f"{lost} of {p.n_atoms} atoms were lost (unstable dynamics)")
    first, last = int(thermo["Step"][0]), int(thermo["Step"][-1])
    if first != 0 or last != p.production_steps:
        raise CalculationFailed(f"production covers steps {first}..{last}, not the full run")
    check_sample_count(thermo)


def check_pressure(pressures: np.ndarray, target: float) -> None:
    """Fail when the mean pressure of an NPT production misses the set point by more than
    6 standard errors (the barostat holds the mean, not each sample)."""
    mean, se = block_average(pressures)
    if abs(mean - target) > 6 * se:
        set_point_missed(
            f"mean pressure {mean:.4g} +/- {se:.2g} misses the barostat set point {target:g}: not equilibrated"
        )


def heat_capacity(thermo: dict[str, np.ndarray], t0: int, p: FluidMDParams) -> tuple[float, float | None, str]:
    """Heat capacity per atom, in J/(mol K) (metal) or k_B (lj), from the fluctuations of a
    thermostatted production run (Allen & Tildesley, sec. 2.5): NVT C_V = (d/2) k_B + var(U)/(N k_B T^2);
    NPT C_P = (d/2) k_B + var(U + P V)/(N k_B T^2), the kinetic part taken exactly. T and P are the
    set points. Error: spread of the estimate over 5 consecutive blocks."""
    if p.production_ensemble == "nve":
        raise CalculationFailed("an NVE run gives no canonical energy fluctuations for a heat capacity")
    k_b = 1.0 if p.units == "lj" else K_B_EV
    energy = np.asarray(thermo["PotEng"][t0:], dtype=float)
    if p.production_ensemble == "npt":
        pv = thermo["Volume"][t0:] * p.pressure * (1.0 if p.units == "lj" else BAR_A3_EV)
        energy = energy + pv
    n_blocks = 5
    if energy.size < n_blocks * 20:
        raise CalculationFailed("too few production samples for energy fluctuations: run longer")

    def estimate(e: np.ndarray) -> float:
        return p.dimension / 2 + float(np.var(e, ddof=1)) / (p.n_atoms * (k_b * p.temperature) ** 2)

    per_kb = estimate(energy)
    blocks = [estimate(b) for b in np.array_split(energy, n_blocks)]
    se = float(np.std(blocks, ddof=1) / np.sqrt(n_blocks))
    to_unit = 1.0 if p.units == "lj" else K_B_EV * KJ_MOL_PER_EV * 1e3  # k_B per atom -> J/(mol K)
    name, ens, fluct = ("C_P", "NPT", "U + PV") if p.production_ensemble == "npt" else ("C_V", "NVT", "U")
    how = (f"{'isobaric' if name == 'C_P' else 'isochoric'} heat capacity {name} per atom ({ens} ensemble) from the "
           f"fluctuations of {fluct} over samples {t0}..{t0 + energy.size - 1}: {name} = {p.dimension}/2 k_B + "
           f"var({fluct})/(N k_B T^2) with the set-point T; error from {n_blocks} blocks")
    return per_kb * to_unit, se * to_unit, how


def check_temperature(temps: np.ndarray, target: float, tolerance: float = 0.05) -> None:
    """Fail when the mean temperature misses the target by more than `tolerance` (relative)
    and by more than 3 standard errors."""
    mean, se = block_average(temps)
    off = abs(mean - target)
    if off > tolerance * target and off > 3 * se:
        set_point_missed(
            f"mean temperature {mean:.4g} +/- {se:.2g} misses the target {target:g} by "
            f"{100 * off / target:.1f} % (limit {100 * tolerance:g} %): not equilibrated"
        )


def read_rdf_blocks(path: Path) -> list[np.ndarray]:
    """Blocks of a `fix ave/time ... mode vector` file of compute rdf: rows (index, r, g, coord)."""
    if not path.is_file():
        raise ReadError(f"{path.name} was not written")
    lines = [ln for ln in path.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    blocks: list[np.ndarray] = []
    i = 0
    while i < len(lines):
        n_rows = int(lines[i].split()[1])
        rows = [[float(v) for v in ln.split()[:4]] for ln in lines[i + 1 : i + 1 + n_rows]]
        if len(rows) != n_rows:
            raise ReadError(f"{path.name}: truncated block")
        blocks.append(np.array(rows))
        i += 1 + n_rows
    if not blocks:
        raise ReadError(f"{path.name} holds no g(r) data")
    return blocks


def analyze_rdf(job_dir: Path, p: FluidMDParams, rho: float) -> dict:
    """g(r) averaged over the production blocks; peak, CN, their block errors; table and plot."""
    blocks = read_rdf_blocks(job_dir / "rdf.dat")
    r = blocks[0][:, 1]
    g = np.mean([b[:, 2] for b in blocks], axis=0)
    peak, r_min, cn = rdf_peak_and_cn(r, g, rho, p.dimension)
    dr = float(r[1] - r[0])
    peak_se, cn_se = dr / 2, None
    if len(blocks) > 1:
        per_block = np.array([rdf_peak_and_cn(r, b[:, 2], rho, p.dimension) for b in blocks])
        spread = per_block.std(axis=0, ddof=1) / np.sqrt(len(blocks))
        peak_se, cn_se = max(dr / 2, float(spread[0])), float(spread[2])
    table = job_dir / "gr.csv"
    if p.dimension == 2:
        cumulative = 2 * np.pi * rho * np.cumsum(g * r) * dr
    else:
        cumulative = 4 * np.pi * rho * np.cumsum(g * r**2) * dr
    np.savetxt(table, np.column_stack([r, g, cumulative]), delimiter=",", header="r,g,cn")
    plots.rdf_with_cn(job_dir / "gr.png", r, g, cumulative, r_min, cn)
    how = (
        f"(compute rdf, {p.rdf_bins} bins of {dr:.3g} to the cutoff, {len(blocks)} production "
        f"blocks; errors from the block spread, at least half a bin for the peak)"
    )
    return {"peak": peak, "peak_se": peak_se, "r_min": r_min, "cn": cn, "cn_se": cn_se,
            "table": str(table), "how": how}  # fmt: skip


def analyze_msd(job_dir: Path, p: FluidMDParams) -> dict:
    """Self-diffusion D = slope / (2 d) of the Einstein MSD in a window of lag times (d = 3, or 2
    for a 2D run, whose MSD is taken over x and y only).

    MSD from MDAnalysis EinsteinMSD (FFT over all time origins, via tidynamics) of the unwrapped
    coordinates, which LAMMPS writes as binary DCD (`dump_modify unwrap yes`: the numbers of
    xu yu zu, read far faster than text). The fit window is a fixed fraction (msd_fit_window,
    default 20-60 %) of one of `msd_blocks` equal blocks of the trajectory: past the ballistic
    and caging start, before the poorly averaged tail. D comes from the whole trajectory over that
    window, its error from the spread of the blocks' D. Gate: the log-log slope of the MSD in the
    window must be 0.8-1.2 (diffusive)."""
    import MDAnalysis as mda
    from MDAnalysis.analysis.msd import EinsteinMSD

    dump = job_dir / "msd.dcd"
    if not dump.is_file():
        raise ReadError("msd.dcd (unwrapped coordinates) was not written")
    universe = mda.Universe.empty(p.n_atoms, trajectory=False)
    with warnings.catch_warnings():  # DCDReader's note about copying timesteps does not apply
        warnings.simplefilter("ignore", DeprecationWarning)
        universe.load_new(str(dump), format="DCD", in_memory=True)
    n_frames = len(universe.trajectory)
    frame_dt = p.dump_every * p.timestep
    block = n_frames // p.msd_blocks
    lo = max(1, math.ceil(p.msd_fit_window[0] * (block - 1)))
    hi = math.floor(p.msd_fit_window[1] * (block - 1))
    if hi - lo < 4:
        raise CalculationFailed("trajectory too short for an MSD fit: run a longer production")
    lags = np.arange(lo, hi + 1)
    times = lags * frame_dt

    def msd(start: int | None = None, stop: int | None = None) -> np.ndarray:
        calc = EinsteinMSD(universe, select="all", msd_type="xyz" if p.dimension == 3 else "xy", fft=True)
        return np.asarray(calc.run(start=start, stop=stop).results.timeseries)

    full = msd()
    slope, intercept, _ = linear_fit(times, full[lags])
    alpha = linear_fit(np.log(times), np.log(full[lags]))[0]
    if not 0.8 <= alpha <= 1.2:
        raise CalculationFailed(
            f"MSD is not diffusive over lag {times[0]:.3g}-{times[-1]:.3g}: log-log slope "
            f"{alpha:.2f}, not 0.8-1.2 (a solid, or a run too short)"
        )
    blocks = [msd(b * block, (b + 1) * block)[lags] for b in range(p.msd_blocks)]
    per_block = [linear_fit(times, m)[0] / (2 * p.dimension) for m in blocks]
    t_all = np.arange(full.size) * frame_dt
    table = job_dir / "msd.csv"
    np.savetxt(table, np.column_stack([t_all, full]), delimiter=",", header="t,msd")
    plots.msd_with_fit(job_dir / "msd.png", t_all, full, (times[0], times[-1]), slope, intercept,
                       slope / (2 * p.dimension), p.dimension)
    how = (
        f"Einstein MSD (MDAnalysis, FFT; {n_frames} frames every {frame_dt:g}), MSD = {2 * p.dimension} D t fitted "
        f"over lag {times[0]:.3g}-{times[-1]:.3g} ({100 * p.msd_fit_window[0]:g}-"
        f"{100 * p.msd_fit_window[1]:g} % of a block; log-log slope {alpha:.2f}), error from "
        f"{p.msd_blocks} consecutive blocks"
    )
    se = float(np.std(per_block, ddof=1) / np.sqrt(p.msd_blocks))
    return {"D": slope / (2 * p.dimension), "D_se": se, "table": str(table), "how": how}


def plot_thermo(path: Path, samples: dict[str, np.ndarray], t0: int, units: str) -> None:
    """Potential energy per atom and temperature over the averaged run, the equilibration cut marked."""
    energy, temperature = ("reduced", "reduced") if units == "lj" else ("eV", "K")
    plots.thermo_series(path, samples["Step"], {
        f"PE/atom ({energy})": samples["PotEng"] / samples["Atoms"], f"T ({temperature})": samples["Temp"]}, t0)


def plot(
    path: Path,
    x: np.ndarray,
    y: np.ndarray,
    xlabel: str,
    ylabel: str,
    vline: float | None = None,
    span: tuple[float, float] | None = None,
) -> None:
    """A small PNG line plot (matplotlib's object API: no pyplot global state)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5, 3.5))
    ax = fig.subplots()
    ax.plot(x, y)
    if vline is not None:
        ax.axvline(vline, ls="--", c="gray")
    if span is not None:
        ax.axvspan(*span, color="orange", alpha=0.2, label="fit window")
        ax.legend()
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
