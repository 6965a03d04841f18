"""Rules that read a task text into a SimulationDescription (simagent.described.model).

The text is read sentence by sentence, in order: statements of the system (units, lattice, box,
masses, the pair potential, velocities) fill the description once; each stated run length ('for
1000 steps') becomes a run stage with the dynamics its sentence names, or, when it names none, the
dynamics in force (LAMMPS fixes stay until they are removed); an energy minimisation with its
tolerances becomes a minimisation stage where it is stated. Every value records the words it was
read from; a value the text leaves out gets a documented default or is listed as missing; a style
the renderer cannot write is listed as unsupported, by name.
"""

from __future__ import annotations

import re

from simagent.backends.expert.ensemble_words import evolution_words, sentence_ensemble
from simagent.backends.expert.numbers import plain_numbers
from simagent.backends.expert.protocol_text import (
    COUNT,
    LATTICE_WORDS,
    NUM,
    STEP_WORD,
    lattice_scale_density,
    prose_density,
    read_controls,
    read_dynamics,
)
from simagent.described import (
    box_scaling,
    colloids,
    confinement,
    defects,
    drum,
    ellipsoids,
    example_system,
    examples,
    granular,
    ionic_crystal,
    molecular,
    nanotube,
    pillars,
    polymer,
    region_reading,
    replica,
    respa,
    restarts,
    rheo,
    separate_thermostat,
    sheet,
    shock,
    solids,
    special,
    spin,
    srd,
    stacked,
    stacking,
    tube_water,
)
from simagent.described.group_reading import read_boundary, read_layout
from simagent.described.mixture_reading import RANDOM_PLACEMENT, check_made_types, read_mixture
from simagent.described.model import (
    DEFAULT_MAX_EVALUATIONS,
    DEFAULT_MAX_ITERATIONS,
    STAGE_TIMESTEP_NAME,
    Box,
    Dipoles,
    Dynamics,
    GreenKubo,
    Lattice,
    Minimize,
    Pair,
    PairCoeff,
    SimulationDescription,
    Stage,
    ThreeBody,
    Velocity,
)
from simagent.models import Quantity

# LAMMPS defaults, used when the text does not state a value (each is listed in report.md).
ATM_PER_BAR = 1.0 / 1.01325  # 1 bar in atm (LAMMPS real units' pressure is atm, metal's bar)
DEFAULT_TIMESTEP = {"lj": 0.005, "real": 1.0, "metal": 0.001}  # LAMMPS `timestep` default per unit style
DEFAULT_SEED = 87287  # the seed of LAMMPS's own examples (examples/melt)
# A barostat whose pressure the text does not state holds 0 in the unit style's unit (listed as a default): a
# condensed phase at 0 or 1 bar is the same state within any tolerance (a gas is not: NPT at 0 lets it expand). Not
# in LJ units, where a reduced fluid at P = 0 may not exist (it can expand without bound): there it stays missing.
DEFAULT_PRESSURE_UNIT = {"metal": "bar", "real": "atm"}
THERMO_SAMPLES = 500  # thermo lines per run stage when the text states no output interval

# Prescriptions the renderer does not write: pattern -> the name given in the refusal.
UNSUPPORTED: list[tuple[str, str]] = [
    (r"fix controller|feedback controller", "fix controller (feedback temperature control)"),
    (r"\bsrd\b|stochastic rotation", "stochastic rotation dynamics (fix srd)"),
    (r"\bdeposit", "fix deposit"),
    (r"\bpour(?:ing|ed)?\b", "fix pour"),
    (r"atom[_ ]style (?:is )?'?(?:body|ellipsoid|sphere|hybrid|dipole|full|molecular|bond|charge|rheo)|"
     r"\bbody/nparticle|nve/body", "an atom style other than atomic"),
    (r"gay[- ]berne|ellipsoid|asphere", "ellipsoidal particles (Gay-Berne, asphere)"),
    (r"dipole", "point dipoles"),
    (r"\bcolloid(?:al)? (?:interaction|potential|pair|force)|pair[_ ]style colloid|colloid/", "pair_style colloid"),
    (r"coulomb|coul/|pppm|ewald|kspace|charges?\b", "electrostatics (coul, kspace)"),
    (r"\bbonds?\b|\bangles?\b|dihedral|shake|rattle", "molecular topology (bonds, angles, constraints)"),
    (r"\beam\b|tersoff|stillinger|\bsw\b potential|meam|airebo|rebo|reax|comb3?\b|\bbop\b|snap\b", "a many-body "
     "potential"),
    (r"granular|hertz|jkr\b|nve/sphere", "granular contact models"),
    (r"\btracker\b|tracking (?:potential|pair)|track(?:s|ing)? (?:the )?(?:pair(?:wise)? )?contacts?|contact[- ]track",
     "pair_style tracker"),
    (r"\bdeform|shear(?:ed|ing)? (?:flow|rate|velocity)|strain rate|compress|\b(?:re)?scal\w* (?:the )?(?:simulation "
     r"|periodic )?(?:box|cell)\b|\b(?:box|cell)(?: length| edge| size)?(?: \w+){0,5}? (?:scaled|rescaled|shrunk|"
     r"stretched|dilated|multiplied)\b", "box or flow deformation"),
    (r"\bregion|cylind|cluster|obstacle|\bwall\b|slab\b", "regions, walls and groups of atoms"),
    (r"\breplicate", "replicate"),
    (r"\bmsst\b|shock", "shock methods (fix msst)"),
    (r"\bspin\b|magnet", "spin dynamics"),
    (r"random(?:ly)? (?:insert|place|convert|replac|assign)|type 2|second (?:atom )?type|mixture", "several atom "
     "types or random placement"),
    (r"\brespa\b", "run_style respa"),
    # thermostats and dynamics with a name of their own: never replaced by another thermostat
    (r"\bandersen\b", "the Andersen thermostat"),
    (r"\bcsvr\b|\bbussi\b|v-rescale|stochastic velocity rescal|canonical sampling (?:through|by) velocity rescal|"
     r"temp/csvr", "the Bussi (CSVR) stochastic velocity-rescaling thermostat (fix temp/csvr)"),
    (r"brownian dynamics|fix brownian", "Brownian dynamics (fix brownian)"),
    (r"dissipative particle dynamics|\bdpd\b", "dissipative particle dynamics"),
    (r"\bgle\b|generali[sz]ed langevin", "the generalized Langevin equation (fix gle, gld)"),
    (r"\bnon-?periodic|shrink[- ]wrap|fixed boundar|\bboundary (?:conditions? )?\(?[spfm] [spfm] [spfm]",
     "non-periodic boundaries"),
]
_REDUCED = r"\blj units?\b|\(lj\)|units lj|\breduced\b|lennard[- ]jones units|in lj unit"


def _edits(a: str, b: str) -> int:
    """The optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two
    neighbouring letters, each counting 1."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


_AFTER_COUNT = re.compile(r"(?<=\d )([a-z]{4,12})\b")
_REAL_WORDS = {"stops", "stems", "seeps", "sets", "sleeps", "sweeps", "setups", "tiles", "times", "timers",
               "timestamps", "timestamp"}


def step_typos(low: str) -> str:
    """A misspelt run-length word right after a count, as users type it ('5000 timestspes', '2000
    stpes', '100 tmesteps'), written 'timesteps' / 'steps': a word of 7 or more letters within two
    edits of 'timesteps', or of 4 to 6 letters within one edit of 'steps' that is no English word."""
    def fix(match: re.Match) -> str:
        word = match.group(1)
        if word in ("steps", "timesteps", "step", "timestep") or word in _REAL_WORDS:
            return word
        if len(word) >= 7 and word[0] == "t" and _edits(word, "timesteps") <= 2:
            return "timesteps"
        if 4 <= len(word) <= 6 and word[0] == "s" and _edits(word, "steps") <= 1:
            return "steps"
        return word

    return _AFTER_COUNT.sub(fix, low)


def normalise(text: str) -> str:
    low = text.lower().replace("−", "-").replace("–", "-").replace("ε", "epsilon ").replace("ϵ", "epsilon ")
    low = low.replace("σ", " sigma").replace("×", " x ").replace("å", " angstrom")
    low = step_typos(plain_numbers(re.sub(r"\s+", " ", low)))
    # 'r_c = 2^(1/6) sigma = 1.12246': a power and its worked value; the value stands for both
    return re.sub(r"\b\d+(?:\.\d+)?\s*\^\s*\(?\s*[\d.]+\s*(?:/\s*[\d.]+\s*)?\)?\s*(?:sigma\s*)?(?:=|≈|~)\s*(?="
                  + NUM + ")", "", low)


def read_description(text: str) -> SimulationDescription:
    """The description a task text states (rules only); see the module docstring."""
    low = normalise(text)
    desc = SimulationDescription()
    for pattern, name in UNSUPPORTED:
        hit = re.search(pattern, low)
        if hit and name not in desc.unsupported:
            desc.unsupported.append(name)
    ctl = read_controls(low)
    _units(desc, low)
    reduced = desc.units == "lj"
    if ctl.get("dimension"):
        desc.dimension = ctl["dimension"]
        desc.note("dimension", "rules", f"{ctl['dimension']}D")
    _boundary(desc, low)
    _lattice_and_box(desc, low, ctl)
    sheet.read_sheet(desc, low, stated_counts(low))  # a graphene sheet: its cell, replication and box
    solids.read_orientation(desc, low)
    solids.read_potential(desc, low, text)
    solids.read_atom_style(desc, low)
    if desc.potential is None:
        _masses(desc, low, ctl)
        _pair(desc, low, ctl)
    _dipoles(desc, low)
    molecular.read_molecular(desc, low)
    ionic_crystal.read_ionic_crystal(desc, low)  # Na+/Cl- on the rock-salt lattice (no water)
    polymer.read_chain(desc, low)
    _velocity(desc, low, ctl)
    _timestep(desc, ctl, low)
    if ctl.get("thermo_every"):
        desc.thermo_every = ctl["thermo_every"]
        desc.note("thermo_every", "rules", f"every {desc.thermo_every} steps")
    _stages(desc, low, reduced)
    separate_thermostat.read_group_thermostats(desc, low)  # one thermostat per group: refused by name
    box_scaling.read_box_scaling(desc, low)  # a scaling loop: its run stage unrolled, one per cycle
    read_boundary(desc, low)
    sheet.read_sheet_box(desc, low)  # the sheet's boundary, in-plane barostats and stress record
    polymer.note_recenter(desc)
    stacked.read_stacked_blocks(desc, low)  # two crystals stacked: before slabs and layers
    region_reading.read_built_solid(desc, low, _sentence_dynamics, _complete_dynamics)  # slabs: before layers
    read_layout(desc, low, _sentence_dynamics, _complete_dynamics)
    read_mixture(desc, low, _sentence_dynamics, _complete_dynamics)
    region_reading.read_neighbor(desc, low)
    region_reading.read_exclusions(desc, low)
    region_reading.read_unstated_temperature(desc, low)
    molecular.read_slab(desc, low)
    molecular.check_rigid_dynamics(desc)
    _velocity_for_thermostat(desc)
    confinement.read_confinement(desc, low)
    confinement.fill_wall_example(desc, low)
    solids.attach_shear(desc, low)
    stacking.read_scan(desc, low)  # a generalised stacking-fault scan: two halves, displacements, minimisations
    _stated_atoms(desc, low)
    spin.read_spin(desc, low)  # a spin lattice retelling examples/SPIN (before an example system is looked for)
    example_system.read_example_system(desc, low, text)  # a system whose atoms an installed LAMMPS example gives
    restarts.read_restarts(desc, low)  # runs that start from the first run's restart file (after the example)
    respa.read_respa(desc, low)  # after the example, whose own run_style may fill the loop factor
    examples.fill_friction_example(desc)
    examples.fill_balance_example(desc)
    examples.fill_crack_example(desc, low)
    examples.fill_shear_example(desc, low)
    colloids.read_colloid(desc, low)
    srd.read_srd(desc, low)
    ellipsoids.read_ellipsoids(desc, low)
    granular.read_pour(desc, low)
    drum.read_drum(desc, low)
    pillars.read_pillars(desc, low)  # bonded-particle pillars retelling examples/bpm/poissons_ratio
    rheo.read_rheo(desc, low, text)
    if any(s.shear for s in desc.stages) and not any(s.deform for s in desc.stages) and not re.search(
            r"\bdeform(?:s|ed|ing)? (?:the )?box|strain rate|tensile|compress", low):
        desc.unsupported = [u for u in desc.unsupported if u != solids.SHEAR_NAME]
    if any(s.deform for s in desc.stages) and not re.search(r"shear(?:ed|ing)? (?:flow|velocity)|velocity (?:ramp|"
                                                            r"gradient)|\bramp", low):
        desc.unsupported = [u for u in desc.unsupported if u != solids.DEFORM_NAME]
    shock.read_msst(desc, low)
    _green_kubo(desc, low)
    special.read_tracker(desc, low)
    special.read_controller(desc, low)
    defects.read_point_defect(desc, low, minimize_settings)
    replica.read_prd(desc, low, minimize_settings)  # parallel replica dynamics: after the stages and minimisations
    replica.read_removed_atoms(desc, low)
    nanotube.read_tube(desc, low)  # a carbon nanotube: its chirality and atoms
    tube_water.read_tube_water(desc, low)  # water let into the tube by fix gcmc (renders the tube's system)
    _note_dump(desc, low)
    check_made_types(desc)
    check_stage_timesteps(desc)
    _check_run_values(desc)
    return desc


_DUMP = re.compile(r"(?:\bdump\w*|\btrajector\w*|\bsnapshots?)[^.;]{0,60}?\bevery\s+(\d+)\s*(?:time ?)?steps?|"
                   r"\bevery\s+(\d+)\s*(?:time ?)?steps?,? (?:the |a )?(?:dump\w*|trajector\w*|snapshots?)")


def _note_dump(desc: SimulationDescription, low: str) -> None:
    """A trajectory dump interval the text states: read and listed, not written (no metric reads a trajectory),
    as the colloid and pillar readings list theirs."""
    hit = _DUMP.search(low)
    if hit is None or "dump" in desc.origin:
        return
    desc.note_dump(f"every {hit.group(1) or hit.group(2)} steps ('{hit.group(0)}')")


def _check_run_values(desc: SimulationDescription) -> None:
    """Stated values no run can have (a damping of 0, a temperature below 0) are named as missing, before
    LAMMPS would refuse them (or, for a temperature, run something else)."""
    for stage in (desc.stages[i] for i in desc.run_stages()):
        dyn = stage.dynamics
        if dyn is None:
            continue
        for label, value, wrong in (("thermostat damping", dyn.t_damp, dyn.t_damp is not None and dyn.t_damp <= 0),
                                    ("barostat damping", dyn.p_damp, dyn.p_damp is not None and dyn.p_damp <= 0),
                                    ("target temperature", dyn.t_stop, dyn.t_stop is not None and dyn.t_stop < 0),
                                    ("starting temperature", dyn.t_start, dyn.t_start is not None and dyn.t_start < 0)):
            if wrong:
                desc.missing.append(f"a physical {label} for {stage.name} (the text states {value:g})")


def _green_kubo(desc: SimulationDescription, low: str) -> None:
    if not re.search(r"green[- ]kubo|viscosity", low) or shock.mentions_msst_viscosity(desc, low) or desc.rheo:
        return  # (a RHEO fluid's viscosity is a model parameter, not a measurement)
    sample = re.search(r"sampl\w* (?:interval|every|frequency)(?: of)?\s*" + COUNT, low)
    length = re.search(r"correlation (length|window|time)(?: of)?\s*" + COUNT + r"( ?(?:time)?steps?\b)?", low)
    if not (re.search(r"green[- ]kubo", low) and sample and length):
        desc.unsupported.append("a viscosity without a Green-Kubo sample interval and correlation length")
        return
    if desc.units != "lj":
        desc.unsupported.append("Green-Kubo in real or metal units")
        return
    every, lags = int(float(sample.group(1))), int(float(length.group(2)))
    if length.group(1) != "length" and length.group(3):  # a correlation window/time of N steps: N / every samples
        if lags % every or lags < 2 * every:
            desc.missing.append("a correlation window of at least two whole sample intervals")
            return
        lags //= every
        desc.note("green_kubo.correlation_length", "rules", f"{length.group(0)} = {lags} samples of {every} steps")
    elif length.group(3):
        desc.note("green_kubo.correlation_length", "default", f"{lags} samples: a 'correlation length' counts the "
                  "samples correlated (LAMMPS examples/VISCOSITY's p, fix ave/correlate Nrepeat), though the text "
                  f"writes steps; a window of {lags} steps would be {lags / every:g} samples")
    desc.green_kubo = GreenKubo(sample_every=every, correlation_length=lags)
    desc.note("green_kubo", "rules", f"{sample.group(0)}; {length.group(0)}")
    desc.note("green_kubo.temperature", "default", "the run's mean temperature: the k_B T of the prefactor is the "
              "averaged stage's own temperature, averaged like the correlations (in NVE no set point fixes it)")


def _units(desc: SimulationDescription, low: str) -> None:
    hit = re.search(r"\b(real|metal)s?(?: unit| units| unit system)\b|\bunits (real|metal)\b", low)
    if hit:  # 'metal units', 'in metals unit'
        desc.units = hit.group(1) or hit.group(2)  # type: ignore[assignment]
        desc.note("units", "rules", hit.group(0))
    elif hit := re.search(_REDUCED + r"|lennard[- ]jones|\blj\b", low):
        desc.units = "lj"
        desc.note("units", "rules", hit.group(0))
    elif hit := SETFL.search(low):
        desc.units = "metal"
        desc.note("units", "rules", f"metal: the unit system of the setfl potential the text names ('{hit.group(0)}'; "
                  "LAMMPS's setfl format, pair_style eam/alloy and eam/fs, tabulates distances in angstrom and "
                  "energies in eV, i.e. metal units)")
    else:
        desc.missing.append("unit system")


# A potential file in LAMMPS's setfl format (DYNAMO multi-element EAM: *.eam.alloy, *.eam.fs), or the
# format or its pair styles named: defined in metal units, so it states the unit system of a text that
# names no other.
SETFL = re.compile(r"[\w+-]+(?:\.[\w+-]+)*\.eam\.(?:alloy|fs)\b|\bsetfl\b|\beam/(?:alloy|fs)\b")


def _boundary(desc: SimulationDescription, low: str) -> None:
    hit = re.search(r"periodic boundar\w* conditions?(?: \(pbc\))?(?: (?:are|is|should be|must be) applied)?"
                    r"(?: (?:in|along) (?:all|every|each)(?: (?:three|3|two|2))? (?:directions|dimensions))?|\bpbc\b",
                    low)
    if hit:
        desc.note("boundary", "rules", hit.group(0))
    else:
        desc.note("boundary", "default", "p p p: LAMMPS's default boundary, periodic in every direction")


def _axes(low: str) -> tuple[list[float], list[float]] | None:
    """Extents stated per axis: 'x = 0 to 10', 'from x=0 to 10', 'z from -0.5 to 0.5'."""
    lo, hi = [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
    found = 0
    for k, axis in enumerate("xyz"):
        hit = re.search(rf"\b(?:from )?{axis}(?:[- ]direction|[- ]axis)?\s*(?:=|:|from)?\s*{NUM}\s*(?:to|-|and)\s*"
                        rf"{NUM}", low)
        if hit:
            lo[k], hi[k] = float(hit.group(1)), float(hit.group(2))
            found |= 1 << k
    return (lo, hi) if found & 3 == 3 else None


# one span for every axis: 'the cell runs from -6 to 6 unit cells on each axis', 'spanning -3 to 3
# lattice spacings along each axis'
_SPAN = re.compile(rf"\b(?:box|cell|domain)\b[^.;]{{0,60}}?\b(?:from|spans?|spanning|extends?|extending|runs?|"
                   rf"running)\s*(?:from\s*)?{NUM}\s*to\s*{NUM}\s*(unit cells?|lattice (?:units?|spacings?|"
                   rf"constants?|cells?)|cells?|angstroms?)?[^.;0-9]{{0,30}}?\b(?:in|along|for|on|across) "
                   rf"(?:all|every|each)(?: (?:three|3))? (?:directions?|dimensions?|axes|axis)\b")


def _span_all_axes(low: str) -> tuple[list[float], list[float], bool | None, str] | None:
    """(lo, hi, stated in lattice units (None: no unit stated), the words) of one span for every axis."""
    hit = _SPAN.search(low)
    if hit is None:
        return None
    unit = hit.group(3)
    lattice = None if unit is None else not unit.startswith("angstrom")
    return [float(hit.group(1))] * 3, [float(hit.group(2))] * 3, lattice, hit.group(0)


def _lattice_and_box(desc: SimulationDescription, low: str, ctl: dict) -> None:
    style = ctl.get("lattice")
    if style is None:  # 'a face-centred cubic (fcc) lattice': the lattice word a few words before 'lattice'
        for pattern, name in LATTICE_WORDS:
            if re.search(rf"(?:{pattern})\)?(?:\s+\w+){{0,2}}\s+lattice\b", low) or re.search(
                    rf"\b(?:{pattern})\)?\s+(?:(?:arrangement|structure|packing|configuration|crystal)\b|"
                    rf"(?:\w+\s+){{0,2}}(?:at|with) (?:an? )?(?:reduced |number )?density\b)", low):
                style = name
                break
    if re.search(r"\bdiamond(?:[- ]cubic)?(?: lattice| structure| crystal)", low):
        style = "diamond"
    style = style or solids.crystal_word(low)
    if style == "sc" and (grid := molecular.placement_lattice(low)):
        desc.note("lattice", "rules", f"none: '{grid.group(0)}' is the grid the molecules are placed on "
                  "(simagent.described.molecular), not a crystal")
        style = None
    data = re.search(r"(?:pre-?minimi[sz]ed |initial |input |lammps )?data file|\bread_data\b", low)
    random_only = (style is None and not data and RANDOM_PLACEMENT.search(low) is not None
                   and molecular.water_model(low) is None)  # water boxes: simagent.described.molecular
    if style is None and not random_only:
        desc.missing.append(f"initial configuration: the {data.group(0)} the text requires (not supplied, its atom "
                            "positions not stated)" if data else "initial configuration (lattice)")
        return
    if style is not None and not _set_lattice(desc, low, style):
        return
    axes = _axes(low)
    span = None if axes else _span_all_axes(low)
    dims = re.search(rf"\b{NUM}\s*(?:x|\*|by)\s*{NUM}(?:\s*(?:x|\*|by)\s*{NUM})?(?=[^.;]{{0,60}}\b(?:box|block|"
                     rf"lj unit|reduced unit|unit cell|lattice unit))", low) or re.search(
        rf"\b(?:box|block|domain)[^.;0-9]{{0,40}}?{NUM}\s*(?:x|\*|by)\s*{NUM}(?:\s*(?:x|\*|by)\s*{NUM})?", low)
    if axes:
        lo, hi = axes
        evidence = "per-axis extents"
    elif span:
        lo, hi, _, evidence = span
    elif dims:
        values = [float(v) for v in dims.groups() if v is not None]
        lo, hi = [0.0, 0.0, 0.0], values + [0.0] * (3 - len(values))
        evidence = dims.group(0)
    elif cube := re.search(rf"\b(?:cube|cubic\s+(?:simulation\s+)?(?:box|cell|domain|dimen[st]ions?))"
                           rf"(?:\s+(?:of|with))?(?:\s+(?:an?\s+)?(?:side|edge|length|size))?(?:\s+(?:of|=))?\s*{NUM}(?!\s*(?:x|\*|by)\b)",
                           low):
        lo, hi = [0.0, 0.0, 0.0], [float(cube.group(1))] * 3
        evidence = cube.group(0)
    elif ctl.get("cells"):
        n = ctl["cells"]
        values = [float(v) for v in (n * 3 if len(n) == 1 else n)][:3]
        lo, hi = [0.0, 0.0, 0.0], values + [0.0] * (3 - len(values))
        evidence = f"{n} lattice cells"
    elif style is not None and (cells := _cells_for_count(desc, style, ctl, low)) is not None:
        lo, hi = [0.0, 0.0, 0.0], [float(cells)] * 3
        evidence = f"{ctl['n_atoms']} atoms on a cubic {style} lattice: {cells} cells per edge"
    else:
        desc.missing.append("box size")
        return
    if desc.dimension == 2 and hi[2] <= lo[2]:
        lo[2], hi[2] = -0.5, 0.5
        desc.note("box.z", "default", "-0.5 to 0.5: a 2D box needs a z extent around z = 0")
    elif desc.dimension == 2 and not lo[2] < 0 < hi[2]:
        thickness = hi[2] - lo[2]
        lo[2], hi[2] = -thickness / 2, thickness / 2
        desc.note("box.z", "default", f"{lo[2]:g} to {hi[2]:g}: the stated z thickness {thickness:g} centred on "
                  "z = 0 (LAMMPS requires a 2D box to straddle z = 0)")
    absolute = random_only or (desc.units != "lj" and re.search(r"box[^.;]{0,80}(?:angstrom|\ba\b\s*\^?3?)", low))
    if span and span[2] is not None:  # the span's own unit
        absolute = not span[2]
    try:
        desc.box = Box(lo=tuple(lo), hi=tuple(hi), lattice_units=not absolute)
    except ValueError:
        desc.missing.append("box size")
        return
    desc.note("box", "rules", evidence + (" (absolute)" if absolute else " (lattice units, LAMMPS's region default)"))


def _set_lattice(desc: SimulationDescription, low: str, style: str) -> bool:
    """The lattice and its scale (False: the scale is missing)."""
    if style in ("hex", "sq", "sq2") and "dimension" not in desc.origin:
        desc.dimension = 2  # LAMMPS's lattice command allows these styles in 2D only
        desc.note("dimension", "rules", f"2D: a {style} lattice is two-dimensional")
    scale = None
    if desc.units == "lj":
        q = prose_density(low) or lattice_scale_density(low)
        if q is not None:
            scale, kind = q.value, "density"
    else:
        hit = re.search(r"lattice (?:constant|parameter|spacing)\s*(?:of|=|:|is)?\s*" + NUM + r"\s*(?:angstrom|a\b)",
                        low)
        if hit:
            scale, kind = float(hit.group(1)), "constant"
    if scale is None and desc.units == "lj" and not re.search(r"\b(?:density|spacing|lattice constant|lattice "
                                                             r"parameter|lattice scale)\b", low):
        scale, kind = 1.0, "density"
        desc.note("lattice.scale", "default", "1.0: the text names no density or spacing for the lattice; LAMMPS's "
                  "lattice scale 1.0 (reduced density 1, as in LAMMPS's own LJ examples)")
    if scale is None:
        desc.missing.append("lattice scale (density or lattice constant)")
        return False
    desc.lattice = Lattice(style=style, scale=scale, scale_is=kind)
    desc.note("lattice", "rules", f"{style} {scale}")
    return True


LATTICE_BASIS = {"fcc": 4, "bcc": 2, "sc": 1, "diamond": 8}


# a particle count: '361 particles', 'particles (361)', 'the number of atoms is 361'; not a count per
# cell or molecule, nor one kind's ('200 atoms of type 2'), nor a term of a formula ('N+1 atoms')
_COUNT = re.compile(r"(?<![+*/-])\b(\d+) (?:identical |lj |lennard-jones )?(?:particles|atoms)\b(?! ?(?:of "
                    r"(?:type|kind|species)|per\b|each\b|in (?:each|every|the unit|a unit)))"
                    r"|\b(?:particles|atoms) \((\d+)\)|\bnumber of (?:particles|atoms)(?: is| of| =|:)?\s*(\d+)")


def stated_counts(low: str) -> list[tuple[int, str]]:
    """The particle counts a text states, in order: (count, the words)."""
    return [(int(next(g for g in hit.groups() if g)), hit.group(0)) for hit in _COUNT.finditer(low)]


def _stated_atoms(desc: SimulationDescription, low: str) -> None:
    """One particle count stated (however often): the run must make that many, and the answer says
    so when it does not (tools.lammps.protocols.described). Several different counts: none."""
    counts = stated_counts(low)
    if "molecular.stated_total" in desc.origin:  # the molecular reading read the total as a count of molecules
        return
    if counts and len({n for n, _ in counts}) == 1:
        desc.stated_atoms = counts[0][0]
        desc.note("stated_atoms", "rules", counts[0][1])


def _cells_for_count(desc: SimulationDescription, style: str, ctl: dict, low: str) -> int | None:
    """'N particles on an fcc lattice in a cubic box': the cube of cells that holds exactly N atoms
    (None unless N is a whole cube of cells, in 3D)."""
    n = ctl.get("n_atoms")
    if n is None and (counts := stated_counts(low)):
        n = ctl["n_atoms"] = counts[0][0]
    if n is None or desc.dimension != 3 or style not in LATTICE_BASIS or not re.search(r"cubic[^.;]{0,30}box", low):
        return None
    cells = round((n / LATTICE_BASIS[style]) ** (1 / 3))
    return cells if LATTICE_BASIS[style] * cells**3 == n else None


def _masses(desc: SimulationDescription, low: str, ctl: dict) -> None:
    masses = ctl.get("masses") or []
    if masses:
        desc.masses = {i + 1: q.value for i, q in enumerate(masses)}
        desc.note("masses", "rules", ", ".join(f"{q.value:g}" for q in masses))
    elif hit := re.search(r"\bunit mass|\bmass (?:of )?(?:=\s*)?1(?:\.0)?\b", low):
        desc.masses = {1: 1.0}
        desc.note("masses", "rules", hit.group(0))
    elif desc.units == "lj":
        desc.masses = {1: 1.0}
        desc.note("masses", "default", "1: in LJ units the particle mass is the unit of mass")
    else:
        desc.missing.append("atom masses")


def _pair(desc: SimulationDescription, low: str, ctl: dict) -> None:
    if not re.search(r"lennard[- ]jones|\blj\b", low):
        desc.missing.append("pair potential")
        return
    eps = re.search(r"epsilon\s*(?:=|of|:)?\s*" + NUM, low)
    sig = re.search(r"sigma\s*(?:=|of|:)?\s*" + NUM + r"(?!\s*(?:cut|\*))", low)
    values = {}
    for name, hit in (("epsilon", eps), ("sigma", sig)):
        if hit:
            values[name] = float(hit.group(1))
            desc.note(f"pair.{name}", "rules", hit.group(0))
        elif desc.units == "lj":
            values[name] = 1.0
            desc.note(f"pair.{name}", "default", f"1: in LJ units {name} of the one atom type is the unit itself")
        else:
            desc.missing.append(f"LJ {name}")
            return
    cut = ctl.get("pair_cutoff")
    if cut is not None:
        cutoff, evidence = cut.value * (values["sigma"] if cut.unit == "sigma" else 1.0), f"{cut.value:g} {cut.unit}"
    elif hit := (re.search(r"\bcutt?-?off(?: radius| distance)?[^.;0-9]{0,20}?" + NUM + r"\s*(sigma)?", low)
                 or re.search(NUM + r"\s*(sigma)?\s*cut-?off\b", low)):
        cutoff = float(hit.group(1)) * (values["sigma"] if hit.group(2) else 1.0)
        evidence = hit.group(0)
    else:
        desc.missing.append("pair cutoff")
        return
    desc.note("pair.cutoff", "rules", evidence)
    three = None
    if re.search(r"axilrod|\batm\b|triple[- ]dipole", low):
        tc = re.search(r"\batm\b[^.;]{0,60}?cut-?off\s*(?:of|=|is|:)?\s*" + NUM, low)
        ang = re.search(r"(?:angular|triple|three-body) cut-?off(?: parameter)?\s*(?:of|=)?\s*" + NUM, low)
        nu = re.search(r"(?:strength(?: coefficient)?|\bnu)\s*(?:of|=)?\s*" + NUM, low)
        if not (tc and ang and nu):
            desc.missing.append("Axilrod-Teller-Muto cutoff, triple cutoff and strength")
            return
        three = ThreeBody(cutoff=float(tc.group(1)), cutoff_triple=float(ang.group(1)), nu=float(nu.group(1)))
        desc.note("pair.three_body", "rules", f"{tc.group(0)}; {ang.group(0)}; {nu.group(0)}")
    shift = re.search(r"shift(?:ed)?(?: to zero)?|energy shift|truncated and shifted", low)
    tail = re.search(r"tail correction", low)
    desc.pair = Pair(cutoff=cutoff, coeffs=[PairCoeff(epsilon=values["epsilon"], sigma=values["sigma"])],
                     shift=bool(shift), tail=bool(tail), mixing=ctl.get("mixing_rule"), three_body=three)
    if shift:
        desc.note("pair.shift", "rules", shift.group(0))


DIPOLE_UNSUPPORTED = ("an atom style other than atomic", "point dipoles")


def _dipoles(desc: SimulationDescription, low: str) -> None:
    """Spheres with point dipoles of a stated magnitude, oriented at random: rendered (the atom style
    and dipole entries are then no longer unsupported)."""
    if not re.search(r"hybrid sphere dipole|dipol\w*[^.;]{0,80}spher|spher\w*[^.;]{0,80}dipol", low):
        return
    magnitude = re.search(r"dipole moment[^.;0-9]{0,40}?(?:magnitude|of|=)\s*(?:of\s*)?" + NUM, low)
    if not magnitude or not re.search(r"random", low) or desc.pair is None:
        return
    other = [u for u in desc.unsupported if u not in DIPOLE_UNSUPPORTED]
    if re.search(r"atom[_ ]style[^.;]{0,20}(?:body|ellipsoid|full|molecular|bond|charge|rheo)", low):
        return
    desc.unsupported = other
    desc.dipoles = Dipoles(magnitude=float(magnitude.group(1)), seed=DEFAULT_SEED + 2)
    desc.pair.style = "lj/cut/dipole/cut"
    desc.note("dipoles", "rules", magnitude.group(0))
    desc.note("dipoles.seed", "default", f"{desc.dipoles.seed}: seed of the random dipole orientations (none stated)")


def _velocity(desc: SimulationDescription, low: str, ctl: dict) -> None:
    q = ctl.get("velocity_temperature")
    if re.search(r"zero (?:translational |initial )?velocit|initial(?:ly)? at rest|with(?:out| no) (?:initial )?"
                 r"velocit", low):
        desc.note("velocity", "rules", "zero initial velocities: no velocity command")
        return
    if q is None:
        hit = re.search(r"(?:initiali[sz]|assign|creat|generat|draw)\w*[^.;]{0,80}?(?:temperature|at)\s*(?:of|=)?\s*"
                        + NUM, low)
        if hit and re.search(r"velocit", hit.group(0)):
            temperature = float(hit.group(1))
        else:
            desc.note("velocity", "default", "none: the text creates no velocities, so the atoms start at rest")
            return
    else:
        temperature = q.value
    seed = ctl.get("seed")
    dist = "gaussian" if re.search(r"gaussian|maxwell[- ]boltzmann", low) else "uniform"
    rot = re.search(r"zero (?:total |net )?(?:linear and )?angular momentum|angular momentum", low)
    desc.velocity = Velocity(temperature=temperature, seed=seed or DEFAULT_SEED, distribution=dist,
                             zero_rotation=bool(rot))
    desc.note("velocity.temperature", "rules", f"{temperature:g}")
    desc.note("velocity.distribution", "rules" if dist == "gaussian" else "default",
              "gaussian (Maxwell-Boltzmann)" if dist == "gaussian" else "uniform: LAMMPS's velocity default")
    if seed is None:
        desc.note("velocity.seed", "default", f"{DEFAULT_SEED}: the seed of LAMMPS's examples (none stated)")
    desc.note("velocity.zero_momentum", "default", "mom yes: LAMMPS's velocity default, the net momentum is zeroed")


def _velocity_for_thermostat(desc: SimulationDescription) -> None:
    """No velocity creation stated, but the first run holds a deterministic thermostat at T > 0:
    velocities are created at its set point. From rest, a crystal on its lattice feels no force and
    a Nose-Hoover, Berendsen or rescaling thermostat (which scale velocities) cannot heat it, so the
    prescribed temperature would never be reached."""
    runs = [s for s in desc.stages if s.kind == "run"]
    if desc.velocity is not None or desc.origin.get("velocity", None) is None or desc.origin["velocity"].source != \
            "default" or not runs:
        return
    dyn = runs[0].dynamics
    if dyn is None or dyn.thermostat not in ("nose-hoover", "berendsen", "velocity-rescale") or not dyn.t_stop:
        return
    desc.velocity = Velocity(temperature=dyn.t_stop, seed=DEFAULT_SEED)
    desc.note("velocity", "default", f"created at {dyn.t_stop:g} (seed {DEFAULT_SEED}, uniform, zero momentum): the "
              f"text states no velocities but a {dyn.thermostat} thermostat at {dyn.t_stop:g} for the first run, "
              "which cannot heat atoms that start at rest on their lattice sites")


def _timestep(desc: SimulationDescription, ctl: dict, low: str) -> None:
    q = ctl.get("timestep")
    if q is None and (hit := re.search(NUM + r"\s*(fs|ps)(?: \(?femtoseconds?\)?)? time ?steps?\b", low)):
        q = Quantity(value=float(hit.group(1)), unit=hit.group(2))  # 'a 2.0 fs timestep', 'using 1 ps timesteps'
    if q is None and (hit := re.search(r"\btime ?steps? (?:of|=|equal to|set to) " + NUM + r"\s*(fs|ps)\b", low)):
        q = Quantity(value=float(hit.group(1)), unit=hit.group(2))  # 'time steps of 0.5 fs', 'timestep = 0.001 ps'
    if q is not None:
        value = q.value
        if desc.units == "real" and q.unit == "ps":
            value *= 1000.0
        elif desc.units == "metal" and q.unit == "fs":
            value /= 1000.0
        desc.timestep = value
        desc.note("timestep", "rules", f"{q.value:g} {q.unit}")
    elif desc.units is not None:
        desc.timestep = DEFAULT_TIMESTEP[desc.units]
        desc.note("timestep", "default", f"{desc.timestep:g}: LAMMPS's default timestep for {desc.units} units")


# ---------------------------------------------------------------------------------------------
# Stages
# ---------------------------------------------------------------------------------------------

# a stated run length: '1000 steps', '50000 timesteps', '10000 md steps' (not intervals or windows)
_RUN = re.compile(rf"\b{COUNT}[- ](?:more |additional )?(?:(?:production|equilibration|sampling|nve|nvt|npt|md) )?"
                  rf"(?:{STEP_WORD}|timessteps|stps)\b(?![- ](?:time[- ]|running )?(?:averag|window|block|interval))")
# a run already stated, named again by its length in a sentence about the analysis: 'the averages are taken over
# the production run of 5000 steps only', 'analyse just the 2000-step NVE run'
_NAMED_AGAIN = re.compile(r"\bthe (?:[\w/-]+ ){0,3}(?:run|simulation|trajectory|stage|phase|segment) "
                          r"(?:of|with|lasting|over) $")
_NAMED_AGAIN_AFTER = re.compile(r"^(?:[\w/-]+ ){0,3}(?:run|simulation|trajectory|stage|phase|segment)\b")
_ANALYSIS = re.compile(r"\banaly[sz]|\baverag|\bmetrics?\b|\bmeasur|\bevaluat|\bcomput(?:e|ed|ing)\b|\bsampl")
_GOES_ON = re.compile(r"\b(?:then|followed by|next|afterwards?|another|further|additional|more|subsequent(?:ly)?)\b")


def _stated_again(desc: SimulationDescription, sentence: str, hit: re.Match, steps: int) -> int | None:
    """The run stage a length names again ('the analysis uses only the reference run of 10000 steps'): a definite
    run of that length in a sentence about the analysis that states no further run, when exactly one run stated
    before has it; None: the words state a run of their own."""
    before = sentence[max(0, hit.start() - 60):hit.start()]
    after = sentence[hit.end():hit.end() + 40].lstrip()
    if not (_NAMED_AGAIN.search(before) or (before.endswith("the ") and _NAMED_AGAIN_AFTER.match(after))):
        return None
    if not _ANALYSIS.search(sentence) or _GOES_ON.search(sentence):
        return None
    same = [i for i in desc.run_stages() if desc.stages[i].steps == steps]
    return same[0] if len(same) == 1 else None


_NOT_RUN = re.compile(r"\b(?:every|each|damp\w*|last|final|interval|frequency|window|correlation|up to|"
                      r"within|iterations?|in)\b[^.;,]{0,12}$")
# not 'a minimisation-like relaxation' (dynamics that only resembles one, e.g. fix nve/limit)
_MINIMIZE = re.compile(r"(?:minimi[sz](?:e|ed|ation)|energy minimi)(?![a-z]*[- ]like\b)")
MINIMIZE = _MINIMIZE  # the minimisation's words (simagent.described.llm_fill writes its fields there)
_TEMPERATURE = re.compile(r"\btemperatures? (?:of |at |= ?|to )?(?:about |approximately )?" + NUM)
_KELVIN = re.compile(r"\bat " + NUM + r"\s*k\b")  # 'water at 300 K', 'equilibrated at 293.15 K'
_PRESSURE = re.compile(NUM + r"\s*(atm|bar)\b")
# fix nve/limit's cap on the distance an atom moves per step: 'nve/limit integrator (limit: 0.05)'
_LIMIT = re.compile(r"nve/limit\b[^.;]{0,60}?(?:limit|cap\w*|max\w*|xmax|at most)[^0-9.;]{0,30}" + NUM)
# the same cap in prose, always 'per (time)step': 'a displacement limit of 0.1 A per timestep', 'atoms move at most
# 0.05 sigma per step', 'limiting the displacement to 0.1 A each step', 'the maximum displacement per step is 0.2 A'
_PER_STEP = r"(?:per|each|every|in one|in a single|a) (?:md |integration )?(?:time ?)?step\b"
_LIMIT_PROSE = re.compile(
    r"\b(?:displacements?|distances?|movements?|moves?|moving|travels?)\b[^.;0-9]{0,25}?\b(?:limit(?:ed)?|cap(?:ped)?|"
    r"max(?:imum)?|at most|no more than|restricted)\b(?: (?:of|at|to|is|by))?\s*" + NUM + r"\s*(angstrom|a\b|nm|"
    r"sigma|lj units?|distance units?)?[^.;0-9]{0,12}?\b" + _PER_STEP
    + r"|\b(?:limit\w*|cap\w*|restrict\w*) (?:the |each |every )?(?:atom(?:ic|s')? |per-step )?(?:displacements?|"
    r"moves?|movements?)\b(?: of (?:each |every |any )?atoms?)? (?:to|of|at) " + NUM + r"\s*(angstrom|a\b|nm|sigma|"
    r"lj units?|distance units?)?[^.;0-9]{0,12}?\b" + _PER_STEP
    + r"|\bmax(?:imum)? displacement " + _PER_STEP + r"(?: (?:is|of|=|set to|at|to|limited to|capped at))?\s*" + NUM
    + r"\s*(angstrom|a\b|nm|sigma)?")
_OFF = re.compile(r"thermostat\w*[^.;]{0,30}\b(?:switched off|turned off|removed)|(?:remove|switch off|turn off)\w*"
                  r"[^.;]{0,15}thermostat|"
                  r"\b(?:switch|turn|shut)(?:es|s|ed|ing)? (?:the |this |that |its )?(?:\w+ )?thermostat\w* off\b")
# a set point stated by what the thermostat does: 'held at 0.8 by a Langevin thermostat', 'kept at 1.2'
_HELD_AT = re.compile(r"\b(?:held|kept|maintained|fixed|regulated|controlled|thermostatt?ed|clamped) (?:constant )?"
                      r"(?:at|to|near) (?:a (?:reduced )?temperature of )?(?:t ?= ?)?" + NUM + r"(?!\s*(?:%|atm|bar|pa|"
                      r"gpa|mpa|steps?|timesteps?|fs|ps|ns)\b)(?![\d.])")
# a pressure ramp: 'pressure ramp from 100 to 1 atm', 'the pressure ramped from 100 atm down to 1 atm', 'the
# barostat's target lowered from 50 bar to 1 bar' (no temperature or kelvin between the anchor and 'from')
_PRESSURE_RAMP = re.compile(r"\b(?:pressure|barostat)(?:(?!temperature|\d\s*k\b)[^.;]){0,40}?\bfrom " + NUM
                            + r"\s*(atm|bar)?\s*(?:down |up )?to " + NUM + r"\s*(atm|bar)?")


def _in_style_pressure(value: float, unit: str | None, units: str | None) -> float:
    """A pressure stated in atm or bar, in the unit style's own unit (real: atm, metal: bar)."""
    if unit == "atm" and units == "metal":
        return value / ATM_PER_BAR
    if unit == "bar" and units == "real":
        return value * ATM_PER_BAR
    return value


# a thermostat's own seed, stated after it in its sentence ('a Langevin thermostat ... and seed 777')
_THERMOSTAT_SEED = re.compile(r"\bseed\s*(?:of|=|:|is)?\s*(\d+)")
# an ensemble the sentence removes names no dynamics of its own: 'the NPT fix is removed and the system runs in NVE'
_REMOVED = re.compile(r"\b(?:the |its |this )?(?:npt|nvt|nph|nve)(?:/\w+)?(?: fix| ensemble| integrator| dynamics)? "
                      r"(?:is |was |are |gets? )?(?:removed|unfixed|dropped|deleted|switched off|turned off)\b|"
                      r"\b(?:remov|unfix|dropp|delet)\w* (?:the |its |this )?(?:npt|nvt|nph|nve)(?:/\w+)?(?: fix| "
                      r"ensemble| integrator| dynamics)?")
# a barostatted ensemble's set point said as a target ('fix npt/asphere with target temperature 2')
_TARGET_T = re.compile(r"\b(?:target|set[- ]?point) temperature (?:of |= ?|is |at )?" + NUM)


def _named_thermostat(sentence: str) -> str | None:
    """The thermostat acting on NVE integration that a sentence names (fix langevin, temp/berendsen, temp/rescale)."""
    if re.search(r"langevin", sentence):
        return "langevin"
    if re.search(r"berendsen", sentence):
        return "berendsen"
    if re.search(r"velocity[- ]rescal|temp/rescale|rescal\w* (?:the )?velocit", sentence):
        return "velocity-rescale"
    return None


def _stated_part(sentence: str) -> str:
    """What a sentence states of the dynamics: the words before a thermostat goes off (the switch is
    an event, and the words after it that name the next ensemble are `replaced_after_off`'s), without the
    ensembles it removes ('the NPT fix is removed')."""
    off = _OFF.search(sentence)
    return _REMOVED.sub(" ", sentence[:off.start()] if off else sentence)


def replaced_after_off(sentence: str) -> str | None:
    """The words after a thermostat is switched off that name the ensemble taking its place ('after
    equilibration the Berendsen thermostats are removed and the box is run in the NPT ensemble at 300 K and
    1 atm'): the runs stated after the switch have that ensemble's dynamics. None: they name none, and the
    runs after the switch are plain NVE."""
    off = _OFF.search(sentence)
    if off is None:
        return None
    after = sentence[off.end():]
    return after if sentence_ensemble(after) is not None else None


def unnamed_thermostat(sentence: str) -> str | None:
    """The words of a sentence that hold the temperature without naming a thermostat ('at constant
    temperature', 'coupled to a heat bath'; None if it names one, or holds none): the run then gets
    LAMMPS's Nose-Hoover fix nvt/npt, a default report.md lists."""
    part = _stated_part(sentence)
    stated = sentence_ensemble(part)
    if stated is None or not stated.unnamed_thermostat or _named_thermostat(part) is not None:
        return None
    return stated.words


_FS = {"fs": 1.0, "ps": 1.0e3, "ns": 1.0e6}
_STYLE_TIME_FS = {"real": 1.0, "metal": 1.0e3}  # LAMMPS's time unit of the style, in fs


def style_time(q: Quantity, units: str | None) -> float:
    """A stated time in the unit style's time unit (real: fs, metal: ps): '0.1 ps' in real units is 100."""
    if q.unit in _FS and units in _STYLE_TIME_FS:
        return q.value * _FS[q.unit] / _STYLE_TIME_FS[units]
    return q.value


def _sentence_dynamics(sentence: str, reduced: bool, current: Dynamics | None,
                       initial_t: float | None = None, units: str | None = None) -> Dynamics | None:
    """The dynamics a sentence names (None: it names none). `initial_t`: the velocity temperature,
    the set point of a thermostat that keeps 'that temperature' / 'the same temperature'."""
    sentence = _stated_part(sentence)  # (the switch itself is an event)
    found = read_dynamics(sentence, reduced)
    stated = sentence_ensemble(sentence)
    thermostat = _named_thermostat(sentence)
    if stated is None and thermostat is None:
        return None
    ensemble = stated.ensemble if stated is not None else "nve"
    if stated is not None and stated.unnamed_thermostat and thermostat is None:
        ensemble = "nvt" if ensemble == "nve" else ensemble  # 'NVE with a thermostat': thermostatted, none named
    if thermostat is not None and ensemble == "nvt" and not re.search(r"nos[eé][- ]?hoover", sentence):
        ensemble = "nve"  # canonical sampling by a thermostat that acts on NVE integration (fix nve + fix langevin)
    dyn = Dynamics(ensemble=ensemble)
    if stated is not None and stated.temperature_only and ensemble == "nvt" and current is not None and \
            current.ensemble in ("npt", "nph"):  # 'isothermal' after a barostat: T held, the pressure still
        dyn = current.model_copy(update={"ensemble": "npt"})
    if thermostat is not None and dyn.ensemble == "nve":
        dyn.thermostat = thermostat
    elif dyn.ensemble in ("nvt", "npt"):
        dyn.thermostat = "nose-hoover"
    if dyn.thermostat == "langevin":
        after = sentence[re.search(r"langevin", sentence).start():]
        seed = _THERMOSTAT_SEED.search(after)
        if seed and not re.search(r"velocit", after[:seed.start()]):
            dyn.seed = int(seed.group(1))
    if dyn.thermostat is not None:
        t = found.get("thermostat_temperature")
        if t is None and (held := _HELD_AT.search(sentence)) and (reduced or units is None):
            t = Quantity(value=float(held.group(1)), unit="reduced")
        if t is None and dyn.ensemble == "npt" and (target := _TARGET_T.search(sentence)):
            t = Quantity(value=float(target.group(1)), unit="reduced" if reduced else "K")
        kelvin = _KELVIN.search(sentence) if not reduced else None
        if t is None and kelvin is not None:
            t_value = float(kelvin.group(1))
        elif t is None and initial_t is not None and re.search(r"\b(?:that|the same|this|the initial|the) temperature"
                                                             r"(?! (?:of|at|=|is|to)\b)", sentence):
            t_value = initial_t
        elif t is None and current is not None and current.thermostat is not None:
            t_value = current.t_stop
        else:
            t_value = t.value if t is not None else None
        dyn.t_start = dyn.t_stop = t_value
        damp = found.get("thermostat_damping")
        if damp is not None and damp.unit != "steps":
            dyn.t_damp = style_time(damp, units)
    limit = _LIMIT.search(sentence)
    if limit and dyn.ensemble == "nve":
        dyn.limit = float(limit.group(1))
    elif dyn.ensemble == "nve" and (prose := _LIMIT_PROSE.search(sentence)):
        value, unit = next((prose.group(k), prose.group(k + 1)) for k in (1, 3, 5) if prose.group(k) is not None)
        dyn.limit = float(value) * (10.0 if unit == "nm" and units in ("real", "metal") else 1.0)
    if dyn.ensemble in ("npt", "nph"):
        p = re.search(r"pressure\s*(?:of|=|at)?\s*" + NUM, sentence)
        ramp = _PRESSURE_RAMP.search(sentence)
        zero = re.search(r"pressure(?: control| coupling)? (?:near|at|of|to|around) zero\b|\bzero "
                         r"(?:external |in-plane )?pressure", sentence)
        ambient = re.search(r"\b(?:ambient|atmospheric|standard|normal) pressure|\b(?:one|1) atmosphere\b", sentence)
        if ramp:
            unit = ramp.group(4) or ramp.group(2)  # 'from 100 to 1 atm', 'from 100 atm to 1 atm'
            dyn.p_start, dyn.p_stop = (_in_style_pressure(float(ramp.group(k)), unit, units) for k in (1, 3))
        elif p:
            dyn.p_start = dyn.p_stop = float(p.group(1))
        elif zero:
            dyn.p_start = dyn.p_stop = 0.0
        elif ambient and not reduced:  # 1 atm, in the unit style's pressure unit
            dyn.p_start = dyn.p_stop = 1.01325 if units == "metal" else 1.0
        elif not reduced and (stated := _PRESSURE.search(sentence)):  # 'at 300 K and 1 atm', in the style's unit
            value = float(stated.group(1))
            dyn.p_start = dyn.p_stop = value / ATM_PER_BAR if stated.group(2) == "atm" and units == "metal" else (
                value * ATM_PER_BAR if stated.group(2) == "bar" and units == "real" else value)
        if re.search(r"anisotropic|\baniso\b", sentence):
            dyn.p_coupling = "aniso"
        pd = found.get("barostat_damping")
        if pd is not None and pd.unit != "steps":
            dyn.p_damp = style_time(pd, units)
    return dyn


# words of a text that speaks of dynamics: with them, minimisations alone are not the whole protocol
_DYNAMICS_WORDS = re.compile(r"\bheat|\bcool|equilibrat|anneal|dynamics|\bmd\b|time ?step|thermostat|velocit|"
                             r"ensemble|\b(?:nve|nvt|npt|nph)\b|\bsteps?\b|temperature|\d\s*k\b|\bruns?\b|"
                             r"\brunning\b|\bevolv|integrat|trajector|diffus|\bsimulat(?!\w* (?:box|cell|domain))")


def _stages(desc: SimulationDescription, low: str, reduced: bool) -> None:
    current: Dynamics | None = None
    unnamed: str | None = None  # the words of current's thermostat when they name none (a default)
    reset_next = False
    minimized = False
    deform: solids.Deform | None = None  # stated, waiting for the run it applies to
    pending: tuple[Dynamics, str] | None = None  # a thermostat on NVE stated in a sentence with no run of its own
    last: tuple[str, list[Stage]] | None = None  # the last sentence that made run stages, and its stages
    for sentence in re.split(r"(?<=[.;])\s+", low):
        initial_t = desc.velocity.temperature if desc.velocity else None
        dyn = _sentence_dynamics(sentence, reduced, current, initial_t, desc.units)
        clauses = _clause_dynamics(sentence, reduced, current, initial_t, desc.units, dyn)
        if pending is not None and dyn is not None and not clauses and not _OFF.search(sentence):
            dyn = _join_pending(desc, pending, sentence, dyn)
        if dyn is not None:
            pending = None
        made = len(desc.stages)
        if dyn is not None and not clauses and current is not None and current.thermostat == "nose-hoover" and \
                dyn.thermostat == "nose-hoover" and dyn.ensemble == current.ensemble:
            current = dyn  # the thermostat in force goes on ('isothermal' after a Nose-Hoover NPT stage)
        elif dyn is not None:
            current, unnamed = clauses[0][1:] if clauses else (dyn, unnamed_thermostat(sentence))
        elif current is not None:
            _later_set_points(desc, sentence, current, deform is not None)
        events: list[tuple[int, str, int]] = []
        timed: dict[int, str] = {}  # runs stated as a time: their words and the conversion
        stated_deform, deform_words = solids.read_deform(sentence, desc.units)
        if stated_deform is not None:
            events.append((re.search(r"deform|tensile|stretch|elongat|compress|strain rate", sentence).start(),
                           "deform", 0))
        elif deform_words:
            desc.missing.append(deform_words)
        off = _OFF.search(sentence)
        if off:  # applies to the runs stated after it
            events.append((off.start(), "off", 0))
        reset = re.search(r"reset(?:ting)? (?:the )?time ?step", sentence)
        if reset:  # applies to the first run stated after it
            events.append((reset.start(), "reset", 0))
        ends: dict[int, int] = {}  # a run's position -> the end of its length's words (its statement ends there)
        for hit in _RUN.finditer(sentence):
            before = sentence[max(0, hit.start() - 40):hit.start()]
            if _NOT_RUN.search(before) and not (dyn is not None and re.search(
                    r"\bin (?:(?:the |plain )?(?:nve|nvt|npt|nph)(?: ensemble| dynamics)?(?: for)? )?$", before)):
                continue  # 'in N steps', 'in NVE for N steps': a run length only in a sentence naming the dynamics
            steps = int(round(float(hit.group(1))))
            if (again := _stated_again(desc, sentence, hit, steps)) is not None:
                desc.average_stage = again
                desc.note("average_stage", "rules", f"{desc.stages[again].name}: {hit.group(0)} named again "
                          f"for the analysis ('{sentence[:120]}')")
                continue
            events.append((hit.start(), "run", steps))
            ends[hit.start()] = hit.end()
        stated_steps = {steps for at, kind, steps in events if kind == "run"}
        for at, steps, words in _timed_runs(desc, sentence):
            if steps not in stated_steps:  # ('for 20 ps (20000 steps)': one run)
                events.append((at, "run", steps))
                timed[at] = words
        mini = _MINIMIZE.search(sentence)
        if mini and not minimized and not re.search(r"(?:post|after|pre)[- ]?\s*(?:the )?(?:energy )?$",
                                                    sentence[max(0, mini.start() - 12):mini.start()]):
            events.append((mini.start(), "minimize", 0))
        stated_from = 0  # where the words stating the next run begin
        for at, kind, steps in sorted(events):
            if kind == "deform":
                deform = stated_deform
                current, why = solids.deform_dynamics(current, dyn, deform, sentence, desc.units)
                desc.note(f"deform{len(desc.stages) + 1}", "rules", deform_words)
                if lateral := solids.lateral_pressure(sentence, deform.axis, desc.units):
                    desc.note(f"deform{len(desc.stages) + 1}.lateral_pressure", "rules", lateral[2])
                    if current.p_axes != lateral[0]:
                        desc.unsupported.append(f"a barostat on {', '.join(lateral[0])} beside the "
                                                f"{current.thermostat} thermostat")
                desc.note(f"deform{len(desc.stages) + 1}.dynamics", "default", f"{current.ensemble}: {why}")
                continue
            if kind == "reset":
                reset_next = True
                continue
            if kind == "off":  # plain NVE, or the ensemble the words after the switch name
                after = replaced_after_off(sentence)
                following = _sentence_dynamics(after, reduced, None, initial_t, desc.units) if after else None
                current, unnamed = (following, unnamed_thermostat(after)) if following is not None and after else (
                    Dynamics(ensemble="nve"), None)
                continue
            if kind == "minimize":
                minimized = True
                _minimize_stage(desc, sentence)
                continue
            if any(s.kind == "run" for s in desc.stages) and re.search(r"\btotal of\b", sentence):
                total = sum(s.steps for s in desc.stages)
                if steps == total:
                    continue  # the total of the stages already read
            if current is None and shock.MENTION.search(low[:low.find(sentence) + len(sentence)]):
                current = Dynamics()  # a shock run: fix msst integrates it (simagent.described.shock)
            for start, stated, words in clauses[1:]:  # 'N steps in NVT, then M steps in NVE': each run its clause's
                if start <= at:
                    current, unnamed = stated, words
            if current is None:
                desc.missing.append(unread_dynamics(steps, low))
                continue
            if deform is None and dyn is None and (going := _loading_goes_on(desc, sentence)) is not None:
                deform = going
            statement = sentence[stated_from:ends.get(at, at)]
            stated_from = ends.get(at, at)
            stage = Stage(name=f"run{len(desc.stages) + 1}", steps=steps, dynamics=current.model_copy(),
                          reset_timestep=reset_next, evidence=sentence[:160], deform=deform, statement=statement)
            if at in timed:
                desc.note(f"{stage.name}.steps", "rules", timed[at])
            reset_next = False
            if deform is not None and current.ensemble in ("npt", "nph") and deform.axis in (current.p_axes or "xyz"):
                desc.unsupported.append("a barostat on the deformed axis")
            deform = None
            if unnamed and current.thermostat == "nose-hoover":
                desc.note(f"{stage.name}.thermostat", "default", f"Nose-Hoover (fix {current.ensemble}): the text "
                          f"holds the temperature ('{unnamed}') without naming a thermostat")
            _complete_dynamics(desc, stage, low)
            desc.stages.append(stage)
        if clauses and not any(kind == "off" and at >= clauses[-1][0] for at, kind, _ in events):
            current, unnamed = clauses[-1][1:]  # the sentence's last dynamics stays in force
        runs = [s for s in desc.stages[made:] if s.kind == "run"]
        if runs:
            last = (sentence, runs)
            _stage_timestep(desc, sentence, runs)
        elif dyn is not None and dyn.p_coupling == "aniso" and not clauses and not events:
            _coupling_of_last_run(desc, sentence)
        elif dyn is not None and separate_thermostat.on_nve(dyn) and not clauses and not events:
            joined = _thermostat_after(desc, dyn, sentence, last)
            current = joined or current
            pending = (dyn, sentence) if joined is dyn else None  # for an NVE run stated later
            last = None
        elif dyn is not None:
            last = None
    if deform is not None:
        desc.missing.append("the length of the deformation run (steps)")
    if not any(s.kind == "run" for s in desc.stages) and (not desc.stages or evolution_words(low) or
                                                           _DYNAMICS_WORDS.search(low) or desc.velocity is not None):
        desc.missing.append("a run length (steps)")
    elif not any(s.kind == "run" for s in desc.stages):
        desc.note("stages", "rules", "minimisation only: the text states no dynamics (no run, ensemble, thermostat, "
                  "temperature or velocities); the metrics are the minimised state's")
    elif desc.average_stage is None:
        desc.average_stage = desc.run_stages()[-1]
        name = desc.stages[desc.average_stage].name
        desc.note("average_stage", "default", f"{name}: the metrics average the thermo output of the last run stage, "
                  "the production run the text states last")


# a timestep stated in a run's own sentence: 'using timesteps of 0.5', 'with a 2 fs time step', 'a timestep of 1 fs'
_STAGE_TIMESTEP = re.compile(r"\btime ?steps? (?:of|=|is|set to)\s*" + NUM + r"\s*(fs|ps|femtoseconds?|picoseconds?)?"
                             r"|\b" + NUM + r"\s*(fs|ps)[- ]time ?steps?\b")


def _stage_timestep(desc: SimulationDescription, sentence: str, runs: list[Stage]) -> None:
    """A timestep stated in the sentence of a run that differs from the simulation's (desc.timestep: the one the
    text states for the whole run, or LAMMPS's default) is that stage's own (Stage.timestep; the renderer sets it
    for the stage and back after it). Its default dampings, counted in timesteps, are counted in its own. A
    sentence that makes several runs does not say which of them it is for: refused by name, never run at
    another timestep. A value without a unit is in the unit style's time unit (LAMMPS's timestep command)."""
    if desc.timestep is None:
        return
    for hit in _STAGE_TIMESTEP.finditer(sentence):
        value, unit = (hit.group(1), hit.group(2)) if hit.group(1) is not None else (hit.group(3), hit.group(4))
        dt = float(value)
        if unit is not None:
            dt = style_time(Quantity(value=dt, unit="ps" if unit.startswith("p") else "fs"), desc.units)
        if abs(dt - desc.timestep) <= 1e-9 * max(dt, desc.timestep):
            continue
        if len(runs) != 1:
            desc.unsupported.append(f"{STAGE_TIMESTEP_NAME} ({hit.group(0).strip()} in the sentence of "
                                    f"{', '.join(r.name for r in runs)}, which does not say which run it is for; the "
                                    f"simulation's timestep is {desc.timestep:g})")
            return
        stage = runs[0]
        stage.timestep = dt
        desc.note(f"{stage.name}.timestep", "rules", f"{hit.group(0).strip()}: this stage's own (the simulation's is "
                  f"{desc.timestep:g})")
        dyn = stage.dynamics
        for field, count in (("t_damp", 100), ("p_damp", 1000)):
            origin = desc.origin.get(f"{stage.name}.{field}")
            if dyn is not None and getattr(dyn, field) is not None and origin is not None and \
                    origin.source == "default" and f"{count} timesteps" in origin.evidence:
                setattr(dyn, field, count * dt)
                desc.note(f"{stage.name}.{field}", "default", f"{count * dt:g}: {count} timesteps of the stage's own "
                          f"{dt:g}" + origin.evidence.split(":", 1)[1].split("timesteps", 1)[1])
        return


def check_stage_timesteps(desc: SimulationDescription) -> None:
    """A stage timestep only where nothing reads time from the record: not in the averaged stage (its rates and
    times use the simulation's timestep), nor in a deformation, shear, shock, PRD or RESPA run, nor with an SRD
    solvent (which sets a timestep of its own); such a stage is refused by name."""
    for index, stage in enumerate(desc.stages):
        if stage.timestep is None:
            continue
        why = ("the averaged stage" if index == desc.average_stage or (desc.average_from is not None and
                                                                      desc.average_from <= index) else
               "a deformation or shear run" if stage.deform is not None or stage.shear is not None else
               "a shock, PRD or controlled run" if stage.msst or stage.prd or stage.controller else
               "a RESPA run" if desc.respa is not None else
               "an SRD run" if desc.srd is not None else None)
        if why is not None:
            desc.unsupported.append(f"{STAGE_TIMESTEP_NAME} in {why} ({stage.name}: {stage.timestep:g}; the "
                                    f"simulation's is {desc.timestep:g})")


# words that end or change a loading: a run stated with them is not more of the same deformation
_LOADING_ENDS = re.compile(r"relax|unload|releas|\bhold|\bheld|stop|equilibrat|anneal|\bcool|\bheat|minimi|revers|"
                           r"\bfix(?:ed)? (?:the )?(?:strain|box)|constant (?:strain|volume)|\bnve\b|\bnvt\b")


def _loading_goes_on(desc: SimulationDescription, sentence: str) -> solids.Deform | None:
    """A run stated right after a deformation stage, in a sentence that names no dynamics and nothing
    that ends the loading ('the simulation then runs for N steps'): the deformation goes on, as LAMMPS's
    fix deform stays in force over later runs until it is removed (None: the run is not loaded)."""
    if not desc.stages or desc.stages[-1].deform is None or _LOADING_ENDS.search(sentence):
        return None
    before = desc.stages[-1]
    desc.note(f"run{len(desc.stages) + 1}.deform", "default", f"the deformation of {before.name} goes on (the same fix "
              "and stress-strain record): the run is stated after it and nothing stated ends the loading (LAMMPS's "
              "fix deform stays in force over later runs until it is removed)")
    return before.deform.model_copy(update={"continued": True})


def _join_pending(desc: SimulationDescription, pending: tuple[Dynamics, str], sentence: str,
                  dyn: Dynamics) -> Dynamics:
    """The dynamics of a sentence stating NVE after a sentence that stated a thermostat on NVE and no run:
    one run under both fixes (simagent.described.separate_thermostat), or NVE alone with the thermostat's
    run length missing when the two are put in sequence."""
    thermostat, before = pending
    if dyn.ensemble != "nve" or dyn.thermostat is not None:
        if dyn.thermostat != thermostat.thermostat:  # never dropped in silence for another thermostat
            words = separate_thermostat.ordered(before, sentence)
            desc.missing.append(separate_thermostat.unplaced(thermostat, before, words) if words is not None else
                                separate_thermostat.other_thermostat(thermostat, before, sentence, dyn))
        return dyn
    words = separate_thermostat.ordered(before, sentence)
    if words is not None:
        desc.missing.append(separate_thermostat.unplaced(thermostat, before, words))
        return dyn
    if not separate_thermostat.plain_nve(sentence, dyn):
        desc.missing.append(separate_thermostat.contradicted(thermostat, before, sentence))
        return dyn
    named = separate_thermostat.name(thermostat)
    desc.note(f"run{len(desc.stages) + 1}.thermostat", "rules", f"fix nve with the {named} thermostat stated in a "
              f"sentence of its own ('{before.strip()[:100]}'), on the NVE run of '{sentence.strip()[:100]}'")
    return separate_thermostat.joined(thermostat, dyn)


def _thermostat_after(desc: SimulationDescription, dyn: Dynamics, sentence: str,
                      last: tuple[str, list[Stage]] | None) -> Dynamics | None:
    """A sentence that states a thermostat on NVE (`dyn`) and no run, after a sentence whose one run is NVE by
    name: the thermostat acts on that run (the stage gets both fixes; its dynamics is returned). Put in
    sequence after it ('afterwards'), it is a stage with no run length: listed as missing (None returned).
    Otherwise `dyn` itself: the thermostat holds for the runs stated later."""
    if last is None or len(last[1]) != 1 or last[1][0] is not desc.stages[-1]:
        return dyn
    stage = last[1][0]
    if not separate_thermostat.plain_nve(last[0], stage.dynamics):
        return dyn
    words = separate_thermostat.ordered(last[0], sentence)
    if words is not None:
        desc.missing.append(separate_thermostat.unplaced(dyn, sentence, words))
        return None
    assert stage.dynamics is not None
    stage.dynamics = separate_thermostat.joined(dyn, stage.dynamics)
    desc.note(f"{stage.name}.thermostat", "rules", f"fix nve with the {separate_thermostat.name(dyn)} thermostat "
              f"stated in a sentence of its own ('{sentence.strip()[:100]}'), on the NVE run stated before it")
    _complete_dynamics(desc, stage, desc_text=" ".join(s for s in (last[0], sentence)))
    return stage.dynamics


# where a sentence goes on to a later stage: 'N steps in NVT, then M steps in NVE', '..., followed by ...'
_NEXT_CLAUSE = re.compile(r",?\s+(?:and\s+)?(?:then|followed by|after which|after that|afterwards|subsequently|"
                          r"before|finally)\b")


# a run length stated as a time ('for 20 ps', 'over 0.5 ns'); not a damping, relaxation or sampling time
_RUN_TIME = re.compile(r"\b(?:for|over|lasting)\s+(?:a (?:total )?(?:period|duration|time) of\s+)?(?:about\s+)?"
                       + NUM + r"\s*(fs|ps|ns|femtoseconds?|picoseconds?|nanoseconds?)\b")
_NOT_RUN_TIME = re.compile(r"(?:damp|relax|coupl|time constant|correlat|averag|every|each|sampl|output|interval|"
                           r"window|total of|thermostat|barostat)[^.;,]{0,20}$")
_TIME_UNIT_FS = {"fs": 1.0, "ps": 1e3, "ns": 1e6, "femtosecond": 1.0, "picosecond": 1e3, "nanosecond": 1e6}
_UNIT_STYLE_FS = {"metal": 1e3, "real": 1.0}  # the time unit of the unit style (ps, fs), in fs


def _timed_runs(desc: SimulationDescription, sentence: str) -> list[tuple[int, int, str]]:
    """Runs a sentence states as a time ('equilibrate for 20 ps'): (position, steps, words with the
    conversion). The steps are the time over the timestep (stated or defaulted; a time that is no
    whole number of timesteps is listed as missing); only in real and metal units, whose time unit
    is physical."""
    if desc.units not in _UNIT_STYLE_FS or not desc.timestep:
        return []
    out = []
    for hit in _RUN_TIME.finditer(sentence):
        if _NOT_RUN_TIME.search(sentence[max(0, hit.start() - 30):hit.start()]):
            continue
        unit = hit.group(2).rstrip("s") if len(hit.group(2)) > 2 else hit.group(2)
        duration = float(hit.group(1)) * _TIME_UNIT_FS[unit] / _UNIT_STYLE_FS[desc.units]  # unit style's time
        steps = duration / desc.timestep
        if steps < 1 or abs(steps - round(steps)) > 1e-6 * steps:
            desc.missing.append(f"a run of {hit.group(1)} {hit.group(2)} in whole timesteps of {desc.timestep:g}")
            continue
        out.append((hit.start(), int(round(steps)), f"{hit.group(0)} = {int(round(steps))} steps of {desc.timestep:g}"
                    f" {'ps' if desc.units == 'metal' else 'fs'} (the run length stated as a time, over the timestep)"))
    return out


def _clause_dynamics(sentence: str, reduced: bool, current: Dynamics | None, initial_t: float | None,
                     units: str | None, whole: Dynamics | None) -> list[tuple[int, Dynamics, str | None]]:
    """The dynamics of each clause of a sentence that names two different ones ('equilibrate 1000 steps
    in NVT, then run 2000 steps in NVE'), with the clause's start; [] when it names one or none (the
    sentence's dynamics, `whole`, then holds for all its runs). A set point the sentence states once
    (in another clause) holds for a thermostatted clause that states none."""
    cuts = [0, *(m.start() for m in _NEXT_CLAUSE.finditer(sentence)), len(sentence)]
    found: list[tuple[int, Dynamics, str | None]] = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        dyn = _sentence_dynamics(sentence[a:b], reduced, found[-1][1] if found else current, initial_t, units)
        if dyn is not None:
            found.append((a, dyn, unnamed_thermostat(sentence[a:b])))
    if len({(d.ensemble, d.thermostat) for _, d, _ in found}) < 2:
        return []
    for _, dyn, _ in found:
        if dyn.thermostat is not None and dyn.t_stop is None and whole is not None and whole.t_stop is not None:
            dyn.t_start, dyn.t_stop = whole.t_start, whole.t_stop
    return found


UNREAD = "stated, not understood"  # a run's dynamics the text prescribes in words the rules do not read


def unread_dynamics(steps: int, low: str) -> str:
    """What a run whose dynamics the rules did not read lacks; when the text has words of how the system
    evolves, they are named as stated and not understood (solve then runs no default ensemble instead)."""
    words = evolution_words(low)
    said = f" (the text says '{words}': {UNREAD})" if words else ""
    return f"the dynamics (ensemble) of the {steps}-step run{said}"


# the barostat's coupling stated after the sentence naming it: 'the pressure is coupled anisotropically',
# 'each box edge adjusts independently'; not 'isotropic', not a coupling of something else
_ANISO_LATER = re.compile(r"\b(?:pressure|barostat|box)\b[^.;]{0,50}\banisotropic(?:ally)?\b|"
                          r"\banisotropic(?:ally)? (?:pressure|barostat|coupl\w*)|"
                          r"\b(?:box (?:edges?|lengths?|dimensions?)|each (?:axis|edge|box (?:edge|length|dimension))) "
                          r"(?:are |is )?(?:adjusted|coupled|scaled|relaxed) independently\b")


def _coupling_of_last_run(desc: SimulationDescription, sentence: str) -> bool:
    """'The barostat acts anisotropically on the three edges.' after the sentence that made an isotropic NPT/NPH run:
    that run's barostat is anisotropic (a sentence that orders itself after it, 'then ...', is about later runs).
    True: the last run was changed."""
    stage = desc.stages[-1] if desc.stages else None
    if stage is None or stage.kind != "run" or stage.dynamics is None or \
            stage.dynamics.ensemble not in ("npt", "nph") or stage.dynamics.p_coupling != "iso" or \
            stage.dynamics.p_axes is not None or separate_thermostat.ordered("", sentence):
        return False
    stage.dynamics.p_coupling = "aniso"
    desc.note(f"{stage.name}.p_coupling", "rules", (_ANISO_LATER.search(sentence) or re.search(r"anisotropic\w*",
                                                                                              sentence)).group(0))
    return True


def _later_set_points(desc: SimulationDescription, sentence: str, current: Dynamics, deforming: bool) -> None:
    """Set points stated in a sentence after the one naming the ensemble: a barostat pressure
    ('zero external pressure'), or the temperature kept during a deformation."""
    if current.ensemble in ("npt", "nph") and current.p_stop is None and (p := solids.stated_pressure(sentence)):
        current.p_start = current.p_stop = p[0]
        desc.note("pressure", "rules", p[1])
    if current.ensemble in ("npt", "nph") and current.p_coupling == "iso" and current.p_axes is None and \
            (aniso := _ANISO_LATER.search(sentence)):
        if not _coupling_of_last_run(desc, sentence):  # the barostat's run is stated later (or is another's)
            desc.note(f"run{len(desc.stages) + 1}.p_coupling", "rules", aniso.group(0))
        current.p_coupling = "aniso"
    if deforming and (t := solids.maintained_temperature(sentence)) is not None:
        if current.thermostat is None:
            current.ensemble, current.thermostat = "nvt", "nose-hoover"
        current.t_start = current.t_stop = t
        desc.note("deform.temperature", "rules", f"maintained at {t:g} K")


def _complete_dynamics(desc: SimulationDescription, stage: Stage, desc_text: str) -> None:
    dyn = stage.dynamics
    assert dyn is not None
    dt = desc.timestep or 1.0
    if dyn.thermostat is not None:
        stated = set(map(float, _TEMPERATURE.findall(desc_text) + (_KELVIN.findall(desc_text) if desc.units in (
            "real", "metal") else [])))
        if dyn.t_stop is None and desc.velocity is not None and len(stated) == 1:
            dyn.t_start = dyn.t_stop = desc.velocity.temperature
            desc.note(f"{stage.name}.t_stop", "default", f"{dyn.t_stop:g}: the thermostat states no set point; the "
                      "only temperature the text states, the one the velocities are drawn at")
        if dyn.t_stop is None:
            desc.missing.append(f"the thermostat temperature of stage {stage.name}")
        if dyn.t_damp is None:
            dyn.t_damp = 100 * dt
            desc.note(f"{stage.name}.t_damp", "default", f"{dyn.t_damp:g}: 100 timesteps, the damping the LAMMPS "
                      "manual recommends for fix nvt/langevin")
        if dyn.thermostat == "langevin" and dyn.seed is None:
            dyn.seed = DEFAULT_SEED + 1
            desc.note(f"{stage.name}.seed", "default", f"{dyn.seed}: Langevin seed (none stated)")
        elif dyn.thermostat == "langevin":
            desc.note(f"{stage.name}.seed", "rules", f"seed {dyn.seed} (stated with the Langevin thermostat)")
        every = re.search(r"rescal\w*[^.;]{0,60}?\bevery\s+(\d+)\s*(?:time ?)?steps?", desc_text)
        if dyn.thermostat == "velocity-rescale" and dyn.rescale_every is None and every:
            dyn.rescale_every, dyn.rescale_window = int(every.group(1)), 0.0
            desc.note(f"{stage.name}.rescale", "rules", every.group(0))
            desc.note(f"{stage.name}.rescale_window", "default", "0: no window stated, every rescaling sets the "
                      "temperature")
        elif dyn.thermostat == "velocity-rescale" and dyn.rescale_every is None:
            dyn.rescale_every, dyn.rescale_window = 1, 0.0
            desc.note(f"{stage.name}.rescale", "default", "every 1 step, window 0: none stated")
    if dyn.limit is not None:
        unit = re.search(r"nve/limit\b[^.;]{0,90}?" + re.escape(f"{dyn.limit:g}") + r"\s*([a-z]+)", desc_text)
        said = f" (the text writes '{unit.group(1)}', which is not a distance)" if unit and unit.group(1) in (
            "fs", "ps", "femtoseconds", "picoseconds") else ""
        desc.note(f"{stage.name}.limit", "rules", f"nve/limit {dyn.limit:g}: fix nve/limit's argument, the largest "
                  f"distance an atom moves in one step (distance units){said}")
    if dyn.ensemble in ("npt", "nph"):
        if dyn.p_stop is None and desc.units in DEFAULT_PRESSURE_UNIT:
            dyn.p_start = dyn.p_stop = 0.0
            desc.note(f"{stage.name}.p_stop", "default", f"0 {DEFAULT_PRESSURE_UNIT[desc.units]}: the text names a "
                      "barostat but states no pressure; zero pressure, a stress-free box")
        elif dyn.p_stop is None:
            desc.missing.append(f"the barostat pressure of stage {stage.name}")
        if dyn.p_damp is None:
            dyn.p_damp = 1000 * dt
            desc.note(f"{stage.name}.p_damp", "default", f"{dyn.p_damp:g}: 1000 timesteps, the barostat damping "
                      "the LAMMPS manual recommends")



def minimize_settings(desc: SimulationDescription, sentence: str, name: str) -> Minimize | None:
    """The style, tolerances and limits a minimisation sentence states (None: its tolerances are missing);
    unstated limits get documented defaults noted under `name`."""
    found = read_controls(sentence)
    style = found.get("minimizer") or "cg"
    pair = _TOLERANCE_PAIR.search(sentence)  # 'energy and force tolerances of 1e-6 and 1e-8(, respectively)'
    if pair and "etol" not in found and "ftol" not in found:
        first, second = float(pair.group(2)), float(pair.group(3))
        found["etol"], found["ftol"] = (first, second) if pair.group(1) == "energy" else (second, first)
    both = re.search(r"energy and force (?:convergence )?tolerances?(?: (?:are|of|=|both|values?))*\s*" + NUM,
                     sentence) or \
        re.search(r"tolerances? (?:of )?" + NUM + r" (?:for|on) both (?:the )?energy and (?:the )?force", sentence)
    if both and ("etol" not in found or "ftol" not in found):  # one number for both tolerances
        found["etol"] = found["ftol"] = float(both.group(1))
    if "etol" not in found or "ftol" not in found:
        desc.missing.append("the minimisation tolerances (etol, ftol)")
        return None
    maxiter = found.get("max_iterations")
    if maxiter is None:
        maxiter = DEFAULT_MAX_ITERATIONS
        desc.note(f"{name}.max_iterations", "default", f"{maxiter}: LAMMPS needs maxiter and the text states none; "
                  "large enough that the stated tolerances end the minimisation (the log says which criterion did)")
    maxeval = found.get("max_evaluations")
    if maxeval is None:
        maxeval = max(DEFAULT_MAX_EVALUATIONS, 10 * maxiter)
        desc.note(f"{name}.max_evaluations", "default",
                  f"{maxeval}: LAMMPS needs maxeval; ten times the iterations, at least {DEFAULT_MAX_EVALUATIONS}")
    return Minimize(style=style, etol=found["etol"], ftol=found["ftol"], max_iterations=maxiter,
                    max_evaluations=maxeval)


# two tolerances in the order their quantities are named: 'energy and force tolerances of 1e-6 and 1e-8,
# respectively', 'force and energy criteria set to 1e-8 and 1e-6'
_TOLERANCE_PAIR = re.compile(r"\b(energy|force) and (?:energy|force) (?:convergence )?(?:tolerances|criteria|"
                             r"thresholds)(?: (?:are|of|=|set to|equal to|at))*\s*" + NUM + r"\s*(?:and|,|/)\s*" + NUM)


def _minimize_stage(desc: SimulationDescription, sentence: str) -> None:
    name = f"min{len(desc.stages) + 1}"
    minimize = minimize_settings(desc, sentence, name)
    if minimize is not None:
        desc.stages.append(Stage(name=name, kind="minimize", evidence=sentence[:160], minimize=minimize))
