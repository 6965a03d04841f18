"""A single bonded linear chain in a described simulation (the polymer part of simagent.described.model).

A text such as "a united-atom chain of 100 beads with harmonic bonds (K 350, r0 1.53 A) and angles
(K 60, theta0 109.5 deg), multi-harmonic dihedrals (A1..A5) and LJ between non-bonded beads" states
a molecule: N beads of one type joined in a line, with 1-2 bonds, 1-3 angles and 1-4 dihedrals. This
module holds it (`BondedChain`) and reads it (`read_chain`). The renderer writes the chain as a
LAMMPS molecule template (tools.lammps.described_molecular, the same template writer as water).

What such a text usually leaves out gets a documented default, listed in report.md:
- the start conformation: the planar all-trans zig-zag with the stated bond length and angle along
  the box's longest edge, centred in the box (`zigzag`); all-trans is the dihedral's minimum
  (trans, phi = 180 deg) for the usual alkane coefficients, so the start has no stretched term;
- the bead mass of a united-atom chain: a CH2 group (12.011 + 2 x 1.008 = 14.027 g/mol);
- which non-bonded pairs the chain excludes: LAMMPS's special_bonds default (1-2, 1-3 and 1-4 pairs
  carry no LJ), stated in the input;
- in a box with a fixed (f) boundary, the chain's centre of mass is held at the box centre by a rigid
  translation every step (fix recenter): a thermostat that does not conserve momentum (Langevin) or
  a start with net momentum lets the whole chain drift out of a fixed box, where LAMMPS loses its
  atoms (a literal 17_polymer run lost the chain at step 1,246,838 of 1,500,000). A translation
  changes no internal coordinate, energy or force of an isolated chain (f faces exert none), so
  the radius of gyration and the energies are those of the literal run.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from simagent.backends.expert.protocol_text import NUM

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

CH2_MASS = 12.011 + 2 * 1.008  # standard atomic weights: a united-atom CH2 group, g/mol
CHAIN_TEMPLATE = "chain"  # the molecule template's id and file stem (chain.mol)
SPECIAL_BONDS = "lj 0.0 0.0 0.0: LAMMPS's special_bonds default (1-2, 1-3 and 1-4 pairs carry no LJ), none stated"
RECENTER = ("fix recenter INIT INIT INIT: the chain's centre of mass held at the box centre by a rigid translation "
            "each step, so that it cannot drift out of the fixed (f) box and be lost; a translation changes no "
            "internal coordinate, energy or force of the isolated chain (not stated)")
CONFORMATION = ("planar all-trans zig-zag with the stated bond length and angle, along the box's longest edge, "
                "centred: the text states no start conformation")
# names the chain replaces in the generic reader's refusals and gaps
REPLACED_UNSUPPORTED = ("molecular topology (bonds, angles, constraints)",)
REPLACED_MISSING = ("initial configuration (lattice)", "atom masses", "box size",
                    "lattice scale (density or lattice constant)")


class HarmonicBond(BaseModel):
    k: float = Field(gt=0, description="energy/distance^2 (LAMMPS bond_style harmonic K, no 1/2)")
    r0: float = Field(gt=0)


class HarmonicAngle(BaseModel):
    k: float = Field(gt=0, description="energy/rad^2 (LAMMPS angle_style harmonic K, no 1/2)")
    theta0: float = Field(gt=0, lt=180, description="degrees")


class MultiHarmonic(BaseModel):
    """dihedral_style multi/harmonic: E = sum_n A_n cos^(n-1)(phi), n = 1..5."""

    a: tuple[float, float, float, float, float]


class BondedChain(BaseModel):
    """One linear chain of `beads` identical beads (type 1) in a non-periodic or periodic box."""

    beads: int = Field(ge=4, description="at least four beads: one dihedral")
    mass: float = Field(gt=0)
    bond: HarmonicBond
    angle: HarmonicAngle
    dihedral: MultiHarmonic | None = None

    @property
    def n_bonds(self) -> int:
        return self.beads - 1

    @property
    def n_angles(self) -> int:
        return self.beads - 2

    @property
    def n_dihedrals(self) -> int:
        return self.beads - 3 if self.dihedral is not None else 0


def zigzag(chain: BondedChain) -> list[tuple[float, float, float]]:
    """The planar all-trans conformation: bead i at (i b sin(theta0/2), (i mod 2) b cos(theta0/2), 0),
    centred on the origin; every bond is r0 and every angle theta0 exactly."""
    half = math.radians(chain.angle.theta0) / 2
    dx, dy = chain.bond.r0 * math.sin(half), chain.bond.r0 * math.cos(half)
    points = [(i * dx, (i % 2) * dy, 0.0) for i in range(chain.beads)]
    cx, cy = sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points)
    return [(x - cx, y - cy, z) for x, y, z in points]


def chain_extent(chain: BondedChain) -> float:
    """The all-trans chain's length along its axis."""
    return (chain.beads - 1) * chain.bond.r0 * math.sin(math.radians(chain.angle.theta0) / 2)


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------

_CHAIN = re.compile(r"(?:polymer|chain|macromolecule)[^.;]{0,80}?\b(\d+) (?:atoms|beads|monomers|units|sites|"
                    r"united[- ]atoms)\b|\b(\d+)[- ](?:atom|bead|monomer|site|unit)s? (?:long )?(?:polymer|chain)")
_BOND_K = re.compile(r"bond (?:coefficient|constant|stiffness|force constant|spring constant|strength)s?"
                     r"(?: k(?:_?b)?)?\s*(?::|=|of|is)?\s*" + NUM + r"|\bk_?b\s*=\s*" + NUM)
_BOND_R0 = re.compile(r"(?:equilibrium|rest|reference|natural) (?:bond )?(?:length|distance)s?\s*(?::|=|of|is)?\s*"
                      + NUM + r"|\b(?:r_?0|b_?0|l_?0)\s*=\s*" + NUM)
_ANGLE_K = re.compile(r"angle (?:coefficient|constant|stiffness|force constant|spring constant|strength)s?"
                      r"(?: k(?:_?theta)?)?\s*(?::|=|of|is)?\s*" + NUM + r"|\bk_?(?:theta|θ)\s*=\s*" + NUM)
_ANGLE_0 = re.compile(r"(?:equilibrium|rest|reference|natural) (?:bond )?angles?\s*(?::|=|of|is)?\s*" + NUM
                      + r"|\b(?:theta|θ)_?0\s*=\s*" + NUM)
_DIHEDRAL = re.compile(r"multi[- ]?harmonic[^.;]{0,80}?(?:coefficients?|parameters?|a_?1\s*(?:\.\.\.|-|to)\s*a_?5)"
                       r"[^0-9-]{0,20}(" + NUM[1:-1] + r"(?:\s*,\s*(?:and\s+)?|\s+and\s+)" + r"(?:" + NUM[1:-1]
                       + r"(?:\s*,\s*(?:and\s+)?|\s+and\s+)){3}" + NUM[1:-1] + ")")


def _first(pattern: re.Pattern[str], low: str) -> tuple[float, str] | None:
    hit = pattern.search(low)
    if hit is None:
        return None
    return float(next(g for g in hit.groups() if g is not None)), hit.group(0)


def read_chain(desc: SimulationDescription, low: str) -> None:
    """A single bonded chain: its bead count, harmonic bond and angle, multi-harmonic dihedral (if
    named) and the box; the gaps filled with the module's listed defaults. A chain whose bonded
    terms are named but not all stated is listed missing by name, never guessed."""
    from simagent.described.model import Box

    hit = _CHAIN.search(low)
    if hit is None or desc.molecular is not None or not re.search(r"\bbonds?\b", low):
        return
    beads = int(next(g for g in hit.groups() if g))
    if re.search(r"\b(?:chains|polymers|molecules)\b", low[:hit.start()] + low[hit.end():hit.end() + 40]) and \
            re.search(r"\b(?:\d+|several|many|two|three) (?:polymer )?(?:chains|polymers|molecules)\b", low):
        return  # several chains: a melt, not this single-chain model
    stated = {"bond K": _first(_BOND_K, low), "bond length r0": _first(_BOND_R0, low),
              "angle K": _first(_ANGLE_K, low), "equilibrium angle": _first(_ANGLE_0, low)}
    absent = [name for name, value in stated.items() if value is None]
    if absent:
        desc.missing += [f"the chain's {name}" for name in absent]
        return
    dihedral = None
    if re.search(r"dihedral|torsion", low):
        found = _DIHEDRAL.search(low)
        if found is None:
            desc.missing.append("the chain's dihedral coefficients (multi-harmonic A1..A5)")
            return
        dihedral = MultiHarmonic(a=tuple(float(x) for x in re.findall(NUM[1:-1], found.group(1))))  # type: ignore[arg-type]
        desc.note("chain.dihedral", "rules", found.group(0))
    if re.search(r"improper", low) and not re.search(r"impropers? (?:are |is )?(?:neglected|ignored|omitted|not)", low):
        desc.unsupported.append("improper dihedrals")
        return
    mass = _bead_mass(desc, low)
    if mass is None:
        return
    (k_b, w1), (r0, w2), (k_a, w3), (theta0, w4) = (stated[n] for n in stated)  # type: ignore[misc]
    desc.chain = BondedChain(beads=beads, mass=mass, bond=HarmonicBond(k=k_b, r0=r0),
                             angle=HarmonicAngle(k=k_a, theta0=theta0), dihedral=dihedral)
    desc.note("chain", "rules", hit.group(0))
    desc.note("chain.bond", "rules", f"harmonic: {w1}; {w2}")
    desc.note("chain.angle", "rules", f"harmonic: {w3}; {w4}")
    desc.note("chain.conformation", "default", CONFORMATION)
    desc.note("chain.special_bonds", "default", SPECIAL_BONDS)
    desc.atom_style = "molecular"
    desc.note("atom_style", "default", "molecular: bonds, angles and dihedrals without charges (a bonded chain)")
    desc.masses = {1: mass}
    desc.origin["masses"] = desc.origin["chain.mass"]
    desc.unsupported = [u for u in desc.unsupported if u not in REPLACED_UNSUPPORTED]
    desc.missing = [m for m in desc.missing if m not in REPLACED_MISSING]
    dims = re.search(NUM + r"\s*[*x]\s*" + NUM + r"\s*[*x]\s*" + NUM, low)
    if dims is None:
        desc.missing.append("box size")
        return
    edges = [float(dims.group(k)) for k in (1, 2, 3)]
    desc.box = Box(lo=tuple(-e / 2 for e in edges), hi=tuple(e / 2 for e in edges), lattice_units=False)  # type: ignore[arg-type]
    desc.note("box", "rules", dims.group(0) + " (centred on the origin: the text states edges only)")
    if chain_extent(desc.chain) >= max(edges):
        desc.missing.append("a start conformation that fits the box (the all-trans chain is longer than its edges)")


def note_recenter(desc: SimulationDescription) -> None:
    """After the boundaries are read: a chain in a box with a fixed face is recentred (RECENTER)."""
    if desc.chain is not None and "f" in desc.boundary:
        desc.note("chain.recenter", "default", RECENTER)


def _bead_mass(desc: SimulationDescription, low: str) -> float | None:
    stated = re.search(r"(?:bead|monomer|atom|site)s? (?:mass|masses|weight)\s*(?::|=|of|is)?\s*" + NUM
                       + r"|\bmass (?:of )?(?:each |every )?(?:bead|monomer|atom|site)?\s*(?::|=|of|is)?\s*" + NUM, low)
    if stated:
        value = float(next(g for g in stated.groups() if g))
        desc.note("chain.mass", "rules", stated.group(0))
        return value
    if re.search(r"united[- ]atom", low) and desc.units == "real":
        desc.note("chain.mass", "default", f"{CH2_MASS:.3f}: the united-atom bead's mass is not stated; a CH2 group "
                  "(the bead of united-atom alkane chains); equilibrium averages (Rg) do not depend on it")
        return CH2_MASS
    if desc.units == "lj":
        desc.note("chain.mass", "default", "1: in LJ units the bead mass is the unit of mass")
        return 1.0
    desc.missing.append("the chain's bead mass")
    return None
