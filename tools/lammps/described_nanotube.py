"""LAMMPS lines of a carbon nanotube (simagent.described.nanotube): one `create_atoms single` per carbon
atom at the positions the tube's model computes (box units), all of one atom type."""

from __future__ import annotations

from simagent.described.nanotube import Nanotube


def atom_lines(tube: Nanotube, atom_type: int) -> list[str]:
    """The tube's atoms; the box must already exist and hold them (its edge along the axis is the tube's length)."""
    return [f"create_atoms    {atom_type} single {x:.8f} {y:.8f} {z:.8f} units box" for x, y, z in tube.positions()]
