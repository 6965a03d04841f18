"""Protocol lammps/trappe_alkane: the density of a liquid linear alkane, or of a polyethylene melt,
with TraPPE-UA at a given temperature and pressure (NPT).

Model (Martin & Siepmann, J. Phys. Chem. B 102, 2569 (1998); forcefields/trappe_ua.json): CH4, CH3
and CH2 pseudo-atoms with LJ (Lorentz-Berthelot mixing) cut at 14 A with analytic tail corrections;
bonds of 1.54 A, harmonic angles (114 deg, k/kB = 62500
K/rad^2), OPLS-form torsions; intramolecular LJ only between pseudo-atoms more than three bonds apart.
TraPPE fixes the 1.54 A bonds; LAMMPS' SHAKE cannot constrain the connected bonds of a chain, so the
bonds are stiff harmonic springs (k_b/kB = 452,900 K/A^2, the value commonly used for MD with
TraPPE-UA) integrated at 1 fs; the method string says so.
Polyethylene is the same model with long chains (CH3 ends, CH2 inside), of a stated length.

One job. `jobs()` writes the start configuration into the job folder as a LAMMPS data file: each
molecule a random conformer (bond 1.54 A, angle 114 deg, dihedrals trans or gauche at random) at a
random place and orientation in a cubic box at a low start density; a soft push-off removes the
overlaps, then NPT (Nose-Hoover, isotropic) equilibration and production. The density is the time
average of the production after detected equilibration (Chodera 2016), with Flyvbjerg-Petersen block
errors (simagent.stats). Gates: run finished, no atom lost, temperature and pressure at their set
points, and the fluid is a condensed phase (a vapour is reported as such, not as a liquid density).
"""

from __future__ import annotations

import json
import math
from functools import cache
from importlib import resources
from pathlib import Path
from typing import ClassVar

import numpy as np
from pydantic import BaseModel, Field, model_validator

from simagent.defaults import Default, DefaultsLog
from simagent.errors import CalculationFailed, RequestError
from simagent.materials.alkanes import MAX_LIQUID_CARBONS, alkane_name
from simagent.models import Job, Result, TaskSpec
from simagent.protocols import Protocol, register
from simagent.stats import block_average, detect_equilibration
from simagent.units import to_canonical
from tools.lammps.inputs import render
from tools.lammps.protocols.fluid import check_pressure, check_temperature, output_unit, plot
from tools.lammps.protocols.fluid_common import (
    as_params,
    check_averaged_properties,
    check_columns,
    check_full_production,
    check_sample_count,
    finished_output,
    md_job,
)

K_B_KCAL = 0.0019872043  # kcal/(mol K), Boltzmann constant in LAMMPS real units
ATM_PER_BAR = 1.0 / 1.01325
AVOGADRO = 6.02214076e23
DATA_FILE = "alkanes.data"
PROPERTIES = frozenset({"density"})

# Polyethylene chain length when the request gives none (reported): long enough to be a polymer
# (well above the C20-C40 waxes), short enough that the melt's packing relaxes in the default run
DEFAULT_PE_CARBONS = 100
DEFAULT_PE_REASON = (
    "no chain length given: monodisperse C100 chains (1,403 g/mol), an unentangled melt that equilibrates by plain MD;"
    " real polyethylene chains are far longer and the chain ends lower the density slightly"
)
MAX_CHAIN_CARBONS = 400  # PE chains longer than this need far longer runs than plain MD gives here
# Fewest pseudo-atoms and smallest box by default: box edge > 2 x (cutoff + 1 A) at the end, so a
# molecule does not see its own image within the cutoff (Allen & Tildesley, minimum image)
MIN_SITES = 600
START_DENSITY = 0.45  # g/cm^3, below every liquid alkane: the NPT equilibration compresses it
# pseudo-atoms per A^3 of the liquid: ~0.025-0.028 for short alkanes (n-hexane at 298 K: 0.0275),
# ~0.033 for long chains and PE melts; used only to size the box
LIQUID_SITE_DENSITY = 0.025
CHAIN_SITE_DENSITY = 0.033
VAPOUR_DENSITY = 0.2  # g/cm^3: below this the state is a vapour/supercritical, not a liquid density

# Run lengths (1 fs steps). A liquid alkane's density relaxes within tens of ps. A melt's packing
# (its density) relaxes far faster than its chain conformations: the start conformers are already
# RIS-like (trans/gauche), and the runs are not Rouse times (stated in the answer's method).
# Equilibration detection trims the production further.
LIQUID_EQUILIBRATION, LIQUID_PRODUCTION = 30_000, 60_000
POLYMER_EQUILIBRATION, POLYMER_PRODUCTION = 60_000, 60_000


def _run_default(steps: int, reason: str, parameter: str) -> Default:
    """A run length in 1 fs steps, its reason starting with the time it covers."""
    return Default(steps, f"{steps / 1000:g} ps NPT at 1 fs{reason}", parameter=parameter)


_EQUILIBRATION_REASON = (" (after the push-off and capped relaxation); equilibration detection trims the production "
                         "further")
_PRODUCTION_REASON = ": density to a few 0.1 %"
MIN_EDGE = 2 * (14.0 + 1.0)  # A: twice the cutoff plus 1 A
TRAPPE_1998 = "Martin & Siepmann, J. Phys. Chem. B 102, 2569 (1998)"

TRANS_PROBABILITY = 0.6  # start conformers: trans, else gauche+ or gauche- (the melt relaxes them)
PUSHOFF_PREFACTOR = 30.0  # kcal/mol, final amplitude of the soft repulsion
PUSHOFF_CUTOFF = 3.0  # A, range of the soft repulsion (about sigma of CH2 x 0.76)


@cache
def trappe() -> dict:
    """The TraPPE-UA parameters (forcefields/trappe_ua.json, cited there)."""
    return json.loads(resources.files("forcefields").joinpath("trappe_ua.json").read_text())


# ---------------------------------------------------------------------------------------------
# Molecules and the start configuration
# ---------------------------------------------------------------------------------------------


def site_types(n_carbons: int) -> list[str]:
    """Pseudo-atom types along a linear chain of n carbons."""
    if n_carbons == 1:
        return ["CH4"]
    return ["CH3"] + ["CH2"] * (n_carbons - 2) + ["CH3"]


def molar_mass(n_carbons: int) -> float:
    """g/mol of one molecule from the pseudo-atom masses."""
    masses = trappe()["pseudo_atoms"]
    return sum(masses[t]["mass"] for t in site_types(n_carbons))


def _place(a: np.ndarray, b: np.ndarray, c: np.ndarray, bond: float, angle: float, torsion: float) -> np.ndarray:
    """Position of d bonded to c with |cd| = bond, angle bcd = angle, dihedral abcd = torsion (radians)."""
    bc = c - b
    bc /= np.linalg.norm(bc)
    n = np.cross(b - a, bc)
    n /= np.linalg.norm(n)
    m = np.cross(n, bc)
    d2 = np.array([-bond * math.cos(angle), bond * math.sin(angle) * math.cos(torsion),
                   bond * math.sin(angle) * math.sin(torsion)])
    return c + d2[0] * bc + d2[1] * m + d2[2] * n


def random_conformer(n_carbons: int, rng: np.random.Generator, bond: float, angle_deg: float) -> np.ndarray:
    """(n, 3) positions of one chain centred at the origin: fixed bonds and angles, dihedrals trans
    (180 deg) with probability TRANS_PROBABILITY, else gauche (+/-60 deg), random orientation."""
    angle = math.radians(angle_deg)
    x = np.zeros((n_carbons, 3))
    if n_carbons >= 2:
        x[1] = [bond, 0.0, 0.0]
    if n_carbons >= 3:
        x[2] = x[1] + bond * np.array([-math.cos(angle), math.sin(angle), 0.0])
    for i in range(3, n_carbons):
        gauche = rng.random() > TRANS_PROBABILITY
        torsion = math.pi + (rng.choice([-1.0, 1.0]) * 2 * math.pi / 3 if gauche else 0.0)
        x[i] = _place(x[i - 3], x[i - 2], x[i - 1], bond, angle, torsion)
    x -= x.mean(axis=0)
    q = rng.normal(size=4)  # uniform random rotation from a normalised quaternion
    w, i, j, k = q / np.linalg.norm(q)
    rotation = np.array([
        [1 - 2 * (j * j + k * k), 2 * (i * j - k * w), 2 * (i * k + j * w)],
        [2 * (i * j + k * w), 1 - 2 * (i * i + k * k), 2 * (j * k - i * w)],
        [2 * (i * k - j * w), 2 * (j * k + i * w), 1 - 2 * (i * i + j * j)],
    ])  # fmt: skip
    return x @ rotation.T


def build_molecules(n_molecules: int, n_carbons: int, box: float, seed: int) -> np.ndarray:
    """(M, n, 3) unwrapped positions: random conformers at uniformly random centres in the box."""
    ff = trappe()
    rng = np.random.default_rng(seed)
    molecules = np.empty((n_molecules, n_carbons, 3))
    for m in range(n_molecules):
        molecules[m] = random_conformer(n_carbons, rng, ff["bond_length_A"], ff["angle"]["theta0_deg"])
        molecules[m] += rng.uniform(0.0, box, 3)
    return molecules


def data_file_text(molecules: np.ndarray, box: float, title: str) -> str:
    """LAMMPS data file (atom_style molecular): types CH4/CH3/CH2 as used, bonds, angles, dihedrals."""
    n_molecules, n_carbons, _ = molecules.shape
    ff = trappe()["pseudo_atoms"]
    kinds = site_types(n_carbons)
    used = [t for t in ("CH4", "CH3", "CH2") if t in kinds]
    type_id = {t: i + 1 for i, t in enumerate(used)}
    flat = molecules.reshape(-1, 3)
    images = np.floor(flat / box).astype(int)
    wrapped = flat - images * box
    n_bonds, n_angles, n_dihedrals = (max(0, n_carbons - k) for k in (1, 2, 3))
    lines = [f"LAMMPS data file: {title}", "", f"{flat.shape[0]} atoms"]
    counts = [("bonds", n_bonds), ("angles", n_angles), ("dihedrals", n_dihedrals)]
    lines += [f"{n_molecules * n} {what}" for what, n in counts if n]
    lines += [f"{len(used)} atom types"] + [f"1 {what[:-1]} types" for what, n in counts if n]
    lines += ["", *(f"0.0 {box:.12g} {a}lo {a}hi" for a in "xyz"), "", "Masses", ""]
    lines += [f"{type_id[t]} {ff[t]['mass']}  # {t}" for t in used]
    lines += ["", "Atoms # molecular", ""]
    for k in range(flat.shape[0]):
        m, i = divmod(k, n_carbons)
        x, y, z = wrapped[k]
        ix, iy, iz = images[k]
        lines.append(f"{k + 1} {m + 1} {type_id[kinds[i]]} {x:.8f} {y:.8f} {z:.8f} {ix} {iy} {iz}")
    for section, size, n in (("Bonds", 2, n_bonds), ("Angles", 3, n_angles), ("Dihedrals", 4, n_dihedrals)):
        if not n:
            continue
        lines += ["", section, ""]
        count = 0
        for m in range(n_molecules):
            first = m * n_carbons + 1
            for i in range(n):
                count += 1
                atoms = " ".join(str(first + i + j) for j in range(size))
                lines.append(f"{count} 1 {atoms}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------------


class AlkaneParams(BaseModel):
    """A TraPPE-UA liquid alkane or polyethylene melt under NPT (LAMMPS real units)."""

    # Defaults, each with its reason (templates filled by alkane_parameters)
    DEFAULTS: ClassVar[dict[str, Default]] = {
        "chain_length": Default(DEFAULT_PE_CARBONS, DEFAULT_PE_REASON,
                                shown="C{value} (linear chains of {value} carbons)"),
        "conditions.pressure": Default(1.01325, "ambient pressure: the density is an NPT average",
                                       shown="1 atm (1.01325 bar)"),
        "force_field": Default("TraPPE-UA", "Martin & Siepmann, J. Phys. Chem. B 102, 2569 (1998): the united-atom "
                               "model fitted to n-alkane phase equilibria", TRAPPE_1998),
        "cutoff": Default(14.0, "as in Martin & Siepmann (1998)", TRAPPE_1998,
                          shown="14 A + analytic tail corrections"),
        "bonds": Default("harmonic", "TraPPE-UA fixes bonds; SHAKE cannot hold the connected bonds of a chain, so MD "
                         "uses this stiff spring (and a 1 fs timestep)", shown="harmonic, k_b/kB = 452,900 K/A^2 at "
                         "1.54 A"),
        "n_molecules": Default("enough for MIN_SITES sites", "at least {sites} pseudo-atoms: a box edge of about "
                               "2 x (cutoff + 1 A) = 30 A at the liquid density", shown="{molecules}"),
        "equilibration_steps (liquid)": _run_default(LIQUID_EQUILIBRATION, _EQUILIBRATION_REASON,
                                                     "equilibration_steps"),
        "equilibration_steps (polymer)": _run_default(POLYMER_EQUILIBRATION, _EQUILIBRATION_REASON,
                                                      "equilibration_steps"),
        "production_steps (liquid)": _run_default(LIQUID_PRODUCTION, _PRODUCTION_REASON, "production_steps"),
        "production_steps (polymer)": _run_default(POLYMER_PRODUCTION, _PRODUCTION_REASON, "production_steps"),
        "seed": Default(20261124, "fixed seed for the start configuration and velocities: reruns are reproducible"),
    }

    molecule: str = Field(description="e.g. 'n-hexane' or 'polyethylene'")
    n_carbons: int = Field(ge=1, le=MAX_CHAIN_CARBONS, description="carbons (pseudo-atoms) per molecule")
    polymer: bool = False
    n_molecules: int = Field(ge=1)
    temperature: float = Field(gt=0, description="K")
    pressure: float = Field(ge=0, description="bar")
    start_density: float = Field(default=START_DENSITY, gt=0, description="g/cm^3, start box only")
    cutoff: float = Field(default=14.0, gt=0, description="LJ cutoff, A (tail corrections added)")
    skin: float = Field(default=2.0, gt=0)
    timestep: float = Field(default=1.0, gt=0, le=2.0, description="fs (stiff bonds: ~27 fs period)")
    pushoff_timestep: float = Field(default=1.0, gt=0)
    thermostat_damp: float = Field(default=100.0, gt=0, description="fs")
    barostat_damp: float = Field(default=1000.0, gt=0, description="fs")
    pushoff_steps: int = Field(default=2000, ge=0)
    relax_steps: int = Field(default=2000, ge=0)
    limit_distance: float = Field(default=0.1, gt=0, description="A per step, capped moves at the start")
    equilibration_steps: int = Field(ge=0)
    production_steps: int = Field(gt=0)
    thermo_every: int = Field(default=100, gt=0)
    seed: int = Field(default=20261124, gt=0)
    temperature_tolerance: float = Field(default=0.02, gt=0)
    time_limit_s: float = Field(default=7200.0, gt=0)

    @property
    def n_atoms(self) -> int:
        return self.n_molecules * self.n_carbons

    @property
    def start_box(self) -> float:
        mass_g = self.n_molecules * molar_mass(self.n_carbons) / AVOGADRO
        return (mass_g / self.start_density * 1e24) ** (1.0 / 3.0)

    @model_validator(mode="after")
    def _consistent(self) -> AlkaneParams:
        if self.production_steps % self.thermo_every:
            raise ValueError("production_steps must be a multiple of thermo_every")
        if not self.polymer and self.n_carbons > MAX_LIQUID_CARBONS:
            raise ValueError(f"a liquid alkane has at most {MAX_LIQUID_CARBONS} carbons here; longer is polyethylene")
        return self


def molecule_of(spec: TaskSpec) -> tuple[str, int, bool]:
    """(molecule name, carbons per molecule, polymer) from SystemSpec.molecule as the reader wrote it:
    'n-hexane' (any linear alkane name of simagent.materials.alkanes) or 'polyethylene C<n>'."""
    system = spec.system
    text = (system.molecule or "") if system else ""
    is_pe = text == "polyethylene" or text.startswith("polyethylene C")
    if system is not None and system.kind == "polymer" and is_pe:
        parts = text.split()
        if len(parts) == 2 and parts[1][1:].isdigit():
            return "polyethylene", int(parts[1][1:]), True
        return "polyethylene", 0, True  # chain length not stated: parameters() applies the default
    for n in range(1, MAX_LIQUID_CARBONS + 1):
        if text == alkane_name(n):
            return text, n, False
    raise RequestError(f"{text or 'this system'} is not a TraPPE-UA linear alkane or polyethylene")


def alkane_parameters(spec: TaskSpec, log: DefaultsLog) -> AlkaneParams:
    molecule, n_carbons, polymer = molecule_of(spec)
    if polymer:
        n_carbons = log.take("chain_length", n_carbons or None)
        if n_carbons > MAX_CHAIN_CARBONS:
            raise RequestError(f"polyethylene chains of {n_carbons} carbons are too long for plain MD equilibration "
                               f"here; at most {MAX_CHAIN_CARBONS}")
        if n_carbons < 2:
            raise RequestError("a polyethylene chain needs at least 2 carbons")
    temperature, pressure = _state(spec, molecule, polymer, log)
    _force_field(spec, log)
    ctrl, kind = spec.controls, "polymer" if polymer else "liquid"
    # size: enough sites, and a final box edge above 2 x (cutoff + 1 A) at a liquid site density
    site_density = CHAIN_SITE_DENSITY if polymer or n_carbons >= 10 else LIQUID_SITE_DENSITY
    min_sites = max(MIN_SITES, math.ceil(site_density * MIN_EDGE**3))
    n_molecules = ctrl.n_atoms  # the reader counts 'N molecules' into n_atoms
    if n_molecules is None:
        n_molecules = max(math.ceil(min_sites / n_carbons), 2 if polymer else 1)
        log.report("n_molecules", sites=min_sites, molecules=n_molecules)
    thermo_every = 100
    equilibration = log.take(f"equilibration_steps ({kind})", ctrl.equilibration_steps)
    production = ctrl.production_steps and thermo_every * max(1, math.ceil(ctrl.production_steps / thermo_every))
    production = log.take(f"production_steps ({kind})", production or None)
    return AlkaneParams(
        molecule=molecule, n_carbons=n_carbons, polymer=polymer, n_molecules=n_molecules, temperature=temperature,
        pressure=pressure, equilibration_steps=equilibration, production_steps=production, thermo_every=thermo_every,
        seed=log.take("seed", ctrl.seed),
    )  # fmt: skip


def _state(spec: TaskSpec, molecule: str, polymer: bool, log: DefaultsLog) -> tuple[float, float]:
    """Temperature (K, required) and pressure (bar; 1 atm when none is given) of the NPT run."""
    cond, ctrl = spec.conditions, spec.controls
    if cond.temperature is None:
        raise RequestError(f"give the temperature of the {molecule} {'melt' if polymer else 'liquid'}")
    temperature = to_canonical(cond.temperature, "temperature").value
    if temperature <= 0:
        raise RequestError(f"temperature must be above absolute zero, got {cond.temperature}")
    pressure = log.take("conditions.pressure", None if cond.pressure is None
                        else to_canonical(cond.pressure, "pressure").value)
    if pressure < 0:
        raise RequestError(f"a negative pressure ({cond.pressure}) is a metastable state; this protocol does not "
                           "run it")
    if cond.density is not None:
        raise RequestError("the density is what this protocol computes (NPT): give a pressure instead")
    if ctrl.ensemble in ("nvt", "nve"):
        raise RequestError(f"lammps/trappe_alkane runs NPT (the density is its output), not {ctrl.ensemble.upper()}")
    return temperature, pressure


def _force_field(spec: TaskSpec, log: DefaultsLog) -> None:
    """TraPPE-UA, the only force field here (another one named is refused); its settings reported."""
    pot = spec.potential
    if pot is not None and pot.force_field and pot.force_field.lower().replace("-", "") not in ("trappe", "trappeua"):
        raise RequestError(f"the force field {pot.force_field!r} is not available for alkanes; simagent uses TraPPE-UA")
    log.take("force_field", pot.force_field if pot is not None and pot.force_field else None)
    log.report("cutoff")
    log.report("bonds")


# ---------------------------------------------------------------------------------------------
# Input
# ---------------------------------------------------------------------------------------------


def input_text(protocol: str, p: AlkaneParams, title: str) -> str:
    ff = trappe()
    kinds = site_types(p.n_carbons)
    used = [t for t in ("CH4", "CH3", "CH2") if t in kinds]
    pair_types = [(i + 1, ff["pseudo_atoms"][t]["epsilon_K"] * K_B_KCAL, ff["pseudo_atoms"][t]["sigma_A"])
                  for i, t in enumerate(used)]
    torsion = ff["torsion"]
    # LAMMPS dihedral opls: E = 1/2 K1 (1 + cos) + 1/2 K2 (1 - cos 2) + 1/2 K3 (1 + cos 3): K_i = 2 c_i
    dihedral_k = [2 * torsion[f"c{i}_K"] * K_B_KCAL for i in (1, 2, 3)]
    return render(
        "trappe_alkane.lmp.j2", protocol=protocol, title=title, data_file=DATA_FILE, pair_types=pair_types,
        cutoff=p.cutoff, bond_length=ff["bond_length_A"], bond_k=round(ff["md_bond_k_K_per_A2"] / 2 * K_B_KCAL, 3),
        angle_k=ff["angle"]["k_theta_K_per_rad2"] / 2 * K_B_KCAL, angle_theta0=ff["angle"]["theta0_deg"],
        dihedral_k=dihedral_k, n_bond_types=int(p.n_carbons > 1), n_angle_types=int(p.n_carbons > 2),
        n_dihedral_types=int(p.n_carbons > 3), skin=p.skin, pushoff_timestep=p.pushoff_timestep,
        timestep=p.timestep, thermo_every=p.thermo_every, temperature=p.temperature, seed=p.seed,
        pushoff_prefactor=PUSHOFF_PREFACTOR, pushoff_cutoff=PUSHOFF_CUTOFF, limit_distance=p.limit_distance,
        pushoff_steps=p.pushoff_steps, relax_steps=p.relax_steps, pressure_atm=p.pressure * ATM_PER_BAR,
        thermostat_damp=p.thermostat_damp, barostat_damp=p.barostat_damp,
        equilibration_steps=p.equilibration_steps, production_steps=p.production_steps,
    )  # fmt: skip


def describe(p: AlkaneParams) -> str:
    what = (f"{p.n_molecules} polyethylene chains of {p.n_carbons} carbons (C{p.n_carbons}H{2 * p.n_carbons + 2})"
            if p.polymer else f"{p.n_molecules} {p.molecule} molecules")
    return f"{what}, TraPPE-UA, NPT at {p.temperature:g} K and {p.pressure:g} bar"


# ---------------------------------------------------------------------------------------------
# The protocol
# ---------------------------------------------------------------------------------------------


@register
class TrappeAlkane(Protocol):
    name = "lammps/trappe_alkane"
    engine = "lammps"
    properties = PROPERTIES
    Params = AlkaneParams
    description = (
        "Density of a liquid linear alkane (C1-C20) or a polyethylene melt (chains of stated length) with "
        "TraPPE-UA: random conformers written as a data file, soft push-off, NPT (Nose-Hoover, SHAKE bonds, "
        "14 A LJ + tail corrections, stiff bonds at 1 fs); time average after equilibration detection with block errors"
    )

    def applies_to(self, spec: TaskSpec) -> bool:
        system = spec.system
        if system is None or not system.molecule or system.kind not in ("molecular_fluid", "polymer"):
            return False
        if spec.engine not in (None, "lammps"):
            return False
        try:
            molecule_of(spec)  # polyethylene without a length applies too: parameters() applies the default
        except RequestError:
            return False
        return bool(spec.properties) and {p.name for p in spec.properties} <= self.properties

    def choose(self, spec: TaskSpec, log: DefaultsLog) -> AlkaneParams:
        check_averaged_properties(spec, self.name, self.properties, "a time average of an NPT run")
        for prop in spec.properties:
            output_unit("density", "real", prop.unit)  # g/cm^3 or kg/m^3; anything else is refused here
        return alkane_parameters(spec, log)

    def jobs(self, params: BaseModel) -> list[Job]:
        p = as_params(AlkaneParams, params)
        title = describe(p)
        molecules = build_molecules(p.n_molecules, p.n_carbons, p.start_box, p.seed)
        inputs = {
            "in.lammps": input_text(self.name, p, title),
            DATA_FILE: data_file_text(molecules, p.start_box, f"TraPPE-UA {title}"),
        }
        return [md_job(self.name, p, inputs, p.time_limit_s)]

    def analyze(self, params: BaseModel, job_dirs: dict[str, Path], spec: TaskSpec) -> list[Result]:
        p = as_params(AlkaneParams, params)
        job_dir = Path(job_dirs["md"])
        thermo = finished_output(job_dir).last_run()
        check_columns(thermo, ("Step", "Temp", "PotEng", "Press", "Volume", "Density", "Atoms"))
        check_full_production(thermo, p.n_atoms, p.production_steps)
        check_sample_count(thermo)
        check_temperature(thermo["Temp"], p.temperature, p.temperature_tolerance)
        density = thermo["Density"]
        t0 = detect_equilibration(density)
        mean, se = block_average(density[t0:])
        if mean < VAPOUR_DENSITY:
            raise CalculationFailed(
                f"the NPT box expanded to {mean:.3g} g/cm^3: at {p.temperature:g} K and {p.pressure:g} bar TraPPE-UA "
                f"{p.molecule} is a vapour or supercritical fluid, not a liquid; this protocol reports liquid densities"
            )
        check_pressure(thermo["Press"][t0:], p.pressure * ATM_PER_BAR)
        times_ps = thermo["Step"] * p.timestep / 1000.0
        table = job_dir / "density.csv"
        np.savetxt(table, np.column_stack([times_ps, density, thermo["Press"], thermo["Temp"]]), delimiter=",",
                   header="t_ps,density_g_cm3,pressure_atm,temperature_K")
        plot(job_dir / "density.png", times_ps, density, "t (ps)", "density (g/cm^3)", vline=times_ps[t0])
        method = (
            f"{describe(p)}; {p.equilibration_steps * p.timestep / 1000:g} ps equilibration after the push-off, then "
            f"{p.production_steps * p.timestep / 1000:g} ps production at {p.timestep:g} fs; mean density over "
            f"{times_ps[t0]:g}-{times_ps[-1]:g} ps (equilibration detection, Chodera 2016), standard error by "
            "Flyvbjerg-Petersen blocking; LJ cut at 14 A with tail corrections, "
            "harmonic bonds (k_b/kB = 452,900 K/A^2) instead of TraPPE's fixed bonds"
        )
        requested = next((prop.unit for prop in spec.properties if prop.name == "density"), None)
        factor, unit = output_unit("density", "real", requested)
        return [Result(quantity="density", value=mean * factor, unit=unit, uncertainty=se * factor if se > 0 else None,
                       job="md", method=method, log=str(job_dir / "log.lammps"), data_file=str(table))]
