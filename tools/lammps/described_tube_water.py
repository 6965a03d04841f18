"""A carbon nanotube with water let in by fix gcmc (simagent.described.tube_water) rendered to LAMMPS.

The system: atom_style full, the box, the tube's carbons (type 1, tools.lammps.described_nanotube), the
water template (types 2 and 3, its SHAKE cluster; tools.lammps.described_molecular writes the file) and
one start water on the tube's axis. The interactions: pair hybrid, the many-body carbon potential on
type 1 and the water model's lj/cut/tip4p/long (or lj/cut/coul/long) on the rest, with the listed
carbon-oxygen LJ; PPPM at the stated accuracy with the listed fixed g_ewald. The run: fix gcmc in the
stages desc.gcmc names, and every temperature compute counting the degrees of freedom of the atoms
present (compute_modify dynamic/dof: fix gcmc adds and removes molecules).
"""

from __future__ import annotations

from simagent.described.model import SimulationDescription
from tools.lammps import described_molecular as molecular
from tools.lammps.described_nanotube import atom_lines

CARBON = 1
REGION = "interior"  # the insertion cylinder
GCMC_FIX = "gcmc"
WATER = "water"  # the template and the group (described_molecular's names)


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def system_lines(desc: SimulationDescription) -> list[str]:
    tube, system, box = desc.nanotube, desc.molecular, desc.box
    assert tube is not None and system is not None and desc.units is not None and box is not None
    extents = " ".join(f"{_fmt(lo)} {_fmt(hi)}" for lo, hi in zip(box.lo, box.hi, strict=True))
    lines = [f"units           {desc.units}", "dimension       3", f"boundary        {' '.join(desc.boundary)}",
             "atom_style      full", f"region          box block {extents} units box",
             f"create_box      {len(system.kinds)} box bond/types 1 angle/types 1 extra/bond/per/atom 2 "
             "extra/angle/per/atom 1 extra/special/per/atom 2"]
    lines += [f"mass            {k.type} {_fmt(k.mass)}  # {k.label}" for k in system.kinds]
    lines += ["# the nanotube (simagent.described.nanotube)", *atom_lines(tube, CARBON),
              f"group           tube type {CARBON}"]
    filling = desc.gcmc
    assert filling is not None
    middle = [*tube.center]
    middle.insert("xyz".index(tube.axis), tube.length / 2.0)
    lines += [f"molecule        {WATER} {molecular.file_name(system, WATER)}",
              f"create_atoms    0 single {' '.join(_fmt(x) for x in middle)} mol {WATER} {filling.start_seed} "
              "units box  # the start water (a listed default)",
              f"group           {WATER} type {system.type_of('O')} {system.type_of('H')}"]
    c1, c2 = tube.center
    return lines + [f"region          {REGION} cylinder {tube.axis} {_fmt(c1)} {_fmt(c2)} {_fmt(filling.radius)} "
                    "EDGE EDGE units box"]


def interaction_lines(desc: SimulationDescription) -> list[str]:
    system, pot, filling = desc.molecular, desc.potential, desc.gcmc
    assert system is not None and pot is not None and filling is not None and system.water is not None
    water = system.water
    o, h = system.type_of("O"), system.type_of("H")
    args = f" {pot.style_args}" if pot.style_args else ""
    if system.kspace == "pppm/tip4p":
        assert water.om is not None
        style = f"lj/cut/tip4p/long {o} {h} 1 1 {_fmt(water.om)} {_fmt(system.cutoff)}"
    else:
        style = f"lj/cut/coul/long {_fmt(system.cutoff)}"
    name = style.split()[0]
    eps_o = next(k.epsilon for k in system.kinds if k.type == o) or 0.0
    sig_o = next(k.sigma for k in system.kinds if k.type == o) or 0.0
    eps_co, sig_co = filling.carbon_oxygen
    return [f"pair_style      hybrid {pot.style}{args} {style}",
            f"pair_coeff      * * {pot.style} {pot.file} C NULL NULL",
            f"pair_coeff      {o} {o} {name} {_fmt(eps_o)} {_fmt(sig_o)}",
            f"pair_coeff      {o} {h} {name} 0.0 0.0",
            f"pair_coeff      {h} {h} {name} 0.0 0.0",
            f"pair_coeff      {CARBON} {o} {name} {_fmt(eps_co)} {_fmt(sig_co)}  # listed default (report.md)",
            f"pair_coeff      {CARBON} {h} {name} 0.0 0.0",
            "bond_style      zero", f"bond_coeff      1 {_fmt(water.bond)}",
            "angle_style     zero", f"angle_coeff     1 {_fmt(water.angle)}",
            f"kspace_style    {system.kspace} {_fmt(system.accuracy or 0.0)}",
            f"kspace_modify   gewald {filling.g_ewald:.6g}",
            "compute_modify  thermo_temp dynamic/dof yes"]


def stage_lines(desc: SimulationDescription, index: int, fixes: list[str]) -> list[str]:
    """After a run stage's fixes: its thermostats' temperatures counting the atoms present, and fix gcmc in
    the stages it acts in."""
    filling, system = desc.gcmc, desc.molecular
    if filling is None or system is None:
        return []
    lines = []
    for fix in fixes:
        words = fix.split()
        if len(words) > 3 and words[0] == "fix" and words[3] in ("nvt", "npt", "nph", "temp/berendsen",
                                                                  "temp/rescale"):
            lines.append(f"compute_modify  {words[1]}_temp dynamic/dof yes")
    if index in filling.stages:
        keywords = f" tfac_insert {filling.tfac:.10g}" if filling.tfac else ""
        keywords += f" group {WATER} shake {molecular.SHAKE_FIX} region {REGION}"
        keywords += f" pressure {_fmt(filling.pressure)}" if filling.pressure is not None else ""
        lines.append(f"fix             {GCMC_FIX} {WATER} gcmc {filling.every} {filling.exchanges} {filling.moves} 0 "
                     f"{filling.seed} {_fmt(filling.temperature)} {_fmt(filling.mu)} {_fmt(filling.displace)} "
                     f"mol {WATER}{keywords} full_energy")
    return lines
