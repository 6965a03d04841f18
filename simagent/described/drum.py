"""A rotating drum of two granular particle types, following LAMMPS examples/granular (in.pour.drum).

The text pours cohesive (JKR) and non-cohesive (Hertz) spheres into a cylinder with a plane bottom
(fix pour, pair granular, fix wall/gran/region), lets them settle under gravity along -z, then turns
gravity to -y, closes the drum with a lid and rotates the cylinder and plane walls with an angle
variable theta = 2*PI*elapsed/period. When the numbers the text states (box, drum radius and height,
particles per type, the period of theta) are exactly the example's, the example fills the rest
(simagent.described.example_fill): the contact models, diameters, density, insertion region, seeds,
gravity, timestep, neighbor settings, and the deletion of particles above half the drum height before
the lid closes. Every number in the text must be read here, or nothing is filled.

The example's input at the commit the search index holds gives the cohesive pair `damping tsuji`;
LAMMPS 22 Jul 2025 refuses that ("Cannot use tsuji model with a cohesive normal model, jkr"), and the
example's own newest log (log.29Jul26.pour.drum.g++.1, LAMMPS 4 Jul 2026) runs the JKR pair without a
damping keyword (LAMMPS's default, viscoelastic). That is what is filled, and report.md says so.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from simagent.described.example_fill import NUM, Example, StatedNumbers
from simagent.described.granular import ATOM_STYLE_NAME, POUR_NAMES

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

# what the one-type LJ reading misses or flags in a drum text that the drum reading answers
DRUM_GAPS = ("initial configuration (lattice)", "pair cutoff", "pair potential", "LJ epsilon", "LJ sigma",
             "atom masses")
TWO_TYPES_NAME = "several atom types or random placement"  # reading.UNSUPPORTED's
TOPOLOGY_NAME = "molecular topology (bonds, angles, constraints)"
BOUNDARY_NAME = "non-periodic boundaries"
THETA = "theta"  # the angle variable, as the text and the example name it


class GranularModel(BaseModel):
    """One pair_style granular model: `normal` (hertz/material E nu ... or jkr E damp nu gamma),
    `tangential` (mindlin k_t (None = NULL) x_gamma_t mu_s), `damping` (None: LAMMPS's default),
    `rolling` (sds k_roll gamma_roll mu_roll) and `twisting` (marshall) when present."""

    normal: str
    normal_coefficients: tuple[float, ...]
    tangential: str
    tangential_coefficients: tuple[float | None, ...]
    damping: str | None = None
    rolling: str | None = None
    rolling_coefficients: tuple[float, ...] = ()
    twisting: str | None = None


class GranularDrum(BaseModel):
    """The drum (a cylinder along z of `radius` and `height` at `centre`, a plane bottom and, after
    the settling stage, a plane lid at `height`), its two pours (`counts` per type, one `seed`) from
    a cylinder of `insertion_radius` between the drum's top and the box's, the pair models per type
    pair (`pairs`: LAMMPS pair_coeff type spec -> model), the walls' model, gravity `gravity` along
    `settle_direction` then `rotate_direction`, and theta = 2*PI*elapsed/`period` in the last stage."""

    radius: float = Field(gt=0)
    height: float = Field(gt=0)
    centre: tuple[float, float]
    insertion_radius: float = Field(gt=0)
    counts: tuple[int, int]
    seed: int = Field(gt=0)
    diameters: tuple[float, float]
    density: float = Field(gt=0)
    pairs: dict[str, GranularModel]
    wall: GranularModel
    gravity: float = Field(gt=0)
    settle_direction: tuple[float, float, float]
    rotate_direction: tuple[float, float, float]
    period: float = Field(gt=0, description="steps per turn: theta = 2*PI*elapsed/period")
    delete_above: float = Field(description="particles whose top (z + radius) is above this are deleted "
                                "before the lid closes")
    delete_every: int = Field(gt=0, description="the steps between updates of the dynamic group of those particles, "
                              "as the example defines it before the settling run")
    neighbor_skin: float = Field(gt=0)


_HERTZ_MATERIAL = dict(normal="hertz/material", tangential="mindlin", tangential_coefficients=(None, 1.0, 0.5),
                       damping="tsuji")
DRUM = Example(
    name="LAMMPS examples/granular (in.pour.drum)",
    signature={"box": (30.0, 30.0, 50.0), "radius": 15.0, "height": 20.0, "per_type": 2000, "period": 20000.0},
    optional={"total": 4000, "types": 2, "theta_factor": 2.0},
    # pair_coeff 1 * hertz/material 1e5 0.2 0.3 tangential mindlin NULL 1.0 0.5 damping tsuji; pair_coeff 2 2 jkr
    # 1e5 0.1 0.3 50 tangential mindlin NULL 1.0 0.5 rolling sds 1e3 1e3 0.1 twisting marshall (no damping keyword in
    # the example's newest log); walls hertz/material 1e5 0.1 0.3 ...; fix pour 2000 T 1234 region insreg (cylinder
    # radius 15 - 1.1*0.5, z 20-50) diam range 0.5 1.0 dens 1 1; gravity 10; neighbor 0.2 bin, delay 0 every 1;
    # delete atoms with z + radius > 0.5*drum height after the settling run
    fills={"pairs": {"1 *": GranularModel(normal_coefficients=(1e5, 0.2, 0.3), **_HERTZ_MATERIAL),
                     "2 2": GranularModel(normal="jkr", normal_coefficients=(1e5, 0.1, 0.3, 50.0), tangential="mindlin",
                                          tangential_coefficients=(None, 1.0, 0.5), rolling="sds",
                                          rolling_coefficients=(1e3, 1e3, 0.1), twisting="marshall")},
           "wall": GranularModel(normal_coefficients=(1e5, 0.1, 0.3), **_HERTZ_MATERIAL),
           "seed": 1234, "diameters": (0.5, 1.0), "density": 1.0, "insertion_margin": 1.1 * 0.5, "gravity": 10.0,
           "delete_fraction": 0.5, "delete_every": 10000, "neighbor_skin": 0.2},
    runs={"timestep": 0.001, "settle_steps": 2000, "rotate_steps": 3000})


def _read(low: str) -> StatedNumbers:
    s = StatedNumbers(low)
    s.take("box", rf"{NUM}\s*(?:\*|x|by)\s*{NUM}\s*(?:\*|x|by)\s*{NUM}", groups=(1, 2, 3))
    s.take("radius", rf"radius\s*(?:of |= ?|is )?{NUM}")
    s.take("height", rf"(?:height|length)\s*(?:of |= ?|is )?{NUM}")
    s.take("total", rf"(?:total|in all|altogether)[^.;]{{0,12}}?\b{NUM}\s*(?:\w+ ){{0,2}}?(?:particles|spheres|grains)"
                    rf"|{NUM}\s*(?:particles|spheres|grains) (?:in (?:all|total)|altogether)",
           convert=lambda x: int(float(x)), groups=(1, 2))
    s.take("per_type", rf"{NUM}\s*(?:(?:particles|spheres|grains) )?(?:of )?each(?: type| kind| species)?\b|each "
                       rf"(?:type|kind|species)[^.;]{{0,20}}?\b{NUM}\b", convert=lambda x: int(float(x)), groups=(1, 2))
    if s.value("per_type") is None:  # '2000 non-cohesive spheres ... and 2000 cohesive spheres'
        counts = list(re.finditer(rf"\b{NUM}\s+(?:[\w-]+ ){{0,3}}?(?:particles|spheres|grains)\b", low))
        if len(counts) == 2 and counts[0].group(1) == counts[1].group(1):
            for hit in counts:
                s.spans.append(hit.span(1))
            s.read["per_type"] = (int(float(counts[0].group(1))), f"{counts[0].group(0)}; {counts[1].group(0)}")
    s.mark("types", r"\btype\s*(\d)\b")
    s.take("theta", rf"{NUM}\s*\*\s*pi\s*\*\s*elapsed\s*/\s*{NUM}", groups=(1, 2))
    s.mark("period_restated", r"(?:rotation|turn|revolution)[^.;]{0,40}?\bevery\s*(\d+)\s*(?:time ?)?steps?")
    s.take("settle_steps", rf"\b(?:for|over|during)\s*{NUM}\s*(?:md |integration )?(?:time ?)?steps\b",
           convert=lambda x: int(float(x)))
    s.take("rotate_steps", rf"(?:production|rotating|rotation|rotate)[^.;]{{0,40}}?\b(?:for|over|during|lasts?)\s*"
                           rf"(?:for )?{NUM}\s*(?:time ?)?steps\b", convert=lambda x: int(float(x)))
    s.take("timestep", rf"time ?step (?:size )?(?:of |= ?|is )?{NUM}")
    s.take("seed", rf"\bseed\s*(?:of |= ?|is )?{NUM}", convert=lambda x: int(float(x)))
    return s


def _period(s: StatedNumbers, low: str) -> tuple[float | None, float | None, bool]:
    """theta's factor and period; False when a restated period ('one turn every N steps') differs."""
    theta = s.value("theta")
    factor, period = (theta if isinstance(theta, tuple) else (None, None))
    restated = re.search(r"(?:rotation|turn|revolution)[^.;]{0,40}?\bevery\s*(\d+)\s*(?:time ?)?steps?", low)
    return factor, period, restated is None or period is None or float(restated.group(1)) == period


def _downward(low: str, axis: str) -> bool:
    return bool(re.search(rf"(?:-|negative |minus ){axis}\b|-{axis}[- ]direction|along -{axis}", low))


def read_drum(desc: SimulationDescription, low: str) -> None:
    """A drum text retelling in.pour.drum (module docstring); anything else stays as read."""
    from simagent.described.model import Box

    if "fix pour" not in desc.unsupported or not re.search(r"\bdrum\b", low) or desc.dimension == 2:
        return
    if not (re.search(r"hertz", low) and re.search(r"\bjkr\b|johnson", low)):
        return
    s = _read(low)
    factor, period, consistent = _period(s, low)
    stated = {"box": s.value("box"), "radius": s.value("radius"), "height": s.value("height"),
              "per_type": s.value("per_type"), "period": period, "total": s.value("total"),
              "theta_factor": factor}
    unread = s.unread()
    if not consistent:
        unread.append("the period restated")
    comparison = DRUM.compare(stated, unread=unread, extra_ok=("types",))
    fill = DRUM.fill(desc, comparison, describe="")
    runs = desc.run_stages()
    if fill is None:
        return
    if not (_downward(low, "z") and _downward(low, "y")) or not re.search(r"nve/sphere", low) or len(runs) != 2 or \
            [desc.stages[i].steps for i in runs] != [s.value("settle_steps"), s.value("rotate_steps")]:
        desc.missing.append("the drum's two runs (settling under gravity along -z, then rotating with gravity "
                            "along -y, each with its step count) as the text orders them")
        return
    f = DRUM.fills
    fill.describe = ("a 30 x 30 x 50 box, a drum of radius 15 and height 20, 2000 particles of each of two types, "
                     "theta = 2*PI*elapsed/20000")
    lx, ly, lz = s.value("box")
    radius, height = s.value("radius"), s.value("height")
    desc.drum = GranularDrum(
        radius=radius, height=height, centre=(lx / 2, ly / 2), insertion_radius=radius - f["insertion_margin"],
        counts=(s.value("per_type"), s.value("per_type")), seed=s.value("seed") or f["seed"],
        diameters=f["diameters"], density=f["density"], pairs=f["pairs"], wall=f["wall"], gravity=f["gravity"],
        settle_direction=(0.0, 0.0, -1.0), rotate_direction=(0.0, -1.0, 0.0), period=period,
        delete_above=f["delete_fraction"] * height, delete_every=f["delete_every"],
        neighbor_skin=f["neighbor_skin"])
    desc.box = Box(lo=(0.0, 0.0, 0.0), hi=(lx, ly, lz), lattice_units=False)
    desc.note("box", "rules", f"{s.said('box')}: x 0-{lx:g}, y 0-{ly:g}, z 0-{lz:g} (box units)")
    desc.note("drum", "rules", f"{s.said('radius')}, {s.said('height')}: a cylinder along z at the box centre "
              f"({lx / 2:g}, {ly / 2:g}), from z 0 to {height:g}, with a plane bottom; both walls rotate about the "
              "drum's axis by v_theta")
    desc.note("drum.theta", "rules", f"{s.said('theta')}: variable theta 0 while the particles settle, "
              f"2*PI*elapsed/{period:g} in the rotating run (elapsed: steps since that run began)")
    desc.note("drum.counts", "rules", f"{s.said('per_type')}: type 1 (Hertz, non-cohesive) and type 2 (JKR, "
              "cohesive), each by its own fix pour")
    desc.note("drum.gravity", "rules", "along -z while the particles settle, along -y in the rotating run")
    if "boundary" not in desc.origin or desc.origin["boundary"].source != "rules":
        desc.boundary = ("p", "p", "f")
        fill.note("boundary", "p p f (periodic in x and y, the drum's axis z fixed)")
        desc.origin.pop("boundary.unstated", None)
    desc.atom_style, desc.atom_types = "sphere", 2
    desc.note("atom_style", "rules", "sphere")
    desc.masses = {}
    desc.origin.pop("masses", None)
    desc.timestep = s.value("timestep") or DRUM.runs["timestep"]
    if s.value("timestep") is None:
        fill.note("timestep", f"{desc.timestep:g}")
    fill.note("drum.pairs", "pair granular: 1 * hertz/material 1e5 0.2 0.3, tangential mindlin NULL 1.0 0.5, damping "
              "tsuji; 2 2 jkr 1e5 0.1 0.3 50, tangential mindlin NULL 1.0 0.5, rolling sds 1e3 1e3 0.1, twisting "
              "marshall, LAMMPS's default damping (the example's input at an older commit adds damping tsuji, which "
              "LAMMPS 22 Jul 2025 refuses with JKR; its newest log, LAMMPS 4 Jul 2026, runs it without)")
    fill.note("drum.wall", "wall/gran/region granular hertz/material 1e5 0.1 0.3, tangential mindlin NULL 1.0 0.5, "
              "damping tsuji for the cylinder, the bottom and the lid")
    fill.note("drum.pour", f"fix pour per type, seed {desc.drum.seed}, diameters 0.5-1.0, density 1, from a cylinder "
              f"of radius {desc.drum.insertion_radius:g} between z {height:g} and {lz:g}")
    fill.note("drum.gravity_magnitude", f"{f['gravity']:g}")
    fill.note("drum.lid", f"after the settling run, the particles of the dynamic group z + radius > "
              f"{desc.drum.delete_above:g} (updated every {desc.drum.delete_every} steps, as the example defines it) "
              f"are deleted and a plane lid closes the drum at z {height:g} (rotating with it)")
    fill.note("drum.neighbor", f"neighbor {f['neighbor_skin']:g} bin, delay 0 every 1 check yes; comm_modify vel yes; "
              "thermo_modify lost warn")
    fill.departures({"timestep": s.value("timestep"), "rotate_steps": s.value("rotate_steps"),
                     "settle_steps": s.value("settle_steps")}, field="drum.departures")
    for i in runs:
        stage = desc.stages[i]
        assert stage.dynamics is not None
        stage.dynamics.ensemble = "nve"
        desc.note(f"{stage.name}.integrator", "rules", "nve/sphere (translation and rotation of finite spheres)")
    desc.average_stage = runs[-1]
    desc.note("average_stage", "rules", f"{desc.stages[runs[-1]].name}: the rotating (production) run")
    desc.pair = None
    for stale in [k for k in desc.origin if k.startswith("pair.")]:
        desc.origin.pop(stale)
    desc.missing = [m for m in desc.missing if m not in DRUM_GAPS]
    solved = [*POUR_NAMES, ATOM_STYLE_NAME, TWO_TYPES_NAME, BOUNDARY_NAME]
    if not re.search(r"\bbonds?\b|dihedral|shake|rattle|bond angle", low):  # 'rotational angle' is the drum's
        solved.append(TOPOLOGY_NAME)
    desc.unsupported = [u for u in desc.unsupported if u not in solved]
