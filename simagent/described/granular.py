"""Granular particles poured into a container under gravity, following LAMMPS examples/pour.

A text that pours finite-size granular spheres (fix pour) into a 2D container with Hertzian contacts
with history (pair gran/hertz/history), granular walls and gravity states some of the contact and
insertion numbers and leaves others out (how many particles, where they enter, the seed, the
normal damping, whether the tangential damping is on). When the setup numbers it states (container,
normal stiffness, friction, diameters, volume fraction, gravity) are exactly LAMMPS examples/pour's
(in.pour.2d), the example fills what the text leaves out (simagent.described.example_fill); each
filled value is listed. Every number in the text must be read by a rule here, or nothing is filled.

Contact coefficients (LAMMPS pair gran/hertz/history Kn Kt gamma_n gamma_t xmu dampflag): a stated
value always wins over the example's. A stated tangential damping switches it on (dampflag 1):
with the example's dampflag 0 LAMMPS would ignore the stated gamma_t.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from simagent.described.example_fill import NUM, Example, StatedNumbers

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

POUR_NAMES = ("fix pour", "granular contact models", "regions, walls and groups of atoms")  # reading.UNSUPPORTED's
# what the one-type LJ reading misses in a pour (no lattice, no LJ pair)
POUR_GAPS = ("initial configuration (lattice)", "pair potential", "pair cutoff", "LJ epsilon", "LJ sigma",
             "atom masses")
ATOM_STYLE_NAME = "an atom style other than atomic"  # reading.UNSUPPORTED's
SPIN_NAME = "spin dynamics"


class GranularContact(BaseModel):
    """pair gran/hertz/history Kn Kt gamma_n gamma_t xmu dampflag (also the walls' model). None for
    kt / gamma_t is LAMMPS's NULL: kt = 2/7 kn, gamma_t = gamma_n / 2."""

    kn: float = Field(gt=0)
    kt: float | None = Field(default=None, ge=0)
    gamma_n: float = Field(ge=0)
    gamma_t: float | None = Field(default=None, ge=0)
    friction: float = Field(ge=0)
    dampflag: int = Field(ge=0, le=1)


class GranularPour(BaseModel):
    """Finite-size spheres poured (fix pour) into a box of granular walls under gravity, integrated by
    nve/sphere. `region`: the insertion block (x lo, x hi, y lo, y hi in box units); `walls`: the
    box faces that are granular walls ('xlo', 'xhi', 'ylo', ...), with the particles' contact model;
    `gravity` along `direction`; `density`: None is fix pour's default (1)."""

    contact: GranularContact
    count: int = Field(gt=0)
    atom_type: int = Field(default=1, ge=1)
    seed: int = Field(gt=0)
    volume_fraction: float = Field(gt=0, lt=1)
    attempts: int = Field(gt=0)
    diameters: tuple[float, float]
    region: tuple[float, float, float, float]
    walls: list[str]
    gravity: float = Field(gt=0)
    direction: tuple[float, float, float]
    density: float | None = Field(default=None, gt=0)
    neighbor_skin: float = Field(gt=0)


POUR = Example(
    name="LAMMPS examples/pour (in.pour.2d)",
    signature={"dimension": 2, "box": (100.0, 50.0), "kn": 4000.0, "friction": 0.5, "diameters": (0.5, 1.0),
               "volume_fraction": 0.4, "gravity": 1.0},
    # pair gran/hertz/history 4000.0 NULL 100.0 NULL 0.5 0; fix pour 1000 1 4767548 vol 0.4 10 diam range 0.5 1.0
    # region slab (block 1.0 99.0 30 34.5); boundary f fm p; newton off; comm_modify vel yes; neighbor 0.2 bin
    fills={"gamma_n": 100.0, "dampflag": 0, "count": 1000, "seed": 4767548, "attempts": 10,
           "region": (1.0, 99.0, 30.0, 34.5), "boundary": ("f", "fm", "p"), "neighbor_skin": 0.2},
    runs={"kt": None, "gamma_t": None, "gamma_n": 100.0, "timestep": 0.001, "steps": 25000})

_NUMBER_WORDS = r"(?:of |= ?|is |: ?)?(?:about |approximately )?"


def _read(low: str) -> StatedNumbers:
    s = StatedNumbers(low)
    s.take("box", rf"(?:container|box|domain|region)[^.;]{{0,40}}?\b{NUM}\s*(?:x|by)\s*{NUM}", groups=(1, 2))
    s.take("kn", rf"normal (?:contact )?(?:spring )?(?:stiffness|spring constant|elastic constant)\s*(?:\(kn\)\s*)?"
           rf"{_NUMBER_WORDS}{NUM}|\bkn\s*(?:=|of)\s*{NUM}", groups=(1, 2))
    s.take("kt", rf"tangential (?:contact )?(?:spring )?(?:stiffness|spring constant|elastic constant)\s*"
           rf"(?:\(kt\)\s*)?{_NUMBER_WORDS}{NUM}|\bkt\s*(?:=|of)\s*{NUM}", groups=(1, 2))
    s.take("gamma_n", rf"normal (?:viscous )?(?:damping|dissipation)(?: coefficient| constant)?\s*(?:\(gamma_n\)\s*)?"
           rf"{_NUMBER_WORDS}{NUM}|\bgamma_n\s*(?:=|of)\s*{NUM}", groups=(1, 2))
    s.take("gamma_t", rf"tangential (?:viscous )?(?:damping|dissipation)(?: coefficient| constant)?\s*"
           rf"(?:\(gamma_t\)\s*)?{_NUMBER_WORDS}{NUM}|\bgamma_t\s*(?:=|of)\s*{NUM}", groups=(1, 2))
    s.take("friction", rf"(?:friction coefficient|coefficient of (?:static |sliding )?friction|friction "
           rf"\(?(?:xmu|mu)\)?)\s*{_NUMBER_WORDS}{NUM}", groups=(1,))
    s.take("diameters", rf"diameters?[^.;]{{0,60}}?(?:between|from|in(?: the range)?(?: of)?|range)\s*{NUM}\s*"
           rf"(?:and|to|-)\s*{NUM}", groups=(1, 2))
    s.take("volume_fraction", rf"(?:volume|packing|filling) fraction\s*{_NUMBER_WORDS}{NUM}")
    s.take("gravity", rf"gravit\w*[^.;]{{0,60}}?(?:magnitude|acceleration|strength|of)\s*(?:of )?{NUM}|{NUM}\s*"
           rf"(?:units? )?(?:of )?gravit", groups=(1, 2))
    s.take("timestep", rf"time ?step (?:size )?(?:of |= ?|is )?{NUM}")
    s.take("steps", rf"\b(?:run|for|over|lasts?)\s*(?:for )?{NUM}\s*(?:md |integration )?(?:time ?)?steps\b",
           convert=lambda x: int(float(x)))
    s.take("count", rf"\b{NUM}\s*(?:granular )?(?:particles|grains|spheres|discs|disks)\b",
           convert=lambda x: int(float(x)))
    s.take("seed", rf"\bseed\s*(?:of |= ?|is )?{NUM}", convert=lambda x: int(float(x)))
    return s


def _direction(low: str) -> tuple[float, float, float] | None:
    if re.search(r"(?:negative|-)\s*y[- ]?(?:direction|axis)?|along -y|downward|down the y", low):
        return (0.0, -1.0, 0.0)
    return None


_FACES = (("left", ("xlo",)), ("right", ("xhi",)), ("bottom", ("ylo",)), ("floor", ("ylo",)), ("base", ("ylo",)),
          ("top", ("yhi",)), ("lid", ("yhi",)), ("ceiling", ("yhi",)), ("sides?", ("xlo", "xhi")),
          ("sidewalls?", ("xlo", "xhi")))


def _walls(low: str) -> list[str] | None:
    """The box faces a sentence about walls or boundaries names ('left, right and bottom', 'side walls
    and a floor'); a place named as where particles come from ('from the top', 'near the top') is
    not a wall."""
    walls: list[str] = []
    for sentence in re.split(r"(?<!\d)\.(?!\d)|;", low):
        if not re.search(r"\bwalls?\b|sidewall|\bboundar", sentence):
            continue
        sentence = re.sub(r"\b(?:from|near|at|into|to|toward|towards) (?:the )?(?:very )?top\b", " ", sentence)
        for word, faces in _FACES:
            if re.search(rf"\b{word}\b", sentence):
                walls += [f for f in faces if f not in walls]
    return walls or None


def read_pour(desc: SimulationDescription, low: str) -> None:
    """A granular pour retelling examples/pour (module docstring); anything else stays as read."""
    from simagent.described.model import Box

    if "fix pour" not in desc.unsupported or not re.search(r"hertz", low) or desc.dimension != 2:
        return
    s = _read(low)
    direction, walls = _direction(low), _walls(low)
    if direction is None or walls is None or not re.search(r"nve/sphere|rotational", low):
        return
    stated = {"dimension": desc.dimension, "box": s.value("box"), "kn": s.value("kn"), "friction": s.value("friction"),
              "diameters": s.value("diameters"), "volume_fraction": s.value("volume_fraction"),
              "gravity": s.value("gravity")}
    runs = {k: s.value(k) for k in ("kt", "gamma_t", "gamma_n", "timestep", "steps")}
    comparison = POUR.compare(stated, unread=s.unread())
    fill = POUR.fill(desc, comparison, describe="")
    if fill is None or len(desc.run_stages()) != 1 or desc.stages[desc.run_stages()[0]].steps != s.value("steps"):
        return
    fills = POUR.fills
    fill.describe = ("a 2D container 100 x 50, Hertzian contacts with history, kn 4000, friction 0.5, diameters "
                     "0.5-1.0, volume fraction 0.4, gravity 1")
    gamma_t = runs["gamma_t"]
    gamma_n = runs["gamma_n"] if runs["gamma_n"] is not None else fills["gamma_n"]
    dampflag = 1 if gamma_t is not None else fills["dampflag"]
    contact = GranularContact(kn=s.value("kn"), kt=runs["kt"], gamma_n=gamma_n, gamma_t=gamma_t,
                              friction=s.value("friction"), dampflag=dampflag)
    count, seed = s.value("count") or fills["count"], s.value("seed") or fills["seed"]
    lx, ly = s.value("box")
    desc.granular = GranularPour(contact=contact, count=count, seed=seed, attempts=fills["attempts"],
                                 volume_fraction=s.value("volume_fraction"), diameters=s.value("diameters"),
                                 region=fills["region"], walls=walls, gravity=s.value("gravity"), direction=direction,
                                 neighbor_skin=fills["neighbor_skin"])
    desc.box = Box(lo=(0.0, 0.0, -0.5), hi=(lx, ly, 0.5), lattice_units=False)
    desc.note("box", "rules", f"{s.said('box')}: x 0-{lx:g}, y 0-{ly:g} (box units), z -0.5-0.5 (2D)")
    desc.atom_style, desc.atom_types = "sphere", 1
    desc.note("atom_style", "rules", "sphere")
    desc.masses = {}
    desc.origin.pop("masses", None)
    desc.note("granular.density", "default", "1: fix pour's default particle density (mass from diameter); the text "
              "states none")
    desc.boundary = fills["boundary"]
    fill.note("boundary", "f fm p (walls at the box faces, the top open and shrink-wrapped)")
    contact_said = "; ".join(s.said(k) for k in ("kn", "gamma_t", "friction", "kt", "gamma_n") if k in s.read)
    desc.note("granular.contact", "rules", f"pair gran/hertz/history: {contact_said}")
    if runs["kt"] is None:
        fill.note("granular.contact.kt", "NULL, which LAMMPS takes as 2/7 of kn")
    if runs["gamma_n"] is None:
        fill.note("granular.contact.gamma_n", f"{gamma_n:g}")
    if gamma_t is not None:
        desc.note("granular.contact.dampflag", "rules", "1 (tangential damping on): the text states a tangential "
                  f"damping ({s.said('gamma_t')}); {POUR.name} has dampflag 0 and gamma_t NULL (gamma_n / 2), and "
                  "with dampflag 0 LAMMPS would ignore the stated value")
    else:
        fill.note("granular.contact.dampflag", f"{dampflag}, and gamma_t NULL, which LAMMPS takes as gamma_n / 2")
    fill.departures({"gamma_n": runs["gamma_n"], "timestep": runs["timestep"], "steps": runs["steps"]},
                    field="granular.departures")
    desc.note("granular.walls", "rules", f"granular walls at {', '.join(walls)}: the particles' contact model and "
              "coefficients" + (" (the text: the same contact mechanics)" if re.search(r"\bsame\b", low) else ""))
    if s.value("count") is None:
        fill.note("granular.count", f"{count} particles of type 1 inserted in all")
    if s.value("seed") is None:
        fill.note("granular.seed", f"{seed}")
    fill.note("granular.region", "insertion block x {:g}-{:g}, y {:g}-{:g} (box units), {} insertion attempts per "
              "particle".format(*fills["region"], fills["attempts"]))
    fill.note("granular.neighbor", f"neighbor {fills['neighbor_skin']:g} bin, delay 0; newton off, comm_modify vel "
              "yes (ghost velocities for the contact forces)")
    desc.note("granular.gravity", "rules", f"{s.said('gravity')} along {direction}")
    desc.note("granular.metric", "rules", "kinetic energy per particle while particles are added: the translational "
              "kinetic energy (thermo ke, 1/2 m v^2, degrees of freedom following the count) over the current count, "
              "averaged over the run's thermo rows that hold particles")
    stage = desc.stages[desc.run_stages()[0]]
    if stage.dynamics is not None:
        stage.dynamics.ensemble = "nve"
    desc.note(f"{stage.name}.integrator", "rules", "nve/sphere (translation and rotation of finite spheres)")
    desc.pair = None
    for stale in [k for k in desc.origin if k.startswith("pair.")]:
        desc.origin.pop(stale)
    desc.missing = [m for m in desc.missing if m not in POUR_GAPS]
    solved = list(POUR_NAMES)
    if not re.search(r"atom[_ ]style (?:is |of )?'?(?!sphere\b)\w", low):  # the one style named is sphere
        solved.append(ATOM_STYLE_NAME)
    if SPIN_NAME in desc.unsupported and not re.search(r"magnet|spin[- ](?:lattice|orbit|dynamics)|spin/", low):
        solved.append(SPIN_NAME)
        desc.note("granular.spin", "rules", "'spin' is the grains' rotation (nve/sphere), not a magnetic spin")
    desc.unsupported = [u for u in desc.unsupported if u not in solved]
