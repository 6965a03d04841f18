"""Bonded-particle pillars (simagent.described.pillars.BondedPillars) as LAMMPS commands, and their
Poisson ratios.

The system: atom_style bond, one cylinder on the lattice, pair bpm/spring, a harmonic cylindrical wall
in the first (settling) stage. Before the compression stage: the wall gone (the stage opening unfixes
it), replicate N 1 1, one group and type per copy (x blocks of the original box length), velocities
zeroed, create_bonds many per pillar, bond_style bpm/spring, the slabs; the stage fixes hold the bottom
slab and move the top one. The compression stage prints each pillar's x and z extent (compute reduce
max - min over its atoms) in its thermo output.

Poisson's ratio of pillar i (the definition; neither the text nor the example defines a formula): at
each printed step of the compression stage after its first, nu_i = -[(w - w0)/w0] / [(h - h0)/h0],
w the pillar's x extent, h its z extent, w0 and h0 their values at the stage's first printed step
(before any compression); the metric is the mean of nu_i over those rows ("average" Poisson ratio
over the compression run), its uncertainty the block-averaging standard error of that series.
"""

from __future__ import annotations

import numpy as np

from simagent.described.model import SimulationDescription
from simagent.described.pillars import BondedPillars
from simagent.errors import CalculationFailed, ReadError
from simagent.models import Result
from simagent.stats import block_average

POISSON = "poisson_ratio"  # simagent.models.PropertyName
WALL_FIX = "pillar_wall"
LABEL = "pillar{}"  # Result.label of pillar i (1-based), as solve reads 'pillar_1' in a metric name


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def _pillars(desc: SimulationDescription) -> BondedPillars:
    assert desc.pillars is not None and desc.box is not None and desc.lattice is not None
    return desc.pillars


def width_column(i: int) -> str:
    return f"v_pw{i}"


def height_column(i: int) -> str:
    return f"v_ph{i}"


def _mass(desc: SimulationDescription) -> float:
    """The one particle mass of every type (the copies are the same particles; LJ's unit mass unless stated)."""
    masses = set(desc.masses.values()) or {1.0}
    if len(masses) != 1:
        raise ValueError("bonded pillars are copies of one kind of particle: one mass")
    return masses.pop()


def system_lines(desc: SimulationDescription) -> list[str]:
    """The box, one cylinder filled on the lattice, masses, the pair style and the wall's region."""
    p = _pillars(desc)
    assert desc.box is not None and desc.lattice is not None
    box = " ".join(f"{_fmt(lo)} {_fmt(hi)}" for lo, hi in zip(desc.box.lo, desc.box.hi, strict=True))
    x, y = map(_fmt, p.centre)
    return [f"units           {desc.units}", "dimension       3", f"boundary        {' '.join(desc.boundary)}",
            "atom_style      bond", "special_bonds   lj 0.0 1.0 1.0 coul 0.0 1.0 1.0", "newton          on off",
            f"comm_modify     vel yes cutoff {_fmt(p.comm_cutoff)}",
            f"lattice         {desc.lattice.style} {_fmt(desc.lattice.scale)}",
            f"region          box block {box} units box",
            f"create_box      {p.copies} box bond/types {p.copies} extra/bond/per/atom 20 extra/special/per/atom 50",
            f"mass            * {_fmt(_mass(desc))}",
            f"region          pillar cylinder z {x} {y} {_fmt(p.radius)} {_fmt(p.bottom_z)} {_fmt(p.top_z)} units box",
            f"region          pillar_wall cylinder z {x} {y} {_fmt(p.wall_radius)} {_fmt(p.wall_z[0])} "
            f"{_fmt(p.wall_z[1])} units box",
            "create_atoms    1 region pillar", "pair_style      bpm/spring",
            f"pair_coeff      * * {' '.join(map(_fmt, p.pair))}"]


def _compressing(desc: SimulationDescription, index: int) -> bool:
    return index == desc.run_stages()[-1]


def stage_fixes(desc: SimulationDescription, index: int) -> list[str]:
    """NVE on every atom; the wall in the settling stage; the slabs' setforce in the compression stage."""
    lines = ["fix             dyn1 all nve"]
    if not _compressing(desc, index):
        p = _pillars(desc)
        wall = " ".join(map(_fmt, p.wall))
        return lines + [f"fix             {WALL_FIX} all wall/region pillar_wall harmonic {wall}"]
    return lines + ["fix             pillar_hold pillar_bottom setforce 0.0 0.0 0.0",
                    "fix             pillar_push pillar_top setforce 0.0 0.0 0.0"]


def stage_lines(desc: SimulationDescription, index: int) -> list[str]:
    """Before the compression stage: the copies, their groups and types, velocities zeroed, the bonds
    of each pillar, the bond style, the slabs and the top's velocity."""
    if not _compressing(desc, index):
        return []
    p = _pillars(desc)
    assert desc.box is not None
    length = desc.box.hi[0] - desc.box.lo[0]
    lines = [f"replicate       {p.copies} 1 1"]
    for i in range(1, p.copies + 1):
        lo, hi = desc.box.lo[0] + (i - 1) * length, desc.box.lo[0] + i * length
        lines += [f"region          pillar{i} block {_fmt(lo)} {_fmt(hi)} EDGE EDGE EDGE EDGE units box",
                  f"group           pillar{i} region pillar{i}"]
    lines += [f"set             group pillar{i} type {i}" for i in range(2, p.copies + 1)]
    lines += ["velocity        all set 0.0 0.0 0.0", f"neighbor        {_fmt(p.bonding_skin)} bin"]
    lo, hi = map(_fmt, p.bond_range)
    lines += [f"create_bonds    many pillar{i} pillar{i} {i} {lo} {hi}" for i in range(1, p.copies + 1)]
    lines += [f"neighbor        {_fmt(p.skin)} bin", "special_bonds   lj 0.0 1.0 1.0 coul 1.0 1.0 1.0",
              "bond_style      bpm/spring break no smooth no volume/factor yes"]
    lines += [f"bond_coeff      {i} {_fmt(b.k)} {_fmt(b.critical_strain)} {_fmt(b.gamma)} {_fmt(b.volume_factor)}"
              for i, b in enumerate(p.bonds, start=1)]
    lines += [f"region          pillar_{name} block EDGE EDGE EDGE EDGE {_fmt(lo)} {_fmt(hi)} units box"
              for name, (lo, hi) in (("bottom", p.bottom), ("top", p.top))]
    lines += [
              "group           pillar_bottom region pillar_bottom", "group           pillar_top region pillar_top",
              f"velocity        pillar_top set 0.0 0.0 {_fmt(p.top_velocity)}"
              + ("" if p.velocity_in_lattice_units else " units box")]
    return lines


def measure(desc: SimulationDescription) -> tuple[list[str], list[str]]:
    """Each pillar's x and z extent (max - min of its atoms' coordinates), as thermo columns."""
    p = _pillars(desc)
    lines, columns = [], []
    for i in range(1, p.copies + 1):
        for axis, name in (("x", "pw"), ("z", "ph")):
            lines += [f"compute         {name}hi{i} pillar{i} reduce max {axis}",
                      f"compute         {name}lo{i} pillar{i} reduce min {axis}",
                      f"variable        {name}{i} equal c_{name}hi{i}-c_{name}lo{i}"]
        columns += [width_column(i), height_column(i)]
    return lines, columns


def poisson_results(block: dict[str, np.ndarray], desc: SimulationDescription, job: str, where: str) -> list[Result]:
    """Each pillar's average Poisson ratio over the compression stage (module docstring)."""
    p = _pillars(desc)
    out = []
    for i in range(1, p.copies + 1):
        w_col, h_col = width_column(i), height_column(i)
        if w_col not in block or h_col not in block:
            raise ReadError(f"thermo columns {w_col}, {h_col} missing")
        w, h = np.asarray(block[w_col], dtype=float), np.asarray(block[h_col], dtype=float)
        if w.size < 3 or not (np.all(np.isfinite(w)) and np.all(np.isfinite(h))):
            raise CalculationFailed(f"pillar {i}: too few finite extents in {where} for a Poisson ratio")
        axial, lateral = (h[1:] - h[0]) / h[0], (w[1:] - w[0]) / w[0]
        if np.any(axial == 0.0):
            raise CalculationFailed(f"pillar {i}: its axial extent did not change at every printed step of {where}; "
                                    "the ratio is undefined there")
        nu = -lateral / axial
        mean, err = block_average(nu)
        out.append(Result(
            quantity=POISSON, property=POISSON, label=LABEL.format(i), value=float(mean), uncertainty=err, unit="",
            job=job, log="log.lammps",
            method=f"pillar {i} (bond coefficients {p.bonds[i - 1].k:g} {p.bonds[i - 1].critical_strain:g} "
                   f"{p.bonds[i - 1].gamma:g} {p.bonds[i - 1].volume_factor:g}): nu = -[(w - w0)/w0]/[(h - h0)/h0] at "
                   f"each of the {nu.size} printed rows of {where} after its first, w its x extent (thermo {w_col}), h "
                   f"its z extent ({h_col}), w0 = {w[0]:.6g} and h0 = {h[0]:.6g} at the stage's first row; the mean "
                   f"over those rows (axial strain {axial[0]:.3g} to {axial[-1]:.3g}; nu from {nu[0]:.3g} at the "
                   f"first to {nu[-1]:.3g} at the last row); standard error by block averaging. The text and "
                   "LAMMPS examples/bpm/poissons_ratio state no formula: this definition is simagent's"))
    return out
