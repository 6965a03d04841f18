"""The colloid parts of a described simulation (simagent.described.colloids) as LAMMPS commands:
spheres cleared of lattice atoms with one particle put at each centre, neighbor lists and
communication per size class, and the extra keywords of fix npt (drag, mtk, chain lengths)."""

from __future__ import annotations

from simagent.described.model import Dynamics, SimulationDescription


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def cavity_lines(desc: SimulationDescription) -> list[str]:
    """region/delete_atoms/create_atoms single per cavity, in distance units (units box)."""
    lines = []
    for n, c in enumerate(desc.cavities, start=1):
        centre = " ".join(_fmt(v) for v in c.center)
        lines += [f"region          cavity{n} sphere {centre} {_fmt(c.radius)} units box",
                  f"delete_atoms    region cavity{n}"]
    lines += [f"create_atoms    {c.atom_type} single {' '.join(_fmt(v) for v in c.center)} units box"
              for c in desc.cavities]
    return lines


def neighbor_lines(desc: SimulationDescription) -> list[str]:
    m = desc.neighbor_multi
    if m is None:
        return []
    collections = f" collection/type {len(m.collections)} {' '.join(m.collections)}" if m.collections else ""
    return [f"neighbor        {_fmt(m.skin)} multi", f"neigh_modify    delay 0{collections}",
            "comm_modify     mode multi" + (" reduce/multi" if m.reduce else "")]


def npt_keywords(dyn: Dynamics) -> str:
    """' drag 1 mtk no pchain 0 tchain 1' for the keywords the description sets (else '')."""
    words = []
    if dyn.drag is not None:
        words.append(f"drag {_fmt(dyn.drag)}")
    if dyn.mtk is not None:
        words.append(f"mtk {'yes' if dyn.mtk else 'no'}")
    if dyn.pchain is not None:
        words.append(f"pchain {dyn.pchain}")
    if dyn.tchain is not None:
        words.append(f"tchain {dyn.tchain}")
    return "".join(" " + w for w in words)


def srd_setup_lines(desc: SimulationDescription) -> list[str]:
    """The big particles' diameter and group, right after they are made."""
    srd = desc.srd
    if srd is None:
        return []
    return [f"set             type {srd.big_type} diameter {_fmt(srd.big_diameter)}",
            f"group           big type {srd.big_type}"]


def srd_insert_lines(desc: SimulationDescription) -> list[str]:
    """Before the SRD stage: the solvent on its lattice (in 2D a thin slab around z = 0, so a dense
    lattice puts no second plane in the box's z extent), its mass, diameter and velocities, the
    solvent particles overlapping a big one deleted (the big-small pair cutoff is the overlap distance
    for the deletion only), ghost velocities communicated (fix srd needs them)."""
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
    return lines + (["reset_timestep  0"] if srd.reset_timestep else [])


def srd_fix(desc: SimulationDescription) -> list[str]:
    srd = desc.srd
    if srd is None:
        return []
    line = (f"fix             srd small srd {srd.every} big {_fmt(srd.temperature)} {_fmt(srd.grid)} {srd.seed}"
            + (f" radius {_fmt(srd.radius)}" if srd.radius else "") + (f" search {_fmt(srd.search)}" if srd.search
                                                                      else "")
            + (f" collision {srd.collision}" if srd.collision else ""))
    return [line]
