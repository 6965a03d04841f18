"""Generalised stacking-fault scans in a described simulation (the part of simagent.described.model
for the energy curve of a slip plane).

A text that computes a generalised stacking-fault (GSF) energy builds a crystal as two halves stacked
along z, one on each side of a slip plane, displaces one half rigidly by a step along the slip
direction a number of times, and minimises after every displacement with the atoms free to move
along the plane normal only (LAMMPS fix setforce 0 0 NULL). The description holds it as
- a layout: two block regions of the stated thickness (box units) either side of the slip plane at
  the middle of the box's z extent, each filled with lattice atoms on its own, and a group per half;
- stages: a minimisation of the undisplaced crystal (the reference energy E_0), then one stage per
  displacement (Stage.displace, then the minimisation): a scan of N steps is N + 1 minimisations;
- `scan` (SlipScan): which half moves and by what step, the count, the relaxed direction.
The metric (tools.lammps.described_stacking): GSF_n = (E_n - E_0) / A for n = 1..N, A the slip-plane
area (the box's x-y face), in J/m^2 (16.0217662 J/m^2 per eV/Å^2); the scan's average is their mean.

Reading rules (each records the words it read): the scan's words ('stacking fault', 'slip plane');
the moved half ('the lower half is shifted'; top/bottom, upper/lower) and its step with its sign
('by -1 Å', '(-0.5 angstrom)'); the count ('a loop (n = 40)', 'repeated 40 times', '40 increments');
the thickness of each half ('20 Å each', 'each half 15 Å thick'); the minimiser and its tolerances
('etol and ftol of 1e-10', 'energy and force tolerances 1e-8'); the forces held at zero ('forces set
to zero in x and y', 'relaxed only along z', 'setforce 0 0 NULL'). Every number of the text is read
by one of these rules or by the general reader (box, lattice constant, orientation); a number no
rule reads stops the scan, named as stated and not understood.

Documented defaults (report.md lists them): the slip direction when the text names none (x, a <112>
direction of the (111) plane, when z is <111>); the slip plane at the middle of the box's z extent
(a lattice plane on a half's bound stops the scan: roundoff would split its atoms); box
edges the text rounds from whole lattice periods taken as those periods; the first minimisation
that gives E_0; the minimisation caps.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from simagent.described.example_fill import StatedNumbers
from simagent.units import convert

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

NUM = r"(-?\d+(?:\.\d+)?)"
NUM_E = r"(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
J_PER_M2_PER_EV_PER_A2 = convert(1.0, "eV/angstrom^2", "J/m^2")  # 16.0217662 (simagent.units' conversion)
PERIOD_TOLERANCE = 0.001  # a periodic box edge this close (relative) to whole lattice periods is those periods


class SlipScan(BaseModel):
    """One half of a two-half crystal (`moved`, a group) displaced `count` times by `step` Å along
    `axis`, the other half (`held`) never displaced; every state minimised with the atoms free to move
    along `relaxed` only. The slip plane is normal to z at `plane` (Å)."""

    moved: str
    held: str
    axis: Literal["x", "y"]
    step: float = Field(description="Å per displacement, signed along the axis")
    count: int = Field(gt=0)
    plane: float
    relaxed: Literal["z"] = "z"

    @property
    def move(self) -> tuple[float, float, float]:
        return (self.step, 0.0, 0.0) if self.axis == "x" else (0.0, self.step, 0.0)


SCAN_WORDS = re.compile(r"stacking[- ]fault|\bgsfe?\b|gamma[- ]surface|slip plane")
_SIDE = {"top": "bottom", "bottom": "top", "upper": "lower", "lower": "upper"}
_PART = r"(?:half|halves|part|block|region|slab|portion)"
_VERB = r"(?:displac|shift|mov|slid|translat)\w*"
_MOVED = (re.compile(rf"\b(top|upper|bottom|lower) {_PART}\b(?: of the (?:crystal|system|box|slab))?[^.;]{{0,40}}?"
                     rf"\b{_VERB}"),
          re.compile(rf"\b{_VERB} (?:the )?(top|upper|bottom|lower) {_PART}\b"))
_STEP = re.compile(r"\(?\s*(?:by |of |in steps of |increments? of |steps? of )?" + NUM + r"\s*(?:a|angstroms?)\b")
_AXIS = re.compile(r"\b(?:along|in) (?:the )?(?:\+|positive |negative |-)?([xy])(?:[- ](?:axis|direction))?\b")
_COUNT = re.compile(r"\bloop\s*\(?\s*(?:of\s*)?(?:n\s*=\s*)?(\d+)\s*\)?|\b(\d+)\s*(?:times|(?:incremental |successive |"
                    r"rigid |equal )?(?:increments|displacements|shifts))\b")
_THICK = re.compile(NUM + r"\s*(?:a|angstroms?)\b\s*(?:each|thick|apiece|in thickness)|\beach (?:half|region|block|"
                    r"part|slab) (?:is |being |of )?" + NUM + r"\s*(?:a|angstroms?)\b")
_TOLS = (re.compile(r"\betol\s*(?:&|and|,|/)\s*ftol\b\s*(?:(?:to be|are|both|=|of|:|set to|equal to|each)\s*)*"
                    + NUM_E),
         re.compile(r"\benergy and force (?:convergence )?tolerances?\s*(?:(?:to be|are|both|=|of|:|set to)\s*)*"
                    + NUM_E))
_ETOL = re.compile(r"\betol\s*(?:=|of|:|is)?\s*" + NUM_E)
_FTOL = re.compile(r"\bftol\s*(?:=|of|:|is)?\s*" + NUM_E)
_RELAX = re.compile(r"forces?[^.;]{0,40}?(?:zero|\b0\b)[^.;]{0,20}?\bx[- ]?(?:and|,|&)[- ]?(?:the )?y\b|"
                    r"setforce 0 0 null|(?:relax|minimi[sz]|mov)\w*[^.;]{0,30}?only (?:along|in) (?:the )?z\b|"
                    r"\bz(?:[- ](?:direction|axis))? (?:is |are )?(?:allowed|free) to (?:relax|minimi[sz]e|move)")
_MINIMISER = {"cg": r"conjugate[- ]gradient|\bcg\b", "sd": r"steepest[- ]descent", "fire": r"\bfire\b"}
_ITERATIONS = re.compile(r"(?:at most|maximum of|max(?:imum)? (?:number of )?iterations? (?:of )?)\s*(\d+)"
                         r"(?: iterations?)?")


def lattice_period(style: str, direction: tuple[int, int, int], constant: float) -> float | None:
    """The shortest lattice translation along `direction` (a cubic lattice's Miller indices) in Å:
    fcc a|v|/2 when the indices' sum is even (else a|v|), bcc a|v|/2 when all are odd, sc a|v|."""
    g = math.gcd(*direction)
    if g == 0:
        return None
    v = [c // g for c in direction]
    length = constant * math.sqrt(sum(c * c for c in v))
    if style == "fcc":
        return length / 2 if sum(v) % 2 == 0 else length
    if style == "bcc":
        return length / 2 if all(c % 2 for c in v) else length
    return length if style == "sc" else None


def _numbers(low: str) -> StatedNumbers:
    """The ledger of the numbers a scan's text states: those the scan reads and those the general reader
    reads (box, lattice constant, orientation, the unit of the answer)."""
    s = StatedNumbers(low)
    s.take("box", rf"(?:box|block|domain|cell)[^.;0-9]{{0,40}}?{NUM}\s*(?:x|\*|by)\s*{NUM}\s*(?:x|\*|by)\s*{NUM}",
           groups=(1, 2, 3))
    s.take("lattice", r"lattice (?:constant|parameter|spacing)\s*(?:of|=|:|is)?\s*" + NUM)
    for hit in re.finditer(r"\[\s*(-?\d)[\s,]+(-?\d)[\s,]+(-?\d)\s*\]", low):  # crystal directions
        s.spans += [hit.span(g) for g in (1, 2, 3)]
    for hit in re.finditer(r"setforce ((?:-?\d+(?:\.\d+)?|null) (?:-?\d+(?:\.\d+)?|null) (?:-?\d+(?:\.\d+)?|null))",
                           low):  # the constraint written as LAMMPS's command (read by _RELAX)
        s.spans.append(hit.span(1))
    s.mark("unit", r"(?:j|mj|ev)\s*/\s*(?:m|a|angstrom|nm)\s*\^\s*(2)")
    s.mark("plane", r"[({]\s*(-?1\s*-?1\s*-?1|111|-?1-?1-?1)\s*[)}]")  # a (111) plane named by its indices
    return s


def _take(s: StatedNumbers, key: str, pattern: re.Pattern, text: str) -> re.Match | None:
    """The first match of `pattern` in `text` (a part of the ledger's text), its number groups read."""
    hit = pattern.search(text)
    if hit is None:
        return None
    at = s.low.find(text)
    for g in range(1, (pattern.groups or 0) + 1):
        if hit.group(g) is not None:
            s.spans.append((at + hit.start(g), at + hit.end(g)))
    s.read[key] = (hit.group(0), hit.group(0))
    return hit


def _moved(low: str) -> tuple[str, str, str] | None:
    """(the moved half's word, its sentence, the words) of the sentence that displaces a half."""
    for sentence in re.split(r"(?<=[.;])\s+", low):
        for pattern in _MOVED:
            hit = pattern.search(sentence)
            if hit:
                return hit.group(1), sentence, hit.group(0)
    return None


def read_scan(desc: SimulationDescription, low: str) -> None:
    """A generalised stacking-fault scan the text states (module docstring); anything else stays as read."""
    from simagent.described.groups import Displacement, Group, Layout, Region, RegionFill
    from simagent.described.model import DEFAULT_MAX_EVALUATIONS, DEFAULT_MAX_ITERATIONS, Minimize, Stage

    moved = _moved(low) if SCAN_WORDS.search(low) else None
    if moved is None:
        return
    side, sentence, moved_words = moved
    s = _numbers(low)
    after = sentence[sentence.find(moved_words):]
    step = _take(s, "step", _STEP, after)
    count = _take(s, "count", _COUNT, low)
    thick = _take(s, "thickness", _THICK, low)
    tols = next((hit for i, p in enumerate(_TOLS) if (hit := _take(s, f"tolerances{i}", p, low))), None)
    etol, ftol = (_take(s, "etol", _ETOL, low), _take(s, "ftol", _FTOL, low)) if tols is None else (None, None)
    iterations = _take(s, "iterations", _ITERATIONS, low)
    relax = _RELAX.search(low)
    gaps = []
    if step is None:
        gaps.append("the step each displacement moves the half by (in Å)")
    if count is None:
        gaps.append("how many displacements are made")
    elif int(count.group(1) or count.group(2)) < 1:
        gaps.append(f"how many displacements are made ('{count.group(0).strip()}' makes none)")
    if step is not None and float(step.group(1)) == 0:
        gaps.append(f"the step each displacement moves the half by ('{step.group(0).strip()}' moves nothing)")
    if thick is None:
        gaps.append("the thickness of each half (in Å)")
    if tols is None and (etol is None or ftol is None):
        gaps.append("the minimisation tolerances (etol, ftol)")
    if relax is None:
        gaps.append("the directions the atoms relax along in the minimisations")
    if desc.units != "metal":
        gaps.append("metal units (the scan's lengths are in Å and its energies in eV)")
    if desc.lattice is None or desc.lattice.orient is None or desc.box is None:
        gaps.append("the oriented crystal and its box")
    if desc.boundary[2] == "p":
        gaps.append("a non-periodic boundary normal to the slip plane (z)")
    if desc.run_stages():
        gaps.append("what the MD runs stated beside the scan are for")
    unread = s.unread()
    if unread:
        gaps.append(f"what the numbers {', '.join(unread)} are (stated, not understood)")
    if gaps:
        desc.missing += [f"for the stacking-fault scan, {g}" for g in gaps]
        return
    assert step is not None and count is not None and thick is not None and desc.lattice is not None
    assert desc.box is not None and desc.lattice.orient is not None
    axis_hit = _AXIS.search(after)
    axis = axis_hit.group(1) if axis_hit else _slip_axis(desc)
    if axis is None:
        desc.missing.append("for the stacking-fault scan, the slip direction (x or y)")
        return
    if axis_hit is None:
        desc.note("scan.axis", "default", f"{axis}: the slip direction the text names is not an axis; the slip plane "
                  "is normal to z (the halves are stacked along z) and x is its <1 1 2> direction, along which an fcc "
                  "(1 1 1) plane's partial dislocations glide and its GSF curve (the intrinsic stacking fault at "
                  "a/sqrt(6)) is scanned")
    else:
        desc.note("scan.axis", "rules", axis_hit.group(0))
    # the box: in Å, its periodic edges whole lattice periods
    notes = _box_in_angstrom(desc)
    box = desc.box
    assert box is not None
    thickness = float(thick.group(1) or thick.group(2))
    plane = (box.lo[2] + box.hi[2]) / 2
    z0 = plane - thickness
    if z0 < box.lo[2]:
        desc.missing.append(f"for the stacking-fault scan, room for two {thickness:g} Å halves in the box's z extent")
        return
    on_plane = [z for z in (z0, plane, plane + thickness) if _on_lattice_plane(desc, z)]
    if on_plane:
        desc.missing.append(f"for the stacking-fault scan, halves whose bounds miss the lattice planes (z = "
                            f"{', '.join(f'{z:g}' for z in on_plane)} Å lies on one, whose atoms roundoff would split "
                            "between the halves)")
        return
    held = _SIDE[side]
    lower, upper = (side, held) if side in ("bottom", "lower") else (held, side)
    desc.layout = Layout(regions=[Region(name=lower, style="block", bounds=(None, None, None, None, z0, plane),
                                         box_units=True),
                                  Region(name=upper, style="block", bounds=(None, None, None, None, plane,
                                                                            plane + thickness), box_units=True)],
                         groups=[Group(name=lower, region=lower), Group(name=upper, region=upper)],
                         fills=[RegionFill(atom_type=desc.lattice_type, region=lower),
                                RegionFill(atom_type=desc.lattice_type, region=upper)])
    desc.note("layout", "rules", f"two halves, {thick.group(0)}: {lower} z {z0:g}-{plane:g} Å, {upper} "
              f"z {plane:g}-{plane + thickness:g} Å, atoms created in each region on its own")
    desc.note("layout.placement", "default", f"the slip plane at the middle of the box's z extent (z = {plane:g} Å), "
              f"the halves {z0:g}-{plane:g} and {plane:g}-{plane + thickness:g} Å: the text places them nowhere, and "
              "with a non-periodic z boundary only their thickness matters; no lattice plane lies on a bound, so "
              "every plane is made whole (the box's lower face z = 0 holds one)")
    # the stages: E_0, then one minimisation per displacement
    style = next((name for name, words in _MINIMISER.items() if re.search(words, low)), None)
    maxiter = int(iterations.group(1)) if iterations else DEFAULT_MAX_ITERATIONS
    e, f = (float(tols.group(1)), float(tols.group(1))) if tols else (float(etol.group(1)), float(ftol.group(1)))
    minimize = Minimize(style=style or "cg", etol=e, ftol=f, max_iterations=maxiter,
                        max_evaluations=max(DEFAULT_MAX_EVALUATIONS, 10 * maxiter))
    value = float(step.group(1))
    scan = SlipScan(moved=side, held=held, axis=axis, step=value, count=int(count.group(1) or count.group(2)),
                    plane=plane)
    desc.stages = [Stage(name="min1", kind="minimize", minimize=minimize,
                         evidence="the undisplaced crystal, minimised: its energy is the reference E_0")]
    desc.stages += [Stage(name=f"min{n + 1}", kind="minimize", minimize=minimize.model_copy(),
                          displace=Displacement(group=side, move=scan.move, box_units=True),
                          evidence=f"displacement {n} of {scan.count}: the {side} half by {value:g} Å along {axis} "
                                   f"(in all {n * value:g} Å), then minimised") for n in range(1, scan.count + 1)]
    desc.scan = scan
    desc.average_stage = None
    desc.note("scan", "rules", f"{moved_words} {step.group(0).strip()}; {count.group(0)}; the {held} half never "
              "displaced")
    desc.note("scan.minimize", "rules", (tols.group(0) if tols else f"{etol.group(0)}; {ftol.group(0)}")
              + (f"; {style}" if style else ""))
    if style is None:
        desc.note("scan.minimize.style", "default", "cg: LAMMPS's min_style default (the text names no minimiser)")
    if iterations is None:
        desc.note("scan.minimize.max_iterations", "default", f"{maxiter} iterations and "
                  f"{minimize.max_evaluations} force evaluations per minimisation: LAMMPS needs caps and the text "
                  "states none; the analysis says when a minimisation stops at a cap instead of at its tolerance")
    desc.note("scan.relaxed", "rules", f"{relax.group(0)}: fix setforce 0 0 NULL on all atoms in every minimisation "
              f"(the atoms move along z only; the {held} half keeps its x-y positions)")
    desc.note("scan.reference", "default", "a first minimisation of the undisplaced crystal, with the same settings "
              "and constraint, gives the reference energy E_0 of GSF_n = (E_n - E_0) / A (an unrelaxed E_0 would "
              "count the free surfaces' relaxation as fault energy)")
    for key, why in notes:
        desc.note(key, "default", why)
    _clear_gaps(desc, low)


def plane_spacing(style: str, normal: tuple[int, int, int], constant: float) -> float | None:
    """The spacing of the lattice planes normal to `normal` that hold every atom (Å): fcc a/|v| when
    the indices are all odd, else a/(2|v|); bcc a/|v| when their sum is even, else a/(2|v|); sc a/|v|."""
    g = math.gcd(*normal)
    if g == 0:
        return None
    v = [c // g for c in normal]
    d = constant / math.sqrt(sum(c * c for c in v))
    if style == "fcc":
        return d if all(c % 2 for c in v) else d / 2
    if style == "bcc":
        return d if sum(v) % 2 == 0 else d / 2
    return d if style == "sc" else None


def _on_lattice_plane(desc: SimulationDescription, z: float, within: float = 1e-3) -> bool:
    """A height (Å) on one of the oriented lattice's planes normal to z (the lattice origin at 0)."""
    lat = desc.lattice
    if lat is None or lat.orient is None:
        return False
    d = plane_spacing(lat.style, lat.orient[2], lat.scale)
    shift = (lat.origin[2] if lat.origin else 0.0) * (lattice_period(lat.style, lat.orient[2], lat.scale) or 0.0)
    if d is None:
        return False
    offset = (z - shift) / d
    return abs(offset - round(offset)) * d < within


def _slip_axis(desc: SimulationDescription) -> str | None:
    """x when z is a <111> direction and x a <112> one (in the (111) plane): the partials' direction."""
    lat = desc.lattice
    if lat is None or lat.orient is None or lat.style != "fcc":
        return None
    x, _, z = lat.orient
    if sorted(abs(c) for c in z) == [1, 1, 1] and sorted(abs(c) for c in x) == [1, 1, 2]:
        return "x"
    return None


def _box_in_angstrom(desc: SimulationDescription) -> list[tuple[str, str]]:
    """The box in Å (box units); a periodic edge within PERIOD_TOLERANCE of whole periods of the oriented
    lattice is those periods (the text rounds them: taken literally, an edge a little longer than N
    periods puts a copy of the first lattice row a hair's breadth from the last through the periodic
    boundary, and a shorter one strains the crystal there). Returns the defaults to note."""
    from simagent.described.model import Box

    box, lat = desc.box, desc.lattice
    assert box is not None and lat is not None and lat.orient is not None
    lo, hi = list(box.lo), list(box.hi)
    notes = [("box.units", "Å (box units): in metal units the stated box numbers are lengths like the halves' "
              "thickness; as spacings of the oriented lattice (several Å each) they would make a box many times "
              "the halves' size")]
    for k, axis in enumerate("xyz"):
        if desc.boundary[k] != "p":
            continue
        period = lattice_period(lat.style, lat.orient[k], lat.scale)
        edge = hi[k] - lo[k]
        n = round(edge / period) if period else 0
        if period is None or n < 1:
            continue
        exact = n * period
        if 1e-9 < abs(edge - exact) <= PERIOD_TOLERANCE * edge:
            hi[k] = lo[k] + exact
            indices = " ".join(map(str, lat.orient[k]))
            notes.append((f"box.{axis}", f"{exact:.6g} Å: {n} periods of the [{indices}] direction ({period:.6g} Å "
                          f"each for {lat.style} {lat.scale:g} Å), which the text's {edge:g} rounds "
                          f"({(edge - exact) / exact:+.2%}); "
                          + ("an edge longer than the periods would put a copy of a lattice row "
                             f"{edge - exact:.3g} Å from another through the periodic boundary" if edge > exact else
                             f"an edge {exact - edge:.3g} Å shorter would strain the crystal at the periodic "
                             "boundary")))
    desc.box = Box(lo=(lo[0], lo[1], lo[2]), hi=(hi[0], hi[1], hi[2]), lattice_units=False)
    desc.origin.pop("box.orientation", None)  # (the box is in Å, not in the cubic lattice's units)
    stated = desc.origin.get("box")
    if stated is not None:
        desc.note("box", stated.source, stated.evidence.replace(" (lattice units, LAMMPS's region default)", " (Å)"))
    return notes


def _clear_gaps(desc: SimulationDescription, low: str) -> None:
    """What the general reader listed that the scan states: its regions, its minimisations' settings, its
    'run' (the scan has no MD run)."""
    if not re.search(r"cylind|cluster|obstacle|\bwall\b|sphere|indent", low):
        from simagent.described.group_reading import LAYOUT_UNSUPPORTED

        desc.unsupported = [u for u in desc.unsupported if u != LAYOUT_UNSUPPORTED]
    desc.missing = [m for m in desc.missing if m not in ("the minimisation tolerances (etol, ftol)",
                                                         "the minimisation's maximum iterations",
                                                         "a run length (steps)")]
