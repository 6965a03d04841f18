"""A single-walled carbon nanotube in a described simulation: its chirality, length and atoms.

A tube is a graphene sheet rolled along its chiral vector C = n a1 + m a2 (|a1| = |a2| = sqrt(3) d,
d the C-C bond length). Only the two achiral families are built here:
- armchair (n, n): circumference 3 n d, axial period T = sqrt(3) d, 4 n atoms per period in two rings
  (z = 0: circumference positions 3k d and (3k + 1) d; z = T/2: (3k + 1.5) d and (3k + 2.5) d);
- zigzag (n, 0): circumference sqrt(3) n d, axial period T = 3 d, 4 n atoms per period in four rings
  (z = 0 and 2 d at sqrt(3) k d; z = d/2 and 3 d/2 at sqrt(3) (k + 1/2) d).
Diameter D = |C| / pi = (sqrt(3) d / pi) sqrt(n^2 + n m + m^2).

Read here (`read_nanotube`):
- a stated chirality ('(7,7)', 'a (10,0) zigzag tube') is used as stated (a chiral (n, m) with
  0 < m < n is named as not built);
- otherwise the chirality comes from the stated diameter and length (`choose_chirality`): a tube whose
  length equals the periodic box edge along its axis is infinite through the periodic images, so a whole
  number of axial periods must fill that edge. Of the armchair and zigzag tubes whose whole number of
  periods is within LENGTH_TOLERANCE of the edge, the one with the diameter nearest the stated one (within
  DIAMETER_TOLERANCE), listed as a default with both numbers; its periods are stretched or compressed to
  the edge exactly (the strain is listed);
- d: stated ('a C-C bond length of 1.40 A'), else GRAPHENE_BOND (1.42 A, cited in
  simagent.described.sheet), listed as a default.
The tube's axis is the box's axis whose edge its length matches, through the box's centre.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from simagent.described.sheet import GRAPHENE_BOND

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

LENGTH_TOLERANCE = 0.01  # the largest axial strain that fits a whole number of periods to the box edge
DIAMETER_TOLERANCE = 0.10  # the largest relative departure from the stated diameter
NUM = r"(\d+(?:\.\d+)?)"
_UNIT = r"\s*(nm|nanomet(?:er|re)s?|angstroms?|å|a)\b"

Family = Literal["armchair", "zigzag"]
FAMILY_WORDS = {"armchair": "armchair (n,n)", "zigzag": "zigzag (n,0)"}


class Nanotube(BaseModel):
    """An armchair (n, n) or zigzag (n, 0) single-walled tube of `cells` axial periods along `axis`,
    the periods scaled to `length` (the box edge it fills), centred on `center` across the axis."""

    n: int = Field(ge=2)
    m: int = Field(ge=0)
    bond_length: float = Field(gt=0, description="C-C distance d (angstrom)")
    cells: int = Field(ge=1, description="axial periods")
    length: float = Field(gt=0, description="the tube's length along its axis (angstrom): cells x period, scaled")
    axis: Literal["x", "y", "z"] = "z"
    center: tuple[float, float] = Field(default=(0.0, 0.0), description="the axis's position across it (angstrom)")

    @property
    def family(self) -> Family:
        if self.m == self.n:
            return "armchair"
        if self.m == 0:
            return "zigzag"
        raise ValueError(f"({self.n},{self.m}) is chiral: only armchair and zigzag tubes are built")

    @property
    def diameter(self) -> float:
        return tube_diameter(self.n, self.m, self.bond_length)

    @property
    def period(self) -> float:
        """The unstrained axial period (angstrom)."""
        return tube_period(self.family, self.bond_length)

    @property
    def atoms(self) -> int:
        return 4 * self.n * self.cells

    @property
    def strain(self) -> float:
        """The axial strain that fits the cells to `length`."""
        return self.length / (self.cells * self.period) - 1.0

    def positions(self) -> list[tuple[float, float, float]]:
        """Every atom's (x, y, z), angstrom: the unrolled sheet's rings wrapped onto the cylinder."""
        d, radius = self.bond_length, self.diameter / 2.0
        if self.family == "armchair":
            rings = [(0.0, (0.0, 1.0)), (0.5 * math.sqrt(3.0) * d, (1.5, 2.5))]  # (z, circumference offsets / d)
            step = 3.0
        else:
            s = math.sqrt(3.0)
            rings = [(0.0, (0.0,)), (0.5 * d, (0.5 * s,)), (1.5 * d, (0.5 * s,)), (2.0 * d, (0.0,))]
            step = s
        scale = self.length / (self.cells * self.period)
        out = []
        for c in range(self.cells):
            for z0, offsets in rings:
                for k in range(self.n):
                    for u in offsets:
                        angle = (step * k + u) * d / radius
                        across = (self.center[0] + radius * math.cos(angle), self.center[1] + radius * math.sin(angle))
                        along = (c * self.period + z0) * scale
                        out.append(_place(self.axis, across, along))
        return out


def _place(axis: str, across: tuple[float, float], along: float) -> tuple[float, float, float]:
    a, b = across
    return {"x": (along, a, b), "y": (b, along, a), "z": (a, b, along)}[axis]


def tube_diameter(n: int, m: int, bond: float) -> float:
    return math.sqrt(3.0) * bond * math.sqrt(n * n + n * m + m * m) / math.pi


def tube_period(family: Family, bond: float) -> float:
    return math.sqrt(3.0) * bond if family == "armchair" else 3.0 * bond


class Chirality(BaseModel):
    n: int
    m: int
    cells: int
    diameter: float
    strain: float


def choose_chirality(diameter: float, length: float, bond: float = GRAPHENE_BOND,
                     families: tuple[Family, ...] = ("armchair", "zigzag")) -> Chirality | None:
    """The armchair or zigzag tube (of `families`) for a stated diameter whose whole number of axial periods
    fills `length` (a periodic box edge) within LENGTH_TOLERANCE: the nearest diameter, within
    DIAMETER_TOLERANCE; None when no such tube exists. Ties go to the smaller strain."""
    found: list[Chirality] = []
    for family in families:
        period = tube_period(family, bond)  # type: ignore[arg-type]
        cells = max(1, round(length / period))
        strain = length / (cells * period) - 1.0
        if abs(strain) > LENGTH_TOLERANCE:
            continue
        for n in range(2, 200):
            m = n if family == "armchair" else 0
            found.append(Chirality(n=n, m=m, cells=cells, diameter=tube_diameter(n, m, bond), strain=strain))
    if not found:
        return None
    best = min(found, key=lambda c: (abs(c.diameter - diameter), abs(c.strain)))
    return best if abs(best.diameter - diameter) <= DIAMETER_TOLERANCE * diameter else None


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------

_TUBE = re.compile(r"\b(?:carbon )?nanotubes?\b|\b(?:sw|dw|mw)?cnts?\b")
_MULTI = re.compile(r"\b(?:multi|double|few)[- ]?walled\b|\b(?:dw|mw)cnts?\b|\bcoaxial tubes\b")
_CHIRAL = re.compile(r"\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_DIAMETER = re.compile(r"\bdiameter(?: of)?(?: about| approximately| roughly| ~)?\s*(?:=|:|is)?\s*" + NUM + _UNIT +
                       "|" + NUM + _UNIT + r"(?: in)? diameter\b|\b" + NUM + _UNIT + r"[- ]wide\b")
_LENGTH = re.compile(r"\blength(?: of)?\s*(?:=|:|is)?\s*" + NUM + _UNIT + "|" + NUM + _UNIT + r"(?: in length| long)\b")
_BOND = re.compile(r"\b(?:c-c |carbon-carbon )?bond (?:length|distance)\s*(?:of|=|:|is)?\s*" + NUM + _UNIT)


def _angstrom(value: str, unit: str) -> float:
    return float(value) * (10.0 if unit.startswith("nan") or unit == "nm" else 1.0)


def _hit(pattern: re.Pattern[str], text: str) -> tuple[float, str] | None:
    hit = pattern.search(text)
    if hit is None:
        return None
    groups = [g for g in hit.groups()]
    for i in range(0, len(groups), 2):
        if groups[i] is not None:
            return _angstrom(groups[i], groups[i + 1]), hit.group(0)
    return None


def tube_sentences(low: str) -> str:
    """The sentences that speak of the tube."""
    return " ".join(s for s in re.split(r"(?<=\.)\s+", low) if _TUBE.search(s))


def names_nanotube(low: str) -> bool:
    return bool(_TUBE.search(low))


class TubeReading(BaseModel):
    """What the text states of its tube and what the reading chose (each choice's words)."""

    tube: Nanotube | None = None
    chosen: dict[str, str] = Field(default_factory=dict, description="field -> 'value: reason' (defaults)")
    stated: dict[str, str] = Field(default_factory=dict, description="field -> the words read")
    missing: list[str] = Field(default_factory=list)
    unsupported: list[str] = Field(default_factory=list)


def read_nanotube(low: str, box: tuple[float, float, float] | None) -> TubeReading:
    """The tube a text describes, in a box of edges `box` (angstrom; None: not stated). See the module
    docstring for the rules."""
    out = TubeReading()
    words = tube_sentences(low)
    if not words:
        return out
    if _MULTI.search(low):
        out.unsupported.append(f"a multi-walled nanotube ('{_MULTI.search(low).group(0)}')")  # type: ignore[union-attr]
        return out
    bond = _hit(_BOND, low)
    d = bond[0] if bond else GRAPHENE_BOND
    if bond:
        out.stated["bond_length"] = bond[1]
    else:
        out.chosen["bond_length"] = (f"{d:g} angstrom: the C-C distance is not stated; graphite's in-plane bond length "
                                     "(Castro Neto et al., Rev. Mod. Phys. 81, 109 (2009))")
    length = _hit(_LENGTH, words)
    diameter = _hit(_DIAMETER, words)
    if length is None:
        out.missing.append("the nanotube's length")
        return out
    out.stated["length"] = length[1]
    if box is None:
        out.missing.append("the box the nanotube is in")
        return out
    axis = min(range(3), key=lambda i: abs(box[i] - length[0]))
    if abs(box[axis] - length[0]) > LENGTH_TOLERANCE * box[axis]:
        out.unsupported.append(f"a nanotube of finite length ({length[0]:g} angstrom) with open ends in a box of "
                               f"{' x '.join(f'{b:g}' for b in box)} angstrom (only a tube that fills a periodic box "
                               "edge is built)")
        return out
    edge = box[axis]
    across = [box[i] / 2.0 for i in range(3) if i != axis]
    if (stated := _stated_chirality(low, words)) is not None:
        n, m, said = stated
        out.stated["chirality"] = said
        if m not in (0, n):
            out.unsupported.append(f"a chiral ({n},{m}) nanotube (only armchair (n,n) and zigzag (n,0) tubes are "
                                   "built)")
            return out
        family: Family = "armchair" if m == n else "zigzag"
        cells = max(1, round(edge / tube_period(family, d)))
        tube = Nanotube(n=n, m=m, bond_length=d, cells=cells, length=edge, axis="xyz"[axis],  # type: ignore[arg-type]
                        center=(across[0], across[1]))
        if abs(tube.strain) > LENGTH_TOLERANCE:
            out.unsupported.append(f"a ({n},{m}) tube of {edge:g} angstrom: {edge / tube.period:.3g} axial periods, "
                                   "not a whole number (its periodic images would not join)")
            return out
    else:
        if diameter is None:
            out.missing.append("the nanotube's chirality or diameter")
            return out
        out.stated["diameter"] = diameter[1]
        named = tuple(f for f in ("armchair", "zigzag") if re.search(rf"\b{f}\b", words))
        families: tuple[Family, ...] = named if len(named) == 1 else ("armchair", "zigzag")  # type: ignore[assignment]
        choice = choose_chirality(diameter[0], edge, d, families)
        if choice is None:
            kinds = " or ".join(FAMILY_WORDS[f] for f in families)
            out.missing.append(f"a chirality: no {kinds} tube within {DIAMETER_TOLERANCE:.0%} of the stated "
                               f"{diameter[0]:g} angstrom diameter fills the {edge:g} angstrom periodic edge with a "
                               "whole number of axial periods")
            return out
        tube = Nanotube(n=choice.n, m=choice.m, bond_length=d, cells=choice.cells, length=edge,
                        axis="xyz"[axis], center=(across[0], across[1]))  # type: ignore[arg-type]
        out.chosen["chirality"] = (
            f"({tube.n},{tube.m}) {tube.family}: diameter {tube.diameter:.4g} angstrom (stated {diameter[0]:g}); of "
            f"the {' and '.join(FAMILY_WORDS[f] for f in families)} tubes whose whole number of axial periods fills "
            f"the periodic {edge:g} angstrom edge within {LENGTH_TOLERANCE:.0%}, the nearest diameter")
    out.tube = tube
    out.chosen["cells"] = (f"{tube.cells} axial periods of {tube.period:.5g} angstrom ({tube.cells * tube.period:.5g} "
                           f"angstrom) scaled to the {edge:g} angstrom box edge (axial strain {tube.strain:+.2%}); "
                           f"{tube.atoms} atoms")
    out.chosen["axis"] = (f"{tube.axis} through {tube.center[0]:g}, {tube.center[1]:g}: the box edge the stated length "
                          "fills, the axis through the box's centre")
    return out


def _stated_chirality(low: str, words: str) -> tuple[int, int, str] | None:
    for text in (words, low):
        for hit in _CHIRAL.finditer(text):
            near = text[max(0, hit.start() - 40):hit.end() + 40]
            if re.search(r"chiral|armchair|zigzag|nanotube|\bcnt|\bswcnt", near):
                return int(hit.group(1)), int(hit.group(2)), hit.group(0)
    return None


# ---------------------------------------------------------------------------------------------
# The description
# ---------------------------------------------------------------------------------------------

# 'a box of 20 x 20 x 56.63 angstrom^3', 'simulation box dimensions 2*2*5.6 nm' (normalise() spells å 'angstrom')
_BOX = re.compile(r"\bbox\b[^.;]{0,40}?" + NUM + r"\s*[x*]\s*" + NUM + r"\s*[x*]\s*" + NUM + _UNIT)
_GCMC = re.compile(r"\bgcmc\b|grand[- ]canonical(?: monte carlo)?")
_WATER = re.compile(r"\bwater\b|\btip\dp|\bspc")
# what the generic reading names for such a text, each said precisely by TUBE_SYSTEM instead
GENERIC_UNSUPPORTED = ("electrostatics (coul, kspace)", "molecular topology (bonds, angles, constraints)",
                       "regions, walls and groups of atoms", "a many-body potential")
GENERIC_MISSING = ("initial configuration (lattice)", "box size")


def stated_box(low: str) -> tuple[float, float, float] | None:
    hit = _BOX.search(low)
    if hit is None:
        return None
    scale = 10.0 if hit.group(4).startswith("nan") or hit.group(4) == "nm" else 1.0
    return float(hit.group(1)) * scale, float(hit.group(2)) * scale, float(hit.group(3)) * scale


def tube_system(low: str, tube: Nanotube) -> str:
    """Why a text with a tube is not rendered: the tube is read and built, the rest of its system is named."""
    parts = []
    if _WATER.search(low):
        parts.append("water in the tube under a hybrid pair style (the many-body carbon potential beside the water "
                     "model, and a carbon-water interaction)")
    if _GCMC.search(low):
        parts.append("molecules inserted by grand-canonical Monte Carlo (fix gcmc)")
    rest = " and ".join(parts) if parts else "the tube's own input lines"
    return (f"a carbon nanotube system (the tube is read and built: ({tube.n},{tube.m}), {tube.atoms} carbon atoms; "
            f"not rendered: {rest})")


def read_tube(desc: SimulationDescription, low: str) -> None:
    """The tube of a text that names one (see the module docstring). A tube is read and built, but no
    renderer places it yet: the description names it as not rendered, with what else its system holds."""
    if not names_nanotube(low):
        return
    box = None
    if desc.box is not None and not desc.box.lattice_units:
        box = tuple(h - lo for lo, h in zip(desc.box.lo, desc.box.hi, strict=True))
    box = box or stated_box(low)
    reading = read_nanotube(low, box)  # type: ignore[arg-type]
    desc.missing += [m for m in reading.missing if m not in desc.missing]
    desc.unsupported += [u for u in reading.unsupported if u not in desc.unsupported]
    for name, words in reading.stated.items():
        desc.note(f"nanotube.{name}", "rules", words)
    for name, why in reading.chosen.items():
        desc.note(f"nanotube.{name}", "default", why)
    if reading.tube is None:
        return
    desc.nanotube = reading.tube
    desc.unsupported = [u for u in desc.unsupported if u not in GENERIC_UNSUPPORTED]
    desc.missing = [m for m in desc.missing if m not in GENERIC_MISSING]
    desc.unsupported.append(tube_system(low, reading.tube))
