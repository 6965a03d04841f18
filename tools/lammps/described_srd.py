"""An SRD solvent of a described simulation (simagent.described.srd) as LAMMPS commands: the big
particles' diameter and group, the solvent made and thinned just before the SRD stage, and fix srd
(as LAMMPS examples/srd, in.srd.mixture, does it)."""

from __future__ import annotations

from simagent.described.model import SimulationDescription


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def setup_lines(desc: SimulationDescription) -> list[str]:
    """The big particles' diameter and group, right after they are made."""
    srd = desc.srd
    if srd is None:
        return []
    return [f"set             type {srd.big_type} diameter {_fmt(srd.big_diameter)}",
            f"group           big type {srd.big_type}"]


def insert_lines(desc: SimulationDescription) -> list[str]:
    """Before the SRD stage: the solvent on its lattice (in 2D a thin slab around z = 0, so a dense
    lattice puts no second plane in the box's z extent), its mass, diameter and velocities, the
    solvent particles overlapping a big one deleted (the big-small pair cutoff is the overlap distance
    for the deletion only), ghost velocities communicated (fix srd needs them); then the step counter
    reset and the SRD stage's own timestep, when the description gives them."""
    srd, lattice, box = desc.srd, desc.lattice, desc.box
    assert srd is not None and lattice is not None and box is not None
    t, b = srd.atom_type, srd.big_type
    pair = f"{min(t, b)} {max(t, b)}"
    lines = []
    where = "box"
    if desc.dimension == 2:
        xy = " ".join(f"{_fmt(lo)} {_fmt(hi)}" for lo, hi in list(zip(box.lo, box.hi, strict=True))[:2])
        lines.append(f"region          srd_plane block {xy} -0.001 0.001" + ("" if box.lattice_units else " units box"))
        where = "region srd_plane"
    lines += [f"lattice         {lattice.style} {_fmt(srd.density)}", f"create_atoms    {t} {where}",
              f"set             type {t} mass {_fmt(desc.masses.get(t, 1.0))}",
              f"set             type {t} diameter {_fmt(srd.diameter)}", f"group           small type {t}",
              f"velocity        small create {_fmt(srd.temperature)} {srd.velocity_seed} loop geom",
              f"pair_coeff      {pair} 0 1 {_fmt(srd.overlap)}",
              f"delete_atoms    overlap {_fmt(srd.overlap)} small big", f"pair_coeff      {pair} 0 1 0",
              "comm_modify     vel yes", "neigh_modify    include big"]
    lines += ["reset_timestep  0"] if srd.reset_timestep else []
    return lines + ([f"timestep        {_fmt(srd.timestep)}"] if srd.timestep is not None else [])


def fix_lines(desc: SimulationDescription) -> list[str]:
    srd = desc.srd
    if srd is None:
        return []
    line = (f"fix             srd small srd {srd.every} big {_fmt(srd.temperature)} {_fmt(srd.grid)} {srd.seed}"
            + (f" radius {_fmt(srd.radius)}" if srd.radius else "") + (f" search {_fmt(srd.search)}" if srd.search
                                                                      else "")
            + (f" collision {srd.collision}" if srd.collision else ""))
    return [line]
