"""Bonded-particle pillars squeezed along their axis, following LAMMPS examples/bpm/poissons_ratio.

The text builds one cylindrical pillar of particles on an fcc lattice, lets it settle under NVE inside a
harmonic cylindrical wall (pair bpm/spring repulsion only), removes the wall, copies the pillar along x
(replicate N 1 1), bonds the particles of each copy to their neighbours within a distance range
(create_bonds many, one bond type per pillar with its own bpm/spring coefficients k, critical strain,
damping gamma and volume factor), then compresses all pillars between a held bottom slab and a top
slab moving at a constant velocity along -z, printing each pillar's lateral (x) and axial (z) extent.

When the numbers the text states that identify the set-up (box, cylinder radius and height, wall
radius; the lattice, copies, slabs and bonding range where stated) are the example's, the example
fills what the text leaves out (simagent.described.example_fill): where the box and cylinder sit, the
wall's height and coefficients, the pair coefficients, the timestep, the velocity seed, the special
bonds, the neighbor and communication settings, the bond style's keywords, and the velocities zeroed
before bonding. Every number in the text must be read here, or nothing is filled. What the text
states (run lengths, temperature, the top's velocity, the bond coefficients, the print interval) is
run as stated.

The metric (Poisson's ratio of each pillar) is defined in tools.lammps.described_pillars.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field, model_validator

from simagent.described.example_fill import NUM, Example, StatedNumbers

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

# the reading's refusals (reading.UNSUPPORTED) that a pillar set-up read here answers
TOPOLOGY_NAME = "molecular topology (bonds, angles, constraints)"
DEFORM_NAME = "box or flow deformation"
REGIONS_NAME = "regions, walls and groups of atoms"
REPLICATE_NAME = "replicate"
ANSWERED = (TOPOLOGY_NAME, DEFORM_NAME, REGIONS_NAME, REPLICATE_NAME)
# what the one-type LJ reading flags that pair bpm/spring answers
PAIR_GAPS = ("pair cutoff", "pair potential", "LJ epsilon", "LJ sigma")
SLAB_GAP = "the atom type of the slabs"  # region_reading's built solid: the pillars' slabs are their own atoms
_COUNT_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "eight": 8}


class SpringBond(BaseModel):
    """bond_coeff of bond_style bpm/spring with volume/factor yes: stiffness k, critical strain (0:
    never breaks), damping gamma, volume factor (how strongly a particle's local volume change acts)."""

    k: float = Field(gt=0)
    critical_strain: float = Field(ge=0)
    gamma: float = Field(ge=0)
    volume_factor: float


class BondedPillars(BaseModel):
    """One cylinder along z (`centre`, `radius`, z `bottom_z`..`top_z`) filled on the lattice, a
    harmonic cylindrical wall (`wall_radius`, z `wall_z`, `wall` = epsilon sigma cutoff) while it
    settles, `copies` along x after that (each copy one pillar, one bond type, `bonds[i]`), bonds
    within `bond_range`, the `bottom` slab held and the `top` slab moved at `top_velocity` along z."""

    centre: tuple[float, float]
    radius: float = Field(gt=0)
    bottom_z: float
    top_z: float
    wall_radius: float = Field(gt=0)
    wall_z: tuple[float, float]
    wall: tuple[float, float, float] = Field(description="fix wall/region harmonic: epsilon, sigma, cutoff")
    pair: tuple[float, float, float] = Field(description="pair_coeff of pair bpm/spring: k, cutoff, gamma")
    copies: int = Field(ge=1)
    bonds: list[SpringBond] = Field(min_length=1)
    bond_range: tuple[float, float]
    bonding_skin: float = Field(gt=0, description="neighbor skin while the bonds are made (reaching bond_range)")
    skin: float = Field(gt=0, description="neighbor skin after bonding")
    comm_cutoff: float = Field(gt=0)
    bottom: tuple[float, float] = Field(description="z range of the held slab")
    top: tuple[float, float] = Field(description="z range of the moving slab")
    top_velocity: float = Field(description="z velocity of the top slab (negative: compression), in lattice spacings "
                                "per time unit when `velocity_in_lattice_units` (LAMMPS velocity set's default units)")
    velocity_in_lattice_units: bool = True

    @model_validator(mode="after")
    def _consistent(self) -> BondedPillars:
        if len(self.bonds) != self.copies:
            raise ValueError(f"{self.copies} pillars need {self.copies} bond coefficient sets, not {len(self.bonds)}")
        if self.bottom[0] >= self.bottom[1] or self.top[0] >= self.top[1] or self.bottom[1] >= self.top[0]:
            raise ValueError("the held slab must lie below the moving one, each with lo < hi")
        if self.wall_radius <= self.radius or self.top_z <= self.bottom_z:
            raise ValueError("the wall must enclose the cylinder, whose top must be above its bottom")
        return self


POISSON = Example(
    name="LAMMPS examples/bpm/poissons_ratio (in.bpm.poissons_ratio)",
    signature={"box": (20.0, 20.0, 22.0), "radius": 7.0, "height": 20.0, "wall_radius": 8.0},
    optional={"lattice": 1.41, "copies": 4, "bottom": (-1.0, 2.0), "top": (18.0, 21.0), "bond_range": (0.0, 1.5),
              "pillars": 4},
    # region box block 0 20 -10 10 -1 21; cylinder z 10 0 7 0 20, wall cylinder z 10 0 8 -1 21, wall/region
    # harmonic 1 1 1; pair bpm/spring 1 1 1; velocity seed 345910; special_bonds lj 0 1 1 (coul 0 1 1, then 1 1 1
    # once bonded); newton on off; comm_modify vel yes cutoff 2.6; neighbor 1.0 while bonding, 0.3 after;
    # bond_style bpm/spring break no smooth no volume/factor yes; velocities zeroed before bonding
    fills={"box_lo": (0.0, -10.0, -1.0), "centre": (10.0, 0.0), "bottom_z": 0.0, "wall_z": (-1.0, 21.0),
           "wall": (1.0, 1.0, 1.0), "pair": (1.0, 1.0, 1.0), "seed": 345910, "bonding_skin": 1.0, "skin": 0.3,
           "comm_cutoff": 2.6},
    runs={"timestep": 0.1, "settle_steps": 20000, "squeeze_steps": 10000, "temperature": 0.1,
          "top_velocity": -0.0025})

_IN = r"(?:[^.;]|\.(?=\d))"  # within one clause: any character but a sentence's end (a decimal point is none)
_QUAD = rf"{NUM}\s+{NUM}\s+{NUM}\s+{NUM}"
_SEPARATOR = r"\s*(?:[;,/]|\)\s*,?\s*\(|\band\b)\s*(?:and\s+)?"


def _bond_sets(s: StatedNumbers) -> list[SpringBond] | None:
    """The bond coefficient sets after 'bond coefficients' (or 'bond_coeff'): runs of four numbers
    separated by ';', ',', '/', ') (' or 'and', in pillar order."""
    start = re.search(r"bond[_ ]coeff\w*|bond (?:parameters|constants)", s.low)
    if start is None:
        return None
    window = s.low[start.end():start.end() + 300]
    first = re.search(_QUAD, window)
    if first is None or re.search(r"[.;]\s", window[:first.start()]):
        return None
    sets, pos, spans = [], first.start(), []
    while (hit := re.match(_QUAD, window[pos:])) is not None:
        values = [float(hit.group(g)) for g in range(1, 5)]
        if values[0] <= 0 or values[1] < 0 or values[2] < 0:
            return None
        sets.append(SpringBond(k=values[0], critical_strain=values[1], gamma=values[2], volume_factor=values[3]))
        spans += [(start.end() + pos + hit.start(g), start.end() + pos + hit.end(g)) for g in range(1, 5)]
        pos += hit.end()
        gap = re.match(_SEPARATOR, window[pos:])
        if gap is None:
            break
        pos += gap.end()
    s.spans += spans
    s.read["bonds"] = (len(sets), window[first.start():pos])
    return sets


def _copies(s: StatedNumbers) -> int | None:
    hit = re.search(r"\breplicate\s*\(?\s*(\d+)\s+1\s+1\b", s.low)
    if hit:
        s.spans.append(hit.span(1))
        s.spans += [(m.start() + hit.start(), m.end() + hit.start()) for m in re.finditer(r"\b1\b", hit.group(0))]
        s.read["copies"] = (int(hit.group(1)), hit.group(0))
        return int(hit.group(1))
    hit = re.search(rf"(?:replicat|cop(?:y|ie)|repeat)\w*{_IN}{{0,30}}?\b(two|three|four|five|six|eight|\d+) times\b"
                    rf"{_IN}{{0,20}}?\bx\b", s.low)
    if hit:
        word = hit.group(1)
        if word.isdigit():
            s.spans.append(hit.span(1))
        s.read["copies"] = (int(word) if word.isdigit() else _COUNT_WORDS[word], hit.group(0))
        return s.value("copies")
    return None


def _slab(s: StatedNumbers, key: str, words: str) -> tuple[float, float] | None:
    """A slab's z range: '<words> ... (z = 18.0 to 21.0)', '... between z 18 and 21', '... from z = -1 to 2'."""
    return s.take(key, rf"\b(?:{words})\b{_IN}{{0,40}}?\bz\s*(?:=|from|between|of)?\s*{NUM}\s*(?:to|and|until)\s*"
                       rf"(?:z\s*=?\s*)?{NUM}", groups=(1, 2))


def _top_velocity(s: StatedNumbers) -> float | None:
    """The top's z velocity: a signed number ('a constant velocity (-0.0025)'), or a speed with a
    downward direction ('moves down at a speed of 0.0025')."""
    v = s.take("top_velocity", rf"(?:velocity|speed|rate)\s*(?:of\s*|=\s*)?\(?\s*{NUM}\s*\)?(?={_IN}{{0,60}}?\b(?:top|"
                               rf"upper)\b)|\b(?:top|upper)\b{_IN}{{0,60}}?(?:velocity|speed)\s*(?:of\s*|=\s*)?\(?\s*"
                               rf"{NUM}", groups=(1, 2))
    if isinstance(v, tuple):  # both alternatives have a group; only one matched
        v = next(x for x in v if x is not None)
    if v is None:
        return None
    downward = re.search(r"\bdown(?:ward)?s?\b|-z\b|negative z|towards? (?:the )?bottom", s.low)
    return -abs(v) if downward else v


def _read(low: str) -> StatedNumbers:
    s = StatedNumbers(low)
    s.take("box", rf"{NUM}\s*(?:\*|x|by)\s*{NUM}\s*(?:\*|x|by)\s*{NUM}", groups=(1, 2, 3))
    s.take("lattice", rf"\b(?:fcc|lattice)\b{_IN}{{0,40}}?(?:constant|density|scale|parameter|spacing)?\s*"
                      rf"(?:of\s*|=\s*)?{NUM}")
    s.take("radius", rf"(?:cylind|pillar|column)\w*{_IN}{{0,40}}?\bradius\s*(?:of\s*|=\s*|is\s*)?{NUM}")
    s.take("height", rf"\b(?:height|length)\s*(?:of\s*|=\s*|is\s*)?{NUM}")
    s.take("wall_radius", rf"\bwall\b{_IN}{{0,30}}?\bradius\s*(?:of\s*|=\s*|is\s*)?{NUM}|\bradius\s*(?:of\s*|=\s*)?"
                          rf"{NUM}{_IN}{{0,20}}?\bwall\b", groups=(1, 2))
    if isinstance(s.value("wall_radius"), tuple):
        s.read["wall_radius"] = (next(x for x in s.value("wall_radius") if x is not None), s.said("wall_radius"))
    s.take("temperature", rf"temperature\s*(?:of\s*|=\s*)?{NUM}")
    _copies(s)
    s.count("pillars", r"\b(two|three|four|five|six|eight|\d+) (?:pillars|columns|cylinders)\b")
    _bond_sets(s)
    s.take("bond_range", rf"create_bonds many\s+\S+\s+\S+\s+\S+\s+{NUM}\s+{NUM}|bond\w*{_IN}{{0,60}}?\b(?:between|from)"
                         rf"\s*(?:a distance of\s*)?{NUM}\s*(?:and|to)\s*{NUM}", groups=(1, 2, 3, 4))
    if isinstance(s.value("bond_range"), tuple):
        s.read["bond_range"] = (tuple(x for x in s.value("bond_range") if x is not None), s.said("bond_range"))
    _top_velocity(s)
    _slab(s, "top", "top|upper")
    _slab(s, "bottom", "bottom|lower")
    s.mark("print_every", rf"(?:print|monitor|output|record|report)\w*{_IN}{{0,60}}?\bevery\s*{NUM}")
    s.mark("dump_every", rf"\bdump\w*{_IN}{{0,30}}?\bevery\s*{NUM}")
    s.mark("steps", rf"{NUM}\s*(?:md |integration )?(?:time ?)?steps\b")
    s.mark("timestep", rf"time ?step (?:size )?(?:of |= ?|is )?{NUM}")
    return s


def _tuple_or_none(v: object) -> tuple | None:
    if isinstance(v, tuple) and all(x is not None for x in v):
        return tuple(float(x) for x in v)
    return None


def _spacing(desc: SimulationDescription) -> float:
    """The fcc lattice spacing of LJ lattice scale rho (4 atoms per cubic cell)."""
    assert desc.lattice is not None
    return (4.0 / desc.lattice.scale) ** (1.0 / 3.0)


def read_pillars(desc: SimulationDescription, low: str) -> None:
    """Pillars of bonded particles squeezed along z, retelling examples/bpm/poissons_ratio (module
    docstring); anything else stays as read (and refused)."""
    from simagent.described.model import Box

    if not re.search(r"\bbpm\b|bpm/spring|bonded[- ]particle", low) or not re.search(r"pillar|cylind|column", low):
        return
    if desc.dimension != 3 or desc.units != "lj" or desc.lattice is None or desc.lattice.style != "fcc":
        return
    s = _read(low)
    bonds = _bond_sets(StatedNumbers(low))
    stated = {"box": _tuple_or_none(s.value("box")), "radius": s.value("radius"), "height": s.value("height"),
              "wall_radius": s.value("wall_radius"), "lattice": s.value("lattice"), "copies": s.value("copies"),
              "bottom": _tuple_or_none(s.value("bottom")), "top": _tuple_or_none(s.value("top")),
              "bond_range": _tuple_or_none(s.value("bond_range")), "pillars": s.value("pillars")}
    comparison = POISSON.compare(stated, unread=s.unread())
    fill = POISSON.fill(desc, comparison, describe="")
    if fill is None:
        return
    copies = s.value("copies") or s.value("pillars")
    runs = desc.run_stages()
    gaps = []
    if copies is None or bonds is None or len(bonds) != copies:
        gaps.append(f"one bond coefficient set per pillar ({copies or 'an unstated number of'} pillars, "
                    f"{len(bonds) if bonds else 'no'} sets read)")
    for key, what in (("bond_range", "the distance range within which bonds are made"),
                      ("top", "the moving slab's z range"), ("bottom", "the held slab's z range"),
                      ("top_velocity", "the moving slab's velocity")):
        if s.value(key) is None:
            gaps.append(what)
    if desc.layout is not None:
        gaps.append("the regions and groups another reading laid out besides the pillars")
    if len(runs) != 2 or len(desc.stages) != 2:
        gaps.append("the two runs (settling inside the wall, then compression), each with its step count")
    if gaps:
        desc.missing += [f"pillars: {g}" for g in gaps]
        return
    f = POISSON.fills
    fill.describe = ("a 20 x 20 x 22 box, a cylinder of radius 7 and height 20 inside a wall of radius 8"
                     + (f", {copies} pillars" if copies == 4 else ""))
    lx, ly, lz = s.value("box")
    lo = f["box_lo"]
    desc.box = Box(lo=lo, hi=(lo[0] + lx, lo[1] + ly, lo[2] + lz), lattice_units=False)
    assert bonds is not None
    desc.pillars = BondedPillars(
        centre=f["centre"], radius=s.value("radius"), bottom_z=f["bottom_z"], top_z=f["bottom_z"] + s.value("height"),
        wall_radius=s.value("wall_radius"), wall_z=f["wall_z"], wall=f["wall"], pair=f["pair"], copies=copies,
        bonds=bonds, bond_range=_tuple_or_none(s.value("bond_range")), bonding_skin=f["bonding_skin"],
        skin=f["skin"], comm_cutoff=f["comm_cutoff"], bottom=_tuple_or_none(s.value("bottom")),
        top=_tuple_or_none(s.value("top")), top_velocity=_top_velocity(StatedNumbers(low)))
    p = desc.pillars
    desc.note("box", "rules", f"{s.said('box')}: x {lo[0]:g}-{lo[0] + lx:g}, y {lo[1]:g}-{lo[1] + ly:g}, z "
              f"{lo[2]:g}-{lo[2] + lz:g} (box units; the edges stated, the placement "
              f"{POISSON.name}'s)")
    fill.note("box.placement", f"x from {lo[0]:g}, y from {lo[1]:g}, z from {lo[2]:g}")
    desc.note("pillars.cylinder", "rules", f"{s.said('radius')}, {s.said('height')}: cylinder along z of radius "
              f"{p.radius:g}, z {p.bottom_z:g}-{p.top_z:g}, filled on the lattice")
    fill.note("pillars.cylinder_placement", f"axis at x {p.centre[0]:g}, y {p.centre[1]:g}; from z {p.bottom_z:g}")
    desc.note("pillars.wall", "rules", f"{s.said('wall_radius')}: fix wall/region harmonic on a cylinder of radius "
              f"{p.wall_radius:g} during the first run, removed after it")
    fill.note("pillars.wall_settings", f"wall cylinder z {p.wall_z[0]:g}-{p.wall_z[1]:g}; harmonic epsilon "
              f"{p.wall[0]:g}, sigma {p.wall[1]:g}, cutoff {p.wall[2]:g}")
    fill.note("pillars.pair", f"pair_style bpm/spring, pair_coeff * * {' '.join(f'{x:g}' for x in p.pair)} (k, "
              "cutoff, gamma)")
    desc.note("pillars.copies", "rules", f"{s.said('copies') if 'copies' in s.read else s.said('pillars')}: "
              f"replicate {p.copies} 1 1, pillar i the atoms of x block [(i-1), i] x {lx:g} (type i, bond type i)")
    desc.note("pillars.bonds", "rules", f"{s.said('bonds')}: bond_coeff per pillar (k, critical strain, gamma, "
              "volume factor)")
    fill.note("pillars.bond_style", "bond_style bpm/spring break no smooth no volume/factor yes (the four "
              "coefficients per set need volume/factor yes); special_bonds lj 0 1 1 coul 0 1 1 before bonding, lj 0 1 "
              "1 coul 1 1 1 after; newton on off; create_box room for 20 bonds and 50 specials per atom")
    desc.note("pillars.bond_range", "rules", f"{s.said('bond_range')}: create_bonds many within each pillar, "
              f"{p.bond_range[0]:g} to {p.bond_range[1]:g}")
    fill.note("pillars.neighbor", f"neighbor {p.bonding_skin:g} bin while bonding (the bond range must be in the "
              f"neighbor lists), {p.skin:g} bin after; comm_modify vel yes cutoff {p.comm_cutoff:g}")
    fill.note("pillars.rest", "velocities of all atoms zeroed after the first run, before bonding")
    desc.note("pillars.slabs", "rules", f"{s.said('top')}; {s.said('bottom')}: the top slab moves at vz "
              f"{p.top_velocity:g} with its forces zeroed, the bottom slab's forces are zeroed; fix nve on all atoms")
    fill.note("pillars.velocity_units", f"the top's velocity {p.top_velocity:g} given to LAMMPS as the example writes "
              f"it (velocity set without units box: lattice spacings per time unit, {p.top_velocity:g} x "
              f"{_spacing(desc):.6g} = {p.top_velocity * _spacing(desc):.6g} sigma/tau); the text gives no unit for it")
    fill.note("pillars.top_forces", "the moving slab's forces zeroed too (fix setforce 0 0 0), so that it keeps the "
              "set velocity")
    desc.atom_style, desc.atom_types = "bond", p.copies
    desc.note("atom_style", "rules", "bond (bpm/spring bonds, no charges)")
    desc.masses = {1: 1.0}
    if "seed" not in s.read and desc.velocity is not None and desc.origin.get("velocity.seed", None) is not None \
            and desc.origin["velocity.seed"].source == "default":
        desc.velocity.seed = f["seed"]
        fill.note("velocity.seed", f"{f['seed']}")
    if desc.origin.get("timestep") is None or desc.origin["timestep"].source == "default":
        desc.timestep = POISSON.runs["timestep"]
        fill.note("timestep", f"{desc.timestep:g} (LAMMPS's LJ default 0.005 would compress the pillars 20 times "
                  "less over the same steps)")
    fill.departures({"settle_steps": desc.stages[runs[0]].steps, "squeeze_steps": desc.stages[runs[1]].steps,
                     "temperature": desc.velocity.temperature if desc.velocity else None,
                     "top_velocity": p.top_velocity}, field="pillars.departures")
    if desc.thermo_every is None and s.value("print_every") is not None:
        desc.thermo_every = int(float(s.value("print_every")))
        desc.note("thermo_every", "rules", f"{s.said('print_every')}: the pillars' extents printed every "
                  f"{desc.thermo_every} steps")
    if s.value("dump_every") is not None:
        desc.note_dump(s.said('dump_every'))
    for i in runs:
        stage = desc.stages[i]
        assert stage.dynamics is not None
        if stage.dynamics.ensemble != "nve" or stage.dynamics.thermostat is not None:
            desc.missing.append(f"pillars: the {stage.name} run is NVE in {POISSON.name}; the text states "
                                f"{stage.dynamics.ensemble}")
    desc.note(f"{desc.stages[runs[0]].name}.pillars", "rules", "settling: NVE inside the wall")
    desc.note(f"{desc.stages[runs[1]].name}.pillars", "rules", "compression: NVE, top slab moving, bottom slab held")
    desc.average_stage = runs[1]
    desc.note("average_stage", "rules", f"{desc.stages[runs[1]].name}: the compression run, whose printed extents "
              "give the Poisson ratios")
    desc.pair = None
    for stale in [k for k in desc.origin if k.startswith("pair.")]:
        desc.origin.pop(stale)
    desc.missing = [m for m in desc.missing if m not in (*PAIR_GAPS, SLAB_GAP)]
    desc.unsupported = [u for u in desc.unsupported if u not in ANSWERED]
