"""A structure the text names but does not build: which file a task would need.

"Compute ... for an alpha-alumina (Al = 864, O = 1296) structure in a 24.7 x 28.6 x 26.0 box" names a
material, its atom counts and a box, but not where the atoms are: no lattice with its constant, no
random placement, no molecule simagent builds. Such a task needs a structure (or LAMMPS data) file,
and simagent never invents one. `unstated_structure` says which structure is missing, by the words
the text calls it, so that the refusal names the file the task needs rather than the first thing
the renderer lacks.
"""

from __future__ import annotations

import re

from simagent.backends.expert.protocol_text import plain_numbers
from simagent.described.model import SimulationDescription

UNPLACED = "initial configuration (lattice)"  # the reader's gap when no lattice or placement is stated
_RANDOM = re.compile(r"\brandom(?:ly)?\b[^.;]{0,40}(?:plac|distribut|insert|position)|(?:plac|distribut|insert|"
                     r"position)\w*[^.;]{0,40}\brandom(?:ly)?\b")
# what the text calls the structure: 'for an alpha-alumina (...) structure', 'a system of SiO2 (...)',
# 'a system of graphene-OH on a Cu2O (110) surface'
_NAMED = [re.compile(r"\b(?:for|of) (?:an? |the )?((?:(?!\bfor\b|\bof\b)[^.;]){2,80}?) (?:structure|crystal|slab|"
                     r"surface|interface|glass)\b"),
          re.compile(r"\ba system (?:of|containing|made of|consisting of) ((?:(?!\b(?:using|with|which|that|should|"
                     r"must|in a|in the)\b)[^.;]){2,80})")]
# bonded models simagent's own protocols build (polymer melts, bead-spring chains): no file needed
_BUILT_BONDED = re.compile(r"kremer|bead[- ]spring|polymer melt|\bmelt of\b|\bchains?\b")
_ELEMENT = r"(?:Al|O|Si|C|H|N|Cu|Au|Fe|Ni|Ag|Pt|Pd|Na|Cl|Ti|Zr|Mg|Ca|Zn|Ga|As|Ge)"
_COUNTS = re.compile(r"\b(\d+) atoms\b|\b" + _ELEMENT + r" ?(?:=|:) ?(\d+)\b")
# atoms a fix inserts during the run need no start positions
_INSERTED = re.compile(r"\bfix (?:pour|deposit|gcmc|evaporate)\b|\bpour(?:ed|ing)?\b|\bdeposit(?:ed|ing|ion)?\b|"
                       r"\binsert(?:ed|ion|ing)?\b")


def unstated_structure(text: str, desc: SimulationDescription) -> str | None:
    """'the atom positions of <what the text calls it> (<the counts it states>)' when the text states a
    system whose atoms it does not place; None when it builds them (lattice, random placement, molecules,
    a chain) or states no system at all."""
    if UNPLACED not in desc.missing or desc.lattice is not None or desc.placements or desc.molecular or desc.chain:
        return None
    low = plain_numbers(re.sub(r"\s+", " ", text))
    if _RANDOM.search(low.lower()) or _INSERTED.search(low.lower()):
        return None  # placed at random or inserted: the reader's own gaps (counts, types) say what is missing
    name = next((m.group(1).strip(" ,") for p in _NAMED if (m := p.search(low))), None)
    counts = [next(g for g in m.groups() if g) for m in _COUNTS.finditer(low)]
    bonded = "molecular topology (bonds, angles, constraints)" in desc.unsupported
    named = next((i for i, p in enumerate(_NAMED) if p.search(low)), None)
    if not (named == 0 or len(counts) >= 2 or (named == 1 and counts) or (
            bonded and not _BUILT_BONDED.search(low.lower()))):
        return None  # a simple fluid or crystal with one count (a protocol builds it), or nothing named
    if name is not None:
        name = re.sub(r"^(?:the|an?) ", "", name)
        while name.count("(") > name.count(")"):  # a parenthesis the pattern cut: keep what comes before it
            name = name[:name.rfind("(")].strip(" ,")
    what = f"the {name}" if name else "the system"
    stated = f" ({', '.join(dict.fromkeys(counts))} atoms stated)" if counts else ""
    kind = "a LAMMPS data file with positions and bonds" if bonded else "a structure or LAMMPS data file"
    return f"the initial atom positions of {what}{stated} ({kind}): the text does not say where the atoms are"
