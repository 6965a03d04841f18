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
