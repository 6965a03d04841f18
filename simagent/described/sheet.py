"""A single-layer graphene sheet in a described simulation: the sheet, its box, and how its stress
is measured when it is pulled.

Graphene is a two-dimensional crystal, but it is simulated in a three-dimensional box: the atoms
move out of the plane (ripples), and the box is periodic only in the plane. Read here:
- 'a graphene sheet' (or a honeycomb sheet of carbon) with one stated atom count: the sheet is made
  of the 4-atom rectangular cell of graphene, armchair along x (3 d long) and zigzag along y
  (sqrt(3) d), replicated nx x ny times with 4 nx ny the stated count; of the replications that
  give the count, the one whose sheet is the most nearly square (listed as a default). A count
  that is not a whole number of cells, or no count, is listed as missing;
- the C-C bond length d, when stated ('a C-C bond length of 1.40 Å', 'lattice constant 2.46 Å',
  which is sqrt(3) d); otherwise GRAPHENE_BOND, a cited value, listed as a default;
- the box: the sheet in the plane z = 0; periodic in x and y, and the out-of-plane axis free: LAMMPS's
  'm' boundary (non-periodic, shrink-wrapped with the initial +/- SHEET_VACUUM / 2 as its minimum),
  which neither removes an atom that leaves the initial extent nor lets the sheet see its image;
  a dimension of 3 (a stated 'two-dimensional' describes the material, not the simulation);
- every barostat acts on the sheet's periodic in-plane axes only (LAMMPS cannot barostat a
  non-periodic axis; 'in-plane pressure' says the same);
- the stress of a pulled sheet: 'an effective thickness of 3.4 Å' turns the in-plane stress into a
  three-dimensional one: the sum of the per-atom stresses (compute stress/atom) over the sheet's
  area times that thickness; a stated averaging window ('averaged over 100 steps', 'a 100-step time
  average') makes each stress-strain sample the mean over that many steps.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

NUM = r"(\d+(?:\.\d+)?)"
# graphite's in-plane C-C distance, 1.42 Å (A. H. Castro Neto et al., Rev. Mod. Phys. 81, 109 (2009), Sec. II.A)
GRAPHENE_BOND = 1.42
SHEET_VACUUM = 10.0  # Å: the box's initial extent across the sheet (the non-periodic axis, its minimum)
CELL_ATOMS = 4  # atoms of graphene's rectangular cell
SHEET_NAME = "a graphene sheet"


class Sheet(BaseModel):
    """A flat graphene sheet in the xy plane: nx x ny rectangular 4-atom cells (armchair along x, cell
    length 3 d; zigzag along y, sqrt(3) d), at z = 0 in a box SHEET_VACUUM deep."""

    material: Literal["graphene"] = "graphene"
    bond_length: float = Field(gt=0, description="C-C distance d (Å)")
    cells: tuple[int, int] = Field(description="rectangular cells along x and y")
    vacuum: float = Field(default=SHEET_VACUUM, gt=0, description="initial box extent along z (Å)")

    @property
    def atoms(self) -> int:
        return CELL_ATOMS * self.cells[0] * self.cells[1]

    @property
    def cell_lengths(self) -> tuple[float, float]:
        return 3.0 * self.bond_length, math.sqrt(3.0) * self.bond_length

    @property
    def extents(self) -> tuple[float, float]:
        a, b = self.cell_lengths
        return self.cells[0] * a, self.cells[1] * b


_GRAPHENE = re.compile(r"\bgraphene\b|\bhoneycomb\b[^.;]{0,40}\b(?:carbon|c atoms)\b|"
                       r"\bcarbon\b[^.;]{0,40}\bhoneycomb\b")
# several layers, tubes or ribbons, or graphene that is part of something else (functionalised, on a
# surface, with other atom types): not one flat periodic sheet of carbon
_NOT_ONE_SHEET = re.compile(r"\b(?:bilayer|multi-?layer|few-?layer|graphite|nanotubes?|cnts?|nanoribbons?|"
                            r"two graphene|graphene (?:sheets|layers)|(?:two|three|four|\d+) (?:graphene )?(?:sheets|"
                            r"layers)|oxide|functionali[sz]\w*|graphene-\w+|surface|substrate|adsorb\w*|doped|"
                            r"(?:two|three|four|five|six|\d+) (?:atom |particle )?types|charges?)\b")
_BOND = re.compile(r"\b(?:c-c |carbon-carbon |c-c bond |interatomic )?bond (?:length|distance)\s*(?:of|=|:|is)?\s*"
                   + NUM + r"\s*(?:angstroms?|a\b)")
_LATTICE_CONSTANT = re.compile(r"\blattice (?:constant|parameter)\s*(?:of|=|:|is)?\s*" + NUM + r"\s*(?:angstroms?|a\b)")
_CARBON_COUNT = re.compile(r"\b(\d+) (?:carbon|c) atoms\b")
_THREE_D = re.compile(r"\bthree[- ]dimensional (?:simulation )?(?:domain|box|cell|space|region)|\b3-?d (?:simulation )?"
                      r"(?:domain|box|cell)")
_IN_PLANE_PERIODIC = re.compile(r"\bperiodic\b[^.;]{0,60}?\bin-plane\b|\bin-plane\b[^.;]{0,30}?\bperiodic\b")
_OUT_OF_PLANE_FREE = re.compile(r"\b(?:free|non-?periodic|open|shrink[- ]?wrap\w*)\b[^.;]{0,60}?\b(?:out-of-plane|"
                                r"normal to the (?:sheet|plane)|perpendicular to the (?:sheet|plane))|"
                                r"\b(?:out-of-plane|perpendicular|normal)\b[^.;]{0,30}?\b(?:free|non-?periodic|open)\b")


def sheet_cells(atoms: int) -> tuple[int, int] | None:
    """The replication nx x ny of graphene's rectangular cell that holds `atoms` atoms with the most
    nearly square sheet (None: not a whole number of cells). The sheet's edges are 3 d nx and
    sqrt(3) d ny whatever d is, so the choice does not depend on the bond length."""
    if atoms <= 0 or atoms % CELL_ATOMS:
        return None
    n = atoms // CELL_ATOMS
    pairs = [(nx, n // nx) for nx in range(1, n + 1) if n % nx == 0]
    return min(pairs, key=lambda p: (abs(math.log(3.0 * p[0] / (math.sqrt(3.0) * p[1]))), p[0]))


def is_sheet(low: str) -> bool:
    """The text describes one flat graphene sheet built here (not a data file's, not several layers)."""
    return bool(_GRAPHENE.search(low)) and not _NOT_ONE_SHEET.search(low) and not re.search(
        r"\bdata file|\bread_data\b|\.data\b|\.dat\b", low)


def read_sheet(desc: SimulationDescription, low: str, counts: list[tuple[int, str]]) -> None:
    """The sheet and its box (see the module docstring); `counts`: the particle counts the text states."""
    from simagent.described.structure import UNPLACED

    if not is_sheet(low) or desc.lattice is not None:
        return
    desc.missing = [m for m in desc.missing if m not in (UNPLACED, "box size")]
    if desc.dimension != 3 or "dimension" in desc.origin:
        three = _THREE_D.search(low)
        desc.dimension = 3
        desc.note("dimension", "rules" if three else "default",
                  f"3D: {three.group(0)}" if three else "3D: a graphene sheet moves out of its plane; it is simulated "
                  "in a three-dimensional box periodic in the plane")
    sizes = {n for n, _ in counts} | {int(h.group(1)) for h in _CARBON_COUNT.finditer(low)}
    if len(sizes) != 1:
        desc.missing.append("the size of the graphene sheet (its number of atoms)" if not sizes else
                            f"which of the stated counts ({', '.join(str(n) for n in sorted(sizes))}) is the sheet's")
        return
    atoms = sizes.pop()
    cells = sheet_cells(atoms)
    if cells is None:
        desc.missing.append(f"a graphene sheet of {atoms} atoms: not a whole number of {CELL_ATOMS}-atom rectangular "
                            "cells")
        return
    if bond := _BOND.search(low):
        d = float(bond.group(1))
        desc.note("sheet.bond_length", "rules", bond.group(0))
    elif constant := _LATTICE_CONSTANT.search(low):
        d = float(constant.group(1)) / math.sqrt(3.0)
        desc.note("sheet.bond_length", "rules", f"{constant.group(0)}: d = a / sqrt(3) = {d:.4g} angstrom")
    else:
        d = GRAPHENE_BOND
        desc.note("sheet.bond_length", "default", f"{d:g} angstrom: the C-C distance is not stated; graphite's "
                  "in-plane bond length (Castro Neto et al., Rev. Mod. Phys. 81, 109 (2009)); a barostat in the plane "
                  "relaxes it to the potential's own")
    desc.sheet = Sheet(bond_length=d, cells=cells)
    lx, ly = desc.sheet.extents
    desc.note("sheet", "rules", f"{atoms} atoms of a graphene sheet")
    desc.note("sheet.cells", "default", f"{cells[0]} x {cells[1]}: graphene's 4-atom rectangular cell, armchair "
              f"along x (3 d) and zigzag along y (sqrt(3) d), replicated to the stated {atoms} atoms; of the "
              f"replications that give that count, the most nearly square sheet ({lx:.4g} x {ly:.4g} angstrom), in "
              "the plane z = 0")


def read_sheet_box(desc: SimulationDescription, low: str) -> None:
    """After the stages and per-axis boundaries are read: the sheet's boundary (periodic in the plane,
    free across it), its barostats on the in-plane axes, and how its stress is recorded."""
    if desc.sheet is None:
        return
    from simagent.described.group_reading import BOUNDARY_UNSUPPORTED

    if desc.boundary == ("p", "p", "p") or desc.boundary[2] == "p":
        periodic, free = _IN_PLANE_PERIODIC.search(low), _OUT_OF_PLANE_FREE.search(low)
        desc.boundary = ("p", "p", "m")
        words = "; ".join(h.group(0) for h in (periodic, free) if h)
        desc.note("boundary", "rules" if free else "default",
                  (f"p p m ({words}): " if free else "p p m: the text states no boundary across the sheet; ") +
                  f"the out-of-plane axis non-periodic, shrink-wrapped with the initial {desc.sheet.vacuum:g} angstrom "
                  "as its minimum (free: no atom is lost, no image across the sheet)")
    if BOUNDARY_UNSUPPORTED in desc.unsupported:
        desc.unsupported.remove(BOUNDARY_UNSUPPORTED)
    plane = "".join(a for a, b in zip("xyz", desc.boundary, strict=True) if b == "p")
    for stage in desc.stages:
        dyn = stage.dynamics
        if dyn is None or dyn.ensemble not in ("npt", "nph"):
            continue
        axes = dyn.p_axes or "xyz"
        kept = "".join(a for a in axes if a in plane and not (stage.deform and a == stage.deform.axis))
        if kept != (dyn.p_axes or ""):
            in_plane = _IN_PLANE_PRESSURE.search(low) if stage.deform is None else None
            dyn.p_axes = kept
            desc.note(f"{stage.name}.p_axes", "rules" if in_plane else "default",
                      f"{', '.join(kept)}, each on its own" + (f" ('{in_plane.group(0)}')" if in_plane else
                                                               ": the sheet's periodic in-plane axes (LAMMPS barostats "
                                                               "periodic axes only)"))
    read_stress_record(desc, low)


_IN_PLANE_PRESSURE = re.compile(r"\bin-plane\b[^.;]{0,20}?pressure|pressure[^.;]{0,30}?\bin-plane\b")
_THICKNESS = re.compile(r"\b(?:effective |sheet |layer |graphene )?thickness(?: of the (?:sheet|layer|graphene))?\s*"
                        r"(?:of|=|:|is)?\s*(?:t\s*=\s*)?" + NUM + r"\s*(?:angstroms?|a\b|nm\b)|\b" + NUM +
                        r"\s*(?:angstroms?|a|nm)[- ]thick\b")
_WINDOW = re.compile(r"\b(\d+)[- ](?:step|timestep)[- ](?:time[- ]|running )?averag\w*|\baverag\w*(?: over| across| "
                     r"in)?(?: windows? of| blocks? of| each| every)? (\d+) (?:consecutive )?(?:time ?)?steps\b")


def stated_thickness(low: str) -> tuple[float, str] | None:
    """A sheet thickness stated for turning its stress into a 3D one (Å; nm converted): (value, words)."""
    hit = _THICKNESS.search(low)
    if hit is None:
        return None
    value = float(hit.group(1) or hit.group(2))
    nm = re.search(r"nm\b", hit.group(0))
    return (value * 10.0 if nm else value), hit.group(0)


def stated_window(low: str) -> tuple[int, str] | None:
    """The averaging window of a recorded quantity ('a 100-step time average', 'averaged over 100 steps')."""
    hit = _WINDOW.search(low)
    if hit is None:
        return None
    return int(hit.group(1) or hit.group(2)), hit.group(0)


def read_stress_record(desc: SimulationDescription, low: str) -> None:
    """The stated thickness and averaging window on every deformation stage of the sheet; a pulled
    sheet with no thickness stated lacks it (its 3D stress is not defined without one)."""
    deformed = [s for s in desc.stages if s.deform is not None]
    if not deformed:
        return
    thickness = stated_thickness(low)
    window = stated_window(low)
    if thickness is None:
        desc.missing.append("the sheet thickness that turns its in-plane stress into a 3D stress")
        return
    for stage in deformed:
        assert stage.deform is not None
        stage.deform.thickness = thickness[0]
        if window is not None:
            stage.deform.average_every = window[0]
    desc.note("stress.thickness", "rules", f"{thickness[0]:g} angstrom ('{thickness[1]}'): stress = sum of the "
              "per-atom stresses (compute stress/atom) / (lx ly thickness)")
    if window is not None:
        desc.note("stress.average", "rules", f"each sample the mean over {window[0]} steps ('{window[1]}')")
