"""Ethanol in a described molecular liquid: the OPLS-AA all-atom model and how a text names it.

Source: W. L. Jorgensen, D. S. Maxwell, J. Tirado-Rives, J. Am. Chem. Soc. 118, 11225 (1996) (OPLS-AA:
the atom types, charges and Lennard-Jones parameters of alcohols, the torsions fitted for them; the bond
stretching and angle bending constants the paper takes over from AMBER). The numbers are the ones
every OPLS-AA distribution carries for ethanol's five atom types (GROMACS's oplsaa.ff lists them in
kJ/mol and nm; tests/test_described_ethanol.py checks these against it when it is installed):

- CT (opls_135, the methyl carbon: q -0.180; opls_157, the carbon bearing the hydroxyl: q +0.145),
  epsilon 0.066 kcal/mol, sigma 3.50 A; HC (opls_140): q +0.060, 0.030 kcal/mol, 2.50 A;
  OH (opls_154): q -0.683, 0.170 kcal/mol, 3.12 A; HO (opls_155): q +0.418, no LJ site.
- Bonds K (r - r0)^2 (kcal/mol/A^2, A): CT-CT 268/1.529, CT-HC 340/1.090, CT-OH 320/1.410, OH-HO 553/0.945.
- Angles K (theta - theta0)^2 (kcal/mol/rad^2, degrees): HC-CT-HC 33.0/107.8, CT-CT-HC 37.5/110.7,
  CT-CT-OH 50.0/109.5, HC-CT-OH 35.0/109.5, CT-OH-HO 55.0/108.5.
- Torsions in the OPLS Fourier form (LAMMPS dihedral_style opls, K1..K4 in kcal/mol):
  HC-CT-CT-HC 0/0/0.300/0, HC-CT-CT-OH 0/0/0.468/0, HC-CT-OH-HO 0/0/0.450/0, CT-CT-OH-HO -0.356/-0.174/0.492/0.

The molecule has six sites (one LAMMPS atom type each, as `SITES` lists them): the methyl carbon and
its three hydrogens, the CH2 carbon and its two hydrogens, the hydroxyl oxygen and its hydrogen. The
two carbons share the CT parameters and the two kinds of H(C) the HC ones: which LAMMPS type number
each of a pair gets changes no interaction (the charges belong to the template's atoms, the bonded
terms to their own types). OPLS-AA scales the 1-4 pairs by 0.5 (LJ and Coulomb); a factor the text
states wins (`one_four`).
"""

from __future__ import annotations

import math
import re
from itertools import combinations

from pydantic import BaseModel, Field

from simagent.backends.expert.protocol_text import NUM

ETHANOL_TEMPLATE = "ethanol"
CITATION = "Jorgensen, Maxwell, Tirado-Rives, J. Am. Chem. Soc. 118, 11225 (1996)"
OPLS_ONE_FOUR = 0.5  # OPLS-AA's own 1-4 scaling of LJ and Coulomb

# class -> (element, mass, epsilon kcal/mol, sigma A)
CLASSES: dict[str, tuple[str, float, float, float]] = {
    "CT": ("C", 12.011, 0.066, 3.50), "HC": ("H", 1.008, 0.030, 2.50),
    "OH": ("O", 15.9994, 0.170, 3.12), "HO": ("H", 1.008, 0.0, 0.0)}
# site label -> (class, charge)
SITES: dict[str, tuple[str, float]] = {
    "C_ch3": ("CT", -0.180), "H_ch3": ("HC", 0.060), "C_ch2": ("CT", 0.145), "H_ch2": ("HC", 0.060),
    "O_oh": ("OH", -0.683), "H_oh": ("HO", 0.418)}
BONDS: dict[tuple[str, str], tuple[float, float]] = {
    ("CT", "CT"): (268.0, 1.529), ("CT", "HC"): (340.0, 1.090), ("CT", "OH"): (320.0, 1.410),
    ("HO", "OH"): (553.0, 0.945)}
ANGLES: dict[tuple[str, str, str], tuple[float, float]] = {
    ("HC", "CT", "HC"): (33.0, 107.8), ("CT", "CT", "HC"): (37.5, 110.7), ("CT", "CT", "OH"): (50.0, 109.5),
    ("HC", "CT", "OH"): (35.0, 109.5), ("CT", "OH", "HO"): (55.0, 108.5)}
DIHEDRALS: dict[tuple[str, str, str, str], tuple[float, float, float, float]] = {
    ("HC", "CT", "CT", "HC"): (0.0, 0.0, 0.300, 0.0), ("HC", "CT", "CT", "OH"): (0.0, 0.0, 0.468, 0.0),
    ("HC", "CT", "OH", "HO"): (0.0, 0.0, 0.450, 0.0), ("CT", "CT", "OH", "HO"): (-0.356, -0.174, 0.492, 0.0)}

# the nine atoms: site of each, and the bonds (1-based atom indices)
ATOMS = ["C_ch3", "H_ch3", "H_ch3", "H_ch3", "C_ch2", "H_ch2", "H_ch2", "O_oh", "H_oh"]
BOND_LIST = [(1, 2), (1, 3), (1, 4), (1, 5), (5, 6), (5, 7), (5, 8), (8, 9)]


def atom_class(index: int) -> str:
    return SITES[ATOMS[index - 1]][0]


def _key(classes: tuple[str, ...]) -> tuple[str, ...]:
    """A bonded term's class tuple in the tables' order (a term read either way is the same term)."""
    return min(classes, tuple(reversed(classes)))


def _table_key(table: dict, classes: tuple[str, ...]) -> tuple[str, ...]:
    for key in (classes, tuple(reversed(classes))):
        if key in table:
            return key
    raise KeyError(f"OPLS-AA has no term {'-'.join(classes)} in this model")


def angles() -> list[tuple[int, int, int]]:
    """Every i-j-k with j bonded to both."""
    out = []
    for j in range(1, len(ATOMS) + 1):
        partners = sorted({a if b == j else b for a, b in BOND_LIST if j in (a, b)})
        out += [(i, j, k) for i, k in combinations(partners, 2)]
    return out


def dihedrals() -> list[tuple[int, int, int, int]]:
    """Every i-j-k-l around each bond j-k."""
    def partners(atom: int) -> list[int]:
        return sorted({a if b == atom else b for a, b in BOND_LIST if atom in (a, b)})
    out = []
    for j, k in BOND_LIST:
        out += [(i, j, k, m) for i in partners(j) if i != k for m in partners(k) if m != j]
    return out


def term_types() -> tuple[list[tuple[str, str]], list[tuple[str, str, str]], list[tuple[str, str, str, str]]]:
    """The distinct bond, angle and dihedral class keys of the molecule, in first-seen order (their type
    order after the water's)."""
    bonds = list(dict.fromkeys(_table_key(BONDS, (atom_class(a), atom_class(b))) for a, b in BOND_LIST))
    angs = list(dict.fromkeys(_table_key(ANGLES, tuple(atom_class(x) for x in t)) for t in angles()))
    dihs = list(dict.fromkeys(_table_key(DIHEDRALS, tuple(atom_class(x) for x in t)) for t in dihedrals()))
    return bonds, angs, dihs  # type: ignore[return-value]


def bond_key(a: int, b: int) -> tuple[str, str]:
    return _table_key(BONDS, (atom_class(a), atom_class(b)))  # type: ignore[return-value]


def angle_key(term: tuple[int, int, int]) -> tuple[str, str, str]:
    return _table_key(ANGLES, tuple(atom_class(x) for x in term))  # type: ignore[return-value]


def dihedral_key(term: tuple[int, int, int, int]) -> tuple[str, str, str, str]:
    return _table_key(DIHEDRALS, tuple(atom_class(x) for x in term))  # type: ignore[return-value]


def _place(a: list[float], b: list[float], c: list[float], bond: float, angle: float, torsion: float) -> list[float]:
    """The atom d bonded to c at `bond`, angle b-c-d `angle`, dihedral a-b-c-d `torsion` (degrees)."""
    def sub(u, v):
        return [u[i] - v[i] for i in range(3)]

    def cross(u, v):
        return [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]

    def unit(u):
        n = math.sqrt(sum(x * x for x in u))
        return [x / n for x in u]

    bc = unit(sub(c, b))
    n = unit(cross(sub(b, a), bc))
    m = cross(n, bc)
    th, ph = math.radians(angle), math.radians(torsion)
    d2 = [-bond * math.cos(th), bond * math.sin(th) * math.cos(ph), bond * math.sin(th) * math.sin(ph)]
    return [c[i] + d2[0] * bc[i] + d2[1] * m[i] + d2[2] * n[i] for i in range(3)]


def coordinates() -> list[tuple[float, float, float]]:
    """A staggered, trans (C-C-O-H 180 degrees) conformation at the model's bond lengths, its C-C-X angles at
    equilibrium and the others near it (the start of a flexible molecule)."""
    r = {k: v[1] for k, v in BONDS.items()}
    th = {k: v[1] for k, v in ANGLES.items()}
    c1 = [0.0, 0.0, 0.0]
    c2 = [r[("CT", "CT")], 0.0, 0.0]
    ref = [0.0, 1.0, 0.0]  # a point fixing the frame
    o = _place(ref, c1, c2, r[("CT", "OH")], th[("CT", "CT", "OH")], 180.0)
    ho = _place(c1, c2, o, r[("HO", "OH")], th[("CT", "OH", "HO")], 180.0)
    h1 = [_place(o, c2, c1, r[("CT", "HC")], th[("CT", "CT", "HC")], t) for t in (180.0, 60.0, -60.0)]
    h2 = [_place(h1[0], c1, c2, r[("CT", "HC")], th[("CT", "CT", "HC")], t) for t in (60.0, -60.0)]
    atoms = [c1, *h1, c2, *h2, o, ho]
    return [(p[0], p[1], p[2]) for p in atoms]


class EthanolModel(BaseModel):
    """OPLS-AA ethanol as a described system uses it: the 1-4 scaling (the model's 0.5 unless the text states one)."""

    name: str = "OPLS-AA ethanol"
    one_four: float = Field(default=OPLS_ONE_FOUR, ge=0, le=1)
    citation: str = CITATION


_NAMED = re.compile(r"\bethanol\b|\bethyl alcohol\b|\bc2h5oh\b")
_OPLS = re.compile(r"\bopls(?:[- ]?aa|/aa)\b|optimi[sz]ed potentials? for liquid simulations[^.;]{0,20}all[- ]atom")
_OTHER = re.compile(r"\btrappe\b|\bgaff\b|\bcharmm\b|\bamber\b|\bgromos\b|\bopls[- ]?ua\b|united[- ]atom|\bcompass\b|"
                    r"\bdreiding\b")


def names_ethanol(low: str) -> bool:
    return _NAMED.search(low) is not None


def ethanol_model(low: str) -> tuple[EthanolModel | None, str]:
    """(the model, its words) when the text names ethanol in OPLS-AA; (None, 'unsupported: ...') when it names
    ethanol in another force field within the same sentence, (None, 'missing: ...') when it names none."""
    for sentence in re.split(r"(?<=[.;])\s+", low):
        if not names_ethanol(sentence):
            continue
        other = _OTHER.search(sentence)
        opls = _OPLS.search(sentence)
        if opls:
            return EthanolModel(), opls.group(0)
        if other:
            return None, f"unsupported: ethanol in a force field simagent has no template for ({other.group(0)})"
    return None, "missing: the ethanol force field (simagent has OPLS-AA's, Jorgensen et al. 1996)"


_COUNT = re.compile(r"(?<![\w/.-])(\d+) (?:(?:flexible|opls-aa|all-atom) ){0,2}ethanol(?: molecules?\b)?|"
                    r"ethanol(?: molecules?)?\s*\((\d+)\)")


def ethanol_count(low: str) -> tuple[int, str] | None:
    """'200 ethanol molecules', 'ethanol molecules (200)'."""
    hit = _COUNT.search(low)
    return (int(hit.group(1) or hit.group(2)), hit.group(0)) if hit else None


# '1-4 interactions scaled by a factor of 1.0', '1-4 pairs are not scaled', 'a 1-4 scaling of 0.5'
_ONE_FOUR = re.compile(r"\b1[-–‐]4\b[^.;]{0,60}?(?:scal\w*|weight\w*|factor)[^.;0-9]{0,25}?" + NUM
                       + r"|\b1[-–‐]4\b[^.;]{0,40}?\b(?:not|never|un)[- ]?(?:scaled|reduced|weighted)(?: down)?\b"
                       r"|\bfull (?:strength )?1[-–‐]4\b")


def one_four(low: str) -> tuple[float, str] | None:
    """The 1-4 scaling factor of LJ and Coulomb the text states (1.0 for 'not scaled', 'full 1-4')."""
    hit = _ONE_FOUR.search(low)
    if hit is None:
        return None
    value = float(hit.group(1)) if hit.group(1) else 1.0
    return (value, hit.group(0)) if 0.0 <= value <= 1.0 else None
