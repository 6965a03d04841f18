"""A SimulationDescription (simagent.described.model) rendered literally to one LAMMPS input.

Each statement of the description becomes the LAMMPS command that states it, in order: units,
dimension, boundary, lattice/region/create_box/create_atoms, masses, the pair style with its
coefficients and modifiers, the timestep, the velocity creation, then every stage (a run with its
integrator and fixes, or a minimisation). Thermo output is always `step temp pe ke etotal press vol
density atoms` with `thermo_modify norm no` (extensive energies; the analysis divides by `atoms`
where a metric is per atom), so every unit style is read the same way. Nothing is added that the
description does not state, except the output needed to measure the metrics, and LAMMPS's own
wall-time limit from the job's time budget (tools.lammps.described_budget).

The input is made of named sections: _system_and_interactions (by the kind of system: molecular,
chain, granular, drum, else _system + _interactions), _run_settings, then _stages (each a
_stage_opening, then _minimisation or _run_stage: _stage_fixes, and in the averaged stage the
MEASUREMENTS, one function per measured quantity, in order).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from simagent.described.model import Dynamics, SimulationDescription, Stage
from tools.lammps import described_colloids as colloids
from tools.lammps import described_drum as drum
from tools.lammps import described_ellipsoids as ellipsoids
from tools.lammps import described_granular as granular
from tools.lammps import described_groups, example_system
from tools.lammps import described_metrics as group_metrics
from tools.lammps import described_mixtures as mixtures
from tools.lammps import described_molecular as molecular
from tools.lammps import described_pillars as pillars
from tools.lammps import described_replica as replica
from tools.lammps import described_rheo as rheo
from tools.lammps import described_sheet as sheet
from tools.lammps import described_shock as shock
from tools.lammps import described_solids as solids
from tools.lammps import described_special as special
from tools.lammps import described_spin as spin
from tools.lammps import described_srd as srd
from tools.lammps import described_stacking as stacking
from tools.lammps import described_tube_water as tube_water
from tools.lammps.described_budget import clean_stop_lines, resumed_clean_stop_lines

THERMO = "step temp pe ke etotal press vol density atoms"
EROT_COLUMN = "c_erot"  # rotational kinetic energy of finite spheres (compute erotate/sphere)
THERMO_SAMPLES = 500  # thermo lines per run stage when the description states no interval
RDF_BINS = 200
RDF_FILE = "rdf.dat"
RDF_SNAPSHOTS = 50  # g(r) snapshots over the averaged stage
MSD_VECTOR_EVERY = 10  # steps between the MSD values the diffusion slope is fitted to (LAMMPS examples/DIFFUSE)
MSD_COLUMN = "c_msd[4]"
MSD_COM = ("com yes: displacements are measured from the centre of mass, which a thermostat that does not "
           "conserve momentum (Langevin) leaves drifting; diffusion is defined in that frame (as LAMMPS "
           "examples/DIFFUSE)")
GK_COLUMNS = ("v_etaxy", "v_etaxx")
COULOMB_COLUMNS = ("ecoul", "elong")  # thermo keywords: pairwise Coulomb, long-range (k-space) energy
SLOPE_COLUMN = "v_fitslope"
# compute gyration: Rg, then the six components of the squared radius-of-gyration tensor (LAMMPS's order)
GYRATION_COLUMNS = ("c_rg",) + tuple(f"c_rg[{i}]" for i in range(1, 7))
GYRATION_COMPONENTS = ("xx", "yy", "zz", "xy", "xz", "yz")


def thermo_every(desc: SimulationDescription, stage: Stage) -> int:
    return desc.thermo_every or max(1, stage.steps // THERMO_SAMPLES)


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def _box(desc: SimulationDescription) -> list[str]:
    """units, dimension, boundary, atom_style, the lattice and the box region with create_box."""
    assert desc.box is not None and desc.units is not None
    assert desc.lattice is not None or desc.placements or (desc.layout is not None and desc.layout.fills), \
        "no lattice, no region fills and no atoms placed at random"
    box = desc.box
    extents = " ".join(f"{_fmt(lo)} {_fmt(hi)}" for lo, hi in zip(box.lo, box.hi, strict=True))
    style = "hybrid sphere dipole" if desc.dipoles else desc.atom_style
    lines = [f"units           {desc.units}", f"dimension       {desc.dimension}",
             f"boundary        {' '.join(desc.boundary)}", f"atom_style      {style}",
             *(["atom_modify     first big"] if desc.srd else []),  # the big particles first: neigh_modify include
             *rheo.preamble(desc),  # before the box: newton can no longer change after it
             *spin.preamble(desc),
             *replica.preamble(desc),  # atoms mapped by ID, never sorted: before the box (prd)
             f"region          box block {extents}" + ("" if box.lattice_units else " units box"),
             f"create_box      {desc.atom_types} box"]
    if desc.lattice is not None:
        lines.insert(4, f"lattice         {desc.lattice.style} {_fmt(desc.lattice.scale)}")
    if desc.lattice is not None and solids.lattice_suffix(desc):  # the box in the cubic lattice's units, the atoms
        # on the oriented lattice
        lines.append(f"lattice         {desc.lattice.style} {_fmt(desc.lattice.scale)}{solids.lattice_suffix(desc)}")
    return lines


def _lattice_atoms(desc: SimulationDescription) -> tuple[list[str], set[str]]:
    """create_atoms on the lattice, and the names of the regions these lines define (the box's included
    when a solid is built out of parts)."""
    if desc.layout is not None and desc.layout.fills:  # a solid built out of parts, each of its type (and lattice)
        lines = described_groups.fill_lines(desc.layout)
        return lines, {"box", *(line.split()[1] for line in lines if line.startswith("region "))}
    if desc.lattice is None:  # every atom is placed at random
        return [], set()
    if desc.layout is not None and desc.layout.create_in:  # the region must exist before atoms fill it
        region = next(r for r in desc.layout.regions if r.name == desc.layout.create_in)
        return [described_groups.region_line(region), f"create_atoms    {desc.lattice_type} region {region.name}"], {
            region.name}
    return [f"create_atoms    {desc.lattice_type} box"], set()


def _masses(desc: SimulationDescription) -> list[str]:
    """Per-type masses; finite particles (spheres, ellipsoids, dipoles) carry per-atom masses."""
    if not (desc.dipoles or desc.atom_style in ("sphere", "ellipsoid")):
        return [f"mass            {t} {_fmt(m)}" for t, m in sorted(desc.masses.items())]
    lines = [f"set             type {t} mass {_fmt(m)}" for t, m in sorted(desc.masses.items())]
    if desc.dipoles:
        lines.append(f"set             group all dipole/random {desc.dipoles.seed} {_fmt(desc.dipoles.magnitude)}")
    return lines


def _system(desc: SimulationDescription) -> list[str]:
    """The box, the atoms (lattice, substitutions, cavities, random placements), masses, regions and groups."""
    atoms, made = _lattice_atoms(desc)
    lines = _box(desc) + atoms + solids.substitution_lines(desc) + colloids.cavity_lines(desc)
    lines += mixtures.placement_lines(desc, made)
    lines += _masses(desc)
    if desc.layout is not None:
        lines += described_groups.setup(desc.layout, made)
    return lines + mixtures.deposition_setup(desc) + srd.setup_lines(desc) + ellipsoids.setup_lines(desc)


def _pair_lines(desc: SimulationDescription) -> list[str]:
    """pair_style and pair_coeff: a many-body potential file, Gay-Berne, a contact tracker, a pair style
    with per-pair coefficients, or that style overlaid with the three-body Axilrod-Teller term."""
    pair = desc.pair
    if desc.potential is not None:
        return solids.potential_lines(desc)
    if desc.ellipsoids is not None:
        return ellipsoids.pair_lines(desc)
    if pair is None:
        raise ValueError("the description states no interactions")
    if pair.tracker is not None:
        return special.tracker_lines(pair)
    if pair.three_body is None:
        return [f"pair_style      {pair.style} {_fmt(pair.cutoff)}"] + [
            f"pair_coeff      {c.i} {c.j} {_fmt(c.epsilon)} {_fmt(c.sigma)}"
            + (f" {_fmt(c.d1)} {_fmt(c.d2 or 0.0)}" if c.d1 is not None else "")
            + (f" {_fmt(c.cutoff)}" if c.cutoff is not None else "") for c in pair.coeffs]
    tb = pair.three_body
    return [f"pair_style      hybrid/overlay {pair.style} {_fmt(pair.cutoff)} atm {_fmt(tb.cutoff)} "
            f"{_fmt(tb.cutoff_triple)}",
            *(f"pair_coeff      {c.i} {c.j} {pair.style} {_fmt(c.epsilon)} {_fmt(c.sigma)}" for c in pair.coeffs),
            f"pair_coeff      * * atm * {_fmt(tb.nu)}"]  # i j, then k of the triple


def _interactions(desc: SimulationDescription) -> list[str]:
    """The pair lines, pair_modify (shift, tail, mixing) and the neighbor settings."""
    pair = desc.pair
    lines = [*_pair_lines(desc)]
    modify = [f"{key} yes" for key, on in (("shift", pair.shift), ("tail", pair.tail)) if on] if pair else []
    if pair and pair.mixing:
        modify.append(f"mix {pair.mixing}")
    if modify:
        lines.append("pair_modify     " + " ".join(modify))
    if desc.neighbor_skin is not None:
        lines.append(f"neighbor        {_fmt(desc.neighbor_skin)} bin")
    if desc.neighbor_every is not None:
        lines.append(f"neigh_modify    every {desc.neighbor_every}")
    if desc.layout is not None:
        lines += [f"neigh_modify    exclude type {i} {j}" for i, j in desc.layout.excluded_pairs]
    return lines + colloids.neighbor_lines(desc)


def _thermo_modify(desc: SimulationDescription) -> str:
    """Extensive thermo energies; the temperature of the thermostatted group when a thermostat acts on
    a group (held walls would otherwise count as cold atoms)."""
    if desc.example_system is not None and desc.example_system.thermo_computes:  # the system's own (temp/cs)
        return "thermo_modify   norm no" + example_system.thermo_keywords(desc.example_system)
    temp = None if desc.deposition else described_groups.temperature_compute(desc.layout)
    return "thermo_modify   norm no" + (f" temp {temp}" if temp else "") + (" lost warn" if desc.drum else "")


def _velocity(desc: SimulationDescription) -> list[str]:
    v = desc.velocity
    layout = desc.layout
    held = described_groups.at_rest(layout) + described_groups.velocity_lines(layout) if layout is not None else []
    if v is None:
        return held
    group, temp = "all", ""
    if layout is not None and layout.velocity_group:  # created on a group, at that group's temperature
        group, temp = layout.velocity_group, f" temp {described_groups.temperature_compute(layout)}"
    return [f"velocity        {group} create {_fmt(v.temperature)} {v.seed} dist {v.distribution} "
            f"mom {'yes' if v.zero_momentum else 'no'} rot {'yes' if v.zero_rotation else 'no'}"
            f"{f' loop {v.loop}' if v.loop else ''}{temp}"
            f"{example_system.velocity_keywords(desc.example_system)}"] + held


RUNAWAY_FIX = "runaway"  # fix halt id of the zero-pressure guard
RUNAWAY_GROWTH = 100  # the stage's volume, times its start, at which a zero-pressure stage is ended
RUNAWAY_EVERY = 1000  # steps between the guard's checks


def runaway_guard(stage: Stage, index: int) -> list[str]:
    """A barostat holding the box at zero pressure: a gas has no finite volume there and expands
    without bound (and the cost of a step grows with the box), so fix halt ends the stage once its
    volume is RUNAWAY_GROWTH times its start; the message it prints makes the analysis answer
    nothing (runaway_stop). A liquid or solid at zero pressure keeps a finite volume and never trips it."""
    dyn = stage.dynamics
    if dyn is None or dyn.ensemble not in ("npt", "nph") or dyn.p_start != 0 or dyn.p_stop != 0:
        return []
    n = index + 1
    return [f"variable        vol0_{n} equal $(vol)", f"variable        grown{n} equal vol/v_vol0_{n}",
            f"fix             {RUNAWAY_FIX} all halt {RUNAWAY_EVERY} v_grown{n} > {RUNAWAY_GROWTH} error soft"]


def runaway_stop(text: str) -> str | None:
    """Why a run's numbers answer nothing when runaway_guard ended a stage (None: it did not)."""
    hit = re.search(rf"Fix halt condition for fix-id {RUNAWAY_FIX} met on step (\d+) with value (\S+)", text)
    if hit is None:
        return None
    return (f"the box expanded without bound under the target pressure of 0: at step {hit.group(1)} its volume was "
            f"{float(hit.group(2)):.3g} times the stage's start (fix halt ended the stage at {RUNAWAY_GROWTH}x). At "
            "zero pressure a gas has no finite volume, so an average over the run depends only on where it is "
            "stopped; a text that means a small positive pressure has to state it")


def dynamics_fixes(dyn: Dynamics, spheres: bool = False, group: str = "all",
                   t_variable: str | None = None, moved: str = "all") -> list[str]:
    """The fixes of one run stage (ids dyn1, dyn2), the integrator first. `spheres`: dipolar spheres,
    integrated by nve/sphere with their dipoles updated (NVE only). `group`: the atoms an NVE
    thermostat acts on. `t_variable`: the NVE thermostat's target is this variable (a controller sets it).
    `moved`: the atoms the integrator moves."""
    if spheres:
        if dyn.ensemble != "nve" or dyn.thermostat is not None:
            raise ValueError("dipolar spheres are rendered with NVE (nve/sphere update dipole) only")
        return ["fix             dyn1 all nve/sphere update dipole"]
    temp = f"{_fmt(dyn.t_start)} {_fmt(dyn.t_stop)} {_fmt(dyn.t_damp)}" if dyn.t_stop is not None else ""
    if dyn.ensemble == "nvt":
        return [f"fix             dyn1 {moved} nvt temp {temp}"]
    if dyn.ensemble in ("npt", "nph"):
        press = " ".join(f"{axis} {_fmt(dyn.p_start)} {_fmt(dyn.p_stop)} {_fmt(dyn.p_damp)}"
                         for axis in (dyn.p_axes or [dyn.p_coupling]))
        if dyn.ensemble == "nph":
            return [f"fix             dyn1 {moved} nph {press}"]
        return [f"fix             dyn1 {moved} npt temp {temp} {press}{colloids.npt_keywords(dyn)}"]
    fixes = [f"fix             dyn1 {moved} nve" + (f"/limit {_fmt(dyn.limit)}" if dyn.limit is not None else "")]
    start = f"v_{t_variable}" if t_variable is not None else _fmt(dyn.t_start) if dyn.t_start is not None else ""
    if dyn.thermostat == "langevin":
        fixes.append(f"fix             dyn2 {group} langevin {start} {_fmt(dyn.t_stop)} {_fmt(dyn.t_damp)} {dyn.seed}")
    elif dyn.thermostat == "berendsen":
        fixes.append(f"fix             dyn2 {group} temp/berendsen {start} {_fmt(dyn.t_stop)} {_fmt(dyn.t_damp)}")
    elif dyn.thermostat == "velocity-rescale":
        fixes.append(f"fix             dyn2 {group} temp/rescale {dyn.rescale_every} {start} "
                     f"{_fmt(dyn.t_stop)} {_fmt(dyn.rescale_window or 0.0)} 1.0")
    return fixes


@dataclass(frozen=True)
class Measures:
    """What the averaged stage records beyond the thermo quantities (render's keyword arguments).
    `rdf`: g(r) snapshots into rdf.dat; `msd`: the MSD in the thermo output; `diffusion`: also the
    running MSD slope (see _motion); `viscosity`: the running Green-Kubo viscosity (_green_kubo);
    `rotation`: the spheres' rotational energy; `drag`: the force on each indenter along the flow;
    `wall_force`: per axis, the force the atoms exert on the LJ 9-3 walls normal to it; `shear_stress`:
    the pressure-tensor component of the imposed shear flow; `gyration`: the radius of gyration and its
    squared tensor (compute gyration); `friction`: the sliding body's tangential and normal force
    (interval means); `tensile`: the pressure-tensor component along this axis (pxx, pyy, pzz);
    `groups`: quantities over a group of atoms or counted in a region; `surface_tension`: the slab's
    surface tension from the pressure tensor (tools.lammps.described_metrics); `rotation_angle`: a
    rotating drum's angle variable (v_theta); `hbonds`: the number of hydrogen bonds of a pair style that counts
    them (an example system's hbond/dreiding); `coulomb`: the pairwise and long-range Coulomb energies (thermo ecoul,
    elong); `extents`: each bonded pillar's x and z extent (tools.lammps.described_pillars)."""

    rdf: bool = False
    msd: bool = False
    diffusion: bool = False
    viscosity: bool = False
    rotation: bool = False
    drag: bool = False
    wall_force: bool = False
    shear_stress: bool = False
    gyration: bool = False
    friction: bool = False
    tensile: str | None = None
    groups: list[group_metrics.GroupMeasure] | None = None
    surface_tension: bool = False
    rotation_angle: bool = False
    hbonds: bool = False
    coulomb: bool = False
    extents: bool = False


Measured = tuple[list[str], list[str]]  # input lines of a measurement, and the thermo columns it adds


def _motion(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> Measured:
    """g(r) snapshots into rdf.dat; the MSD from the stage's start (compute msd) and the running
    diffusion coefficient, the slope of the MSD against time over 2 x dimension (a least-squares slope
    over values 10 steps apart)."""
    lines = []
    if want.rdf:
        snapshot = max(1, stage.steps // RDF_SNAPSHOTS)
        pair = f" {molecular.rdf_pair(desc)}".rstrip() if desc.molecular else ""
        bins = (desc.molecular.rdf_bins if desc.molecular else None) or RDF_BINS
        lines += [f"compute         rdf all rdf {bins}{pair}",
                  f"fix             rdf all ave/time {snapshot} 1 {snapshot} c_rdf[*] file {RDF_FILE} mode vector"]
    if want.msd or want.diffusion:
        lines.append("compute         msd all msd com yes")  # relative to the centre of mass (MSD_COM)
        if want.diffusion:
            lines += [f"fix             msdvec all vector {MSD_VECTOR_EVERY} {MSD_COLUMN}",
                      f"variable        fitslope equal slope(f_msdvec)/{2 * desc.dimension}/({MSD_VECTOR_EVERY}*dt)"]
    return lines, [MSD_COLUMN] * (want.msd or want.diffusion) + [SLOPE_COLUMN] * want.diffusion


def _rotation(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> Measured:
    if want.rotation and desc.ellipsoids is not None:
        return ellipsoids.rotation_measure(desc)
    if want.rotation:
        return ["compute         erot all erotate/sphere"], [EROT_COLUMN]
    return [], []


def _green_kubo(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> Measured:
    """The running Green-Kubo viscosity (LAMMPS examples/VISCOSITY): autocorrelations of pxy and of
    the traceless pxx - p, integrated (trap) and scaled by V s dt / (k_B T); the xx estimate is
    divided by 2 - 2/dimension. T is the stage's mean temperature over the same samples (a running
    average from the stage's start): the temperature the stresses fluctuate at. The example divides
    by its set point after rescaling the velocities to it; an NVE stage after a thermostat settles a
    few % away from it (800 atoms: 3 % above), and an NVE run from a lattice far below it."""
    if not want.viscosity:
        return [], []
    gk = desc.green_kubo
    assert gk is not None
    s, p = gk.sample_every, gk.correlation_length
    return ["variable        gkpxy equal pxy", "variable        gkpxx equal pxx-press",
            f"fix             gk all ave/correlate {s} {p} {s * p} v_gkpxy v_gkpxx type auto ave running",
            f"fix             gktemp all ave/time {s} 1 {s} c_thermo_temp ave running",
            f"variable        gkscale equal vol*{s}*dt/f_gktemp",
            "variable        etaxy equal trap(f_gk[3])*v_gkscale",
            f"variable        etaxx equal trap(f_gk[4])*v_gkscale/{_fmt(2 - 2 / desc.dimension)}"], list(GK_COLUMNS)


def _drum_angle(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> Measured:
    return [], [drum.THETA_COLUMN] if want.rotation_angle and desc.drum is not None else []


def _shock(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> Measured:
    """The shock's progress: fix msst's four global values."""
    return (shock.variable_lines(), list(shock.COLUMNS)) if stage.msst is not None else ([], [])


def _spin(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> Measured:
    """compute spin's six values (magnetization, magnetic energy, spin temperature)."""
    return (spin.measure_lines(), list(spin.COLUMNS)) if desc.spin is not None else ([], [])


def _gyration(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> Measured:
    """Of all atoms, from unwrapped positions (LAMMPS compute gyration)."""
    return (["compute         rg all gyration"], list(GYRATION_COLUMNS)) if want.gyration else ([], [])


def _groups(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> Measured:
    if not want.groups:
        return [], []
    return group_metrics.lines(desc, want.groups), group_metrics.columns(want.groups)


def _surface_tension(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> Measured:
    if not want.surface_tension:
        return [], []
    return group_metrics.surface_tension_lines(desc), [group_metrics.SURFACE_TENSION_COLUMN]


def _shear_stress(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> Measured:
    return [], [solids.shear_component(stage.shear)] if want.shear_stress and stage.shear is not None else []


def _friction(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> Measured:
    if want.friction and desc.layout is not None and desc.layout.friction is not None:
        return described_groups.friction_lines(desc.layout, every)
    return [], []


def _tensile(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> Measured:
    return [], [f"p{want.tensile}{want.tensile}"] if want.tensile else []


def _hbonds(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> Measured:
    lines = example_system.hbond_lines(desc.example_system) if want.hbonds else []
    return lines, [example_system.HBOND_COLUMN] if lines else []


def _coulomb(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> Measured:
    return [], list(COULOMB_COLUMNS) if want.coulomb else []


def _extents(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> Measured:
    return pillars.measure(desc) if want.extents and desc.pillars is not None else ([], [])


def _forces(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> Measured:
    if not (want.drag or want.wall_force) or desc.layout is None:
        return [], []
    return (described_groups.force_averages(desc.layout, want.drag, want.wall_force, every),
            described_groups.force_columns(desc.layout, want.drag, want.wall_force))


# The measurements of the averaged stage, in the order their lines and thermo columns are written.
# A new measurement: a function (desc, stage, want, every) -> (lines, columns) added here.
MEASUREMENTS = (_motion, _rotation, _green_kubo, _drum_angle, _shock, _gyration, _groups, _surface_tension,
                _shear_stress, _friction, _tensile, _forces, _hbonds, _coulomb, _spin, _extents)


def _measured(desc: SimulationDescription, stage: Stage, want: Measures, every: int) -> list[str]:
    """The averaged stage's measurement lines, and the thermo_style that adds their columns."""
    lines: list[str] = []
    columns: list[str] = []
    for measurement in MEASUREMENTS:
        more, cols = measurement(desc, stage, want, every)
        lines += more
        columns += cols
    if columns:  # thermo_style resets thermo_modify
        lines += [f"thermo_style    custom {THERMO} {' '.join(columns)}", _thermo_modify(desc)]
    return lines


def _thermo_interval(desc: SimulationDescription, stage: Stage, index: int, want: Measures) -> int:
    """The stage's thermo interval; in the averaged stage, a multiple of the steps the MSD slope and the
    Green-Kubo correlations exist on."""
    every = thermo_every(desc, stage)
    if want.diffusion and index == desc.average_stage:  # the slope is computed on the MSD vector's steps
        every = math.lcm(every, MSD_VECTOR_EVERY)
    if want.viscosity and index == desc.average_stage and desc.green_kubo:  # correlations exist on these steps
        every = math.lcm(every, desc.green_kubo.sample_every * desc.green_kubo.correlation_length)
    return every


def _example_lines(desc: SimulationDescription, segment: int) -> list[str]:
    """The lines of an installed LAMMPS example's system (simagent.described.example_system) that come
    before its run `segment` (0: the system; later ones: what it sets up anew before a later run)."""
    example = desc.example_system
    if example is None:
        return []
    lines = example.segment(segment)
    if not lines:
        return []
    return [f"# LAMMPS example {example.name} ({example.input}): its system, as written there", *lines, ""]


def _system_and_interactions(desc: SimulationDescription) -> list[str]:
    """The system and its interactions, by the kind of system the description holds."""
    if desc.example_system is not None:  # an installed example's data file, topology and force field
        return _example_lines(desc, 0)
    if desc.gcmc is not None:  # a nanotube and the water fix gcmc lets into it (its own pair hybrid)
        return tube_water.system_lines(desc) + tube_water.interaction_lines(desc)
    if desc.molecular is not None:  # water and ions: templates, charges, constraints (see _run_settings), k-space
        early = molecular.constraint_lines(desc) if desc.molecular.prepare else []
        return molecular.system_lines(desc) + molecular.interaction_lines(desc) + early
    if desc.chain is not None:  # one bonded chain from its template, LJ between its non-bonded beads
        return molecular.chain_system_lines(desc) + _interactions(desc) + molecular.chain_interaction_lines(desc)
    if desc.granular is not None:  # an empty box the particles are poured into during the run
        return granular.system_lines(desc)
    if desc.drum is not None:  # an empty drum the particles are poured into, then rotated
        return drum.system_lines(desc)
    if desc.pillars is not None:  # one bonded-particle cylinder in its wall (copied and bonded before compression)
        return pillars.system_lines(desc)
    if desc.rheo is not None:  # RHEO particles: the general system, then the RHEO settings and pair
        return _system(desc) + rheo.interaction_lines(desc)
    if desc.spin is not None:  # spins on the atoms, the magnetic pair terms (simagent.described.spin)
        return _system(desc) + spin.interaction_lines(desc)
    if desc.sheet is not None:  # a graphene sheet: its own cell, replication and box (simagent.described.sheet)
        return sheet.system_lines(desc) + _interactions(desc)
    return _system(desc) + _interactions(desc)


def _run_settings(desc: SimulationDescription) -> list[str]:
    """Timestep and thermo output (and a molecular system's preparation), then the velocities, then the
    rigid displacements and a stacking-fault scan's constraint. Molecules that start as the text places
    them get their velocities before the SHAKE constraints exist: the creation then spreads the
    temperature over the unconstrained degrees of freedom and the constraints' first step removes the
    bond-direction part, leaving the rigid molecules at the stated temperature (created after SHAKE,
    they would start at 2/3 of it)."""
    lines = [f"timestep        {_fmt(desc.timestep)}", f"thermo_style    custom {THERMO}", _thermo_modify(desc)]
    if desc.respa is not None:  # multiple timestepping; the timestep above is its outermost level's
        lines.append(desc.respa.command())
    if desc.molecular is not None:
        lines += molecular.preparation_lines(desc)
    lines += _velocity(desc)
    if desc.molecular is not None and not desc.molecular.prepare:
        lines += molecular.constraint_lines(desc)
    return lines + described_groups.displacement_lines(desc.layout) + stacking.setup_lines(desc)


def _is_srd_stage(desc: SimulationDescription, index: int) -> bool:
    """The last run stage of an SRD set-up, where the solvent joins."""
    return desc.srd is not None and index == desc.run_stages()[-1]


def _stage_opening(desc: SimulationDescription, index: int, stage: Stage, active: list[str]) -> list[str]:
    """The stage's marker comment, the previous stage's fixes removed, the SRD solvent inserted before
    its stage, the timestep reset, and the stage's rigid displacement of a group."""
    lines = ["", f"# stage {index + 1}: {stage.name}: {stage.evidence[:100]}"]
    if stage.restart_from is not None:  # LAMMPS cleared, the earlier run's end state read back (its fixes are gone)
        lines += ["clear", *resumed_clean_stop_lines(), f"read_restart    {restart_file(desc, stage.restart_from)}"]
    elif not stage.keep_fixes:  # (a stage that continues the previous one's fixes keeps them running)
        lines += [f"unfix           {fix_id}" for fix_id in active]
    if index > 0:
        lines += _example_lines(desc, index)
    if stage.restart_from is not None:  # the run settings `clear` reset
        step = stage.timestep or desc.timestep
        lines += [*([f"timestep        {_fmt(step)}"] if step is not None else []), f"thermo_style    custom {THERMO}",
                  _thermo_modify(desc)]
    if _is_srd_stage(desc, index):
        lines += srd.insert_lines(desc)
    lines += solids.defect_lines(desc, index)
    lines += replica.removal_lines(stage, index)
    lines += _timestep_lines(desc, index)
    if stage.reset_timestep:
        lines.append("reset_timestep  0")
    if stage.scale_box is not None:  # the box edges scaled, the atoms remapped with them
        scale = stage.scale_box
        lines.append("change_box      all " + " ".join(f"{axis} scale {_fmt(scale.factor)}" for axis in scale.axes)
                     + " remap")
    return lines + stacking.displace_lines(stage)


def restart_file(desc: SimulationDescription, index: int) -> str:
    return f"restart.{desc.stages[index].name}"


def _restart_written(desc: SimulationDescription, index: int) -> list[str]:
    """The stage's end state saved, when a later run starts from it (Stage.restart_from)."""
    if any(s.restart_from == index for s in desc.stages):
        return [f"write_restart   {restart_file(desc, index)}"]
    return []


def _timestep_lines(desc: SimulationDescription, index: int) -> list[str]:
    """A run stage's own timestep (Stage.timestep), and the simulation's again at the next run stage after it."""
    def effective(i: int) -> float | None:
        return desc.stages[i].timestep or desc.timestep

    stage = desc.stages[index]
    if stage.kind != "run":
        return []
    before = [i for i in desc.run_stages() if i < index]
    previous = effective(before[-1]) if before else desc.timestep
    now = effective(index)
    return [f"timestep        {_fmt(now)}"] if now is not None and now != previous else []


def _minimisation(desc: SimulationDescription, stage: Stage) -> tuple[list[str], list[str]]:
    """A minimisation stage's lines and the fixes it leaves active."""
    m = stage.minimize
    assert m is not None
    lines, active = [], []
    if desc.dimension == 2:
        lines.append("fix             e2d all enforce2d")
        active.append("e2d")
    return lines + [f"min_style       {m.style}", f"minimize        {m.etol:g} {m.ftol:g} {m.max_iterations} "
                    f"{m.max_evaluations}"], active


def _integrator_fixes(desc: SimulationDescription, stage: Stage, index: int) -> list[str]:
    """The fixes that move the atoms: a granular pour's or a drum's own, the MSST shock, or the stage's
    dynamics (with the asphere integrators of ellipsoids and fix srd in an SRD stage)."""
    if desc.drum is not None:
        return drum.stage_fixes(desc, index)
    if desc.pillars is not None:
        return pillars.stage_fixes(desc, index)
    if desc.granular is not None:
        return granular.stage_fixes(desc)
    if desc.rheo is not None:
        return rheo.stage_fixes(desc)
    if desc.spin is not None:
        return spin.stage_fixes(desc)
    assert stage.dynamics is not None  # for the type checker: _run_stage asserts it
    srd_stage = _is_srd_stage(desc, index)
    fixes = shock.fix_lines(stage) if stage.msst is not None else dynamics_fixes(
        stage.dynamics, spheres=desc.dipoles is not None, group=described_groups.thermostat_group(desc.layout),
        t_variable=special.SET_POINT if stage.controller is not None else None,
        moved="big" if srd_stage else described_groups.integrated_group(desc.layout))
    fixes = example_system.own_integrators(desc.example_system, fixes)
    fixes = molecular.rigid_fixes(desc, stage.dynamics, fixes)  # rigid molecules (CO2): their own fix first
    return ellipsoids.asphere_fixes(desc, fixes) + (srd.fix_lines(desc) if srd_stage else [])


def _stage_fixes(desc: SimulationDescription, stage: Stage, index: int) -> list[str]:
    """The run stage's fixes: the integrator's, then the controller, deposition, deformation, the layout's
    fixes and, last, enforce2d (it zeroes what the other fixes set)."""
    fixes = [*_integrator_fixes(desc, stage, index), *special.controller_lines(stage),
             *mixtures.deposition_fixes(desc)]
    if stage.deform is not None:
        fixes += solids.deform_lines(desc, stage)
    if desc.layout is not None:
        fixes += described_groups.fixes(desc.layout)
    if desc.dimension == 2:
        fixes.append("fix             e2d all enforce2d")
    fixes += tube_water.stage_lines(desc, index, fixes)  # fix gcmc, temperatures over the atoms present
    return fixes + example_system.thermostat_modify(desc.example_system, fixes)


def _run_stage(desc: SimulationDescription, index: int, stage: Stage, want: Measures,
               kept: list[str] = ()) -> tuple[list[str], list[str]]:  # type: ignore[assignment]
    """A run stage's lines (its fixes, the averaged stage's measurements, thermo and run) and the fixes
    it leaves active. `kept`: the previous stage's fixes, which a stage that keeps them runs on."""
    assert stage.dynamics is not None
    lines = [*drum.stage_lines(desc, index)] if desc.drum is not None else []
    lines += pillars.stage_lines(desc, index) if desc.pillars is not None else []
    if stage.shear is not None:
        lines += solids.shear_lines(desc, stage)
    fixes = [] if stage.keep_fixes else _stage_fixes(desc, stage, index) + runaway_guard(stage, index)
    lines += fixes + (described_groups.partial_thermostat(desc.layout, fixes) if fixes else [])
    active = [*kept] * stage.keep_fixes + [f.split()[1] for f in fixes if f.startswith("fix ")]
    every = _thermo_interval(desc, stage, index, want)
    if index == desc.average_stage:
        extra = _measured(desc, stage, want, every)
        lines += extra
        active += [w.split()[1] for w in extra if w.startswith("fix ")]
    if stage.shear is not None:  # after thermo_style, which resets thermo_modify
        lines += solids.shear_thermostat(fixes)
    if stage.prd is not None:  # parallel replica dynamics with the stage's fixes, in place of `run`
        return lines + [f"thermo          {every}", *replica.prd_lines(stage)], active
    return lines + [f"thermo          {every}", f"run             {stage.steps}"], active


def _goes_on(desc: SimulationDescription, index: int) -> bool:
    """The stage continues the previous stage's deformation with the same dynamics and measures nothing
    of its own: one loading split over run commands, its fixes (and record) left in place."""
    stage = desc.stages[index]
    if index == 0 or stage.deform is None or not stage.deform.continued:
        return False
    before = desc.stages[index - 1]
    return before.kind == "run" and before.dynamics == stage.dynamics and before.deform is not None and \
        before.deform.model_copy(update={"continued": True}) == stage.deform and not stage.reset_timestep


def _stages(desc: SimulationDescription, want: Measures) -> list[str]:
    """Every stage in order; each removes the fixes of the one before."""
    lines: list[str] = []
    active: list[str] = []
    controlled = False  # the controller's set-point variable is defined once, before its first stage
    for index, stage in enumerate(desc.stages):
        if _goes_on(desc, index):  # the same loading, another run command: every fix stays as it is
            every = _thermo_interval(desc, stage, index, want)
            extra = _measured(desc, stage, want, every) if index == desc.average_stage else []
            active += [w.split()[1] for w in extra if w.startswith("fix ")]
            lines += ["", f"# stage {index + 1}: {stage.name}: {stage.evidence[:100]}", *extra,
                      f"thermo          {every}", f"run             {stage.steps}"]
            continue
        lines += _stage_opening(desc, index, stage, active)
        if stage.kind == "minimize":
            more, active = _minimisation(desc, stage)
        else:
            if stage.controller is not None and not controlled:
                lines += special.set_point_variable(stage)
                controlled = True
            more, active = _run_stage(desc, index, stage, want, active)
        lines += more + _restart_written(desc, index)
    return lines


def render(desc: SimulationDescription, **requested: Any) -> str:
    """The LAMMPS input; `requested`: the Measures (by keyword) the averaged stage records."""
    want = Measures(**requested)
    if not desc.renderable:
        problems = desc.unsupported + desc.missing or ["no stage"]
        raise ValueError(f"the description cannot be rendered: {'; '.join(problems)}")
    if desc.nanotube is not None and desc.gcmc is None:  # only the tube with water let in by fix gcmc is rendered
        raise ValueError("the description holds a carbon nanotube, whose system simagent does not render yet")
    lines = ["# simagent lammps/described: the task's description, rendered literally",
             "# (the defaults applied where the text is silent are listed in report.md)", ""]
    if replica.uses_prd(desc):  # prd's loop ignores LAMMPS's timer: once it expired, every run inside returns at
        # once and the loop never ends; the runner's time limit ends such a run instead
        lines += ["# no clean stop at the time budget: prd does not end at a LAMMPS timer timeout", ""]
    else:
        restarted = any(s.restart_from is not None for s in desc.stages)
        lines += ["# a clean stop at the job's time budget (tools.lammps.described_budget)",
                  *clean_stop_lines(restarted), ""]
    lines += _system_and_interactions(desc) + _run_settings(desc) + _stages(desc, want)
    return "\n".join(lines) + "\n"
