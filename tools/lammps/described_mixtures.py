"""The mixture parts of a described simulation (simagent.described.mixtures) as LAMMPS commands.

Atoms placed at random come right after the lattice atoms (and any random substitution of their
types), in the order the description lists them; a region they are placed in is made first if the
layout has not made it yet. A deposition is one fix deposit (id `deposit`) in every run stage.
"""

from __future__ import annotations

from simagent.described.model import SimulationDescription
from tools.lammps import described_groups


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def placement_lines(desc: SimulationDescription, made: set[str]) -> list[str]:
    """create_atoms random for every placement; `made`: regions already defined (updated)."""
    lines = []
    regions = {r.name: r for r in desc.layout.regions} if desc.layout is not None else {}
    for p in desc.placements:
        if p.region is not None and p.region not in made:
            lines.append(described_groups.region_line(regions[p.region]))
            made.add(p.region)
        line = f"create_atoms    {p.atom_type} random {p.count} {p.seed} {p.region or 'NULL'}"
        if p.overlap is not None:
            line += f" overlap {_fmt(p.overlap)} maxtry {p.max_tries or 1000}"
        line += " units box"  # the overlap in distance units; no lattice needed
        if p.molecule is not None:
            line += f" mol {p.molecule} {p.mol_seed or p.seed + 1}"
        lines.append(line)
    return lines


def deposition_setup(desc: SimulationDescription) -> list[str]:
    """The (empty) group the deposited atoms join, and a temperature whose degrees of freedom follow
    the growing atom count."""
    d = desc.deposition
    if d is None:
        return []
    return [f"group           {d.group} type {d.atom_type}",
            "compute_modify  thermo_temp dynamic/dof yes"]


def deposition_fixes(desc: SimulationDescription) -> list[str]:
    """In a run stage: the deposited atoms integrated (NVE), the insertion, and a reflecting wall at
    the box face they move away from when the boundary there is fixed (else they leave the box)."""
    d = desc.deposition
    if d is None:
        return []
    k = "xyz".index(d.axis)
    v = _fmt(d.velocity)
    lines = [f"fix             dep_nve {d.group} nve",
             f"fix             deposit {d.group} deposit {d.count} {d.atom_type} {d.every} {d.seed} region {d.region} "
             f"near {_fmt(d.near)} v{d.axis} {v} {v}"]
    if desc.boundary[k] != "p":
        face = f"{d.axis}{'hi' if d.velocity < 0 else 'lo'}"
        lines.append(f"fix             dep_wall {d.group} wall/reflect {face} EDGE")
    return lines
