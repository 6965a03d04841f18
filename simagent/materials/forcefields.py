"""Force fields for RASPA jobs, from the data in forcefields/: framework Lennard-Jones (UFF, DREIDING:
framework_lj.json), zeolite force fields (zeolite_ff.json) and guest molecules (guests.json, shared with the
other engines, plus the RASPA additions in raspa_guests.json).

The result of `assemble` is everything RASPA reads besides simulation.input: pseudo_atoms.def,
force_field_mixing_rules.def, force_field.def, one <molecule>.def per guest and the framework's per-atom
labels and charges for its P1 CIF. Every interaction is either a self parameter mixed by the rule or an
explicit pair; a framework-guest pair the force field cannot give is an error, never silently zero."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Literal

import numpy as np
from ase.data import atomic_masses, atomic_numbers, covalent_radii

from simagent.errors import InputError, RequestError
from simagent.materials.frameworks import FrameworkStructure, aluminium_oxygens

KCAL_PER_MOL_IN_K = 4184.0 / 8.314462618  # 1 kcal/mol / R = 503.2195 K (CODATA 2018 R)
TWO_TO_ONE_SIXTH = 2.0 ** (1.0 / 6.0)
GENERIC_FORCE_FIELDS = ("UFF", "DREIDING")
ChargeChoice = Literal["auto", "cif", "eqeq", "none"]


@cache
def load(name: str) -> dict:
    """A JSON data file from the forcefields package."""
    return json.loads(resources.files("forcefields").joinpath(name).read_text())


def zeolite_force_fields() -> dict[str, dict]:
    return load("zeolite_ff.json")["force_fields"]


def framework_force_fields() -> list[str]:
    """Names accepted as the framework force field."""
    return [*GENERIC_FORCE_FIELDS, *zeolite_force_fields()]


def canonical_force_field(name: str) -> str:
    for known in framework_force_fields():
        if known.lower().replace("-", "").replace("_", "") == name.lower().replace("-", "").replace("_", ""):
            return known
    raise RequestError(f"unknown framework force field {name!r}; known: {', '.join(framework_force_fields())}")


# ---------------------------------------------------------------------------------------------
# Guests
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Site:
    name: str
    element: str
    mass: float
    charge: float
    epsilon_K: float
    sigma_A: float
    xyz: tuple[float, float, float] | None


@dataclass(frozen=True)
class GuestModel:
    molecule: str  # canonical key, e.g. "CO2"
    model: str
    citation: str
    rigid: bool
    sites: tuple[Site, ...]
    critical: tuple[float, float, float]  # T_c (K), p_c (Pa), acentric factor
    molar_mass: float
    bonds: tuple = ()
    bends: tuple = ()
    torsions: tuple = ()

    @property
    def charged(self) -> bool:
        return any(abs(s.charge) > 0 for s in self.sites)

    @property
    def label(self) -> str:
        return f"{self.molecule} ({self.model})"


GUESTS_FILE = "guests.json"  # shared guest models (geometry, TraPPE/EPM2/...; written for all engines)
RASPA_GUESTS_FILE = "raspa_guests.json"  # RASPA additions: critical constants, zeolite-fitted models, helium


def _has(name: str) -> bool:
    return resources.files("forcefields").joinpath(name).is_file()


@cache
def guest_table() -> dict[str, dict]:
    """guests.json merged with raspa_guests.json: molecule key -> entry with 'models' and 'critical'.
    guests.json decides keys, aliases, molar masses and its models; raspa_guests.json adds models and
    molecules and the critical constants (a model defined in both files is an error: one place per number)."""
    table: dict[str, dict] = {}
    if _has(GUESTS_FILE):
        for key, entry in load(GUESTS_FILE)["molecules"].items():
            table[key] = {**entry, "models": dict(entry["models"]), "source": GUESTS_FILE}
    for key, extra in load(RASPA_GUESTS_FILE)["molecules"].items():
        if key not in table:
            table[key] = {**extra, "models": dict(extra.get("models", {})), "source": RASPA_GUESTS_FILE}
            continue
        for name, model in extra.get("models", {}).items():
            if name in table[key]["models"]:
                raise InputError(f"guest model {key}/{name} is defined in both {GUESTS_FILE} and {RASPA_GUESTS_FILE}")
            table[key]["models"][name] = model
        if "critical" in extra:
            table[key]["critical"] = extra["critical"]
    return table


def guest_names() -> list[str]:
    return list(guest_table())


def canonical_guest(name: str) -> str:
    """'methane', 'CH4', 'ch4' -> 'CH4'; 'C4H10', 'butane' -> 'n-butane' (the keys of guests.json)."""
    wanted = name.strip().lower()
    for key, entry in guest_table().items():
        if wanted == key.lower() or wanted in (a.lower() for a in entry.get("aliases", [])):
            return key
    raise RequestError(f"no RASPA model for the guest {name!r}; known: {', '.join(guest_table())}")


def _site(raw: dict) -> Site:
    position = raw.get("position_A")
    return Site(raw["name"], raw["element"], float(raw["mass"]), float(raw["charge"]), float(raw["epsilon_K"]),
                float(raw["sigma_A"]), None if position is None else tuple(float(v) for v in position))


def _bonded(kind: str, term: dict) -> tuple:
    """A guests.json bonded term as RASPA writes it: (atom indices..., RASPA type, parameters)."""
    sites, style = tuple(term["sites"]), term["type"].lower()
    if kind == "bond":
        if style == "fixed":
            return (*sites, "FIXED_BOND", [term["length_A"]])
        if style == "harmonic":
            return (*sites, "HARMONIC_BOND", [term["k_K_per_A2"], term["length_A"]])
    elif kind == "bend" and style == "harmonic":
        return (*sites, "HARMONIC_BEND", [term["k_K_per_rad2"], term["theta0_deg"]])
    elif kind == "torsion" and style.startswith("trappe"):
        return (*sites, "TRAPPE_DIHEDRAL", list(term["c_K"]))
    raise InputError(f"no RASPA equivalent for the {kind} type {term['type']!r}")


def guest_model(molecule: str, model: str | None = None) -> GuestModel:
    key = canonical_guest(molecule)
    entry = guest_table()[key]
    name = model or entry["default_model"]
    if name not in entry["models"]:
        raise RequestError(f"{key} has no {name!r} model; known: {', '.join(entry['models'])}")
    if "critical" not in entry:
        raise InputError(f"{key}: no critical constants for RASPA's equation of state in {RASPA_GUESTS_FILE}")
    raw = entry["models"][name]
    return GuestModel(
        molecule=key, model=name, citation=raw["citation"], rigid=bool(raw["rigid"]),
        sites=tuple(_site(s) for s in raw["sites"]), critical=tuple(entry["critical"]),
        molar_mass=float(entry["molar_mass_g_per_mol"]),
        bonds=tuple(_bonded("bond", b) for b in raw.get("bonds", [])),
        bends=tuple(_bonded("bend", b) for b in raw.get("bends", [])),
        torsions=tuple(_bonded("torsion", b) for b in raw.get("torsions", [])),
    )


def default_guest_models(force_field: str, molecules: list[str]) -> dict[str, str]:
    """The guest model each molecule takes with this framework force field: the zeolite set's own
    choice when it makes one (Dubbeldam alkanes, Garcia-Sanchez CO2), else the molecule's default."""
    preferred = {canonical_guest(k): v
                 for k, v in zeolite_force_fields().get(force_field, {}).get("guest_models", {}).items()}
    chosen = {}
    for molecule in molecules:
        key = canonical_guest(molecule)
        chosen[key] = preferred.get(key) or guest_table()[key]["default_model"]
    return chosen


# ---------------------------------------------------------------------------------------------
# Framework atom types
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AtomType:
    name: str
    element: str
    mass: float
    lj: tuple[float, float] | None  # epsilon/k_B (K), sigma (A); None: no self interaction


@dataclass
class FrameworkTypes:
    """A framework typed for one force field: per-atom labels and charges, the types, the rules."""

    force_field: str
    citation: str
    labels: list[str]
    charges: np.ndarray
    types: dict[str, AtomType]
    cutoff_A: float
    truncation: Literal["shifted", "truncated"]
    tail_corrections: bool
    mixing_rule: str
    pairs: list[tuple[str, str, float, float]] = field(default_factory=list)
    charge_source: str = "none"
    fugacity_coefficient: float | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def charged(self) -> bool:
        return bool(np.any(np.abs(self.charges) > 1e-8))

    @property
    def interacting_types(self) -> set[str]:
        """Types that must interact with every guest site (self LJ or explicit pairs)."""
        present = set(self.types)
        return {t.name for t in self.types.values() if t.lj is not None} | {p[0] for p in self.pairs if p[0] in present}


def lj_from_table(force_field: str, element: str) -> tuple[tuple[float, float], str]:
    """(epsilon/k_B K, sigma A) of an element in UFF or DREIDING, and which table gave it."""
    tables = load("framework_lj.json")["force_fields"]
    table = tables[force_field]
    source = force_field
    if element not in table["parameters"] and table.get("fallback"):
        source = table["fallback"]
        table = tables[source]
    if element not in table["parameters"]:
        raise RequestError(f"{force_field} has no Lennard-Jones parameters for {element}")
    r_min, depth = table["parameters"][element]
    return (depth * KCAL_PER_MOL_IN_K, r_min / TWO_TO_ONE_SIXTH), source


def type_framework(structure: FrameworkStructure, force_field: str, charges: ChargeChoice = "auto",
                   cutoff_A: float | None = None) -> FrameworkTypes:
    """Atom types, labels and charges of a framework under a named force field.

    UFF/DREIDING: one type per element, no charges of their own (CIF charges are used when the CIF has
    them and charges is 'auto' or 'cif'). Zeolite sets: Si, Al, O, Oa, Na with the set's charges
    ('cif' takes the CIF's instead, 'none' switches them off)."""
    force_field = canonical_force_field(force_field)
    if charges == "cif" and not structure.has_charges:
        raise RequestError(f"{structure.name}: the CIF carries no partial charges (_atom_site_charge)")
    if force_field in GENERIC_FORCE_FIELDS:
        conventions = load("framework_lj.json")["conventions"]
        types: dict[str, AtomType] = {}
        fallbacks = set()
        for element in structure.elements:
            lj, source = lj_from_table(force_field, element)
            if source != force_field:
                fallbacks.add(element)
            types[element] = AtomType(element, element, float(atomic_masses[atomic_numbers[element]]), lj)
        citation = load("framework_lj.json")["force_fields"][force_field]["citation"]
        notes = []
        if fallbacks:
            notes.append(f"UFF parameters for {', '.join(sorted(fallbacks))} (not in {force_field})")
            citation += "; " + load("framework_lj.json")["force_fields"]["UFF"]["citation"]
        use_cif = structure.has_charges and charges in ("auto", "cif")
        atom_charges, source = np.zeros(len(structure.symbols)), "none"
        if use_cif:
            atom_charges, source = np.array(structure.charges, dtype=float), "CIF (_atom_site_charge)"
        elif charges == "eqeq":
            from simagent.materials.charges import CITATION, eqeq_charges

            atom_charges, source = eqeq_charges(structure), f"charge equilibration, {CITATION}"
        result = FrameworkTypes(
            force_field=force_field, citation=citation, labels=list(structure.symbols),
            charges=atom_charges, types=types, cutoff_A=float(cutoff_A or conventions["cutoff_angstrom"]),
            truncation=conventions["truncation"], tail_corrections=bool(conventions["tail_corrections"]),
            mixing_rule=conventions["mixing_rule"].split(" (")[0],
            charge_source=source, notes=notes,
        )
        return result
    entry = zeolite_force_fields()[force_field]
    known = entry["framework_atoms"]
    oa = aluminium_oxygens(structure)
    labels = []
    for index, symbol in enumerate(structure.symbols):
        label = "Oa" if (symbol == "O" and index in oa and "Oa" in known) else symbol
        if label not in known:
            raise RequestError(f"{force_field} covers framework atoms {', '.join(known)}; {structure.name} "
                               f"contains {symbol}. Use UFF or DREIDING for this framework.")
        labels.append(label)
    types = {}
    for label in sorted(set(labels)):
        element = "O" if label == "Oa" else label
        lj = known[label]["lj"]
        types[label] = AtomType(label, element, float(atomic_masses[atomic_numbers[element]]),
                                None if lj is None else (float(lj[0]), float(lj[1])))
    if charges == "cif":
        atom_charges, source = np.array(structure.charges, dtype=float), "CIF (_atom_site_charge)"
    elif charges == "none":
        atom_charges, source = np.zeros(len(labels)), "none"
    else:
        atom_charges = np.array([known[label]["charge"] for label in labels], dtype=float)
        used = sorted(set(labels))
        listed = ", ".join(f"{k} {known[k]['charge']:+g}" for k in used)
        source = f"{force_field} ({listed})"
        if not np.any(np.abs(atom_charges) > 0):
            source = "none"
    return FrameworkTypes(
        force_field=force_field, citation=entry["citation"], labels=labels, charges=atom_charges, types=types,
        cutoff_A=float(cutoff_A or entry["cutoff_angstrom"]), truncation=entry["truncation"],
        tail_corrections=bool(entry["tail_corrections"]), mixing_rule=entry["mixing_rule"],
        pairs=[(p[0], p[1], float(p[2]), float(p[3])) for p in entry["pairs"] if p[0] in types],
        charge_source=source,
        fugacity_coefficient=entry.get("fugacity_coefficient"),
    )


# ---------------------------------------------------------------------------------------------
# Electrostatics rule
# ---------------------------------------------------------------------------------------------

ChargeMethod = Literal["auto", "ewald", "none"]


def electrostatics(framework: FrameworkTypes, guests: list[GuestModel], choice: ChargeMethod = "auto",
                   ) -> tuple[bool, str]:
    """(use Ewald, sentence for the method string).

    Rule (auto): Ewald only when the framework and at least one guest carry charges. A framework
    without charges (e.g. CoRE MOF CIFs) means no framework-guest Coulomb term, and then the guests'
    own charges are switched off too (ChargeMethod None), which the method string says."""
    charged_guests = [g.molecule for g in guests if g.charged]
    if choice == "ewald":
        if not charged_guests and not framework.charged:
            raise RequestError("Ewald summation was requested but neither the framework nor the guests carry charges")
        if not framework.charged:
            return True, ("Ewald summation for guest-guest charges only; the framework carries no partial charges "
                          "(requested explicitly)")
        return True, f"Ewald summation (framework charges: {framework.charge_source})"
    if choice == "none":
        return False, "no electrostatics (requested explicitly): all partial charges are ignored"
    if framework.charged and charged_guests:
        return True, f"Ewald summation (framework charges: {framework.charge_source}; guest charges of the models)"
    if charged_guests:
        return False, (f"no electrostatics: the framework carries no partial charges, so "
                       f"{', '.join(charged_guests)} is simulated without framework charges and its guest-guest "
                       "Coulomb terms are omitted as well (Lennard-Jones only)")
    return False, "no electrostatics: the guests carry no partial charges"


# ---------------------------------------------------------------------------------------------
# The .def files
# ---------------------------------------------------------------------------------------------


@dataclass
class ForceFieldData:
    """What the .def files hold (rendered by tools.raspa.inputs)."""

    atoms: list[dict]  # pseudo_atoms.def rows
    self_terms: list[tuple[str, str, tuple[float, float] | None]]  # force_field_mixing_rules.def rows
    pairs: list[tuple[str, str, float, float]]  # force_field.def rows
    truncation: str
    tail_corrections: bool
    mixing_rule: str
    guests: list[GuestModel]
    summary: str

    @property
    def pseudo_atoms(self) -> list[str]:
        return [a["name"] for a in self.atoms]


def assemble(framework: FrameworkTypes, guests: list[GuestModel]) -> ForceFieldData:
    """The contents of pseudo_atoms.def, force_field_mixing_rules.def, force_field.def and the guests'
    .def files, checked: every framework-guest pair is defined."""
    guest_sites: dict[str, Site] = {}
    for guest in guests:
        for site in guest.sites:
            seen = guest_sites.get(site.name)
            if seen is not None and _parameters(seen) != _parameters(site):
                raise InputError(f"guest site {site.name} is defined twice with different parameters")
            guest_sites[site.name] = site
    clash = set(guest_sites) & set(framework.types)
    if clash:
        raise InputError(f"pseudo-atom names used by both framework and guests: {', '.join(sorted(clash))}")

    explicit = {(a, b) for a, b, _, _ in framework.pairs} | {(b, a) for a, b, _, _ in framework.pairs}
    for type_name in sorted(framework.interacting_types):
        own = framework.types[type_name].lj
        for site in guest_sites.values():
            if site.epsilon_K == 0.0 and site.sigma_A == 0.0:
                continue
            if own is None and (type_name, site.name) not in explicit:
                molecules = sorted({g.molecule for g in guests if site in g.sites})
                raise RequestError(f"{framework.force_field} defines no {type_name}-{site.name} interaction, so it "
                                   f"cannot describe {', '.join(molecules)}; use a force field that covers it")

    atoms = []
    for t in framework.types.values():
        charge = 0.0  # framework charges are per atom, from the P1 CIF (UseChargesFromCIFFile yes)
        atoms.append(_pseudo_atom(t.name, t.element, t.mass, charge, framework=True))
    for site in guest_sites.values():
        atoms.append(_pseudo_atom(site.name, site.element, site.mass, site.charge, framework=False))
    self_terms = []
    for t in framework.types.values():
        self_terms.append((t.name, "lennard-jones", t.lj) if t.lj else (t.name, "none", None))
    for site in guest_sites.values():
        if site.epsilon_K == 0.0 and site.sigma_A == 0.0:
            self_terms.append((site.name, "none", None))
        else:
            self_terms.append((site.name, "lennard-jones", (site.epsilon_K, site.sigma_A)))
    summary = (f"{framework.force_field} framework ({framework.citation}); guests "
               + "; ".join(f"{g.label}: {g.citation}" for g in guests)
               + f"; {framework.mixing_rule} mixing, cutoff {framework.cutoff_A:g} A, {framework.truncation}"
               + (", tail corrections" if framework.tail_corrections else ", no tail corrections"))
    if framework.notes:
        summary += "; " + "; ".join(framework.notes)
    used_pairs = [p for p in framework.pairs if p[0] in framework.types and p[1] in guest_sites]
    return ForceFieldData(atoms=atoms, self_terms=self_terms, pairs=used_pairs,
                          truncation=framework.truncation, tail_corrections=framework.tail_corrections,
                          mixing_rule=framework.mixing_rule, guests=list(guests), summary=summary)


def _parameters(site: Site) -> tuple:
    return site.element, site.mass, site.charge, site.epsilon_K, site.sigma_A


def _pseudo_atom(name: str, element: str, mass: float, charge: float, framework: bool) -> dict:
    real = element in atomic_numbers
    radius = float(covalent_radii[atomic_numbers[element]]) if real else 1.0
    return {"name": name, "print": "yes" if real and mass > 0 else "no", "as": element if real else "X",
            "chem": element if real else "-", "mass": mass, "charge": charge, "radius": radius,
            "framework": framework}
