"""A granular pour (simagent.described.granular.GranularPour) as LAMMPS commands: finite spheres,
Hertzian contacts with history, granular walls, gravity and fix pour (LAMMPS GRANULAR package)."""

from __future__ import annotations

from simagent.described.granular import GranularContact
from simagent.described.model import SimulationDescription


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def _coefficients(c: GranularContact) -> str:
    """Kn Kt gamma_n gamma_t xmu dampflag; NULL is LAMMPS's default (kt 2/7 kn, gamma_t gamma_n / 2)."""
    null = lambda v: "NULL" if v is None else _fmt(v)  # noqa: E731
    return f"{_fmt(c.kn)} {null(c.kt)} {_fmt(c.gamma_n)} {null(c.gamma_t)} {_fmt(c.friction)} {c.dampflag}"


def system_lines(desc: SimulationDescription) -> list[str]:
    """An empty box of one particle type, the contact model and neighbor settings; the particles come
    in by fix pour during the run. The temperature's degrees of freedom follow the particle count
    (else thermo ke stays 0 when the run starts with no particle)."""
    g = desc.granular
    assert g is not None and desc.box is not None
    box = " ".join(f"{_fmt(lo)} {_fmt(hi)}" for lo, hi in zip(desc.box.lo, desc.box.hi, strict=True))
    return [f"units           {desc.units}", f"dimension       {desc.dimension}",
            f"boundary        {' '.join(desc.boundary)}", "atom_style      sphere", "newton          off",
            "comm_modify     vel yes", f"region          box block {box} units box",
            f"create_box      {desc.atom_types} box", f"neighbor        {_fmt(g.neighbor_skin)} bin",
            "neigh_modify    delay 0", f"pair_style      gran/hertz/history {_coefficients(g.contact)}",
            "pair_coeff      * *", "compute_modify  thermo_temp dynamic/dof yes"]


def _wall_lines(desc: SimulationDescription) -> list[str]:
    g = desc.granular
    assert g is not None and desc.box is not None
    out = []
    for k, axis in enumerate("xyz"[:desc.dimension]):
        lo = _fmt(desc.box.lo[k]) if f"{axis}lo" in g.walls else "NULL"
        hi = _fmt(desc.box.hi[k]) if f"{axis}hi" in g.walls else "NULL"
        if (lo, hi) != ("NULL", "NULL"):
            out.append(f"fix             wall{axis} all wall/gran hertz/history {_coefficients(g.contact)} "
                       f"{axis}plane {lo} {hi}")
    return out


def stage_fixes(desc: SimulationDescription) -> list[str]:
    """nve/sphere, gravity, the walls and the insertion (the caller adds enforce2d last)."""
    g = desc.granular
    assert g is not None and desc.box is not None
    x0, x1, y0, y1 = g.region
    z = f"{_fmt(desc.box.lo[2])} {_fmt(desc.box.hi[2])}"
    density = f" dens {_fmt(g.density)} {_fmt(g.density)}" if g.density is not None else ""
    return ["fix             dyn1 all nve/sphere",
            f"fix             gravity all gravity {_fmt(g.gravity)} vector {' '.join(map(_fmt, g.direction))}",
            *_wall_lines(desc),
            f"region          pour block {_fmt(x0)} {_fmt(x1)} {_fmt(y0)} {_fmt(y1)} {z} units box",
            f"fix             pour all pour {g.count} {g.atom_type} {g.seed} vol {_fmt(g.volume_fraction)} "
            f"{g.attempts} diam range {_fmt(g.diameters[0])} {_fmt(g.diameters[1])}{density} region pour"]
