"""Metrics over a group of atoms in a described run: a quantity of one atom type (or a group the
description defines) and the number of a group's atoms inside a region.

Each `GroupMeasure` (property, group, region) becomes LAMMPS commands of the averaged stage and one
thermo column (LAMMPS manual: compute reduce, compute pe/atom, ke/atom, temp, the count() function of
equal-style variables):
- potential / kinetic energy per atom of the group: `compute reduce ave` of `pe/atom` / `ke/atom`
  over the group (the total energy: their sum);
- temperature of the group: `compute temp` on the group;
- mean charge per atom: `compute reduce ave` of `property/atom q` over the group;
- the number of the group's atoms (inside a region): `count(group[,region])`;
- the number of molecules of one kind of a molecular system ('water'): the atoms of the type of the
  kind's first template atom (the water oxygen), counted each time by `compute reduce sum` of an atom-style
  variable, so that molecules a run inserts or deletes (fix gcmc) are counted too.
The surface tension of a slab with two interfaces normal to z (y in 2D) is the mechanical one,
gamma = (L_n / 2) (P_nn - (P_tt + P_t't') / 2) (Kirkwood and Buff 1949; the LAMMPS manual's
compute pressure), from the pressure tensor LAMMPS prints.
`typeN` groups are made from the type (`group typeN type N`) at the start of the averaged stage.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from simagent.described.model import SimulationDescription

ALL = "all"
PER_ATOM = {"potential_energy_per_atom": "pe", "kinetic_energy_per_atom": "ke"}
MEASURED = frozenset(PER_ATOM) | {"total_energy_per_atom", "temperature", "atomic_charge", "atom_count",
                                  "molecule_count"}


class GroupMeasure(BaseModel):
    """One number over a group: `group` 'typeN', a described group or 'all'; `region` only for atom_count;
    for molecule_count `group` is the molecules' kind (a template of the molecular system, 'water')."""

    property: str
    group: str = Field(default=ALL, pattern=r"^[a-z][a-z0-9_]*$")
    region: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_]*$")

    @property
    def column(self) -> str:
        """The thermo column holding it."""
        tag = f"{self.group}_{self.region}" if self.region else self.group
        prefix = {"potential_energy_per_atom": "c_sa_pe_", "kinetic_energy_per_atom": "c_sa_ke_",
                  "total_energy_per_atom": "v_sa_etot_", "temperature": "c_sa_temp_", "atomic_charge": "c_sa_q_",
                  "atom_count": "v_sa_n_", "molecule_count": "c_sa_nmol_"}[self.property]
        return prefix + tag


def carries_charge(desc: SimulationDescription) -> bool:
    example = desc.example_system
    return desc.atom_style in ("full", "charge") or desc.molecular is not None or (
        example is not None and example.atom_style in ("full", "charge", "dipole", "peri"))


def lines(desc: SimulationDescription, measures: list[GroupMeasure]) -> list[str]:
    """The commands that make each measure's column (after the groups and regions exist)."""
    out: list[str] = []
    for n in sorted({int(m.group[4:]) for m in measures if m.group.startswith("type") and m.group[4:].isdigit()}):
        out.append(f"group           type{n} type {n}")
    energies = {PER_ATOM[m.property] for m in measures if m.property in PER_ATOM}
    energies |= {"pe", "ke"} if any(m.property == "total_energy_per_atom" for m in measures) else set()
    out += [f"compute         sa_{kind} all {kind}/atom" for kind in sorted(energies)]
    if any(m.property == "atomic_charge" for m in measures):  # compute reduce takes a per-atom compute, not q
        out.append("compute         sa_qatom all property/atom q")
    made: set[str] = set()
    for m in measures:
        if m.column in made:
            continue
        made.add(m.column)
        g = m.group
        if m.property in PER_ATOM:
            kind = PER_ATOM[m.property]
            out.append(f"compute         sa_{kind}_{g} {g} reduce ave c_sa_{kind}")
        elif m.property == "total_energy_per_atom":
            for kind in ("pe", "ke"):
                if f"c_sa_{kind}_{g}" not in made:
                    made.add(f"c_sa_{kind}_{g}")
                    out.append(f"compute         sa_{kind}_{g} {g} reduce ave c_sa_{kind}")
            out.append(f"variable        sa_etot_{g} equal c_sa_pe_{g}+c_sa_ke_{g}")
        elif m.property == "temperature":
            out.append(f"compute         sa_temp_{g} {g} temp")
        elif m.property == "atomic_charge":
            out.append(f"compute         sa_q_{g} {g} reduce ave c_sa_qatom")
        elif m.property == "atom_count":
            where = f"{g},{m.region}" if m.region else g
            out.append(f"variable        {m.column[2:]} equal count({where})")
        elif m.property == "molecule_count":
            anchor = anchor_type(desc, g)
            out.append(f"variable        sa_is_{g} atom \"type=={anchor}\"")
            out.append(f"compute         {m.column[2:]} all reduce sum v_sa_is_{g}")
    return out


def anchor_type(desc: SimulationDescription, kind: str) -> int | None:
    """The atom type that marks one molecule of `kind`: its template's first atom (each molecule has one)."""
    system = desc.molecular
    species = next((s for s in system.species if s.template == kind), None) if system else None
    if system is None or species is None:
        return None
    first = species.atoms[0]
    if species.atoms.count(first) != 1:
        return None
    return system.type_of(first)


def columns(measures: list[GroupMeasure]) -> list[str]:
    return list(dict.fromkeys(m.column for m in measures))


def describe(m: GroupMeasure) -> str:
    """How the number was made, for the result's method."""
    over = "all atoms" if m.group == ALL else (f"the type-{m.group[4:]} atoms" if m.group.startswith("type")
                                               and m.group[4:].isdigit() else f"group {m.group}")
    return {"potential_energy_per_atom": f"compute reduce ave of pe/atom over {over}",
            "kinetic_energy_per_atom": f"compute reduce ave of ke/atom (1/2 m v^2) over {over}",
            "total_energy_per_atom": f"compute reduce ave of pe/atom + ke/atom over {over}",
            "temperature": f"compute temp of {over}",
            "atomic_charge": f"compute reduce ave of the charge q (property/atom q) over {over}",
            "atom_count": f"count() of {over}" + (f" inside region {m.region}" if m.region else ""),
            "molecule_count": f"the number of {m.group} molecules (compute reduce sum of 1 per atom of the type of "
                              "the molecule's first template atom)"}[m.property]


SURFACE_TENSION_COLUMN = "v_sa_gamma"
# mN/m per (pressure unit x length unit) of a LAMMPS unit style: atm A = 101325 Pa x 1e-10 m, bar A = 1e5 Pa x 1e-10 m
SURFACE_TENSION_FACTOR = {"real": 101325.0 * 1e-10 * 1e3, "metal": 1e5 * 1e-10 * 1e3, "lj": 1.0}


def surface_tension_lines(desc: SimulationDescription) -> list[str]:
    """gamma = (L_n / 2)(P_nn - mean tangential P), in the style's pressure x length (converted in the
    analysis); the normal is z (y in 2D, where the only tangential component is P_xx)."""
    if desc.dimension == 2:
        return [f"variable        {SURFACE_TENSION_COLUMN[2:]} equal 0.5*ly*(pyy-pxx)"]
    return [f"variable        {SURFACE_TENSION_COLUMN[2:]} equal 0.5*lz*(pzz-0.5*(pxx+pyy))"]
