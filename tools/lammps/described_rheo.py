"""RHEO particles of a described run (simagent.described.rheo) as LAMMPS commands (RHEO package).

Before the box: ghost velocities communicated and Newton's third law off (both required by the RHEO
pair and fixes). After the system (box, lattice, the fluid and wall regions filled, masses, groups,
built by the general layout code): the starting density and status flags, pair rheo. In the run: fix rheo (it
integrates the particles: no nve fix), rheo/viscosity, rheo/pressure, gravity; then the per-atom
computes of density, pressure, surface flag and normals, and the custom dump of them if stated.
"""

from __future__ import annotations

from simagent.described.model import SimulationDescription


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def preamble(desc: SimulationDescription) -> list[str]:
    """Before the box (LAMMPS refuses a newton change after it): ghost velocities, pairwise newton off."""
    return ["comm_modify     vel yes", "newton          off"] if desc.rheo is not None else []


def interaction_lines(desc: SimulationDescription) -> list[str]:
    r = desc.rheo
    assert r is not None
    lines = [f"set             group all rheo/rho {_fmt(r.rho0)}"]
    lines += [f"set             group {group} rheo/status {flag}" for group, flag in r.status.items()]
    return lines + [f"pair_style      rheo {_fmt(r.cutoff)} artificial/visc {_fmt(r.artificial_viscosity)}",
                    "pair_coeff      * *"]


def stage_fixes(desc: SimulationDescription) -> list[str]:
    """The integrating fix rheo and the fluid's viscosity, pressure and gravity, then the per-atom
    computes and the dump (after fix rheo, which they read)."""
    r = desc.rheo
    assert r is not None
    rheo = f"fix             rheo all rheo {_fmt(r.cutoff)} {r.kernel} {r.zmin}"
    if r.surface is not None:
        rheo += f" surface/detection coordination {r.surface[0]} {r.surface[1]}"
    if r.rho_sum:
        rheo += " rho/sum"
    gx, gy, gz = (_fmt(c) for c in r.gravity_vector)
    lines = [rheo, f"fix             rheo_visc all rheo/viscosity * constant {_fmt(r.viscosity)}",
             "fix             rheo_press all rheo/pressure * linear",
             f"fix             gravity all gravity {_fmt(r.gravity)} vector {gx} {gy} {gz}",
             "compute         rho all rheo/property/atom rho", "compute         p all rheo/property/atom pressure",
             "compute         surf all rheo/property/atom surface",
             "compute         sn all rheo/property/atom surface/n/x surface/n/y"]
    if r.dump_every is not None and r.dump_file is not None:
        lines.append(f"dump            rheo all custom {r.dump_every} {r.dump_file} id type x y vx vy fx fy c_rho "
                     "c_surf c_p c_sn[*]")
    return lines
