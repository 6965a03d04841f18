"""A described molecular liquid (simagent.described.molecular) rendered to LAMMPS commands.

The system block: atom_style full, an absolute box, the atom kinds' masses, one molecule template
file per species (water: O, H, H with charges, two bonds, one angle and its SHAKE cluster; an ion:
one charged atom), each species placed at random with a seed and a least distance, the pair style
(lj/cut/coul/long, lj/cut/tip4p/long or lj/cut/coul/cut) with every type's epsilon/sigma, mixing,
tail, the bond and angle styles, the k-space solver and SHAKE. Then the preparation the description
lists as a default: a minimisation that removes the close contacts of the random insertion.
"""

from __future__ import annotations

from simagent.described.model import SimulationDescription
from simagent.described.molecular import PREPARATION, MolecularSystem, Species, grid, template_coordinates
from tools.lammps import described_mixtures as mixtures

SHAKE_FIX = "shake"


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def molecule_file(system: MolecularSystem, species: Species) -> str:
    """The LAMMPS molecule-template file of one species."""
    if species.template != "water":
        kind = next(k for k in system.kinds if k.element == species.atoms[0])
        return (f"# {species.template} ion\n\n1 atoms\n\nCoords\n\n1 0.0 0.0 0.0\n\nTypes\n\n1 {kind.type}\n\n"
                f"Charges\n\n1 {_fmt(kind.charge)}\n")
    water = system.water
    assert water is not None
    o, h = system.type_of("O"), system.type_of("H")
    coords = template_coordinates(water)
    lines = [f"# {water.name} water ({water.citation})", "", "3 atoms", "2 bonds", "1 angles", "", "Coords", ""]
    lines += [f"{i + 1} {x:.6f} {y:.6f} {z:.6f}" for i, (x, y, z) in enumerate(coords)]
    lines += ["", "Types", "", f"1 {o}", f"2 {h}", f"3 {h}", "", "Charges", "",
              f"1 {_fmt(-2 * water.charge_h)}", f"2 {_fmt(water.charge_h)}", f"3 {_fmt(water.charge_h)}",
              "", "Bonds", "", "1 1 1 2", "2 1 1 3", "", "Angles", "", "1 1 2 1 3"]
    if system.shake is not None:  # one cluster of 3 atoms, two bonds and the angle (shake flag 1)
        lines += ["", "Shake Flags", "", "1 1", "2 1", "3 1", "", "Shake Atoms", "", "1 1 2 3", "2 1 2 3",
                  "3 1 2 3", "", "Shake Bond Types", "", "1 1 1 1", "2 1 1 1", "3 1 1 1"]
    return "\n".join(lines) + "\n"


def files(desc: SimulationDescription) -> dict[str, str]:
    """The molecule files the input reads, by name."""
    system = desc.molecular
    if system is None:
        return {}
    return {f"{s.template}.mol": molecule_file(system, s) for s in system.species}


def system_lines(desc: SimulationDescription) -> list[str]:
    system = desc.molecular
    assert system is not None and desc.box is not None and desc.units is not None
    extents = " ".join(f"{_fmt(lo)} {_fmt(hi)}" for lo, hi in zip(desc.box.lo, desc.box.hi, strict=True))
    lines = [f"units           {desc.units}", "dimension       3", f"boundary        {' '.join(desc.boundary)}",
             "atom_style      full", f"region          box block {extents} units box",
             f"create_box      {len(system.kinds)} box bond/types 1 angle/types 1 extra/bond/per/atom 2 "
             "extra/angle/per/atom 1 extra/special/per/atom 2"]
    lines += [f"mass            {k.type} {_fmt(k.mass)}  # {k.element}" for k in system.kinds]
    lines += [f"molecule        {s.template} {s.template}.mol" for s in system.species]
    waters = system.count_of("water")
    if waters:  # a random subset of a simple-cubic grid's sites, random orientations (molecular.placement)
        lo, hi = list(desc.box.lo), list(desc.box.hi)
        if system.slab is not None:  # the waters fill the slab only, vacuum on either side
            k = "xyz".index(system.slab[0])
            lo[k], hi[k] = system.slab[1], system.slab[2]
        a, _, spans = grid(tuple(lo), tuple(hi), waters)  # type: ignore[arg-type]
        cells = " ".join(f"{low:.6f} {h:.6f}" for low, h in spans)  # whole cells: sites a apart across the boundary
        lines += [f"lattice         sc {a:.6f} origin 0.5 0.5 0.5",
                  f"region          grid block {cells} units box",
                  f"create_atoms    0 region grid mol water {system.seed + 1} subset {waters} {system.seed}"]
    lines += mixtures.placement_lines(desc, set())  # the ions at random (desc.placements, molecule = template)
    for s in system.species:
        lines.append(f"group           {s.template} type " + " ".join(str(system.type_of(e)) for e in
                                                                       dict.fromkeys(s.atoms)))
    return lines


def interaction_lines(desc: SimulationDescription) -> list[str]:
    system = desc.molecular
    assert system is not None
    if system.kspace == "pppm/tip4p":
        water = system.water
        assert water is not None and water.om is not None
        lines = [f"pair_style      lj/cut/tip4p/long {system.type_of('O')} {system.type_of('H')} 1 1 "
                 f"{_fmt(water.om)} {_fmt(system.cutoff)}"]
    else:
        lines = [f"pair_style      {system.pair_style} {_fmt(system.cutoff)}"]
    lines += [f"pair_coeff      {k.type} {k.type} {_fmt(k.epsilon or 0.0)} {_fmt(k.sigma or 0.0)}"
              for k in system.kinds]
    modify = [f"mix {system.mixing}"] + (["tail yes"] if system.tail else []) + (["shift yes"] if system.shift else [])
    lines.append("pair_modify     " + " ".join(modify))
    water = system.water
    if system.bond_style == "harmonic" and water is not None:
        lines += ["bond_style      harmonic", f"bond_coeff      1 {_fmt(system.bond_k or 0.0)} {_fmt(water.bond)}",
                  "angle_style     harmonic", f"angle_coeff     1 {_fmt(system.angle_k or 0.0)} {_fmt(water.angle)}"]
    elif water is not None:
        lines += ["bond_style      zero", f"bond_coeff      1 {_fmt(water.bond)}", "angle_style     zero",
                  f"angle_coeff     1 {_fmt(water.angle)}"]
    if system.kspace != "none":
        lines.append(f"kspace_style    {system.kspace} {_fmt(system.accuracy or 0.0)}")
    return lines


def constraint_lines(desc: SimulationDescription) -> list[str]:
    """SHAKE (or RATTLE) on the water bonds and angle, and a recentred group: defined once, they stay
    through every stage."""
    system = desc.molecular
    assert system is not None
    lines = []
    if system.recenter == "ions":
        ions = [str(k.type) for k in system.kinds if k.element not in ("O", "H")]
        lines += [f"group           ions type {' '.join(ions)}",
                  "fix             recenter ions recenter INIT INIT INIT"]
    elif system.recenter == "water":
        lines.append("fix             recenter water recenter INIT INIT INIT")
    if system.shake is None:
        return lines
    style = "rattle" if system.shake.rattle else "shake"
    return lines + [f"fix             {SHAKE_FIX} all {style} {_fmt(system.shake.tolerance)} "
                    f"{system.shake.iterations} 0 b 1 a 1"]


def preparation_lines(desc: SimulationDescription) -> list[str]:
    """The listed default that removes random-insertion contacts before the first stage."""
    etol, ftol, iterations, evaluations = PREPARATION
    return ["# preparation (a listed default): relax the random insertion's close contacts",
            f"minimize        {etol:g} {ftol:g} {iterations} {evaluations}", "reset_timestep  0"]


def rdf_pair(desc: SimulationDescription) -> str:
    """The type pair of the coordination number: water oxygen around water oxygen."""
    system = desc.molecular
    assert system is not None
    o = system.type_of("O")
    return f"{o} {o}"
