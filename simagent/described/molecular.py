"""Molecular liquids in a described simulation: water models, ions, their charges, bonds and
constraints, and long-range electrostatics (the parts of simagent.described.model for molecules).

- `WATER_MODELS`: the published geometry, charges and oxygen LJ of SPC/E, TIP3P and TIP4P/2005,
  each citing its paper; `ION_KINDS`: Na+ and Cl- (formal charges; their LJ only as the text states).
- `MolecularSystem`: the atom kinds (one LAMMPS type each, in the order the text numbers them or
  water first), the species and how many molecules of each, bond/angle styles, the SHAKE
  constraint, the pair style (lj/cut/coul/long or lj/cut/tip4p/long) and the k-space solver with
  its accuracy.
- `read_molecular(desc, low)`: the reading rules. A number the task states wins over the model's
  published one (pair_coeff lines, bond length, angle, O-M distance); what it leaves out gets a
  documented default (origin 'default', listed in report.md); TraPPE CO2 is read beside the water
  (simagent.described.carbon_dioxide: rigid bodies); a molecule the module does not know (ethanol,
  PEG, another CO2 model) is refused by name.
- `_random_start`: a sentence placing every molecule at random in the box (no region) is the text's
  own start: create_atoms random for each species, no grid, no preparation minimisation.
- `_centre_start`: molecules placed 'at the centre of the box' go on a row through the centre, apart by
  the largest LJ sigma (molecules cannot share a point; listed).
- `_water_sites`: the pair style the text names decides where a 4-site water's charge sits: a tip4p style
  (implicit M), lj/cut/coul/long (an explicit M atom, each water a rigid body), another style refused.
- A stated total of atoms that equals the number of stated molecules is read as counting molecules (listed);
  any other total below the molecules' atoms is missing a consistent size.

Sources: H. J. C. Berendsen, J. R. Grigera, T. P. Straatsma, J. Phys. Chem. 91, 6269 (1987) (SPC/E);
W. L. Jorgensen, J. Chandrasekhar, J. D. Madura, R. W. Impey, M. L. Klein, J. Chem. Phys. 79, 926
(1983) (TIP3P); J. L. F. Abascal, C. Vega, J. Chem. Phys. 123, 234505 (2005) (TIP4P/2005).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from simagent.backends.expert.protocol_text import NUM
from simagent.described import carbon_dioxide, ethanol
from simagent.described.carbon_dioxide import LinearMolecule
from simagent.described.ethanol import EthanolModel
from simagent.described.mixtures import DEFAULT_MAX_TRIES, DEFAULT_PLACEMENT_SEED, RandomPlacement

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

KCAL_PER_KJ = 1.0 / 4.184
K_B_KCAL = 0.0019872036  # kcal/mol/K (CODATA k_B * N_A)
MASSES = {"O": 15.9994, "H": 1.008, "Na": 22.98977, "Cl": 35.453}  # standard atomic weights
DEFAULT_OVERLAP = 1.6  # angstrom between any two atoms of different molecules when they are placed at random
DEFAULT_KSPACE_ACCURACY = 1.0e-4  # LAMMPS examples/peptide: kspace_style pppm 0.0001
DEFAULT_SHAKE = (1.0e-4, 20)  # tolerance of LAMMPS examples/peptide (fix shake 0.0001 10 ...); twice its iterations
# Harmonic force constants when the text names harmonic styles without constants (TIP3P in CHARMM:
# K_b 450 kcal/mol/A^2, K_theta 55 kcal/mol/rad^2); under SHAKE the geometry is held at equilibrium.
DEFAULT_BOND_K, DEFAULT_ANGLE_K = 450.0, 55.0
# Random insertion leaves close contacts; this minimisation removes them before the first stage.
PREPARATION = (1.0e-4, 1.0e-6, 200, 2000)  # etol, ftol, iterations, evaluations

WaterName = Literal["spc/e", "tip3p", "tip4p/2005", "tip4p"]


class WaterModel(BaseModel):
    name: WaterName
    bond: float = Field(gt=0, description="O-H length, angstrom")
    angle: float = Field(gt=0, description="H-O-H angle, degrees")
    charge_h: float
    epsilon_o: float = Field(ge=0, description="kcal/mol")
    sigma_o: float = Field(gt=0, description="angstrom")
    om: float | None = Field(default=None, description="O to massless charge site M, angstrom (4-site models)")
    citation: str


WATER_MODELS: dict[str, WaterModel] = {
    "spc/e": WaterModel(name="spc/e", bond=1.0, angle=109.47, charge_h=0.4238, epsilon_o=0.650 * KCAL_PER_KJ,
                        sigma_o=3.166, citation="Berendsen, Grigera, Straatsma, J. Phys. Chem. 91, 6269 (1987)"),
    "tip3p": WaterModel(name="tip3p", bond=0.9572, angle=104.52, charge_h=0.417, epsilon_o=0.1521, sigma_o=3.15061,
                        citation="Jorgensen et al., J. Chem. Phys. 79, 926 (1983)"),
    "tip4p/2005": WaterModel(name="tip4p/2005", bond=0.9572, angle=104.52, charge_h=0.5564,
                             epsilon_o=93.2 * K_B_KCAL, sigma_o=3.1589, om=0.1546,
                             citation="Abascal, Vega, J. Chem. Phys. 123, 234505 (2005)"),
    "tip4p": WaterModel(name="tip4p", bond=0.9572, angle=104.52, charge_h=0.52, epsilon_o=0.1550, sigma_o=3.15365,
                        om=0.15, citation="Jorgensen et al., J. Chem. Phys. 79, 926 (1983)"),
}
_WATER_WORDS = [(r"spc/?e\b", "spc/e"), (r"tip4p[/-]?2005", "tip4p/2005"), (r"tip3p", "tip3p"),
                (r"\btip4p\b(?![/-]?(?:ew|ice|fb|d))", "tip4p")]
# molecules the module has no template for: pattern -> the name given in the refusal
UNKNOWN_MOLECULES = [(r"\bethanol\b", "ethanol"), (r"\bpeg\b|polyethylene glycol", "PEG"),
                     (r"carbon dioxide|\bco2\b|co₂", "CO2"), (r"toluene", "toluene"), (r"methane\b", "methane"),
                     (r"tip4p[/-]?(?:ew|ice|fb|d)\b|\bspc\b(?!/)|\bopc\b|tip5p", "another water model")]


class AtomKind(BaseModel):
    """One LAMMPS atom type of the molecular system."""

    type: int = Field(ge=1)
    element: str
    site: str | None = Field(default=None, description="the label of a site whose element another kind shares "
                             "(a CO2 oxygen beside a water oxygen); None: the element")
    mass: float = Field(gt=0)
    charge: float
    epsilon: float | None = Field(default=None, ge=0)
    sigma: float | None = Field(default=None, ge=0)


    @property
    def label(self) -> str:
        return self.site or self.element


class Species(BaseModel):
    """`count` molecules of a template: 'water' (the system's water model), one ion ('Na', 'Cl') or
    'co2' (the system's CO2 model)."""

    template: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    count: int = Field(gt=0)
    atoms: list[str] = Field(min_length=1, description="the label (AtomKind.label) of each template atom, in order")


class Shake(BaseModel):
    tolerance: float = Field(gt=0)
    iterations: int = Field(gt=0)
    rattle: bool = False


class RockSalt(BaseModel):
    """Ions on the rock-salt lattice filling the box (simagent.described.ionic_crystal): `cells` conventional
    cubic cells of edge `constant` per axis, the lattice shifted by `origin` (fractions of a cell) so that every
    site is a/4 from the box's faces."""

    constant: float = Field(gt=0, description="conventional cubic cell edge a, angstrom")
    cells: tuple[int, int, int]
    origin: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @property
    def n_ions(self) -> int:
        return 8 * math.prod(self.cells)


class MolecularSystem(BaseModel):
    water: WaterModel | None = None
    co2: LinearMolecule | None = Field(default=None, description="the CO2 model of species 'co2', each molecule a "
                                       "rigid body (simagent.described.carbon_dioxide)")
    ethanol: EthanolModel | None = Field(default=None, description="the model of species 'ethanol' (flexible, "
                                         "simagent.described.ethanol)")
    files: dict[str, str] = Field(default_factory=dict, description="template -> the molecule file name the text "
                                  "names for it (simagent writes it from the cited model); others: <template>.mol")
    crystal: RockSalt | None = Field(default=None, description="the ions on a rock-salt lattice (the text's start), "
                                     "not placed at random")
    kinds: list[AtomKind] = Field(min_length=1)
    species: list[Species] = Field(min_length=1)
    bond_style: Literal["zero", "harmonic"] = "zero"
    angle_style: Literal["zero", "harmonic"] = "zero"
    bond_k: float | None = None
    angle_k: float | None = None
    shake: Shake | None = None
    cutoff: float = Field(gt=0, description="LJ and Coulomb real-space cutoff, angstrom")
    kspace: Literal["pppm", "pppm/tip4p", "none"] = "pppm"
    accuracy: float | None = Field(default=None, gt=0, description="k-space relative accuracy")
    mixing: Literal["geometric", "arithmetic"] = "geometric"
    tail: bool = False
    shift: bool = Field(default=False, description="LJ energies shifted to zero at the cutoff (pair_modify shift)")
    slab: tuple[Literal["x", "y", "z"], float, float] | None = Field(
        default=None, description="the waters fill only this span along one axis (angstrom): a liquid slab with "
        "vacuum on either side")
    seed: int = Field(default=DEFAULT_PLACEMENT_SEED, gt=0)
    overlap: float = Field(default=DEFAULT_OVERLAP, gt=0)
    rdf_bins: int | None = Field(default=None, gt=0)
    recenter: Literal["ions", "water"] | None = Field(default=None, description="the group whose centre of mass "
                                                      "is held at its initial position (fix recenter INIT)")
    explicit_m: bool = Field(default=False, description="the 4-site water's massless charge site M as an atom of its "
                             "own (type 'M', a tiny mass): each water a rigid body (fix rigid/small) under "
                             "lj/cut/coul/long, when the text names that pair style rather than a tip4p one")
    centred: list[tuple[str, tuple[float, float, float]]] = Field(
        default_factory=list, description="the text's start 'at the box centre': (template, position of its geometric "
        "centre, angstrom) of every molecule, in a row along x through the centre (create_atoms single)")
    prepare: bool = Field(default=True, description="the listed preparation: the waters on a grid, minimised before "
                          "the first stage; False: the text's own start (waters inserted at random, desc.placements), "
                          "velocities created before the constraints")

    def type_of(self, label: str) -> int:
        return next(k.type for k in self.kinds if k.label == label)

    @property
    def rigid(self) -> list[str]:
        """The templates whose molecules are rigid bodies (fix rigid/small), not SHAKE clusters."""
        return [s.template for s in self.species if s.template == carbon_dioxide.CO2_TEMPLATE
                or (s.template == "water" and self.explicit_m)]

    @property
    def water_terms(self) -> int:
        """The water's bond and angle types: O-H and H-O-H (1), and with an explicit M site O-M and H-O-M (2)."""
        return 2 if self.explicit_m else 1

    def count_of(self, template: str) -> int:
        return sum(s.count for s in self.species if s.template == template)

    @property
    def pair_style(self) -> str:
        return {"pppm/tip4p": "lj/cut/tip4p/long", "pppm": "lj/cut/coul/long", "none": "lj/cut/coul/cut"}[self.kspace]

    @property
    def n_atoms(self) -> int:
        return sum(s.count * len(s.atoms) for s in self.species)


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------

# generic reading entries a molecular system replaces (read here instead)
REPLACED_UNSUPPORTED = ("electrostatics (coul, kspace)", "molecular topology (bonds, angles, constraints)")
REPLACED_MISSING = ("initial configuration (lattice)", "atom masses", "LJ epsilon", "LJ sigma", "pair cutoff",
                    "box size", "pair potential", "lattice scale (density or lattice constant)")


# a simple-cubic lattice the molecules are put on ('inserted on a simple cubic lattice with a lattice constant
# of 4.5 A', 'placed at the sites of an sc lattice of spacing 4 A'): a placement grid, not a crystal
PLACEMENT_LATTICE = re.compile(
    r"\b(?:insert|plac|pack|put|creat|position|arrang|distribut)\w*\b[^.;]{0,80}?\b(?:on|onto|at|in|using|with)\b"
    r"[^.;]{0,30}?\b(?:simple[- ]cubic|sc) lattice\b[^.;]{0,40}?" + NUM + r"\s*(?:angstrom|a\b)|"
    r"\b(?:simple[- ]cubic|sc) lattice\b[^.;]{0,40}?" + NUM + r"\s*(?:angstrom|a\b)[^.;]{0,60}?\b(?:insert|plac|put|"
    r"creat|position)\w*")
# solids beside the liquid that the module builds no model of: pattern -> the name given in the refusal (a carbon
# nanotube is simagent.described.nanotube's, which names what it does not render itself)
_SOLIDS = [(r"\bgraphit\w*|\bgraphene\b", "graphite or graphene layers")]


def placement_lattice(low: str) -> re.Match | None:
    """The words of a simple-cubic lattice a water text places its molecules on, when no box is measured in
    its units (a box 'of 6*6*14 lattice units' is `read_box`'s: the lattice is the box's measure there)."""
    if water_model(low) is None or re.search(r"\blattice units?\b", low):
        return None
    return PLACEMENT_LATTICE.search(low)


def water_model(low: str) -> str | None:
    for pattern, name in _WATER_WORDS:
        if re.search(pattern, low):
            return name
    return None


def read_molecular(desc: SimulationDescription, low: str) -> None:
    """Fill desc.molecular when the text describes water (a named model) with or without ions in
    real units; see the module docstring. Leaves desc untouched for any other text."""
    name = water_model(low)
    if name is None or desc.units != "real" or desc.lattice is not None:
        return
    for pattern, what in UNKNOWN_MOLECULES:
        if re.search(pattern, low) and what not in ("CO2", "ethanol"):
            desc.unsupported.append(f"a molecule simagent has no template for ({what})")
    for pattern, what in _SOLIDS:
        if hit := re.search(pattern, low):
            desc.unsupported.append(f"a solid beside the molecules ({what}, '{hit.group(0)}'): simagent builds no "
                                    "model of it (its atoms' interactions with each other, its geometry and where it "
                                    "lies are not in the molecular reading)")
    if grid := placement_lattice(low):
        desc.unsupported.append(f"molecules placed on a stated lattice ('{grid.group(0)}'): simagent places them on "
                                "its own grid, whose spacing follows from the count")
    recenter = re.search(r"\b(ions?|salt ions|solute|water)\b[^.;]{0,40}\brecent(?:er|red|ering)\w*[^.;]{0,30}"
                         r"(?:initial|original|starting) (?:position|centre|center)", low)
    if recenter is None and re.search(r"\brecent(?:er|red|ering)", low):
        desc.unsupported.append("fix recenter of a group the reading does not know")
    model = WATER_MODELS[name].model_copy()
    desc.note("molecular.water", "rules", f"{name}: {model.citation}")
    n_water = _count(low, r"(?:water|" + _model_word(name) + r")[\w/ ]{0,20}?molecules?")
    if n_water is None:
        desc.missing.append("the number of water molecules")
        return
    ions = _ions(desc, low, n_water)
    _geometry(desc, low, model)
    explicit = _water_sites(desc, low, model)
    if explicit is None:
        return
    kinds = [AtomKind(type=1, element="O", mass=MASSES["O"], charge=0.0 if explicit else -2 * model.charge_h,
                      epsilon=model.epsilon_o, sigma=model.sigma_o),
             AtomKind(type=2, element="H", mass=MASSES["H"], charge=model.charge_h, epsilon=0.0, sigma=0.0)]
    if explicit:
        kinds.append(AtomKind(type=3, element="M", site="M", mass=M_MASS, charge=-2 * model.charge_h, epsilon=0.0,
                              sigma=0.0))
    species = [Species(template="water", count=n_water, atoms=["O", "H", "H"] + ["M"] * explicit)]
    for element, count, charge in ions:
        kinds.append(AtomKind(type=len(kinds) + 1, element=element, mass=MASSES[element], charge=charge))
        species.append(Species(template=element.lower(), count=count, atoms=[element]))
    co2 = _carbon_dioxide(desc, low, kinds, species) if carbon_dioxide.names_co2(low) else None
    if carbon_dioxide.names_co2(low) and co2 is None:
        return
    if co2 is not None and explicit:
        desc.unsupported.append("CO2 beside a water with an explicit M site: simagent keeps one rigid species (the "
                                "CO2 or the 4-site water), not both")
        return
    alcohol = _ethanol(desc, low, kinds, species) if ethanol.names_ethanol(low) else None
    if ethanol.names_ethanol(low) and alcohol is None:
        return
    placed = sum(sp.count * _atoms(sp) for sp in species)
    stated = re.search(r"total (?:number )?of (\d+) atoms|(\d+) atoms in (?:all|total)", low)
    total = int(stated.group(1) or stated.group(2)) if stated else placed
    made = ", ".join(f"{sp.count} {sp.template} x {_atoms(sp)}" for sp in species)
    if total > placed:  # other molecules are stated: never dropped
        desc.unsupported.append(f"the rest of the stated {total} atoms (the reading places only the {placed} atoms "
                                f"of {made})")
        return
    molecules = sum(sp.count for sp in species)
    if total < placed and total == molecules:  # 'N atoms' that number the molecules: counts stated twice win
        desc.note("molecular.stated_total", "default", f"the stated molecule counts, {placed} atoms"
                  + (f" ({placed + species[0].count} sites with the water's M sites)" if explicit else "")
                  + f": the text's total of {total} atoms contradicts its molecule counts ({made}); {total} is their "
                  "number of molecules, so the total is read as counting molecules")
    elif total < placed:  # the stated molecules make more atoms than the stated total: the text contradicts itself
        desc.missing.append(f"a consistent system size (the stated molecules make {placed} atoms: {made}; the text "
                            f"states {total} atoms in all, which is not their number of molecules, {molecules}, "
                            "either)")
        return
    desc.note("molecular.masses", "default", "O 15.9994, H 1.008, Na 22.98977, Cl 35.453"
              + (", C 12.011" if co2 or alcohol else "") + ": standard atomic weights")
    if not assign_stated_types(desc, low, kinds, model):
        return
    read_pair_coeffs(desc, low, kinds)
    system = MolecularSystem(water=model, co2=co2, ethanol=alcohol, kinds=kinds, species=species, cutoff=1.0,
                             accuracy=1.0, explicit_m=explicit)
    if not read_interactions(desc, low, system):
        return
    _bonded(desc, low, system)
    if not _template_files(desc, low, system):
        return
    bins = re.search(r"radial distribution[^.;]{0,80}?\b(\d+) bins", low)
    if bins:
        system.rdf_bins = int(bins.group(1))
        desc.note("molecular.rdf_bins", "rules", bins.group(0))
    desc.note("molecular.placement", "default", f"the waters on the sites of a simple-cubic grid filling the box, a "
              f"random subset of the sites (seed {system.seed}) with random orientations; the ions at random (seeds "
              f"{system.seed + 2}, {system.seed + 4}), no atom closer than {system.overlap:g} A to another's: the text "
              "supplies no starting configuration (random insertion of a dense liquid is slow and leaves hot contacts)")
    desc.note("molecular.preparation", "default", "minimize {:g} {:g} {} {} with the SHAKE constraints as restraints, "
              "before the first stage: the placed molecules' close contacts would stop PPPM ('out of range "
              "atoms')".format(*PREPARATION))
    if recenter is not None:  # fix recenter INIT INIT INIT on the named species
        system.recenter = "water" if recenter.group(1) == "water" else "ions"
        desc.note("molecular.recenter", "rules", recenter.group(0))
    desc.molecular = system
    desc.placements = [RandomPlacement(atom_type=0, count=sp.count, seed=system.seed + 2 * i, overlap=system.overlap,
                                       max_tries=DEFAULT_MAX_TRIES, molecule=sp.template)
                       for i, sp in enumerate(species) if sp.template != "water"]  # templates hold absolute types
    desc.masses = {k.type: k.mass for k in kinds}
    desc.atom_types = len(kinds)
    desc.atom_style = "full"
    desc.unsupported = [u for u in desc.unsupported if u not in REPLACED_UNSUPPORTED]
    desc.missing = [m for m in desc.missing if m not in REPLACED_MISSING]
    read_box(desc, low)
    _random_start(desc, low, system)
    _centre_start(desc, low, system)


def _atoms(species: Species) -> int:
    """The atoms of one molecule of a species (an explicit M site is a charge site, not an atom)."""
    return len([a for a in species.atoms if a != "M"])


M_MASS = 1.0e-3  # g/mol: LAMMPS needs a mass; the rigid water's mass and inertia change by < 0.01 %
# the pair style the text names for the molecules' LJ and Coulomb
_NAMED_PAIR_STYLE = re.compile(r"\b(lj/cut/(?:coul|tip4p)/(?:long|cut|msm|debye|dsf)|lj/long/(?:coul|tip4p)/long|"
                               r"lj/charmm/coul/(?:long|charmm)|tip4p/(?:long|cut))\b")


def _water_sites(desc: SimulationDescription, low: str, model: WaterModel) -> bool | None:
    """Whether the water's M site is an atom of its own (True), implicit in a tip4p pair style or absent (a 3-site
    model) (False), or the named pair style cannot carry the named model (None, refused by name). A 4-site model
    under lj/cut/coul/long, which has no M site, is rendered with the M site explicit (each water a rigid body,
    LAMMPS's own second way of running TIP4P); under another non-tip4p style it is refused. A tip4p style with a
    3-site model is refused: it would put the charge where the model has none."""
    hit = _NAMED_PAIR_STYLE.search(low)
    if hit is None:
        return False
    named = hit.group(1)
    if model.om is None:
        if "tip4p" in named:
            desc.unsupported.append(f"pair style {named} with the 3-site {model.name} water: a tip4p style moves "
                                    "the oxygen's charge to a massless site M that the model does not have")
            return None
        return False
    if "tip4p" in named:
        return False
    if named != "lj/cut/coul/long":
        desc.unsupported.append(f"the 4-site {model.name} water under pair style {named}: that style has no M "
                                "site, and simagent renders an explicit M site only under lj/cut/coul/long (with "
                                "PPPM); a tip4p style (lj/cut/tip4p/long) would be another pair style than the named")
        return None
    desc.note("molecular.water_sites", "rules", f"{hit.group(0)} with the 4-site {model.name} water: the style has no "
              f"massless site, so the M site is an atom of its own (charge {-2 * model.charge_h:g} e, no LJ, "
              f"{model.om:g} A from O on the H-O-H bisector, mass {M_MASS:g} g/mol), the oxygen uncharged, and each "
              "water a rigid body (fix rigid/small: SHAKE cannot hold a massless site); LAMMPS's explicit way of "
              "running TIP4P (Howto tip4p). The named style and model are both kept; no tip4p style is used")
    return True


def template_sites(system: MolecularSystem, template: str) -> list[tuple[float, float, float]]:
    """The coordinates of one species' template (angstrom, the template's frame)."""
    if template == "water":
        assert system.water is not None
        return template_coordinates(system.water) + ([m_site(system.water)] if system.explicit_m else [])
    if template == ethanol.ETHANOL_TEMPLATE:
        return ethanol.coordinates()
    if template == carbon_dioxide.CO2_TEMPLATE:
        assert system.co2 is not None
        return system.co2.coordinates()
    return [(0.0, 0.0, 0.0)]


def centre_row(system: MolecularSystem, lo: tuple[float, float, float], hi: tuple[float, float, float]
               ) -> list[tuple[str, tuple[float, float, float]]] | None:
    """(template, where its geometric centre goes) for every molecule, in a row along x centred on the box centre
    (see _centre_start); None when the row and one more gap do not fit in the box's x length."""
    gap = max(k.sigma or 0.0 for k in system.kinds)
    radii = []
    for sp in system.species:
        xyz = template_sites(system, sp.template)
        mean = [sum(p[k] for p in xyz) / len(xyz) for k in range(3)]
        radii += [(sp.template, max(math.dist(p, mean) for p in xyz))] * sp.count
    length = sum(2 * r for _, r in radii) + gap * (len(radii) - 1)
    if length + gap > hi[0] - lo[0]:
        return None
    centre = [(a + b) / 2 for a, b in zip(lo, hi, strict=True)]
    x, row = centre[0] - length / 2, []
    for template, r in radii:
        row.append((template, (x + r, centre[1], centre[2])))
        x += 2 * r + gap
    return row


RANDOM_NAME = "several atom types or random placement"  # reading.UNSUPPORTED's
_PLACE = r"(?:insert|plac|creat|put|add|distribut|position)\w*"
_RANDOM_START = re.compile(rf"\b(?:random(?:ly)?|at random)\b[^.;]{{0,40}}?\b{_PLACE}|\b{_PLACE}\b[^.;]{{0,60}}?"
                           r"\b(?:at random|randomly|random (?:positions?|locations?|places?))\b")
_WHOLE_BOX = re.compile(r"\b(?:region|block|slab|sub-?volume|sphere|cylinder|layer)\b|(?:\(|\[|\bfrom |\bbetween |"
                        r"\bspanning )\s*-?\d")  # a sentence that names any of these places them elsewhere
_MOLECULE_WORDS = re.compile(r"\bmolecules?\b|\bwaters?\b|\bions?\b|carbon dioxide|\bco2\b|\bspecies\b")
_MIN_DISTANCE = re.compile(r"(?:closer than|minimum (?:separation|distance)(?: of)?|at least|no nearer than|overlap "
                           r"(?:distance|cutoff|radius|check)(?: of)?)\s*" + NUM + r"(?:\s*(?:-|to)\s*(\d+(?:\.\d+)?))?"
                           r"\s*(angstrom|a\b|nm)")  # a range 'of 1.5-2.0 A': the larger (it satisfies both)


def _random_start(desc: SimulationDescription, low: str, system: MolecularSystem) -> None:
    """'the molecules were placed at random in the box, avoiding overlaps', 'CO2 and water inserted
    randomly without overlapping atoms': every species is inserted at random in the whole box
    (create_atoms random, random orientations, an overlap check; no grid, no preparation minimisation:
    the text states its own start). A sentence that names a region, block or span is
    simagent.described.confinement's (insertion in a region)."""
    for sentence in re.split(r"(?<=[.;])\s+", low):
        hit = _RANDOM_START.search(sentence)
        if hit is None or _WHOLE_BOX.search(sentence) or not _MOLECULE_WORDS.search(sentence):
            continue
        distance = _MIN_DISTANCE.search(sentence)
        if distance:
            least = max(float(distance.group(1)), float(distance.group(2) or distance.group(1)))
            system.overlap = least * (10.0 if distance.group(3) == "nm" else 1.0)
        desc.placements = [RandomPlacement(atom_type=0, count=sp.count, seed=system.seed + 2 * i,
                                           overlap=system.overlap, max_tries=DEFAULT_MAX_TRIES, molecule=sp.template)
                           for i, sp in enumerate(system.species)]
        system.prepare = False
        desc.origin.pop("molecular.preparation", None)
        names = ", ".join(f"{sp.count} {sp.template}" for sp in system.species)
        desc.note("molecular.placement", "rules", f"{hit.group(0)}: {names} inserted at random in the whole box "
                  "(create_atoms random, random orientations); no grid and no minimisation before the first stage (the "
                  "text states its own start)" + (f"; {distance.group(0)}" if distance else "")
                  + (f" (a range: the larger, {system.overlap:g} A, satisfies both ends)"
                     if distance and distance.group(2) else ""))
        desc.note("molecular.insertion", "default", f"seeds {system.seed}, {system.seed + 2}, ... (one per species, in "
                  "the order water, ions, CO2, ethanol)"
                  + ("" if distance else f", no atom closer than {system.overlap:g} A to "
                  "another molecule's") + f", {DEFAULT_MAX_TRIES} attempts per molecule: none stated")
        if RANDOM_NAME in desc.unsupported:
            desc.unsupported.remove(RANDOM_NAME)
        return


# a start 'at the centre of the box': a placement verb, then the centre (not a centre of mass, not a region's)
_CENTRE_START = re.compile(rf"\b{_PLACE}\b[^.;]{{0,80}}?\b(?:at|in|near|around|about) (?:the )?(?:very )?"
                           r"(?:(?:simulation |periodic )?(?:box|cell)(?:'s)? )?(?:centre|center|middle)\b(?! of mass)"
                           r"(?: of (?:the )?(?:simulation |periodic |cubic )*(?:box|cell|domain))?")


def _centre_start(desc: SimulationDescription, low: str, system: MolecularSystem) -> None:
    """'the water and the ethanol are put at the centre of the box': the text's own start. Two molecules cannot sit
    on one point, so every molecule goes on a row along x through the box centre, each one's geometric centre on
    the row, neighbours' bounding spheres (about their centres) as far apart as the largest LJ sigma of the system
    (no pair of atoms of two molecules closer: no hot contact), the row centred on the box centre; template
    orientations, no minimisation. A row that does not fit in the box (the same gap across the periodic boundary)
    is named as missing."""
    for sentence in re.split(r"(?<=[.;])\s+", low):
        hit = _CENTRE_START.search(sentence)
        if hit is None or _RANDOM_START.search(sentence) or not _MOLECULE_WORDS.search(sentence) or \
                re.search(r"\b(?:region|block|slab|sub-?volume|sphere|cylinder|layer|lattice|grid)\b", sentence):
            continue
        if desc.box is None:
            return
        row = centre_row(system, desc.box.lo, desc.box.hi)
        names = ", ".join(f"{sp.count} {sp.template}" for sp in system.species)
        if row is None:
            desc.missing.append(f"where the molecules go: the text puts them at the box centre, and {names} do not fit "
                                "in one row through it")
            return
        system.centred = row
        system.prepare = False
        desc.placements = []
        desc.origin.pop("molecular.preparation", None)
        gap = max(k.sigma or 0.0 for k in system.kinds)
        desc.note("molecular.placement", "rules", f"{hit.group(0)}: {names} at the box centre")
        desc.note("molecular.centre_row", "default", "; ".join(f"{t} centred at ({x:.3f}, {y:.3f}, {z:.3f}) A" for
                                                              t, (x, y, z) in row)
                  + ": molecules cannot share one point, so their geometric centres lie on a row along x through the "
                  f"box centre, the molecules' bounding spheres {gap:g} A apart (the largest LJ sigma: no two atoms of "
                  "different molecules closer), in the templates' own orientations, with no minimisation (the text "
                  "states its own start)")
        if RANDOM_NAME in desc.unsupported:
            desc.unsupported.remove(RANDOM_NAME)
        return


def check_rigid_dynamics(desc: SimulationDescription) -> None:
    """Rigid molecules (CO2) are integrated by fix rigid/*/small, whose thermostat is Nose-Hoover: a
    stage with another thermostat (Langevin, Berendsen, rescaling) is refused by name, never swapped."""
    system = desc.molecular
    if system is None or not system.rigid:
        return
    for stage in desc.stages:
        dyn = stage.dynamics
        if dyn is not None and dyn.thermostat not in (None, "nose-hoover"):
            desc.unsupported.append(f"a {dyn.thermostat} thermostat on rigid CO2 molecules (stage {stage.name}: "
                                    "simagent integrates them with fix rigid/nvt/small, a Nose-Hoover thermostat)")


def _model_and_count(desc: SimulationDescription, named: tuple, count: tuple[int, str] | None, what: str):
    """(model, the words that named it, (count, its words)) of a molecule a text names, or None with the
    reason recorded: a model refused by name (unsupported) or not named (missing), or no count (missing)."""
    model, words = named
    if model is None:
        (desc.unsupported if words.startswith("unsupported") else desc.missing).append(words.split(": ", 1)[1])
        return None
    if count is None:
        desc.missing.append(f"the number of {what} molecules")
        return None
    return model, words, count


def _carbon_dioxide(desc: SimulationDescription, low: str, kinds: list[AtomKind], species: list[Species]
                    ) -> LinearMolecule | None:
    """The CO2 of a water + CO2 text: its model (TraPPE, or refused/missing by name) and count; its
    carbon and oxygen become two atom kinds after the others (module carbon_dioxide)."""
    found = _model_and_count(desc, carbon_dioxide.co2_model(low), carbon_dioxide.co2_count(low), "CO2")
    if found is None:
        return None
    model, words, count = found
    desc.note("molecular.co2", "rules", f"{words}: {model.name}, {model.citation}; {count[1]}")
    desc.note("molecular.co2_rigid", "default", "each CO2 a rigid body (fix rigid/small; thermostatted by fix "
              "rigid/nvt/small at the stage's temperature and damping, the other molecules by the stage's own fix, "
              "whose barostat dilates the bodies too): the text does not say how the linear molecule is kept "
              "straight; SHAKE cannot hold its 180 degree angle, and LAMMPS examples/gcmc keeps TraPPE CO2 rigid so")
    for site, (element, mass, charge, epsilon, sigma) in ((carbon_dioxide.CARBON, model.centre),
                                                          (carbon_dioxide.OXYGEN, model.end)):
        kinds.append(AtomKind(type=len(kinds) + 1, element=element, site=site, mass=mass, charge=charge,
                              epsilon=epsilon, sigma=sigma))
    species.append(Species(template=carbon_dioxide.CO2_TEMPLATE, count=count[0],
                           atoms=[carbon_dioxide.CARBON, carbon_dioxide.OXYGEN, carbon_dioxide.OXYGEN]))
    return model


def _ethanol(desc: SimulationDescription, low: str, kinds: list[AtomKind], species: list[Species]
             ) -> EthanolModel | None:
    """The ethanol of a water + ethanol text: its model (OPLS-AA, or refused/missing by name), its count and the
    1-4 scaling the text states; its six sites become atom kinds after the others (module ethanol)."""
    found = _model_and_count(desc, ethanol.ethanol_model(low), ethanol.ethanol_count(low), "ethanol")
    if found is None:
        return None
    model, words, count = found
    desc.note("molecular.ethanol", "rules", f"{words}: {model.name}, {model.citation} (charges, LJ, bonds, angles, "
              f"torsions: simagent.described.ethanol); {count[1]}")
    scaling = ethanol.one_four(low)
    if scaling is not None:
        model.one_four = scaling[0]
        desc.note("molecular.one_four", "rules", f"{scaling[0]:g} for LJ and Coulomb: {scaling[1]}")
    else:
        desc.note("molecular.one_four", "default", f"{ethanol.OPLS_ONE_FOUR:g} for LJ and Coulomb: OPLS-AA's own "
                  "1-4 scaling (none stated)")
    for site, (cls, charge) in ethanol.SITES.items():
        element, mass, epsilon, sigma = ethanol.CLASSES[cls]
        kinds.append(AtomKind(type=len(kinds) + 1, element=element, site=site, mass=mass, charge=charge,
                              epsilon=epsilon, sigma=sigma))
    species.append(Species(template=ethanol.ETHANOL_TEMPLATE, count=count[0], atoms=list(ethanol.ATOMS)))
    return model


# a stated type's LJ matches a model's site when both are within these relative tolerances (or both zero)
ROLE_TOLERANCE = (0.03, 0.03)  # epsilon, sigma
_CATIONS = ("Na",)


def _published_lj(kind: AtomKind, water: WaterModel) -> tuple[float, float] | None:
    """The LJ (epsilon, sigma) a kind has in its published model; None for an ion (the text states its LJ)."""
    if kind.site is None and kind.element == "O":
        return water.epsilon_o, water.sigma_o
    if kind.site is None and kind.element == "H":
        return 0.0, 0.0
    if kind.site is None:
        return None
    return kind.epsilon or 0.0, kind.sigma or 0.0


def _close(stated: tuple[float, float], published: tuple[float, float]) -> float | None:
    """How far a stated (epsilon, sigma) is from a published one (relative), None beyond ROLE_TOLERANCE."""
    worst = 0.0
    for value, ref, tol in zip(stated, published, ROLE_TOLERANCE, strict=True):
        if ref == 0.0:
            if value != 0.0:
                return None
            continue
        worst = max(worst, abs(value - ref) / ref)
        if worst > tol:
            return None
    return worst


def assign_stated_types(desc: SimulationDescription, low: str, kinds: list[AtomKind], water: WaterModel) -> bool:
    """When the text lists 'pair_coeff i i eps sigma' for every type 1..N of a system of N atom kinds with a
    molecule besides the water (ethanol), each kind takes the stated type whose LJ matches its published model's
    (the nearest within ROLE_TOLERANCE; equal values: the lowest type first, in the order water, ethanol sites);
    the ions take the types no model claims, the cation the smaller sigma. Kinds with equal LJ (two CT carbons,
    two H(C) hydrogens, two H without LJ) are interchangeable: no interaction depends on which gets which
    number. False (listed as missing) when a stated type matches no kind. Without such a molecule, or without
    a complete list, the types stay in the reading's order (water, ions, CO2)."""
    stated = {i: lj for i, j, lj, _ in stated_pair_coeffs(low) if i == j}
    if not any(k.site in ethanol.SITES for k in kinds) or sorted(stated) != list(range(1, len(kinds) + 1)):
        return True
    free = dict(stated)
    chosen: dict[int, int] = {}  # kind index -> stated type
    for n, kind in enumerate(kinds):
        published = _published_lj(kind, water)
        if published is None:
            continue
        near = sorted((d, t) for t, lj in free.items() if (d := _close(lj, published)) is not None)
        if not near:
            desc.missing.append(f"which stated type is the {kind.label} site (no pair_coeff line is near its "
                                f"published LJ {published[0]:g} kcal/mol, {published[1]:g} A)")
            return False
        chosen[n] = near[0][1]
        del free[near[0][1]]
    ions = [n for n, k in enumerate(kinds) if _published_lj(k, water) is None]
    if len(ions) != len(free):
        desc.missing.append("which stated types are the ions")
        return False
    by_sigma = sorted(free, key=lambda t: (free[t][1], t))  # cations are the smaller ions
    ordered = sorted(ions, key=lambda n: kinds[n].element not in _CATIONS)
    for n, t in zip(ordered, by_sigma, strict=True):
        chosen[n] = t
    for n, t in chosen.items():
        kinds[n].type = t
    kinds.sort(key=lambda k: k.type)
    desc.note("molecular.types", "rules", "the stated pair_coeff lines matched to the models' sites by their LJ "
              "values (the ions: the types left, the cation the smaller sigma): " + ", ".join(
                  f"{k.type} {k.label}" for k in kinds) + "; sites with equal LJ are interchangeable")
    return True


_MOL_FILE = re.compile(r"(?<![\w/.-])[\w+-]+(?:\.[\w+-]+)*\.mol\b")


def _template_files(desc: SimulationDescription, low: str, system: MolecularSystem) -> bool:
    """Molecule template files the text names (not supplied; solve checks that) are written by simagent from the
    cited model of the species the name names: a water model's name or 'water' -> the water, 'ethanol' or the OPLS
    name -> the ethanol, 'co2'/'trappe' -> the CO2. A named file that names none of the species is left to the
    file check (missing)."""
    names = list(dict.fromkeys(m.group(0) for m in _MOL_FILE.finditer(low)))
    if not names:
        return True
    words = {"water": r"tip4p|tip3p|spc|water|h2o|wat\b", ethanol.ETHANOL_TEMPLATE: r"ethanol|opls|etoh",
             carbon_dioxide.CO2_TEMPLATE: r"co2|trappe"}
    present = {s.template for s in system.species}
    for name in names:
        stem = name.rsplit(".", 1)[0]
        hits = [t for t, pattern in words.items() if t in present and re.search(pattern, stem)]
        if len(hits) != 1 or hits[0] in system.files:
            continue
        system.files[hits[0]] = name
        source = {"water": system.water.citation if system.water else "",
                  ethanol.ETHANOL_TEMPLATE: system.ethanol.citation if system.ethanol else "",
                  carbon_dioxide.CO2_TEMPLATE: system.co2.citation if system.co2 else ""}[hits[0]]
        desc.note(f"molecular.file.{hits[0]}", "default", f"{name}: the {hits[0]} template the text names (not "
                  f"supplied) written by simagent from the model it cites ({source})")
    return True


def template_file_names(desc: SimulationDescription) -> list[str]:
    """The molecule files the text names that simagent writes from a cited model."""
    return list(desc.molecular.files.values()) if desc.molecular is not None else []


def _model_word(name: str) -> str:
    return {"spc/e": r"spc/?e", "tip3p": "tip3p", "tip4p/2005": r"tip4p[/-]?2005", "tip4p": "tip4p"}[name]


def _count(low: str, noun: str) -> int | None:
    """'1500 water molecules', 'water molecules (1834)', 'TIP4P/2005 water molecules (1834)'."""
    hit = re.search(r"(?<![\w/.-])(\d+) (?:rigid |flexible )?" + noun, low) or re.search(
        noun + r"\s*\((\d+)(?: molecules?)?\)", low)
    return int(hit.group(1)) if hit else None


_NA = r"(?:na\s*\+|na\^\+|sodium)(?: ions?| cations?)?"
_CL = r"(?:cl\s*-|cl\^-|chloride)(?: ions?| anions?)?"
_EACH_ION = re.compile(rf"(?<![\w.])(\d+) each of (?:the )?{_NA},? and {_CL}|(?<![\w.])(\d+) {_NA},? and (\d+) {_CL}")


def _ions(desc: SimulationDescription, low: str, n_water: int) -> list[tuple[str, int, float]]:
    """Na+ and Cl- from 'NaCl (82) ions' / '82 NaCl ion pairs' / '25 Na+ and 25 Cl- ions'. 'NaCl (N)'
    is N of each unless the stated total number of atoms says N ions in all."""
    if not re.search(r"\bnacl\b|sodium|\bna\s*\+|\bna\^", low):
        return []
    hit = re.search(r"\bnacl\b\s*\((\d+)\)|(\d+) (?:nacl|sodium chloride)\b", low)
    each_of = _EACH_ION.search(low)
    if hit is None and each_of is not None:  # 'N each of Na+ and Cl-', 'N Na+ and N Cl- ions': N of each, stated
        n_na, n_cl = int(each_of.group(1) or each_of.group(2)), int(each_of.group(1) or each_of.group(3))
        if n_na != n_cl:
            desc.missing.append(f"a neutral salt ({n_na} Na+ and {n_cl} Cl- are stated)")
            return []
        desc.note("molecular.ions", "rules", each_of.group(0))
        desc.note("molecular.ion_charges", "default", "Na +1, Cl -1: the formal charges the ion names state")
        return [("Na", n_na, 1.0), ("Cl", n_cl, -1.0)]
    if hit is None:
        desc.missing.append("the number of Na+ and Cl- ions")
        return []
    n = int(hit.group(1) or hit.group(2))
    total = re.search(r"total (?:number )?of (\d+) atoms|(\d+) atoms in (?:all|total)", low)
    each, why = n, "NaCl (N): N sodium and N chloride ions"
    if total:
        atoms = int(total.group(1) or total.group(2))
        if 3 * n_water + n == atoms and n % 2 == 0:
            each, why = n // 2, f"the stated total of {atoms} atoms counts {n} ions in all"
        elif 3 * n_water + 2 * n != atoms:
            desc.missing.append(f"a consistent ion count ({n} NaCl and {n_water} waters do not make {atoms} atoms)")
            return []
        else:
            why = f"{n} of each: the stated total of {atoms} atoms"
    desc.note("molecular.ions", "rules", f"{hit.group(0)} ({why})")
    desc.note("molecular.ion_charges", "default", "Na +1, Cl -1: the formal charges the ion names state")
    return [("Na", each, 1.0), ("Cl", each, -1.0)]


def _geometry(desc: SimulationDescription, low: str, model: WaterModel) -> None:
    """The task's own O-H length, H-O-H angle and O-M distance win over the model's published ones."""
    for field, pattern in (("bond", r"o-h bond length (?:of |is |= ?)?" + NUM + r"\s*(?:angstrom|a\b)|bond length is "
                                     r"fixed at " + NUM),
                           ("angle", r"h-o-h angle (?:of |is |= ?)?" + NUM + r"|angle is fixed at " + NUM),
                           ("om", r"\(om\) of " + NUM + r"|\bo-?m distance (?:of |is |= ?)?" + NUM + r"|massless "
                                  r"site distance[^.;0-9]{0,12}" + NUM)):
        hit = re.search(pattern, low)
        if hit and (field != "om" or model.om is not None):
            value = float(next(g for g in hit.groups() if g is not None))
            setattr(model, field, value)
            desc.note(f"molecular.water.{field}", "rules", hit.group(0))


_PAIR_COEFF = re.compile(r"pair_coeff (\d+) (\d+) " + NUM + " " + NUM)
_MORE_COEFFS = re.compile(r"\s*[;,]\s*(?:pair_coeff )?(\d+) (\d+) " + NUM + " " + NUM)


def stated_pair_coeffs(low: str) -> list[tuple[int, int, tuple[float, float], str]]:
    """(i, j, (epsilon, sigma), words) of every 'pair_coeff i j eps sigma' the text states, and of the items of
    a list that one opens ('pair_coeff 1 1 0.1 2.3; 2 2 0.2 3.1; ...')."""
    out = []
    for hit in _PAIR_COEFF.finditer(low):
        items, end = [hit], hit.end()
        while more := _MORE_COEFFS.match(low, end):
            items.append(more)
            end = more.end()
        out += [(int(m.group(1)), int(m.group(2)), (float(m.group(3)), float(m.group(4))), m.group(0).strip(" ;,"))
                for m in items]
    return list({(i, j): (i, j, lj, w) for i, j, lj, w in out}.values())


def read_pair_coeffs(desc: SimulationDescription, low: str, kinds: list[AtomKind], report_missing: bool = True) -> None:
    """'pair_coeff 3 3 0.10755 2.31' (epsilon, sigma per type) as stated; the water oxygen's from the
    model otherwise, 'LJ ... only between oxygen atoms with epsilon = X and sigma = Y' as stated."""
    for i, j, (epsilon, sigma), words in stated_pair_coeffs(low):
        if i == j and i <= len(kinds):
            kind = next(k for k in kinds if k.type == i)
            kind.epsilon, kind.sigma = epsilon, sigma
            desc.note(f"molecular.lj.{i}", "rules", words)
    oxygen = re.search(r"(?:lj|lennard-jones)[^.;]{0,60}oxygen[^.;]{0,40}?epsilon\s*=?\s*" + NUM +
                       r"[^.;]{0,20}?sigma\s*=?\s*" + NUM, low)
    if oxygen:
        water_o = next((k for k in kinds if k.site is None and k.element == "O"), kinds[0])
        water_o.epsilon, water_o.sigma = float(oxygen.group(1)), float(oxygen.group(2))
        desc.note(f"molecular.lj.{water_o.type}", "rules", oxygen.group(0))
    for k in kinds:
        if report_missing and (k.epsilon is None or k.sigma is None):
            desc.missing.append(f"the LJ epsilon and sigma of {k.element} (type {k.type})")


def read_interactions(desc: SimulationDescription, low: str, system: MolecularSystem) -> bool:
    """The cutoff, the k-space solver and its accuracy, mixing, tail and shift the text states (False: one is
    missing, listed)."""
    cut = re.search(r"\b" + NUM + r"\s*(angstrom|a|nm)?\s*cut-?off|\bcut(?:-?off| off)? (?:distance |radius )?"
                    r"(?:of |= ?|at |is )?" + NUM + r"\s*(angstrom|a\b|nm)?", low)
    if cut is None:
        desc.missing.append("the pair cutoff")
        return False
    value = float(cut.group(1) or cut.group(3))
    system.cutoff = value * (10.0 if (cut.group(2) or cut.group(4)) == "nm" else 1.0)
    desc.note("molecular.cutoff", "rules", cut.group(0))
    if system.water is not None and system.water.om is not None and not system.explicit_m:
        if not re.search(r"tip4p|pppm/tip4p|specialized for tip4p", low):
            desc.missing.append("the k-space solver of the four-site water")
            return False
        system.kspace = "pppm/tip4p"
    elif not re.search(r"\bpppm\b|particle[- ]particle[ -]+particle[- ]mesh|long-range|\bewald|kspace", low):
        if not re.search(r"coulomb", low):
            desc.missing.append("how the charges interact (cut-off Coulomb or a long-range solver)")
            return False
        system.kspace = "none"  # 'LJ plus Coulomb with a cutoff of 8 A' and no long-range solver named
        desc.note("molecular.kspace", "rules", "none: Coulomb cut off at the pair cutoff (no long-range solver named)")
        return _mixing(desc, low, system)
    acc = re.search(r"(?:pppm|electrostatic|particle-mesh)[^.;]{0,80}?(?:tolerance|accuracy|precision)(?: "
                    r"threshold)?(?: of| =)?\s*" + NUM, low)
    if acc:
        system.accuracy = float(acc.group(1))
        desc.note("molecular.kspace_accuracy", "rules", acc.group(0))
    else:
        system.accuracy = DEFAULT_KSPACE_ACCURACY
        desc.note("molecular.kspace_accuracy", "default", f"{DEFAULT_KSPACE_ACCURACY:g}: none stated; the relative "
                  "accuracy of LAMMPS examples/peptide")
    desc.note("molecular.kspace", "rules" if "pppm" in low else "default", system.kspace)
    return _mixing(desc, low, system)


def _mixing(desc: SimulationDescription, low: str, system: MolecularSystem) -> bool:
    mix = re.search(r"lorentz-berthelot|arithmetic", low)
    if mix:
        system.mixing = "arithmetic"
        desc.note("molecular.mixing", "rules", mix.group(0))
    else:
        desc.note("molecular.mixing", "default", "geometric: LAMMPS's pair_modify default (none stated)")
    tail = re.search(r"tail correction", low)
    system.tail = bool(tail)
    if tail:
        desc.note("molecular.tail", "rules", tail.group(0))
    shift = re.search(r"\bshifted (?:lj |lennard-jones )?(?:pair )?potentials?\b|"
                      r"\b(?:potentials?|lj|energ\w+) (?:are |is )?shifted\b|\bshift yes\b", low)
    system.shift = bool(shift)
    if shift:
        desc.note("molecular.shift", "rules", shift.group(0))
    return True


def _bonded(desc: SimulationDescription, low: str, system: MolecularSystem) -> None:
    if system.ethanol is not None:  # its OPLS-AA terms are harmonic; the water's share the styles
        system.bond_style = system.angle_style = "harmonic"
        system.bond_k, system.angle_k = DEFAULT_BOND_K, DEFAULT_ANGLE_K
        desc.note("molecular.bonded", "rules", "harmonic bonds and angles, OPLS torsions (dihedral_style opls): the "
                  "OPLS-AA ethanol's own forms")
        desc.note("molecular.bond_k", "default", f"the water's bonds and angle harmonic with {DEFAULT_BOND_K:g} "
                  f"kcal/mol/A^2 and {DEFAULT_ANGLE_K:g} kcal/mol/rad^2 at the model's geometry: "
                  + ("the rigid bodies hold them there" if system.explicit_m else "SHAKE holds them there") + ", "
                  "so they carry no energy (the styles are shared with the ethanol's)")
    elif re.search(r"bond_style (?:and angle_style )?(?:is )?harmonic|harmonic bond", low):
        system.bond_style = system.angle_style = "harmonic"
        system.bond_k, system.angle_k = DEFAULT_BOND_K, DEFAULT_ANGLE_K
        desc.note("molecular.bonded", "rules", "harmonic bond and angle styles")
        desc.note("molecular.bond_k", "default", f"{DEFAULT_BOND_K:g} kcal/mol/A^2 and {DEFAULT_ANGLE_K:g} "
                  "kcal/mol/rad^2: none stated (TIP3P in CHARMM); SHAKE holds the geometry at equilibrium")
    else:
        desc.note("molecular.bonded", "default" if not re.search(r"bond_style zero", low) else "rules",
                  "bond_style zero, angle_style zero: a rigid model's bonds carry no energy")
    shake = re.search(r"\b(shake|rattle)\b", low)
    if shake is None and system.explicit_m:  # the rigid bodies hold the water (molecular.water_sites)
        if system.ethanol is not None:
            desc.note("molecular.flexible_ethanol", "default", "the ethanol fully flexible, the water rigid: no "
                      "constraint is stated; OPLS-AA's own bonds, angles and torsions move, and TIP4P/2005 is a rigid "
                      "model")
        return
    if shake is None:
        desc.missing.append("how the water geometry is kept (SHAKE/RATTLE or flexible bonds)")
        return
    tol = re.search(r"(?:shake|rattle)[^.;]{0,160}?tolerance (?:of |= ?|is |at )?" + NUM, low)
    its = re.search(r"(?:shake|rattle)(?:[^.;]|\.(?=\d)){0,200}?(?:(?:maximum of|max(?:imum)? iterations? of|up to|at "
                    r"most) (\d+)(?: iterations?)?|(\d+) (?:maximum )?iterations)", low)  # '1.0e-4' inside the sentence
    tolerance = float(tol.group(1)) if tol else DEFAULT_SHAKE[0]
    iterations = int(its.group(1) or its.group(2)) if its else DEFAULT_SHAKE[1]
    system.shake = Shake(tolerance=tolerance, iterations=iterations, rattle=shake.group(1) == "rattle")
    if system.ethanol is not None:
        desc.note("molecular.shake_ethanol", "default", "SHAKE holds the water rigid and the ethanol's bonds to "
                  "hydrogen "
                  "(C-H, O-H); its C-C and C-O bonds, angles and torsions stay flexible (OPLS-AA): the text says the "
                  "molecular geometries are constrained, and SHAKE can hold only clusters around one central atom")
    desc.note("molecular.shake", "rules", shake.group(0) + (f"; {tol.group(0)}" if tol else "")
              + (f"; {its.group(0)}" if its else ""))
    if not (tol and its):
        desc.note("molecular.shake_tolerance", "default", f"{tolerance:g} tolerance, {iterations} iterations: "
                  "none stated; the tolerance of LAMMPS examples/peptide, twice its 10 iterations")


def read_box(desc: SimulationDescription, low: str) -> None:
    """'cubic box of dimension L' / 'box ... from -a to a' / 'a 200*200*200 A^3 box', in angstrom."""
    from simagent.described.model import Box

    side = re.search(r"cubic[^.;]{0,40}?box (?:of|with)(?: an?)? (?:dimension|side|edge)s?(?: lengths?)?(?: of| =)? "
                     + NUM, low)
    span = re.search(r"\bfrom " + NUM + r"\s*(?:angstrom|a\b)?\s*to " + NUM, low)
    dims = re.search(NUM + r"\s*[*x]\s*" + NUM + r"\s*[*x]\s*" + NUM + r"\s*(?:angstrom|a)\^?3", low)
    cells = re.search(NUM + r"\s*[*x]\s*" + NUM + r"\s*[*x]\s*" + NUM + r"\s*lattice units?", low)
    spacing = lattice_spacing(low)
    if cells and spacing:  # 'a box of 6*6*14 lattice units (a simple cubic lattice with a 3.4 A spacing)'
        lo, hi = (0.0,) * 3, tuple(float(cells.group(k)) * spacing[0] for k in (1, 2, 3))
        desc.box = Box(lo=lo, hi=hi, lattice_units=False)
        desc.note("box", "rules", f"{cells.group(0)} x {spacing[1]} (angstrom)")
        return
    if side:
        lo, hi = (0.0,) * 3, (float(side.group(1)),) * 3
        words = side.group(0)
    elif span and re.search(r"(?:\bbox\b|cubic)(?:(?!\bregion\b|\bblock\b)[^.]){0,80}from", low):  # not a region's
        lo, hi = (float(span.group(1)),) * 3, (float(span.group(2)),) * 3
        words = span.group(0)
    elif dims:
        lo, hi = (0.0,) * 3, tuple(float(dims.group(k)) for k in (1, 2, 3))
        words = dims.group(0)
    elif axes := box_axes(low):
        lo, hi, words = axes
    else:
        desc.missing.append("box size")
        return
    desc.box = Box(lo=lo, hi=hi, lattice_units=False)
    desc.note("box", "rules", words + " (angstrom)")


def box_axes(low: str) -> tuple[tuple[float, float, float], tuple[float, float, float], str] | None:
    """A box stated per axis in angstrom, in a sentence about the box: '-10 to 10 A in x, -12 to 12 A in y and
    -18 to 18 A in z', 'x from 0 to 30 A, y from 0 to 30 A, z from 0 to 60 A' (None: not every axis stated)."""
    for sentence in re.split(r"(?<=[.;])\s+", low):
        if not re.search(r"\b(?:simulation )?(?:box|cell|domain)\b", sentence):
            continue
        lo, hi, words = [0.0] * 3, [0.0] * 3, []
        for k, axis in enumerate("xyz"):
            unit = r"\s*(?:angstrom|a\b)?"
            span_first = NUM + unit + r"\s*to\s*" + NUM + unit + r"\s*(?:in|along) (?:the )?" + axis + r"\b"
            axis_first = (r"\b" + axis + r"(?:[- ](?:direction|axis))?\s*(?:from|=|:)\s*" + NUM + unit + r"\s*to\s*"
                          + NUM)
            hit = re.search(span_first + "|" + axis_first, sentence)
            if hit is None:
                break
            values = [float(v) for v in hit.groups() if v is not None]
            lo[k], hi[k] = values
            words.append(hit.group(0))
        else:
            return (lo[0], lo[1], lo[2]), (hi[0], hi[1], hi[2]), "; ".join(words)
    return None


def lattice_spacing(low: str) -> tuple[float, str] | None:
    """The spacing of a simple-cubic lattice stated to measure the box in (angstrom), with its words."""
    hit = re.search(r"\b(?:simple[- ]cubic|sc) lattice (?:with|of) (?:an? )?(?:spacing|lattice constant) (?:of )?" + NUM
                    + r"\s*(?:angstrom|a)\b|\b(?:simple[- ]cubic|sc) lattice (?:with|of) (?:an? )?" + NUM
                    + r"\s*(?:angstrom|a)\s*(?:spacing|lattice constant)", low)
    return (float(hit.group(1) or hit.group(2)), hit.group(0)) if hit else None


_SLAB_UNIT = r"\s*(lattice units?|angstrom|a\b|nm)"
_SLAB = re.compile(r"\b(?:central|middle|centred|centered)\s+slab(?: region)?[^.;]{0,40}?\b(?:along|in) the ([xyz])"
                   r"(?:[- ](?:direction|axis))?[^.;]{0,20}?(?:\b(?:spanning|of (?:width|thickness))\s*" + NUM
                   + _SLAB_UNIT + "|" + NUM + _SLAB_UNIT + r"\s*(?:thick|wide)\b)")


def read_slab(desc: SimulationDescription, low: str) -> None:
    """'the waters are put in a central slab along z spanning 6 lattice units, vacuum on either side': the
    waters fill that span only, centred in the box (read after the layout, whose refusal it lifts when
    this is the only sentence about regions)."""
    from simagent.described.group_reading import _LAYOUT_WORDS, _REQUEST, LAYOUT_UNSUPPORTED

    system = desc.molecular
    if system is None or desc.box is None or not (hit := _SLAB.search(low)):
        return
    axis, width, unit = hit.group(1), float(hit.group(2) or hit.group(4)), hit.group(3) or hit.group(5)
    if unit.startswith("lattice"):
        spacing = lattice_spacing(low)
        if spacing is None:
            desc.missing.append("the lattice spacing the slab width is given in")
            return
        width *= spacing[0]
    elif unit == "nm":
        width *= 10.0
    k = "xyz".index(axis)
    centre = (desc.box.lo[k] + desc.box.hi[k]) / 2
    if width >= desc.box.hi[k] - desc.box.lo[k]:
        desc.missing.append("a slab narrower than the box")
        return
    system.slab = (axis, centre - width / 2, centre + width / 2)  # type: ignore[assignment]
    desc.note("molecular.slab", "rules", hit.group(0) + f": {axis} from {centre - width / 2:g} to "
              f"{centre + width / 2:g} A, centred in the box")
    sentences = re.split(r"(?<=[.;])\s+", low)
    others = [s for n, s in enumerate(sentences) if _LAYOUT_WORDS.search(s) and not _SLAB.search(s)
              and not (n == 0 and _REQUEST.search(s))]
    if not others and LAYOUT_UNSUPPORTED in desc.unsupported:
        desc.unsupported.remove(LAYOUT_UNSUPPORTED)


def grid(lo: tuple[float, float, float], hi: tuple[float, float, float], count: int
         ) -> tuple[float, int, list[tuple[float, float]]]:
    """The simple-cubic grid for `count` molecules: the largest spacing a (to 0.1 %) whose whole cells
    [i a, (i + 1) a] inside the box number at least `count`; the number of cells; and per axis the
    span of those cells. The sites are the cells' centres (LAMMPS `lattice sc a origin 0.5 0.5 0.5`
    in a region of that span), so neighbouring sites, also across the periodic boundary, are at
    least a apart."""
    def spans(a: float) -> list[tuple[float, float]]:
        return [(math.ceil(low / a - 1e-9) * a, math.floor(h / a + 1e-9) * a) for low, h in zip(lo, hi, strict=True)]

    def cells(a: float) -> int:
        return math.prod(max(0, round((h - low) / a)) for low, h in spans(a))

    a = (math.prod(h - low for low, h in zip(lo, hi, strict=True)) / count) ** (1 / 3)
    while cells(a) < count:
        a *= 0.999
    return a, cells(a), spans(a)


def m_site(model: WaterModel) -> tuple[float, float, float]:
    """The 4-site model's M site in template_coordinates' frame: om from O along the H-O-H bisector."""
    assert model.om is not None
    return (0.0, model.om, 0.0)


def template_coordinates(model: WaterModel) -> list[tuple[float, float, float]]:
    """O at the origin, the two H in the xy plane at the model's bond length and angle."""
    half = math.radians(model.angle) / 2
    x, y = model.bond * math.sin(half), model.bond * math.cos(half)
    return [(0.0, 0.0, 0.0), (x, y, 0.0), (-x, y, 0.0)]
