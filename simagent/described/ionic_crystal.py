"""An ionic crystal in a described simulation: Na+ and Cl- ions on the rock-salt lattice.

Sodium chloride crystallises in the rock-salt structure: the face-centred cubic lattice with two ions in
its basis (Na at 0 0 0, Cl at 1/2 0 0), i.e. every site of a simple-cubic grid of spacing a/2 holding Na
and Cl in turn. The conventional cubic cell (edge a) holds 4 + 4 = 8 ions. A text that puts a stated
number of Na+ and Cl- ions on an fcc or rock-salt arrangement in a stated box therefore states the
lattice constant, as long as the count fills the box with whole cells; a stated lattice constant with a
box or a cell count does too.

`read_ionic_crystal(desc, low)` fills `desc.molecular` (simagent.described.molecular.MolecularSystem, with
`crystal` set) with the two ion kinds, their formal charges, standard atomic masses, the crystal and the
interactions the text states (cutoff, k-space, mixing, tail). The ions' LJ parameters the text does not
state come from a published set, listed in report.md as the text's gap (`ION_LJ`): Joung and Cheatham's
Na+ and Cl- (fitted with Lorentz-Berthelot mixing, to hydration free energies together with the crystals'
lattice constants and lattice energies). Stated LJ numbers the rules do not read stop the reading (never
silently replaced by the published set).

Source: I. S. Joung, T. E. Cheatham III, J. Phys. Chem. B 112, 9020-9041 (2008), the SPC/E set:
Na+ R_min/2 = 1.212 A, epsilon = 0.3526418 kcal/mol; Cl- R_min/2 = 2.711 A, epsilon = 0.0127850 kcal/mol
(sigma = 2 R_min/2 / 2^(1/6)).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from simagent.backends.expert.protocol_text import NUM
from simagent.described import molecular
from simagent.described.molecular import MASSES, AtomKind, MolecularSystem, RockSalt, Species

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

IONS_PER_CELL = 8  # rock salt (molecular.RockSalt.n_ions): 4 Na + 4 Cl in the conventional cubic cell
ION_LJ_CITATION = "Joung, Cheatham, J. Phys. Chem. B 112, 9020 (2008), SPC/E set"
_SIGMA_PER_RMIN_HALF = 2.0 / 2.0 ** (1.0 / 6.0)
# element -> (epsilon kcal/mol, sigma angstrom), from the published R_min/2
ION_LJ: dict[str, tuple[float, float]] = {
    "Na": (0.3526418, 1.212 * _SIGMA_PER_RMIN_HALF),
    "Cl": (0.0127850, 2.711 * _SIGMA_PER_RMIN_HALF),
}
# the rock-salt basis in the conventional cell: four Na sites (fcc), then the four Cl sites shifted by a/2 along x
NA_BASIS = ((0.0, 0.0, 0.0), (0.5, 0.5, 0.0), (0.5, 0.0, 0.5), (0.0, 0.5, 0.5))
CL_BASIS = ((0.5, 0.0, 0.0), (0.0, 0.5, 0.0), (0.0, 0.0, 0.5), (0.5, 0.5, 0.5))
_CELL_TOLERANCE = 1e-6  # relative: a box edge must be this close to a whole number of cells


_IONS = re.compile(r"(?:\bna\s*\^?\s*\{?\s*\+|\bsodium\b|\bnacl\b|sodium chloride)")
_CHLORIDE = re.compile(r"(?:\bcl\s*\^?\s*\{?\s*-|\bchlorid|\bnacl\b|sodium chloride)")
_CRYSTAL = re.compile(r"rock[- ]?salt|\bfcc\b|face[- ]cent(?:er|re)d|\bcrystal|\blattice\b|\bsolid\b")
_ION_COUNT = re.compile(r"\b(\d+) (?:atoms|ions|particles)\b|\b(\d+) (?:na|sodium)\b[^.;]{0,30}?\band (\d+) "
                        r"(?:cl|chlorid)")
_CONSTANT = re.compile(r"lattice (?:constant|parameter|spacing)\s*(?:of|=|:|is|a =)?\s*" + NUM
                       + r"\s*(angstrom|a\b|nm)?")
_CELLS = re.compile(r"\b(\d+)\s*(?:x|\*|by)\s*(\d+)\s*(?:x|\*|by)\s*(\d+)\s*(?:conventional |unit |cubic )?(?:unit )?"
                    r"cells\b|\b(\d+) (?:conventional |unit |cubic )?(?:unit )?cells (?:along|in|per) (?:each|every) "
                    r"(?:direction|axis|edge)")
# an LJ number stated for the ions in a form the rules below do not read
_STATED_LJ = re.compile(r"(?:epsilon|sigma|well depth|lj parameters?)\s*(?:of [a-z+\- ^{}]+)?\s*(?:=|:|of|is)?\s*"
                        + NUM)


def read_ionic_crystal(desc: SimulationDescription, low: str) -> None:
    """Fill desc.molecular with Na+/Cl- on the rock-salt lattice when the text puts these ions on an fcc or
    rock-salt arrangement (real units, no water); see the module docstring. Leaves desc untouched otherwise."""
    if desc.molecular is not None or molecular.water_model(low) is not None or desc.units != "real":
        return
    if not (_IONS.search(low) and _CHLORIDE.search(low) and _CRYSTAL.search(low)):
        return
    crystal, words = _crystal(desc, low)
    if crystal is None:
        desc.missing.append(words)
        return
    kinds = [AtomKind(type=1, element="Na", mass=MASSES["Na"], charge=1.0),
             AtomKind(type=2, element="Cl", mass=MASSES["Cl"], charge=-1.0)]
    half = crystal.n_ions // 2
    system = MolecularSystem(kinds=kinds, species=[Species(template="na", count=half, atoms=["Na"]),
                                                   Species(template="cl", count=half, atoms=["Cl"])],
                             cutoff=1.0, crystal=crystal, prepare=False)
    if not _ion_lj(desc, low, kinds) or not molecular.read_interactions(desc, low, system):
        return
    desc.note("molecular.crystal", "rules", words)
    desc.note("molecular.crystal.sites", "default", f"Na on the fcc sites, Cl shifted by a/2 along x, every ion "
              f"a/4 = {crystal.constant / 4:g} A from the box faces: no ion on a periodic boundary, where rounding "
              "could drop or duplicate it; which ion is at the origin does not matter (the two choices differ by a "
              "translation of a/2)")
    desc.note("molecular.ion_charges", "default", "Na +1, Cl -1: the formal charges the ion names state")
    desc.note("molecular.masses", "default", f"Na {MASSES['Na']:g}, Cl {MASSES['Cl']:g}: standard atomic weights")
    desc.molecular = system
    desc.masses = {k.type: k.mass for k in kinds}
    desc.atom_types = len(kinds)
    desc.atom_style = "charge"
    desc.lattice = None  # the crystal replaces a generic lattice the reading may have made of the same words
    desc.unsupported = [u for u in desc.unsupported if u not in molecular.REPLACED_UNSUPPORTED]
    desc.missing = [m for m in desc.missing if m not in molecular.REPLACED_MISSING]


def _edges(desc: SimulationDescription) -> list[float] | None:
    if desc.box is None or desc.box.lattice_units:
        return None
    return [h - lo for lo, h in zip(desc.box.lo, desc.box.hi, strict=True)]


def _whole(x: float) -> int | None:
    n = round(x)
    return n if n > 0 and abs(x - n) <= _CELL_TOLERANCE * max(1.0, x) else None


def _crystal(desc: SimulationDescription, low: str) -> tuple[RockSalt | None, str]:
    """The crystal and the words it was read from; (None, what is missing) when the text does not fix it."""
    from simagent.described.model import Box

    desc.box = None
    molecular.read_box(desc, low)
    desc.missing = [m for m in desc.missing if m != "box size"]
    constant = _CONSTANT.search(low)
    a = float(constant.group(1)) * (10.0 if constant.group(2) == "nm" else 1.0) if constant else None
    count = _ION_COUNT.search(low)
    n_ions = None
    if count:
        n_ions = int(count.group(1)) if count.group(1) else int(count.group(2)) + int(count.group(3))
    cells_hit = _CELLS.search(low)
    edges = _edges(desc)
    if edges is None and cells_hit and a is not None:  # 'a 5 x 5 x 5 cell crystal with a lattice constant of 5.64 A'
        cells = tuple(int(g) for g in cells_hit.groups()[:3]) if cells_hit.group(1) else (int(cells_hit.group(4)),) * 3
        desc.box = Box(lo=(0.0,) * 3, hi=tuple(c * a for c in cells), lattice_units=False)  # type: ignore[arg-type]
        desc.note("box", "rules", f"{cells_hit.group(0)} of {a:g} A")
        edges = [c * a for c in cells]
    if edges is None:
        return None, "box size"
    if a is None:
        if n_ions is None or n_ions % IONS_PER_CELL:
            return None, ("the lattice constant of the rock-salt crystal (neither stated nor fixed by the box and "
                          "a whole number of cells of 8 ions)")
        if max(edges) - min(edges) > _CELL_TOLERANCE * max(edges):
            return None, "the lattice constant of the rock-salt crystal (the box is not cubic and none is stated)"
        n = _whole((n_ions / IONS_PER_CELL) ** (1 / 3))
        if n is None or IONS_PER_CELL * n**3 != n_ions:
            return None, (f"the lattice constant of the rock-salt crystal ({n_ions} ions are not a cube of cells of "
                          f"{IONS_PER_CELL} ions)")
        a = edges[0] / n
        words = (f"{count.group(0)} on a rock-salt (fcc, 8 ions per cubic cell) lattice in a cubic box of edge "
                 f"{edges[0]:g} A: {n} x {n} x {n} cells, lattice constant {a:g} A")
    else:
        words = f"rock-salt lattice, {constant.group(0) if constant else ''}".rstrip(", ")
    cells = tuple(_whole(e / a) for e in edges)
    if any(c is None for c in cells):
        return None, f"a box of whole rock-salt cells (edges {', '.join(f'{e:g}' for e in edges)} A, a = {a:g} A)"
    crystal = RockSalt(constant=a, cells=cells, origin=tuple(  # type: ignore[arg-type]
        (lo / a + 0.25) % 1.0 for lo in desc.box.lo))  # type: ignore[union-attr]
    if n_ions is not None and n_ions != crystal.n_ions:
        return None, f"a consistent ion count ({n_ions} stated; the box holds {crystal.n_ions} at a = {a:g} A)"
    return crystal, words


def _ion_lj(desc: SimulationDescription, low: str, kinds: list[AtomKind]) -> bool:
    """The ions' LJ parameters: 'pair_coeff i i eps sigma' as stated, else the published set (a listed default).
    A stated LJ number in another form stops the reading (False)."""
    molecular.read_pair_coeffs(desc, low, kinds, report_missing=False)
    unread = [k for k in kinds if k.epsilon is None]
    if unread and _STATED_LJ.search(low):
        desc.missing.append(f"the ions' LJ parameters as stated ('{_STATED_LJ.search(low).group(0)}': stated, not "  # type: ignore[union-attr]
                            "understood)")
        return False
    for k in unread:
        k.epsilon, k.sigma = ION_LJ[k.element]
    if unread:
        desc.note("molecular.lj", "default", "; ".join(
            f"{k.element} epsilon {k.epsilon:g} kcal/mol, sigma {k.sigma:.4f} A" for k in unread)
            + f": {ION_LJ_CITATION} (the text names no ion LJ parameters: a gap of the text, filled with a published "
              "set fitted with Lorentz-Berthelot mixing to the NaCl crystal's lattice constant and energy among "
              "other properties)")
    return True
