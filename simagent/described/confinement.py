"""Molecules confined in regions: inserted at random inside one block, held inside another by a wall
on its surface, and shifted rigidly before the run (regions, walls and groups of a described
simulation; the typed parts are simagent.described.groups' Region, RegionWall and Displacement and
simagent.described.mixtures' RandomPlacement).

Reading rules (each records the words it read):
- 'inserted at random within a smaller cubic region (-70 to 70 A)', 'placed randomly inside the
  cube from -70 to 70': the molecules of a molecular system are made by random insertion with an
  overlap check (create_atoms random) inside a block with that span; no grid and no preparation
  minimisation (the text states its own start, and the insertion's overlap check stands for the
  minimisation).
- 'confined within an inner region (-80 to 80 A) by a harmonic wall', 'a 9-3 LJ wall on the
  surface of the cube from -80 to 80 keeps the atoms inside': a wall on the block's surface (fix
  wall/region) of the named style, with the constants the sentence states (epsilon or force
  constant, sigma, cutoff); unstated constants are missing unless an example fills them. The wall's
  energy is counted in the potential energy only when the text says so (LAMMPS's default: not).
- One span for a region, in a region called cubic or a cubic box, spans every axis.
- 'displace_atoms all move 0.05 0.9 0.4 units box' quoted, or 'every atom is shifted by (0.05,
  0.9, 0.4)': a rigid displacement before the first stage (a quoted command without units is in
  lattice units, LAMMPS's default; prose in distance units).
- A box stated by its edge lengths alone, in a text whose regions are given about the origin
  (a span from -70 to 70), is centred on the origin (the regions lie inside it only then).

`fill_wall_example`: a text that states the setup of LAMMPS examples/wall (in.wall.block: 5000
TIP3P waters in a 200 A cube, inserted in -70..70, a harmonic wall on -80..80, LJ + Coulomb cut at
8 A, 300 K) gets the example's unstated values through simagent.described.example_fill: the seeds,
the overlap distance, the wall's constants and its energy in pe, SHAKE's tolerance, the thermostat
damping and thermo every step. Every number of the text must be read by this module's ledger, or
nothing is filled.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from simagent.described.example_fill import NUM, Example, StatedNumbers
from simagent.described.group_reading import _LAYOUT_WORDS, _REQUEST, LAYOUT_UNSUPPORTED
from simagent.described.groups import Displacement, Layout, Region, RegionWall
from simagent.described.mixtures import DEFAULT_MAX_TRIES, RandomPlacement

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

RANDOM_NAME = "several atom types or random placement"  # reading.UNSUPPORTED's
INSERTION, CONFINEMENT = "insertion", "confinement"  # the regions' names
_UNIT = r"\s*(?:angstrom|a\b|nm|sigma)?"
# a span: '(-70 angstrom to 70 angstrom)', 'from -70 to 70', 'between -80 and 80', '[-80, 80]'
_SPAN = re.compile(rf"(?:\(|\[|\bfrom |\bbetween |\bspanning )\s*{NUM}{_UNIT}\s*(?:to|and|,|\.\.)\s*{NUM}{_UNIT}")
_RANDOM = re.compile(r"\b(?:random(?:ly)?|at random)\b[^.;]{0,40}?\b(?:insert|plac|creat|put|add|distribut)\w*|"
                     r"\b(?:insert|plac|creat|put|add|distribut)\w*\b[^.;]{0,40}?\b(?:at random|randomly)\b")
_NO_SPAN = r"(?:(?!(?:\(|\[|\bfrom |\bbetween |\bspanning )\s*-?\d)[^.;])*?"  # not past another span
_REGION_WORD = re.compile(r"\b(?:region|block|cube|box|volume)\b")
_WALL_STYLES = [(r"\bharmonic\b", "harmonic"), (r"\b9-3\b|\b9/3\b|lj ?93", "lj93"), (r"\b12-6\b|lj ?126", "lj126"),
                (r"\b10-4-3\b|lj ?1043", "lj1043")]
_CONFINE = re.compile(r"\bconfin\w*|\bkept (?:inside|within)|\bkeeps?\b[^.;]{0,30}\b(?:inside|within)|\bheld (?:inside|"
                      r"within)|\brestrain\w*")
_DISPLACE_COMMAND = re.compile(rf"displace_atoms\s+([a-z]\w*)\s+move\s+{NUM}\s+{NUM}\s+{NUM}"
                               r"(?:\s+units\s+(box|lattice))?")
_DISPLACE_PROSE = re.compile(rf"\b(all atoms|every atom|each atom|the whole system|all particles|every particle)\b"
                             rf"[^.;]{{0,30}}?\b(?:displaced|shifted|translated|moved)\b[^.;(]{{0,30}}?\bby\b[^.;(]{{0,30}}"
                             rf"\(\s*{NUM}\s*,\s*{NUM}\s*,\s*{NUM}\s*\)")
_ENERGY_COUNTED = re.compile(r"wall(?:'s)? (?:energy|potential energy)[^.;]{0,40}\b(?:included|counted|part of|added)|"
                             r"(?:include|count|add)\w*[^.;]{0,30}\bwall(?:'s)? energy")


def _span_near(sentence: str, anchor: re.Match) -> re.Match | None:
    """The span a phrase states: the first after its anchor word, else the last before it (one sentence
    may state two regions: 'inserted at random in (-70 to 70), and a wall keeps them inside -80 to 80')."""
    spans = list(_SPAN.finditer(sentence))
    after = [m for m in spans if m.start() >= anchor.end()]
    before = [m for m in spans if m.end() <= anchor.start()]
    return after[0] if after else before[-1] if before else None


def _sentences(low: str) -> list[str]:
    return re.split(r"(?<=[.;])\s+(?=[a-z])", low)


def _bounds(desc: SimulationDescription, sentence: str, span: re.Match) -> tuple[float | None, ...] | None:
    """A block's bounds from one span: on every axis, when the region is called cubic (or a cube) or
    the box is a cube; else None."""
    lo, hi = float(span.group(1)), float(span.group(2))
    edges = {round(h - lo_, 9) for lo_, h in zip(desc.box.lo, desc.box.hi, strict=True)} if desc.box else set()
    if lo >= hi or not (re.search(r"\bcub(?:e|ic)\b", sentence) or len(edges) == 1):
        return None
    return (lo, hi) * 3


def _block(desc: SimulationDescription, layout: Layout, sentence: str, anchor: re.Match | None, name: str,
           what: str) -> tuple[re.Match, tuple[float | None, ...]] | bool:
    """The block region `name` a phrase states (the span nearest its anchor word), added to the layout:
    (span, bounds); False if the phrase states no span; True (read, the extent listed missing) if its
    one span cannot be taken to hold on every axis."""
    span = _span_near(sentence, anchor) if anchor else None
    if span is None:
        return False
    bounds = _bounds(desc, sentence, span)
    if bounds is None:
        desc.missing.append(f"the extent of {what} on every axis")
        return True
    layout.regions.append(Region(name=name, style="block", bounds=bounds, box_units=True))
    return span, bounds


def read_confinement(desc: SimulationDescription, low: str) -> None:
    """The regions, the wall and the displacement of the module docstring; lifts the refusal of
    regions and walls when every sentence about them was read, and that of random placement when the
    molecules' insertion was."""
    used: set[int] = set()
    sentences = _sentences(low)
    layout = desc.layout or Layout()
    for n, s in enumerate(sentences):
        if desc.molecular is not None and _RANDOM.search(s) and _REGION_WORD.search(s) and _insertion(desc, layout, s):
            used.add(n)
        if re.search(r"\bwalls?\b", s) and _CONFINE.search(s) and _region_wall(desc, layout, s):
            used.add(n)
        if _displacement(desc, layout, s):
            used.add(n)
    if not used:
        return
    desc.layout = layout
    _centre_box(desc, layout)
    unread = [s for n, s in enumerate(sentences) if n not in used and _LAYOUT_WORDS.search(s)
              and not (n == 0 and _REQUEST.search(s))]
    if not unread and LAYOUT_UNSUPPORTED in desc.unsupported:
        desc.unsupported.remove(LAYOUT_UNSUPPORTED)


def _insertion(desc: SimulationDescription, layout: Layout, sentence: str) -> bool:
    system = desc.molecular
    assert system is not None
    if any(p.molecule == "water" for p in desc.placements) or not system.count_of("water"):
        return False
    found = _block(desc, layout, sentence, _RANDOM.search(sentence), INSERTION, "the insertion region")
    if not isinstance(found, tuple):
        return found
    span, bounds = found
    desc.placements.insert(0, RandomPlacement(atom_type=0, count=system.count_of("water"), seed=system.seed,
                                              region=INSERTION, overlap=system.overlap, max_tries=DEFAULT_MAX_TRIES,
                                              molecule="water"))
    system.prepare = False
    desc.origin.pop("molecular.preparation", None)
    desc.note("molecular.placement", "rules", f"{span.group(0)}: the {system.count_of('water')} waters inserted at "
              f"random (create_atoms random, random orientations) in the block {bounds[0]:g} to {bounds[1]:g} on every "
              "axis; no grid and no minimisation before the first stage (the text states its own start)")
    desc.note("molecular.insertion", "default", f"seed {system.seed}, no atom closer than {system.overlap:g} to "
              f"another molecule's, {DEFAULT_MAX_TRIES} attempts per molecule: none stated")
    if RANDOM_NAME in desc.unsupported:
        desc.unsupported.remove(RANDOM_NAME)
    return True


def _region_wall(desc: SimulationDescription, layout: Layout, sentence: str) -> bool:
    style = next((name for pattern, name in _WALL_STYLES if re.search(pattern, sentence)), None)
    if style is None or not _REGION_WORD.search(sentence):
        return False
    found = _block(desc, layout, sentence, re.search(r"\bwalls?\b", sentence), CONFINEMENT, "the wall's region")
    if not isinstance(found, tuple):
        return found
    _, bounds = found
    values: dict[str, float] = {}
    for name, words in (("epsilon", r"epsilon|force constant|spring constant|strength|stiffness"), ("sigma", "sigma"),
                        ("cutoff", r"cut-?off(?: distance)?")):
        hit = re.search(rf"(?:{words})\s*(?:=|of|is)?\s*{NUM}", sentence)
        if hit:
            values[name] = float(hit.group(1))
    desc.note("wall", "rules", f"{sentence[:160]}: a {style} wall on the surface of the block {bounds[0]:g} to "
              f"{bounds[1]:g} (fix wall/region)" + "".join(f"; {k} {v:g}" for k, v in values.items()))
    if style == "harmonic" and "sigma" not in values:  # E = epsilon (r - r_c)^2: LAMMPS ignores sigma
        values["sigma"] = 0.0
        desc.note("wall.sigma", "default", "0: the harmonic wall's energy has no sigma (LAMMPS ignores it)")
    energy = _ENERGY_COUNTED.search(sentence) is not None
    layout.region_walls.append(RegionWall(region=CONFINEMENT, style=style, energy=energy, **values))
    if not energy:
        desc.note("wall.energy", "default", "not counted in the potential energy: LAMMPS's default (fix_modify energy "
                  "no), none stated")
    if len(values) < 3:  # an example may fill them (fill_wall_example); else the text leaves them out
        desc.missing.append(WALL_GAP)
    return True


WALL_GAP = "the wall's constants (epsilon, sigma, cutoff)"


def _displacement(desc: SimulationDescription, layout: Layout, sentence: str) -> bool:
    hit = _DISPLACE_COMMAND.search(sentence)
    if hit:
        group = hit.group(1)
        if group != "all":
            desc.missing.append(f"the group {group!r} displace_atoms moves")
            return True
        layout.displacements.append(Displacement(move=(float(hit.group(2)), float(hit.group(3)), float(hit.group(4))),
                                                 box_units=hit.group(5) == "box"))
        desc.note("displacement", "rules", hit.group(0) + ("" if hit.group(5) else " (lattice units: displace_atoms' "
                                                                                   "default)"))
        return True
    hit = _DISPLACE_PROSE.search(sentence)
    if hit:
        layout.displacements.append(Displacement(move=(float(hit.group(2)), float(hit.group(3)),
                                                       float(hit.group(4)))))
        desc.note("displacement", "rules", hit.group(0) + " (distance units)")
        return True
    return False


def _centre_box(desc: SimulationDescription, layout: Layout) -> None:
    box = desc.box
    if box is None or box.lo != (0.0, 0.0, 0.0):
        return
    stated = [b for r in layout.regions if r.box_units and r.bounds for b in r.bounds if b is not None]
    if not stated or min(stated) >= 0:
        return
    half = tuple(h / 2 for h in box.hi)
    if any(b is not None and abs(b) > half[i // 2] for r in layout.regions if r.bounds for i, b in enumerate(r.bounds)):
        desc.missing.append("where the stated regions lie in the box")
        return
    desc.box = box.model_copy(update={"lo": tuple(-h for h in half), "hi": half})
    desc.note("box.centre", "rules", f"centred on the origin, {-half[0]:g} to {half[0]:g}: the regions the text "
              f"states are given about the origin ({min(stated):g} to {max(stated):g})")


# ---------------------------------------------------------------------------------------------
# LAMMPS examples/wall (in.wall.block)
# ---------------------------------------------------------------------------------------------
WALL_BLOCK = Example(
    name="LAMMPS examples/wall (in.wall.block)",
    signature={"water": "tip3p", "molecules": 5000, "box": (200.0, 200.0, 200.0), "insertion": (-70.0, 70.0),
               "wall_region": (-80.0, 80.0), "wall_style": "harmonic", "cutoff": 8.0, "temperature": 300.0},
    optional={"epsilon_o": 0.1521, "sigma_o": 3.1507, "bond": 0.9574, "angle": 104.52},
    # create_atoms 0 random 5000 12345 block2 mol water 12345 overlap 2 (maxtry: LAMMPS's default 10);
    # fix wall/region block1 harmonic 1000.0 0.0 2.5 + fix_modify energy yes; velocity all create 300.0 12345
    # before fix nvt temp 300 300 100.0 and fix shake 0.001 10 10000 b 1 a 1; thermo 1
    fills={"seed": 12345, "overlap": 2.0, "max_tries": 10, "wall": (1000.0, 0.0, 2.5), "velocity_seed": 12345,
           "shake": (0.001, 10), "t_damp": 100.0, "thermo_every": 1},
    runs={"steps": 100, "timestep": 1.0})


def _read(low: str) -> StatedNumbers:
    """Every number a retelling of in.wall.block states, by role (the ledger of the fill)."""
    s = StatedNumbers(low)
    s.take("molecules", r"\b(\d+) (?:rigid )?(?:tip3p )?water molecules\b", convert=int)
    s.take("box", rf"{NUM}\s*[*x]\s*{NUM}\s*[*x]\s*{NUM}\s*(?:angstrom|a)\b", groups=(1, 2, 3))
    s.mark("cubed", r"(?:angstrom|a)\^(3)\b")
    s.take("temperature", rf"\btemperature (?:of |at |= ?)?{NUM}\s*k\b|\bat {NUM}\s*k\b", groups=(1, 2))
    s.take("insertion", rf"(?:{_RANDOM.pattern}){_NO_SPAN}{_SPAN.pattern}", groups=(1, 2))
    if s.take("wall_region", rf"\bwalls?\b{_NO_SPAN}{_SPAN.pattern}", groups=(1, 2)) is None:
        s.take("wall_region", rf"{_SPAN.pattern}{_NO_SPAN}\bwalls?\b", groups=(1, 2))
    s.take("cutoff", rf"\bcut[- ]?off(?: distance| radius)? (?:of |= ?|at |is )?{NUM}")
    s.take("epsilon_o", rf"epsilon\s*=?\s*{NUM}")
    s.take("sigma_o", rf"sigma\s*=?\s*{NUM}")
    s.take("bond", rf"bond length (?:is )?(?:fixed at |of |= ?){NUM}")
    s.take("angle", rf"angle (?:is )?(?:fixed at |of |= ?){NUM}")
    s.take("displacement", rf"displace_atoms\s+\w+\s+move\s+{NUM}\s+{NUM}\s+{NUM}|\bby[^.;(]{{0,30}}\(\s*{NUM}\s*,"
                           rf"\s*{NUM}\s*,\s*{NUM}\s*\)", groups=(1, 2, 3, 4, 5, 6))
    s.take("steps", rf"\b{NUM} (?:md |integration )?(?:time ?)?steps\b", convert=lambda x: int(float(x)))
    s.take("timestep", rf"time ?step[^.;0-9]{{0,20}}?{NUM}\s*fs\b|{NUM}\s*fs time ?step", groups=(1, 2))
    return s


def fill_wall_example(desc: SimulationDescription, low: str) -> None:
    """A text that states in.wall.block's setup (module docstring): the example's unstated values."""
    system, layout = desc.molecular, desc.layout
    if system is None or layout is None or not layout.region_walls or system.water is None:
        return
    s = _read(low)
    box = s.value("box")
    temperature = s.value("temperature")
    stated = {"water": system.water.name, "molecules": s.value("molecules"), "box": box, "insertion":
              s.value("insertion"), "wall_region": s.value("wall_region"), "wall_style": layout.region_walls[0].style,
              "cutoff": s.value("cutoff"), "temperature": temperature, "epsilon_o": s.value("epsilon_o"),
              "sigma_o": s.value("sigma_o"), "bond": s.value("bond"), "angle": s.value("angle")}
    fill = WALL_BLOCK.fill(desc, WALL_BLOCK.compare(stated, unread=s.unread()),
                           describe="5000 TIP3P waters in a 200 A cube inserted in -70..70, a harmonic wall on "
                                    "-80..80, LJ + Coulomb cut at 8 A, 300 K")
    if fill is None:
        return
    f = WALL_BLOCK.fills
    fill.departures({"steps": s.value("steps"), "timestep": s.value("timestep")})
    wall = layout.region_walls[0]
    if WALL_GAP in desc.missing:
        unstated = {k: v for k, v in zip(("epsilon", "sigma", "cutoff"), f["wall"], strict=True)
                    if getattr(wall, k) is None}
        layout.region_walls[0] = wall = wall.model_copy(update=unstated)
        desc.missing.remove(WALL_GAP)
        fill.note("wall.constants", ", ".join(f"{k} {v:g}" for k, v in unstated.items()) + " (harmonic: epsilon in "
                  "kcal/mol/A^2, cutoff in A; sigma is not used by the harmonic form)")
    if "wall.energy" in desc.defaults:
        layout.region_walls[0] = wall.model_copy(update={"energy": True})
        fill.note("wall.energy", "counted in the potential energy (fix_modify energy yes)")
    placement = next((p for p in desc.placements if p.molecule == "water"), None)
    if placement is not None:
        placement.seed, placement.mol_seed = f["seed"], f["seed"]
        placement.overlap, placement.max_tries = f["overlap"], f["max_tries"]
        desc.origin.pop("molecular.insertion", None)
        fill.note("molecular.insertion", f"seed {f['seed']} for the positions and the orientations, no atom closer "
                                         f"than {f['overlap']:g} A to another molecule's, {f['max_tries']} attempts "
                                         "per molecule (LAMMPS's default)")
    if desc.velocity is not None and desc.origin.get("velocity") is not None and \
            desc.origin["velocity"].source == "default":
        desc.velocity.seed = f["velocity_seed"]
        fill.note("velocity", f"created at {desc.velocity.temperature:g} K with seed {f['velocity_seed']}, before the "
                              "SHAKE constraints are defined")
    if system.shake is not None and desc.origin.get("molecular.shake_tolerance") is not None:
        system.shake.tolerance, system.shake.iterations = f["shake"]
        fill.note("molecular.shake_tolerance", f"{f['shake'][0]:g} tolerance, {f['shake'][1]} iterations")
    for stage in desc.stages:
        key = f"{stage.name}.t_damp"
        if stage.dynamics is not None and stage.dynamics.thermostat and key in desc.defaults:
            stage.dynamics.t_damp = f["t_damp"]
            fill.note(key, f"{f['t_damp']:g} fs")
    if desc.thermo_every is None:
        desc.thermo_every = f["thermo_every"]
        fill.note("thermo_every", f"{f['thermo_every']}: thermo output (and the averages over it) every step")
