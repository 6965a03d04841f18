"""LAMMPS lines of a graphene sheet (simagent.described.sheet): graphene's 4-atom rectangular cell as a
custom lattice (armchair along x, zigzag along y; the third vector the box's depth across the sheet),
the sheet's box of nx x ny cells with the atoms in the plane z = 0, and its masses."""

from __future__ import annotations

from simagent.described.model import SimulationDescription

# fractional positions of the rectangular cell's atoms along its x (3 d) and y (sqrt(3) d) edges: the
# bonds run (0,0)-(1/6,1/2)-(1/2,1/2)-(2/3,0)-(1,0), each of length d, and (1/6,1/2)-(0,1) across the edge
BASIS = ((0.0, 0.0), (1.0 / 6.0, 0.5), (0.5, 0.5), (2.0 / 3.0, 0.0))


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def system_lines(desc: SimulationDescription) -> list[str]:
    """units to create_atoms and the masses: the sheet fills the box exactly (periodic images continue it)."""
    sheet = desc.sheet
    assert sheet is not None and desc.units is not None
    a, b = sheet.cell_lengths
    nx, ny = sheet.cells
    basis = " ".join(f"basis {_fmt(u)} {_fmt(v)} 0.0" for u, v in BASIS)
    return [f"units           {desc.units}", f"dimension       {desc.dimension}",
            f"boundary        {' '.join(desc.boundary)}", f"atom_style      {desc.atom_style}",
            f"lattice         custom 1.0 a1 {_fmt(a)} 0.0 0.0 a2 0.0 {_fmt(b)} 0.0 a3 0.0 0.0 {_fmt(sheet.vacuum)} "
            f"{basis}",
            f"region          box block 0 {nx} 0 {ny} -0.5 0.5",
            f"create_box      {desc.atom_types} box",
            f"create_atoms    {desc.lattice_type} box",
            *(f"mass            {t} {_fmt(m)}" for t, m in sorted(desc.masses.items()))]
