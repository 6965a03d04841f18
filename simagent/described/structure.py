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
from simagent.backends.expert.vocabulary import AMBIGUOUS_SYMBOLS, ELEMENT_NAMES, SYMBOLS
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
# how many atoms the text states: 'holding 1200 atoms', element counts 'Zn: 600, O: 600' or 'Al = 864' (a count
# ends the clause: 'P = 1 bar' is a pressure), and 'oxygen (2 atoms)'; elements from ase's table (vocabulary)
_TOTAL = re.compile(r"(?<!\btype )\b(\d+) atoms\b")  # not "type 1 atoms"
_PAIR = re.compile(r"\b([A-Z][a-z]?) ?[=:] ?(\d+)(?=\s*(?:[,;)]|and\b|atoms\b|\.(?!\d)|$))")
_NAMED_COUNT = re.compile(r"\b([A-Za-z]+) \((\d+) atoms\)")
# atoms a fix inserts during the run need no start positions
_INSERTED = re.compile(r"\bfix (?:pour|deposit|gcmc|evaporate)\b|\bpour(?:ed|ing)?\b|\bdeposit(?:ed|ing|ion)?\b|"
                       r"\binsert(?:ed|ion|ing)?\b")


def _stated_counts(text: str) -> list[str]:
    """The atom counts the text states, each labelled by its element when it has one ('864 Al', '7 atoms').
    A symbol that is also a common letter ('O', 'N', 'P') counts only beside another element count."""
    pairs = [(m.group(1), m.group(2)) for m in _PAIR.finditer(text) if m.group(1) in SYMBOLS]
    if len(pairs) < 2:
        pairs = [(sym, n) for sym, n in pairs if sym not in AMBIGUOUS_SYMBOLS]
    named = [(ELEMENT_NAMES[m.group(1).lower()], m.group(2)) for m in _NAMED_COUNT.finditer(text)
             if m.group(1).lower() in ELEMENT_NAMES]
    labelled = [f"{n} {sym}" for sym, n in pairs + named]
    in_elements = {n for _, n in pairs + named}
    totals = [f"{m.group(1)} atoms" for m in _TOTAL.finditer(text) if m.group(1) not in in_elements]
    return list(dict.fromkeys(totals + labelled))


def _structure_name(text: str) -> tuple[int, str] | None:
    """(which pattern, the words) the text calls the structure by, without a leading article or a parenthesis
    the pattern cut open."""
    for i, pattern in enumerate(_NAMED):
        if m := pattern.search(text):
            name = re.sub(r"^(?:the|an?) ", "", m.group(1).strip(" ,"))
            while name.count("(") > name.count(")"):
                name = name[:name.rfind("(")].strip(" ,")
            return i, name
    return None


# the reader's gap for a start read from a data file the text names by kind only ('the pre-minimised data file')
_REQUIRED_FILE = re.compile(r"^initial configuration: the (.+?) the text requires\b")


def required_file(text: str, desc: SimulationDescription) -> str | None:
    """'the pre-minimized data file the text requires ...' when the text starts from a data file that it
    names only by kind (no file name) and does not describe: the file the task needs, with the atom
    counts the text states and what else the text leaves out (so that no one expects simagent to rebuild
    it). None when the text has no such start, or an installed example supplies it."""
    if desc.example_system is not None:
        return None
    kind = next((m.group(1) for gap in desc.missing if (m := _REQUIRED_FILE.match(gap))), None)
    if kind is None:
        return None
    counts = _stated_counts(plain_numbers(re.sub(r"\s+", " ", text)))
    other = [gap for gap in desc.missing if not gap.startswith("initial configuration")]
    stated = f"; it states {', '.join(counts)} but not where they are" if counts else ""
    lacks = f", and it also lacks {', '.join(other)}" if other else ""
    return (f"the {kind} the text requires (it gives no file name{stated}{lacks}: a LAMMPS data file with the "
            "starting positions is needed)")


def unstated_structure(text: str, desc: SimulationDescription) -> str | None:
    """'the initial atom positions of <what the text calls it> (<the counts it states>)' when the text states a
    system whose atoms it does not place; None when it builds them (lattice, random placement, molecules,
    a chain) or states no system at all."""
    if UNPLACED not in desc.missing or desc.lattice is not None or desc.placements or desc.molecular or desc.chain:
        return None
    low = plain_numbers(re.sub(r"\s+", " ", text))
    if _RANDOM.search(low.lower()) or _INSERTED.search(low.lower()):
        return None  # placed at random or inserted: the reader's own gaps (counts, types) say what is missing
    named = _structure_name(low)
    counts = _stated_counts(low)
    bonded = "molecular topology (bonds, angles, constraints)" in desc.unsupported
    which = named[0] if named else None
    if not (which == 0 or len(counts) >= 2 or (which == 1 and counts) or (
            bonded and not _BUILT_BONDED.search(low.lower()))):
        return None  # a simple fluid or crystal with one count (a protocol builds it), or nothing named
    what = f"the {named[1]}" if named else "the system"
    quoted = re.findall(r"\b(?:[A-Z][a-z]? ?[=:] ?)(\d+)\b", what)  # counts the name itself already quotes
    unsaid = [c for c in counts if c.split()[0] not in quoted]
    stated = f" ({', '.join(unsaid)})" if unsaid else ""
    kind = "a LAMMPS data file with positions and bonds" if bonded else "a structure or LAMMPS data file"
    return f"the initial atom positions of {what}{stated}, which the text does not give: {kind} is needed"
