"""A described molecular liquid (simagent.described.molecular) rendered to LAMMPS commands.

Ions on a rock-salt lattice (crystal_lines) instead: atom_style charge, the lattice's 8 sites, charges per type.

The system block: atom_style full, an absolute box, the atom kinds' masses, one molecule template
file per species (water: O, H, H with charges, two bonds, one angle and its SHAKE cluster; an ion:
one charged atom), each species placed at random with a seed and a least distance, the pair style
(lj/cut/coul/long, lj/cut/tip4p/long or lj/cut/coul/cut) with every type's epsilon/sigma, mixing,
tail, the bond and angle styles, the k-space solver and SHAKE. Then the preparation the description
lists as a default: a minimisation that removes the close contacts of the random insertion.

A 4-site water under lj/cut/coul/long (molecular.water_sites) has its M site as a fourth atom, each water a rigid
body like CO2's (explicit_water_file); molecules the text puts at the box centre are created one by one on a row
(create_atoms single, molecular.centre_row).

CO2 (simagent.described.carbon_dioxide) is a rigid body per molecule: its template's bonds and angle
(type 2, no energy) only exclude its own pairs; `rigid_fixes` gives each run stage the bodies' fix
(rigid/nvt/small or rigid/nve/small) before the stage's own, which then moves the other atoms only.
"""

from __future__ import annotations

import re

from simagent.described import carbon_dioxide, ethanol, polymer
from simagent.described.ionic_crystal import CL_BASIS, NA_BASIS
from simagent.described.model import Dynamics, SimulationDescription
from simagent.described.molecular import PREPARATION, MolecularSystem, Species, grid, m_site, template_coordinates
from tools.lammps import described_groups
from tools.lammps import described_mixtures as mixtures

SHAKE_FIX = "shake"
CO2 = carbon_dioxide.CO2_TEMPLATE
CO2_TERMS = 2  # the bond and angle type of a CO2 (the water's are 1: lj/cut/tip4p/long names them)
RIGID_FIX, OTHERS = "bodies", "nonrigid"  # the rigid bodies' fix; the group of every atom not in one
CHAIN = polymer.CHAIN_TEMPLATE
CHAIN_SEED = 4321  # create_atoms needs a seed with a template; unused without random rotation or placement


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def template_text(title: str, coords: list[tuple[float, float, float]], types: list[int],
                  charges: list[float] | None = None, bonds: list[tuple[int, int]] = (),  # type: ignore[assignment]
                  angles: list[tuple[int, int, int]] = (),  # type: ignore[assignment]
                  dihedrals: list[tuple[int, int, int, int]] = (),  # type: ignore[assignment]
                  extra: list[str] = (), term_type: int = 1) -> str:  # type: ignore[assignment]
    """A LAMMPS molecule-template file: coordinates, types, charges (if any) and the bonded terms
    (atom indices from 1, every term of type `term_type`), then `extra` lines (e.g. SHAKE sections)."""
    counts = [(len(coords), "atoms"), (len(bonds), "bonds"), (len(angles), "angles"), (len(dihedrals), "dihedrals")]
    lines = [f"# {title}", ""] + [f"{n} {what}" for n, what in counts if n] + ["", "Coords", ""]
    lines += [f"{i + 1} {x:.6f} {y:.6f} {z:.6f}" for i, (x, y, z) in enumerate(coords)]
    lines += ["", "Types", ""] + [f"{i + 1} {t}" for i, t in enumerate(types)]
    if charges is not None:
        lines += ["", "Charges", ""] + [f"{i + 1} {_fmt(q)}" for i, q in enumerate(charges)]
    for name, terms in (("Bonds", bonds), ("Angles", angles), ("Dihedrals", dihedrals)):
        if terms:
            lines += ["", name, ""] + [f"{i + 1} {term_type} " + " ".join(map(str, atoms))
                                       for i, atoms in enumerate(terms)]
    if extra:
        lines += ["", *extra]
    return "\n".join(lines) + "\n"


def _ethanol_base(system: MolecularSystem) -> int:
    """The last bond and angle type before the ethanol's (the water's, or the CO2's)."""
    return CO2_TERMS if system.co2 is not None else system.water_terms


def ethanol_file(system: MolecularSystem) -> str:
    """OPLS-AA ethanol (simagent.described.ethanol): nine atoms, their sites' types and charges, the bonds,
    angles and torsions, each typed after the water's (and the CO2's) terms."""
    model = system.ethanol
    assert model is not None
    bonds, angles, dihedrals = ethanol.term_types()
    base = _ethanol_base(system)
    lines = template_text(f"{model.name} ({model.citation})", ethanol.coordinates(),
                          [system.type_of(site) for site in ethanol.ATOMS],
                          [ethanol.SITES[site][1] for site in ethanol.ATOMS]).rstrip("\n").split("\n")
    head = lines.index("Coords")
    counts = [f"{len(ethanol.BOND_LIST)} bonds", f"{len(ethanol.angles())} angles",
              f"{len(ethanol.dihedrals())} dihedrals"]
    lines[head - 1:head - 1] = counts
    sections = [("Bonds", [(base + 1 + bonds.index(ethanol.bond_key(a, b)), (a, b)) for a, b in ethanol.BOND_LIST]),
                ("Angles", [(base + 1 + angles.index(ethanol.angle_key(t)), t) for t in ethanol.angles()]),
                ("Dihedrals", [(1 + dihedrals.index(ethanol.dihedral_key(t)), t) for t in ethanol.dihedrals()])]
    for name, terms in sections:
        lines += ["", name, ""] + [f"{i + 1} {kind} " + " ".join(map(str, atoms)) for i, (kind, atoms) in
                                   enumerate(terms)]
    return "\n".join(lines) + "\n"


def ethanol_coeff_lines(system: MolecularSystem) -> tuple[list[str], list[str], list[str]]:
    """bond_coeff, angle_coeff and dihedral_coeff lines of the ethanol's terms (OPLS-AA)."""
    bonds, angles, dihedrals = ethanol.term_types()
    base = _ethanol_base(system)
    return ([f"bond_coeff      {base + 1 + i} {_fmt(ethanol.BONDS[k][0])} {_fmt(ethanol.BONDS[k][1])}  # {'-'.join(k)}"
             for i, k in enumerate(bonds)],
            [f"angle_coeff     {base + 1 + i} {_fmt(ethanol.ANGLES[k][0])} {_fmt(ethanol.ANGLES[k][1])}"
             f"  # {'-'.join(k)}"
             for i, k in enumerate(angles)],
            [f"dihedral_coeff  {1 + i} " + " ".join(_fmt(v) for v in ethanol.DIHEDRALS[k]) + f"  # {'-'.join(k)}"
             for i, k in enumerate(dihedrals)])


def molecule_file(system: MolecularSystem, species: Species) -> str:
    """The LAMMPS molecule-template file of one species."""
    if species.template == ethanol.ETHANOL_TEMPLATE:
        return ethanol_file(system)
    if species.template == CO2:  # a rigid body: its bonds and angle (type 2, no energy) only exclude its own pairs
        co2 = system.co2
        assert co2 is not None
        c, o = system.type_of(carbon_dioxide.CARBON), system.type_of(carbon_dioxide.OXYGEN)
        return template_text(f"{co2.name} ({co2.citation}), a rigid body (fix rigid/small)", co2.coordinates(),
                             [c, o, o], [co2.centre[2], co2.end[2], co2.end[2]], bonds=[(1, 2), (1, 3)],
                             angles=[(2, 1, 3)], term_type=CO2_TERMS)
    if species.template != "water":
        kind = next(k for k in system.kinds if k.element == species.atoms[0])
        return template_text(f"{species.template} ion", [(0.0, 0.0, 0.0)], [kind.type], [kind.charge])
    water = system.water
    assert water is not None
    o, h = system.type_of("O"), system.type_of("H")
    if system.explicit_m:
        return explicit_water_file(system)
    shake = []
    if system.shake is not None:  # one cluster of 3 atoms, two bonds and the angle (shake flag 1)
        shake = ["Shake Flags", "", "1 1", "2 1", "3 1", "", "Shake Atoms", "", "1 1 2 3", "2 1 2 3",
                 "3 1 2 3", "", "Shake Bond Types", "", "1 1 1 1", "2 1 1 1", "3 1 1 1"]
    return template_text(f"{water.name} water ({water.citation})", template_coordinates(water), [o, h, h],
                         [-2 * water.charge_h, water.charge_h, water.charge_h], bonds=[(1, 2), (1, 3)],
                         angles=[(2, 1, 3)], extra=shake)


def explicit_water_file(system: MolecularSystem) -> str:
    """The 4-site water with its M site as an atom (molecular.water_sites): O (no charge), H, H, M; the O-H bonds
    and H-O-H angle (type 1) and the O-M bond and H-O-M angles (type 2) carry no energy in the rigid body and make
    every pair of the molecule a 1-2 or 1-3 neighbour, excluded (special_bonds 0 0) with PPPM's correction."""
    water = system.water
    assert water is not None and water.om is not None
    types = [system.type_of(label) for label in ("O", "H", "H", "M")]
    charges = [system.kinds[t - 1].charge for t in types]
    lines = template_text(f"{water.name} water ({water.citation}), the M site explicit, a rigid body (fix "
                          "rigid/small)", template_coordinates(water) + [m_site(water)], types,
                          charges).rstrip("\n").split("\n")
    head = lines.index("Coords")
    lines[head - 1:head - 1] = ["3 bonds", "3 angles"]
    lines += ["", "Bonds", "", "1 1 1 2", "2 1 1 3", "3 2 1 4", "", "Angles", "", "1 1 2 1 3", "2 2 2 1 4",
              "3 2 3 1 4"]
    return "\n".join(lines) + "\n"


def chain_file(desc: SimulationDescription) -> str:
    """The bonded chain as a molecule template: the start conformation (polymer.zigzag) along the
    box's longest edge, every consecutive pair bonded, every triple an angle, every quadruple a
    dihedral (if the chain has one)."""
    chain = desc.chain
    assert chain is not None and desc.box is not None
    edges = [h - lo for lo, h in zip(desc.box.lo, desc.box.hi, strict=True)]
    axis = edges.index(max(edges))  # the chain's x runs along this axis, its zig-zag along the next one
    coords = []
    for x, y, z in polymer.zigzag(chain):
        point = [0.0, 0.0, 0.0]
        point[axis], point[(axis + 1) % 3], point[(axis + 2) % 3] = x, y, z
        coords.append((point[0], point[1], point[2]))
    n = chain.beads
    return template_text(f"linear chain of {n} beads (simagent.described.polymer, start: all-trans zig-zag)",
                         coords, [1] * n, bonds=[(i, i + 1) for i in range(1, n)],
                         angles=[(i, i + 1, i + 2) for i in range(1, n - 1)],
                         dihedrals=[(i, i + 1, i + 2, i + 3) for i in range(1, n - 2)] if chain.dihedral else [])


def chain_system_lines(desc: SimulationDescription) -> list[str]:
    """The box, the bead type and one chain created from its template at the box centre, in the
    template's own orientation (no random rotation: the all-trans start is laid along the longest edge)."""
    chain = desc.chain
    assert chain is not None and desc.box is not None and desc.units is not None
    extents = " ".join(f"{_fmt(lo)} {_fmt(hi)}" for lo, hi in zip(desc.box.lo, desc.box.hi, strict=True))
    centre = " ".join(_fmt((lo + h) / 2) for lo, h in zip(desc.box.lo, desc.box.hi, strict=True))
    types = ["bond/types 1", "angle/types 1"] + ["dihedral/types 1"] * (chain.dihedral is not None)
    per_atom = ["extra/bond/per/atom 2", "extra/angle/per/atom 3"] + ["extra/dihedral/per/atom 4"] * (
        chain.dihedral is not None) + ["extra/special/per/atom 6"]
    return [f"units           {desc.units}", f"dimension       {desc.dimension}",
            f"boundary        {' '.join(desc.boundary)}", "atom_style      molecular",
            f"region          box block {extents} units box",
            f"create_box      1 box {' '.join(types)} {' '.join(per_atom)}",
            f"mass            1 {_fmt(chain.mass)}", f"molecule        {CHAIN} {CHAIN}.mol",
            f"create_atoms    0 single {centre} mol {CHAIN} {CHAIN_SEED} rotate 0 0 0 1 units box"]


def chain_interaction_lines(desc: SimulationDescription) -> list[str]:
    """The chain's bonded styles and coefficients and LAMMPS's default exclusions, stated."""
    chain = desc.chain
    assert chain is not None
    lines = ["bond_style      harmonic", f"bond_coeff      1 {_fmt(chain.bond.k)} {_fmt(chain.bond.r0)}",
             "angle_style     harmonic", f"angle_coeff     1 {_fmt(chain.angle.k)} {_fmt(chain.angle.theta0)}"]
    if chain.dihedral is not None:
        lines += ["dihedral_style  multi/harmonic",
                  "dihedral_coeff  1 " + " ".join(_fmt(a) for a in chain.dihedral.a)]
    lines.append("special_bonds   lj 0.0 0.0 0.0  # LAMMPS's default, listed in report.md")
    if "f" in desc.boundary:  # polymer.RECENTER: a drifting chain would leave the fixed box
        lines.append("fix             recenter all recenter INIT INIT INIT")
    return lines


def files(desc: SimulationDescription) -> dict[str, str]:
    """The molecule files the input reads, by name."""
    if desc.chain is not None:
        return {f"{CHAIN}.mol": chain_file(desc)}
    system = desc.molecular
    if system is None or system.crystal is not None:
        return {}
    return {file_name(system, s.template): molecule_file(system, s) for s in system.species}


def file_name(system: MolecularSystem, template: str) -> str:
    """The template's file: the name the text gives it (written from the cited model), else <template>.mol."""
    return system.files.get(template, f"{template}.mol")


def crystal_lines(desc: SimulationDescription) -> list[str]:
    """Ions on the rock-salt lattice (simagent.described.ionic_crystal): the conventional cell as a custom lattice
    with its 8 sites, the first four (fcc) of the cation's type, the other four of the anion's; charges per type."""
    system = desc.molecular
    assert system is not None and system.crystal is not None and desc.box is not None and desc.units is not None
    crystal = system.crystal
    extents = " ".join(f"{_fmt(lo)} {_fmt(hi)}" for lo, hi in zip(desc.box.lo, desc.box.hi, strict=True))
    na, cl = system.type_of("Na"), system.type_of("Cl")
    basis = " ".join(f"basis {x:g} {y:g} {z:g}" for x, y, z in NA_BASIS + CL_BASIS)
    lines = [f"units           {desc.units}", "dimension       3", f"boundary        {' '.join(desc.boundary)}",
             "atom_style      charge",
             f"lattice         custom {_fmt(crystal.constant)} a1 1 0 0 a2 0 1 0 a3 0 0 1 {basis} origin "
             + " ".join(f"{o:.10g}" for o in crystal.origin),
             f"region          box block {extents} units box", f"create_box      {len(system.kinds)} box",
             f"create_atoms    {na} box " + " ".join(f"basis {i} {cl}" for i in range(len(NA_BASIS) + 1,
                                                                                    len(NA_BASIS) + len(CL_BASIS) + 1))]
    lines += [f"mass            {k.type} {_fmt(k.mass)}  # {k.element}" for k in system.kinds]
    lines += [f"set             type {k.type} charge {_fmt(k.charge)}" for k in system.kinds]
    return lines + [f"group           {s.template} type {system.type_of(s.atoms[0])}" for s in system.species]


def system_lines(desc: SimulationDescription) -> list[str]:
    system = desc.molecular
    assert system is not None and desc.box is not None and desc.units is not None
    if system.crystal is not None:
        return crystal_lines(desc)
    extents = " ".join(f"{_fmt(lo)} {_fmt(hi)}" for lo, hi in zip(desc.box.lo, desc.box.hi, strict=True))
    terms = CO2_TERMS if system.co2 is not None else system.water_terms
    if system.ethanol is not None:  # its terms after the water's (and CO2's); a carbon holds 4 bonds, 1-4 neighbours
        bonds, angles, dihedrals = (len(t) for t in ethanol.term_types())
        box = (f"bond/types {terms + bonds} angle/types {terms + angles} dihedral/types {dihedrals} "
               "extra/bond/per/atom 4 extra/angle/per/atom 6 extra/dihedral/per/atom 9 extra/special/per/atom 12")
    elif system.explicit_m:  # the oxygen holds three bonds and three angles; every site three 1-2/1-3 neighbours
        box = (f"bond/types {terms} angle/types {terms} extra/bond/per/atom 3 extra/angle/per/atom 3 "
               "extra/special/per/atom 3")
    else:
        box = (f"bond/types {terms} angle/types {terms} extra/bond/per/atom 2 extra/angle/per/atom 1 "
               "extra/special/per/atom 2")
    lines = [f"units           {desc.units}", "dimension       3", f"boundary        {' '.join(desc.boundary)}",
             "atom_style      full", f"region          box block {extents} units box",
             f"create_box      {len(system.kinds)} box {box}"]
    lines += [f"mass            {k.type} {_fmt(k.mass)}  # {k.label}" for k in system.kinds]
    lines += [f"molecule        {s.template} {file_name(system, s.template)}" for s in system.species]
    waters = system.count_of("water")
    if waters and (any(p.molecule == "water" for p in desc.placements) or system.centred):
        waters = 0  # the text's own start: inserted at random (desc.placements) or at the box centre, below
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
    lines += [f"create_atoms    0 single {x:.6f} {y:.6f} {z:.6f} mol {template} {CHAIN_SEED} rotate 0 0 0 1 units "
              "box" for template, (x, y, z) in system.centred]  # the box centre (molecular.centre_row)
    made: set[str] = set()
    lines += mixtures.placement_lines(desc, made)  # the ions at random (desc.placements, molecule = template)
    for s in system.species:
        lines.append(f"group           {s.template} type " + " ".join(str(system.type_of(e)) for e in
                                                                       dict.fromkeys(s.atoms)))
    if system.rigid:  # the atoms the stage's own integrator moves
        lines.append(f"group           {OTHERS} subtract all {' '.join(system.rigid)}")
    if desc.layout is not None:  # regions, groups, walls on regions (before SHAKE: the forces it constrains)
        lines += described_groups.setup(desc.layout, made)
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
    if system.explicit_m and water is not None and water.om is not None:  # O-M, H-O-M: no energy (rigid bodies)
        k = "0 " if system.bond_style == "harmonic" else ""
        lines.insert(next(i for i, line in enumerate(lines) if line.startswith("angle_style")),
                     f"bond_coeff      2 {k}{_fmt(water.om)}  # O-M")
        lines.insert(next(i for i, line in enumerate(lines) if line.startswith("angle_coeff")) + 1,
                     f"angle_coeff     2 {k}{_fmt(water.angle / 2)}  # H-O-M")
    if system.co2 is not None:  # no energy: the rigid body holds the geometry (harmonic styles: a zero constant)
        k = "0 " if system.bond_style == "harmonic" else ""
        lines.insert(next(i for i, line in enumerate(lines) if line.startswith("angle_style")),
                     f"bond_coeff      {CO2_TERMS} {k}{_fmt(system.co2.bond)}")
        lines.append(f"angle_coeff     {CO2_TERMS} {k}180")
    if system.ethanol is not None:  # OPLS-AA terms after the water's (harmonic: the styles are shared)
        bond_c, angle_c, dihedral_c = ethanol_coeff_lines(system)
        at = next(i for i, line in enumerate(lines) if line.startswith("angle_style"))
        lines[at:at] = bond_c
        lines += angle_c + ["dihedral_style  opls", *dihedral_c]
        f = _fmt(system.ethanol.one_four)
        lines.append(f"special_bonds   lj 0.0 0.0 {f} coul 0.0 0.0 {f}")
    if system.kspace != "none":
        lines.append(f"kspace_style    {system.kspace} {_fmt(system.accuracy or 0.0)}")
    return lines


def rigid_fixes(desc: SimulationDescription, dyn: Dynamics, fixes: list[str]) -> list[str]:
    """A stage's integrator fixes with rigid molecules (module carbon_dioxide): the bodies' own fix
    first (LAMMPS requires a rigid fix before a barostat's), thermostatted as the stage states
    (rigid/nvt/small) or not (rigid/nve/small); then the stage's fixes, moving every other atom and,
    with a barostat, dilating every atom (fix npt's default 'dilate all': the bodies' centres too).
    A thermostat that is not Nose-Hoover is refused at reading (molecular.check_rigid_dynamics)."""
    system = desc.molecular
    if system is None or not system.rigid:
        return fixes
    bodies = " ".join(system.rigid)
    if len(system.rigid) > 1:
        raise ValueError("one rigid species only")
    if dyn.ensemble in ("nvt", "npt") and dyn.t_stop is not None:
        rigid = (f"fix             {RIGID_FIX} {bodies} rigid/nvt/small molecule temp {_fmt(dyn.t_start)} "
                 f"{_fmt(dyn.t_stop)} {_fmt(dyn.t_damp)}")
    else:
        rigid = f"fix             {RIGID_FIX} {bodies} rigid/nve/small molecule"
    moved = [re.sub(r"^(fix\s+\S+\s+)all\b", rf"\g<1>{OTHERS}", f) for f in fixes]
    return [rigid, *moved]


def constraint_lines(desc: SimulationDescription) -> list[str]:
    """SHAKE (or RATTLE) on the water bonds and angle, and a recentred group: defined once, they stay
    through every stage."""
    system = desc.molecular
    assert system is not None
    lines = []
    if system.recenter == "ions":
        ions = [str(system.type_of(s.atoms[0])) for s in system.species if s.template not in ("water", CO2)]
        lines += [f"group           ions type {' '.join(ions)}",
                  "fix             recenter ions recenter INIT INIT INIT"]
    elif system.recenter == "water":
        lines.append("fix             recenter water recenter INIT INIT INIT")
    if system.shake is None:
        return lines
    style = "rattle" if system.shake.rattle else "shake"
    bonds = [] if system.explicit_m else ["1"]  # an explicit-M water is a rigid body, not a SHAKE cluster
    if system.ethanol is not None:  # and the ethanol's bonds to hydrogen (molecular.shake_ethanol)
        kinds = ethanol.term_types()[0]
        bonds += [str(_ethanol_base(system) + 1 + kinds.index(k)) for k in (("CT", "HC"), ("HO", "OH"))]
    if not bonds:
        return lines
    inserted = " mol water" if desc.gcmc is not None else ""  # molecules fix gcmc adds (the template's clusters)
    return lines + [f"fix             {SHAKE_FIX} all {style} {_fmt(system.shake.tolerance)} "
                    f"{system.shake.iterations} 0 b {' '.join(bonds)}" + ("" if system.explicit_m else " a 1")
                    + inserted]


def preparation_lines(desc: SimulationDescription) -> list[str]:
    """The listed default that removes random-insertion contacts before the first stage (none when the
    text states its own start)."""
    assert desc.molecular is not None
    if not desc.molecular.prepare:
        return []
    etol, ftol, iterations, evaluations = PREPARATION
    held = desc.molecular.rigid  # rigid bodies do not exist during a minimisation: held in place instead
    return (["# preparation (a listed default): relax the random insertion's close contacts"]
            + [f"fix             held {' '.join(held)} setforce 0 0 0"] * bool(held)
            + [f"minimize        {etol:g} {ftol:g} {iterations} {evaluations}"] + ["unfix           held"] * bool(held)
            + ["reset_timestep  0"])


def rdf_pair(desc: SimulationDescription) -> str:
    """The type pair of the coordination number: water oxygen around water oxygen."""
    system = desc.molecular
    assert system is not None
    if system.water is None:  # ions alone: every pair
        return ""
    o = system.type_of("O")
    return f"{o} {o}"
