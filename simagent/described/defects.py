"""A point defect made between two minimisations of a described crystal: an interstitial formation energy.

A text that prescribes the calculation itself ("minimise the perfect crystal, add one atom at
(x, y, z), minimise again, E_def - ((N+1)/N) E_perfect") is held here and run literally: the crystal is
minimised (stage 'perfect'), the stated atoms are added at the stated positions (create_atoms single),
the system is minimised again (stage 'defect') with the same stated settings, and the formation energy
is computed from the two minimised energies by the stated formula (simagent.materials.defects).

Readings recorded with the answer:
- an atom added 'within a small (spherical) region around / at a site': one atom placed at that site;
  the region only says where the atom goes (LAMMPS's create_atoms single puts it there exactly);
- the formula: 'E_def - ((N+1)/N) E_0' (the perfect crystal's energy per atom times the defect cell's
  atoms) or, stated without the ratio, 'E_def - E_0'; a text that states none gets the first, the
  usual definition, as a documented default;
- the added atom's type: the element the sentence names, else the crystal's own (a self-interstitial).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from simagent.backends.expert.protocol_text import NUM
from simagent.backends.expert.vocabulary import ELEMENT_NAMES

if TYPE_CHECKING:
    from simagent.described.model import Minimize, SimulationDescription

PERFECT, DEFECT = "perfect_crystal", "defect_cell"  # the two minimisation stages


class PointDefect(BaseModel):
    """Atoms added to the minimised perfect crystal before the defect cell is minimised."""

    kind: Literal["interstitial"] = "interstitial"
    atom_type: int = Field(default=1, ge=1)
    positions: list[tuple[float, float, float]] = Field(min_length=1)
    position_units: Literal["box", "lattice"] = "box"
    reference: Literal["per_atom", "total"] = Field(
        default="per_atom", description="per_atom: E_def - (N_def/N) E_0; total: E_def - E_0 (as the text states)")
    perfect_stage: int = Field(default=0, ge=0)
    defect_stage: int = Field(default=1, ge=1)


# an atom put into the crystal: 'adding one Cu atom', 'an extra atom is inserted', 'place a single atom'
_ADD = re.compile(r"\b(?:add|insert|plac|put|introduc|creat)\w*\b[^.;]{0,80}?\batoms?\b|\b(?:extra|additional|one "
                  r"more|an? single) (?:\w+ )?atoms? (?:is |are )?(?:added|inserted|placed|put|introduced|created)")
_POSITION = re.compile(rf"\(\s*{NUM}\s*,\s*{NUM}\s*,\s*{NUM}\s*\)\s*(angstroms?|a\b|lattice (?:units?|spacings?|"
                       r"constants?)|(?:unit )?cells?)?")
# the perfect crystal minimised too (its energy is the reference)
_PERFECT = re.compile(r"\b(?:perfect|pristine|defect-free|ideal|undefected|defectless)\b")
# a formula with the atom ratio: '(N+1)/N', 'N_def/N', '(n + 1) / n'
_RATIO = re.compile(r"\(\s*n\s*\+\s*1\s*\)\s*/\s*n\b|\bn_\{?def\w*\}?\s*/\s*n\b")
# a formula stated: 'e_f - e_0', 'e_i = e_def - ...'
_FORMULA = re.compile(r"\be_\{?\w+\}?\s*=\s*e_\{?\w+\}?\s*-|\be_\{?(?:f|d|def\w*)\}?\s*-\s*e_?\{?(?:0|₀|p\w*)")
# a minimisation, or a relaxation (at 0 K: no run is stated beside it): 'relax the perfect crystal', 'both relaxations'
_MINIMISATION = re.compile(r"minimi[sz]|\brelax(?:e|es|ed|ing|ations?)?\b")
_ATOM_ELEMENT = re.compile(r"\b(?:an?|one|single|extra|additional)\s+(?:single |extra |additional )?(\w+) atom\b")


def _element_type(desc: SimulationDescription, sentence: str) -> tuple[int, str] | None:
    """The atom type of the element the insertion names ('one Cu atom'), with the reading; None when the
    sentence names an element that is no atom type of the description."""
    from ase.data import atomic_numbers

    symbols = desc.potential.type_elements if desc.potential else []
    hit = _ATOM_ELEMENT.search(sentence)
    word = hit.group(1) if hit else ""
    named = ELEMENT_NAMES.get(word) or next((s for s in atomic_numbers if s.lower() == word and len(s) <= 2 and
                                             s != "X"), None)
    if named is None:
        return desc.lattice_type, (f"{desc.lattice_type}: the crystal's own atom type (a self-interstitial; no "
                                   "element named)")
    if named in symbols:
        return symbols.index(named) + 1, f"{symbols.index(named) + 1}: the {named} atom the text adds"
    return None


def _outside_box(desc: SimulationDescription, found: list[re.Match], lattice: bool) -> str | None:
    """A stated position outside the box (LAMMPS's create_atoms single would not place the atom), in words;
    None when every position is inside or the units cannot be compared (an oriented or non-cubic lattice)."""
    box = desc.box
    if box is None:
        return None
    spacing = desc.lattice.scale if desc.lattice is not None and desc.lattice.scale_is == "constant" and \
        desc.lattice.orient is None and desc.lattice.style in ("sc", "bcc", "fcc", "diamond") else None
    factor = 1.0 if box.lattice_units == lattice else None  # the box's length unit in the positions' unit
    if factor is None and spacing is not None:
        factor = spacing if box.lattice_units else 1.0 / spacing
    if factor is None:
        return None
    unit = "lattice units" if lattice else "Å"
    for m in found:
        for k, axis in enumerate("xyz"):
            value, lo, hi = float(m.group(k + 1)), box.lo[k] * factor, box.hi[k] * factor
            if not lo <= value <= hi:
                return (f"an atom added at {m.group(0).strip()}, outside the box ({lo:g} to {hi:g} {unit} along "
                        f"{axis}): LAMMPS's create_atoms single would not place it")
    return None


def read_point_defect(desc: SimulationDescription, low: str,
                      minimize_settings: Callable[[SimulationDescription, str, str], Minimize | None]) -> None:
    """A 0 K interstitial made between two minimisations (see the module docstring); `minimize_settings`
    reads a minimisation sentence's style, tolerances and limits (simagent.described.reading)."""
    if not re.search(r"\binterstitial", low) or desc.lattice is None or any(s.kind == "run" for s in desc.stages):
        return
    sentences = re.split(r"(?<=[.;])\s+", low)
    insertion = next((s for s in sentences if _ADD.search(s) and _POSITION.search(s[_ADD.search(s).start():])), None)
    if insertion is None or not _PERFECT.search(low) or not _MINIMISATION.search(low):
        return
    from simagent.described.model import Stage

    after = insertion[_ADD.search(insertion).start():]
    found = list(_POSITION.finditer(after))
    units = {m.group(4) for m in found}
    if None in units and desc.units != "lj":
        desc.missing.append("the unit of the interstitial position (angstrom or lattice units)")
        return
    lattice = any(u and (u.startswith("lattice") or "cell" in u) for u in units)
    typed = _element_type(desc, insertion)
    if typed is None:
        desc.missing.append("the atom type of the interstitial atom (the element named is no type of the potential)")
        return
    settings_sentence = next((s for s in sentences if _MINIMISATION.search(s) and re.search(r"toleran", s)),
                             None)
    for gap in ("a run length (steps)", "the minimisation tolerances (etol, ftol)"):
        while gap in desc.missing:
            desc.missing.remove(gap)
    if settings_sentence is None:
        desc.missing.append("the minimisation tolerances (etol, ftol)")
        return
    for key in [k for k in desc.origin if re.match(r"(?:min|run)\d+\.", k)]:
        del desc.origin[key]  # notes of the stages read before, which the two minimisations replace
    minimize = minimize_settings(desc, settings_sentence, PERFECT)
    if minimize is None:
        return
    outside = _outside_box(desc, found, lattice)
    if outside:
        desc.unsupported.append(outside)
        return
    ratio, formula = _RATIO.search(low), _FORMULA.search(low)
    reference: Literal["per_atom", "total"] = "total" if formula and not ratio else "per_atom"
    desc.stages = [Stage(name=PERFECT, kind="minimize", minimize=minimize, evidence=settings_sentence[:160]),
                   Stage(name=DEFECT, kind="minimize", minimize=minimize.model_copy(), evidence=insertion[:160])]
    desc.defect = PointDefect(atom_type=typed[0], positions=[tuple(float(m.group(i)) for i in (1, 2, 3))
                                                             for m in found],  # type: ignore[misc]
                              position_units="lattice" if lattice else "box", reference=reference)
    desc.note("defect", "rules", "; ".join(m.group(0) for m in found) + f" ({'lattice units' if lattice else 'box'}"
              f" units): {len(found)} atom(s) added to the minimised perfect crystal, then minimised again")
    desc.note("defect.atom_type", "default" if "no element named" in typed[1] else "rules", typed[1])
    if ratio:
        desc.note("defect.formula", "rules", f"{ratio.group(0)}: E_def - (N_def/N) E_0")
    elif formula:
        desc.note("defect.formula", "rules", f"{formula.group(0)}: E_def - E_0, as stated (no atom ratio)")
    else:
        desc.note("defect.formula", "default", "E_def - (N_def/N) E_0: the text states no formula; the usual "
                  "definition, the perfect crystal's energy per atom as the reference of the atoms added")
    desc.note(f"{DEFECT}.minimisation", "default", "the same style, tolerances and limits as the perfect crystal's: "
              "the text states one minimisation setting for both")
    region = re.search(r"\b(?:small )?(?:spherical |round )?region\b", insertion)
    elsewhere = [s for s in sentences if s is not insertion and re.search(r"\bregion|\bwall\b|cylind|cluster|"
                                                                         r"obstacle|slab\b", s)]
    if region and not elsewhere and desc.layout is None:
        from simagent.described.group_reading import LAYOUT_UNSUPPORTED

        desc.unsupported = [u for u in desc.unsupported if u != LAYOUT_UNSUPPORTED]
        desc.missing = [m for m in desc.missing if not m.startswith("the radius of the")]
        desc.note("defect.region", "rules", f"'{region.group(0)}' around the site: read as one atom placed at the "
                  "stated site (create_atoms single); the region only locates it")
