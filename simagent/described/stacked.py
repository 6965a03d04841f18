"""Two crystal blocks of different lattices stacked along one axis (a bilayer), read into the layout.

A text may build its system as two blocks, each its own crystal ('the top film: bcc Fe, lattice constant
2.87 A; below it a Cu slab, fcc, 3.615 A'), each of a stated size ('20 x 20 x 9 A'),
stacked along an axis with a stated overlap. Each block becomes a region (box units) filled with its
own lattice and atom type (simagent.described.groups.RegionFill with its lattice); the lower block
starts at 0 along the stacking axis, the upper one where the lower ends minus the overlap. Atoms of
the two blocks that sit close in the overlap stay as made: nothing the text does not state (such as
deleting overlapping atoms) is added.

Defaults (listed in report.md): both blocks start at 0 across the stacking axis (the text does not say
how a narrower block sits on a wider one); the box is the smallest one holding both blocks.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from simagent.backends.expert.protocol_text import NUM
from simagent.backends.expert.vocabulary import ELEMENT_NAMES
from simagent.described.groups import Layout, Region, RegionFill

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

_SIDE = {"upper": "upper", "top": "upper", "lower": "lower", "bottom": "lower"}
_BLOCK = r"(?:block|layer|slab|film|region)"
# a block's crystal: 'the top slab ... a bcc Fe crystal whose lattice constant is 2.87 A'
_CRYSTAL = re.compile(rf"\b(upper|top|lower|bottom) {_BLOCK}\b[^.;]{{0,50}}?\b(fcc|bcc|diamond|sc)\s+(\w+)"
                      rf"(?:\s+(?:structure|crystal|lattice))?[^.;]{{0,40}}?\blattice (?:parameter|constant)s?\s*"
                      rf"(?:of|=|:|is)?\s*{NUM}")
# a block's size: 'the bottom film ... measures 20 x 20 x 9 A', 'the top slab has a size of 30*30*8'
_SIZE = re.compile(rf"\b(upper|top|lower|bottom) {_BLOCK}\b[^.;]{{0,60}}?\b(?:(?:dimensions?|size|extent)s?\s*"
                   rf"(?:of|=|:|is)?|measur\w*)\s*{NUM}\s*[x*]\s*{NUM}\s*[x*]\s*{NUM}")
_AXIS = re.compile(r"\bstack\w*\s+(?:along|in)\s+(?:the\s+)?([xyz])(?:[- ](?:direction|axis))?")
_OVERLAP = re.compile(rf"\boverlap(?:ping)?\s*(?:of|by|=)?\s*{NUM}\s*(?:angstrom|a\b)")
_OTHER_LAYOUT = re.compile(r"\bwall\b|cylind|cluster|obstacle|\bsphere|spherical|\bgroup")


def _element(word: str) -> str | None:
    from ase.data import atomic_numbers

    return ELEMENT_NAMES.get(word) or next((s for s in atomic_numbers if s.lower() == word and s != "X"), None)


def _add_type(desc: SimulationDescription, element: str) -> None:
    """A new atom type for one of the potential file's elements, with its standard atomic mass."""
    from ase.data import atomic_masses, atomic_numbers

    assert desc.potential is not None
    desc.potential.type_elements.append(element)
    desc.atom_types = len(desc.potential.type_elements)
    desc.masses[desc.atom_types] = float(atomic_masses[atomic_numbers[element]])
    desc.note(f"masses.{element}", "rules", f"type {desc.atom_types}: {element}, standard atomic mass (ase.data), "
              "a block made of it")


def read_stacked_blocks(desc: SimulationDescription, low: str) -> None:
    """Two blocks of stated crystals and sizes stacked along an axis (see the module docstring)."""
    crystals = {_SIDE[m.group(1)]: m for m in _CRYSTAL.finditer(low)}
    sizes = {_SIDE[m.group(1)]: m for m in _SIZE.finditer(low)}
    if len(crystals) < 2 or len(sizes) < 2 or desc.potential is None or \
            (desc.layout is not None and (desc.layout.fills or desc.layout.groups)):
        return
    axis = _AXIS.search(low)
    overlap = _OVERLAP.search(low)
    if axis is None:
        desc.missing.append("the axis the two blocks are stacked along")
        return
    if overlap is None and re.search(r"\boverlap", low):
        desc.missing.append("the overlap of the two blocks (a distance)")
        return
    k = "xyz".index(axis.group(1))
    gap = -float(overlap.group(1)) if overlap else 0.0
    elements = desc.potential.type_elements
    fills, regions, extent = [], [], [0.0, 0.0, 0.0]
    start = 0.0
    for side in ("lower", "upper"):
        c, s = crystals[side], sizes[side]
        element = _element(c.group(3))
        if element is not None and element not in elements and element in desc.potential.file_elements:
            _add_type(desc, element)  # the file's element the block is made of becomes a type of its own
        if element is None or element not in elements:
            desc.missing.append(f"the atom type of the {side} block's {c.group(3)} (not an element of the potential)")
            return
        dims = [float(s.group(i)) for i in (2, 3, 4)]
        if -gap >= dims[k]:
            desc.unsupported.append(f"an overlap of {-gap:g} Å with a {side} block {dims[k]:g} Å thick along "
                                    f"{axis.group(1)}: the blocks would pass through each other, not be stacked")
            return
        bounds = [0.0, dims[0], 0.0, dims[1], 0.0, dims[2]]
        bounds[2 * k], bounds[2 * k + 1] = start, start + dims[k]
        regions.append(Region(name=f"{side}_block", style="block", bounds=tuple(bounds), box_units=True))
        fills.append(RegionFill(atom_type=elements.index(element) + 1, region=f"{side}_block",
                                lattice_style=c.group(2), lattice_scale=float(c.group(4))))
        extent = [max(extent[i], bounds[2 * i + 1]) for i in range(3)]
        desc.note(f"layout.{side}_block", "rules", f"{c.group(0)}; {s.group(0)}")
        start = start + dims[k] + gap
    from simagent.described.model import Box

    desc.lattice = None  # one lattice the general rules may have read from one block's words: each has its own
    desc.origin.pop("lattice", None)
    layout = desc.layout or Layout()
    layout.regions += regions
    layout.fills += fills
    desc.layout = layout
    desc.box = Box(lo=(0.0, 0.0, 0.0), hi=tuple(extent), lattice_units=False)  # type: ignore[arg-type]
    desc.note("layout.stacking", "rules", axis.group(0) + (f"; {overlap.group(0)}" if overlap else ""))
    desc.note("layout.lateral", "default", "both blocks start at 0 across the stacking axis: the text does not say "
              "how the narrower block sits on the wider one")
    desc.note("box", "default", f"0 to {', '.join(f'{v:g}' for v in extent)} (box units): the smallest box holding "
              "both blocks (the text states the blocks, not the box)")
    desc.missing = [m for m in desc.missing if not m.startswith(("initial configuration", "box size", "lattice scale"))]
    if not _OTHER_LAYOUT.search(low):
        from simagent.described.group_reading import LAYOUT_UNSUPPORTED

        desc.unsupported = [u for u in desc.unsupported if u != LAYOUT_UNSUPPORTED]
