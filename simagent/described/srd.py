"""A solvent moved by stochastic rotation dynamics (LAMMPS fix srd) in a described simulation.

Big particles are made, given a pair potential and run alone first; then point-like solvent
particles are made on a dense lattice, those overlapping a big particle deleted, and the last run
stage moves them by SRD (rotation every N steps at a temperature on a grid of bins) while the big
particles alone are integrated. `SRDSolvent` holds what that needs; `read_srd` fills it from the
text.

Texts of this kind retell LAMMPS examples/srd (in.srd.mixture) and leave some of its numbers out,
most often the grid size. When the numbers the text states are the example's (at the precision the
text gives) and every number in it is read by a rule here, the example fills what is left out
(simagent.described.example_fill, the one way to fill from an example): each filled value is a
listed default naming the example. The SRD temperature, timestep and step counts are run settings:
a stated one wins and report.md lists the departure. One fill then depends on a departure: the
example's grid goes with its own temperature (LAMMPS requires the SRD mean free path
N dt sqrt(T/m) to be at least 0.6 grid); at another stated temperature whose free path is shorter,
the grid is the largest LAMMPS accepts there that divides the box, and report.md says why.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from simagent.described.example_fill import NUM, Example, StatedNumbers

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

SRD_NAME = "stochastic rotation dynamics (fix srd)"  # reading.UNSUPPORTED's name for it
SRD_GAP = "the SRD bin (grid) size"  # mixture_reading._unstated_parts' words
DEFAULT_SRD_VELOCITY_SEED = 593849  # examples/srd's seed for the solvent's velocities
DEFAULT_VELOCITY_SEED = 87287  # simagent.described.reading.DEFAULT_SEED (LAMMPS's examples' seed)
LAMDA_MIN = 0.6  # LAMMPS fix srd: the SRD mean free path must be at least 0.6 of the grid size
# LAMMPS examples/srd/in.srd.mixture: fix 2 small srd 20 big 1.0 0.25 49894 radius 0.88 search 0.2 collision slip;
# big particles on sq 0.4 in a 10 x 10 box, mass 1, diameter 1, lj/cut 2.5, velocity big create 1.44 87287 loop geom,
# NVE 1000 steps at LAMMPS's LJ timestep (it sets none before that run); solvent on sq 85.0, mass 0.01, diameter 0,
# velocity small create 1.0 593849 loop geom, delete_atoms overlap 0.5; timestep 0.001, 5000 steps, thermo 100.
SRD_EXAMPLE = Example(
    name="LAMMPS examples/srd (in.srd.mixture)",
    signature={"every": 20, "seed": 49894, "radius": 0.88, "search": 0.2},
    optional={"solvent_density": 85.0, "big_lattice": 0.4, "overlap": 0.5, "box": (10.0, 10.0), "lj_cutoff": 2.5,
              "mass_big": 1.0, "mass_small": 0.01, "diameter_big": 1.0, "diameter_small": 0.0},
    fills={"grid": 0.25, "collision": "slip", "first_timestep": 0.005, "velocity_seed": 87287, "loop": "geom",
           "solvent_velocity_seed": DEFAULT_SRD_VELOCITY_SEED, "thermo_every": 100},
    runs={"temperature": 1.0, "timestep": 0.001, "steps": 5000, "velocity": 1.44, "first_steps": 1000})
# lattice styles whose cell is a cube (square in 2D): basis atoms per cell (LAMMPS lattice command)
_CUBIC_BASIS = {"sq": 1, "sq2": 2, "sc": 1, "bcc": 2, "fcc": 4}


class SRDSolvent(BaseModel):
    """Small particles of `atom_type` made on a lattice of scale `density` (same style as the big
    particles' lattice; in 2D in the z = 0 plane) just before the last run stage, those within
    `overlap` of a big particle (`big_type`) deleted, velocities drawn at the SRD temperature; then
    moved by stochastic rotation dynamics (fix srd: rotation every `every` steps, `temperature`,
    grid `grid`, `seed`; collision radius factor, search grid and collision rule when stated) while
    the big particles alone are integrated (NVE). `timestep`: the SRD stage's own timestep, set when
    the solvent joins (None: the description's, for every stage)."""

    atom_type: int = Field(ge=1)
    big_type: int = Field(ge=1)
    density: float = Field(gt=0)
    overlap: float = Field(gt=0)
    diameter: float = Field(default=0.0, ge=0)
    big_diameter: float = Field(default=1.0, gt=0)
    every: int = Field(gt=0)
    temperature: float = Field(gt=0)
    grid: float = Field(gt=0)
    seed: int = Field(gt=0)
    radius: float | None = Field(default=None, gt=0)
    search: float | None = Field(default=None, gt=0)
    collision: str | None = Field(default=None, pattern=r"^(?:slip|noslip)$")
    velocity_seed: int = Field(default=DEFAULT_SRD_VELOCITY_SEED, gt=0)
    reset_timestep: bool = False
    timestep: float | None = Field(default=None, gt=0)


_SAME = r"(?:[^.;]|(?<=\d)\.(?=\d))"  # within one sentence: any character but a full stop (a decimal point is one)
_SENTENCE = r"(?:[^.]|(?<=\d)\.(?=\d))"  # within one sentence, across semicolons
_BIG = r"(?:large|big|colloid)\w*"
_SMALL = r"(?:small|solvent|srd)\w*"
_STEPS = r"(\d{1,3}(?:,\d{3})+|\d+)"  # a step count, '5,000' too


def _numbers(low: str) -> StatedNumbers:
    """Every number an SRD text states, by role; those the general reading takes (masses, diameters,
    step counts, the velocity temperature, the timestep) are marked read here too, so that a number
    no rule reads can stop the example's fill."""
    s = StatedNumbers(low)
    s.take("every", rf"stream\w*(?: step)?(?: ratio| interval| every)?(?: of| =)?\s*{NUM}|\bsrd (?:every|interval) "
           rf"{NUM}|\bevery {NUM} steps?[^.;]{{0,30}}?\b(?:rotation|srd)", convert=lambda x: int(float(x)),
           groups=(1, 2, 3))
    s.take("temperature", rf"(?:srd |target |solvent )temperature(?: of| =| is)?\s*{NUM}")
    s.take("seed", rf"\bseed(?: of| =| is)?\s*{NUM}", convert=lambda x: int(float(x)))
    s.take("radius", rf"collision radius(?: factor)?(?: of| =| is)?\s*{NUM}")
    s.take("search", rf"search (?:distance|grid|spacing)(?: of| =| is)?\s*{NUM}")
    s.take("grid", rf"(?:srd )?(?:grid|bin|cell) (?:size|spacing|length|width)(?: of| =| is)?\s*{NUM}")
    s.take("solvent_density", rf"{_SMALL}{_SAME}{{0,80}}?lattice (?:with |at |of )?(?:a )?(?:number )?density "
           rf"(?:of |= ?)?{NUM}|lattice (?:with |at |of )?(?:a )?(?:number )?density (?:of |= ?)?{NUM}{_SAME}{{0,60}}"
           rf"\b{_SMALL}", groups=(1, 2))
    s.take("big_lattice", rf"\b{_BIG}{_SAME}{{0,100}}?lattice{_SAME}{{0,20}}?(?:constant|density|spacing|scale)\s*"
           rf"(?:of |= ?|is )?\(?{NUM}")
    s.take("overlap", rf"within (?:a )?(?:cut-?off )?(?:distance )?(?:of )?{NUM} (?:from|of) (?:the |any |a )?{_BIG}")
    s.take("lj_cutoff", rf"(?:lj|lennard[- ]jones){_SAME}{{0,60}}?cut-?off (?:of |= ?)?{NUM}")
    s.take("box", rf"\bbox (?:of |with |measuring )?(?:size |edges? )?(?:of )?{NUM}\s*(?:x|\*|by)\s*{NUM}|\b{NUM}\s*"
           rf"(?:x|\*|by)\s*{NUM} (?:\(?(?:lj|lattice|reduced)[a-z ]*\)? )?(?:simulation )?box", groups=(1, 2, 3, 4))
    s.take("velocity", rf"velocit{_SAME}{{0,60}}?temperature (?:of |= ?)?{NUM}")
    s.take("timestep", rf"time ?step (?:size )?(?:of |= ?|is )?{NUM}")
    s.mark("mass", rf"\bmass(?:es)?\s*(?:=|of|is|:)?\s*{NUM}")
    s.mark("diameter", rf"\bdiameters?\s*(?:=|of|is|:)?\s*{NUM}")
    s.mark("steps", rf"\b(?:for|run|runs) (?:for )?{_STEPS}\s*(?:more )?(?:time ?)?steps\b")
    s.mark("type", r"\btypes? (\d+)\b")
    return s


def _role_number(low: str, words: str, what: str) -> float | None:
    """The number stated as `what` ('diameter = 1.0') of the particles `words` name: the role word said
    last before it in the same sentence."""
    for sentence in re.finditer(rf"{_SENTENCE}+", low):
        for hit in re.finditer(rf"\b{what}\s*(?:=|of|is|:)?\s*{NUM}", sentence.group(0)):
            roles = re.findall(rf"\b(?:{_BIG}|{_SMALL})", sentence.group(0)[:hit.start()])
            if roles and re.fullmatch(words, roles[-1]):
                return float(hit.group(1))
    return None


def _box_edges(desc: SimulationDescription) -> tuple[float, ...] | None:
    """The box edges in distance units (sigma), for a cubic lattice in LJ units or a box in distance units."""
    box, lattice = desc.box, desc.lattice
    if box is None:
        return None
    edges = tuple(hi - lo for lo, hi in zip(box.lo[:desc.dimension], box.hi[:desc.dimension], strict=True))
    if not box.lattice_units:
        return edges
    if lattice is None or lattice.style not in _CUBIC_BASIS or desc.units != "lj":
        return None
    spacing = (_CUBIC_BASIS[lattice.style] / lattice.scale) ** (1 / desc.dimension)
    return tuple(e * spacing for e in edges)


def mean_free_path(every: int, timestep: float, temperature: float, mass: float) -> float:
    """The SRD mean free path LAMMPS checks the grid against: N dt sqrt(kT/m)."""
    return every * timestep * math.sqrt(temperature / mass)


def largest_grid(lamda: float, edges: tuple[float, ...]) -> float:
    """The largest grid LAMMPS accepts for this free path: every axis gets a whole number of bins
    (round(L / grid), as fix srd makes them), none wider than lamda / 0.6."""
    widest = lamda / LAMDA_MIN
    grid = min(edge / math.ceil(edge / widest) for edge in edges)
    while max(edge / max(1, round(edge / grid)) for edge in edges) > widest * (1 + 1e-12):
        grid *= 1 - 1e-4
    return grid


def read_srd(desc: SimulationDescription, low: str) -> None:
    """An SRD solvent (SRDSolvent); the big particles keep the lattice, pair potential and first
    stages read for them. Its grid is the text's, or examples/srd's when the text retells that
    example (module docstring); without either, the grid gap stays (named, with the stated numbers
    that differ from the example's when the text retells it). Anything else the run needs and the text
    leaves out is named missing."""
    from simagent.described.model import Pair, PairCoeff

    if SRD_NAME not in desc.unsupported or desc.lattice is None or desc.box is None or not desc.run_stages():
        return
    s = _numbers(low)
    if s.value("every") is None or s.value("temperature") is None:
        return
    names = {t.index: t.name for t in desc.types}
    small = next((i for i, n in names.items() if re.match(r"small|solvent|srd|light", n)), 2)
    big = next((i for i in names if i != small), 1)
    runs = desc.run_stages()
    srd_stage = desc.stages[runs[-1]]
    stated = {k: s.value(k) for k in ("every", "seed", "radius", "search", "solvent_density", "big_lattice",
                                      "overlap", "box", "lj_cutoff")}
    stated |= {"mass_big": desc.masses.get(big), "mass_small": desc.masses.get(small),
               "diameter_big": _role_number(low, _BIG, "diameter"), "diameter_small": _role_number(low, _SMALL,
                                                                                                 "diameter")}
    comparison = SRD_EXAMPLE.compare(stated, unread=s.unread())
    fill = SRD_EXAMPLE.fill(desc, comparison) if s.value("grid") is None or comparison.identified else None
    if s.value("grid") is None and fill is None:
        return  # the grid gap stays; a retold example's differences are named (Example.fill)
    density, overlap, cutoff, big_scale = (s.value(k) for k in ("solvent_density", "overlap", "lj_cutoff",
                                                                 "big_lattice"))
    lacking = [name for name, v in (("the lattice (density) the SRD particles are made on", density),
                                    ("the distance within which SRD particles overlapping a big one are deleted",
                                     overlap), ("the LJ cutoff of the big particles", cutoff)) if v is None]
    no_pairs = re.search(r"\bno (?:lj |pair(?:wise)? )?interactions?|not? (?:be )?(?:no )?(?:lj|pair(?:wise)?) "
                         r"interactions?|without (?:lj|pair(?:wise)?) interactions?", low)
    if not no_pairs:
        lacking.append("the interactions of the SRD particles (none, or which)")
    if lacking:
        desc.missing += lacking
        return
    if big_scale is not None:
        desc.lattice.scale = float(big_scale)
        desc.note("lattice", "rules", s.said("big_lattice") + ": the big particles' lattice scale (LAMMPS's lattice "
                  "scale, the reduced density in LJ units)")
    elif math.isclose(desc.lattice.scale, float(density), rel_tol=1e-6):
        desc.missing.append("the big particles' lattice scale")
        return
    diameter_big, diameter_small = stated["diameter_big"], stated["diameter_small"]
    timestep = _srd_timestep(desc, s, srd_stage.steps, fill)
    collision = c.group(1).replace("-", "") if (c := re.search(r"\b(no-?slip|slip)\b", low)) else None
    if collision is None and fill is not None:
        collision = SRD_EXAMPLE.fills["collision"]
        fill.note("srd.collision", collision)
    desc.srd = SRDSolvent(atom_type=small, big_type=big, density=float(density), overlap=float(overlap),
                          diameter=diameter_small or 0.0, big_diameter=diameter_big or 1.0, every=s.value("every"),
                          temperature=float(s.value("temperature")), grid=1.0,
                          seed=s.value("seed") or DEFAULT_SRD_VELOCITY_SEED + 1, radius=s.value("radius"),
                          search=s.value("search"), collision=collision, timestep=timestep,
                          reset_timestep=bool(re.search(r"time ?step is (?:then )?reset|reset(?:ting)? (?:the )?time "
                                                        r"?step", low)))
    desc.note("srd", "rules", "; ".join(f"{k}: {v[1]}" for k, v in s.read.items() if k in SRD_EXAMPLE.signature
                                        or k in ("temperature", "grid", "solvent_density", "overlap")))
    if s.value("grid") is not None:
        desc.srd.grid = float(s.value("grid"))
    elif not _fill_grid(desc, fill):
        return
    desc.missing = [m for m in desc.missing if m != SRD_GAP]
    if desc.velocity is not None and desc.velocity.seed == desc.srd.seed:  # the SRD's seed, not the velocities'
        desc.velocity.seed = DEFAULT_VELOCITY_SEED
        desc.note("velocity.seed", "default", f"{DEFAULT_VELOCITY_SEED}: the seed the text states ({desc.srd.seed}) "
                  "is the SRD's; none is stated for the velocities")
    if fill is not None:
        fill.departures({"temperature": desc.srd.temperature, "timestep": timestep or desc.timestep,
                         "steps": srd_stage.steps, "first_steps": desc.stages[runs[0]].steps if len(runs) > 1 else None,
                         "velocity": desc.velocity.temperature if desc.velocity is not None else None})
        _fill_run_settings(desc, fill)
    for stale in ("pair.epsilon", "pair.sigma", "pair.cutoff"):  # the one-type LJ reading's, replaced below
        desc.origin.pop(stale, None)
    if diameter_big is None:
        desc.note("srd.big_diameter", "default", "1.0: LAMMPS's default diameter of a finite-size sphere")
    if diameter_small is None:
        desc.note("srd.diameter", "default", "0: SRD particles are points")
    if s.value("seed") is None:
        desc.note("srd.seed", "default", f"{desc.srd.seed}: none stated")
    desc.note("srd.velocity", "default", f"SRD particles' velocities drawn at the SRD temperature "
              f"{desc.srd.temperature:g} (seed {desc.srd.velocity_seed}, loop geom): the text states none for them"
              + (f"; {SRD_EXAMPLE.name} draws them at its SRD temperature with this seed" if fill else ""))
    desc.atom_style = "sphere"
    sigma = desc.pair.coeffs[0].sigma if desc.pair else 1.0
    eps = desc.pair.coeffs[0].epsilon if desc.pair else 1.0
    desc.pair = Pair(cutoff=float(cutoff), coeffs=[
        PairCoeff(i=str(big), j=str(big), epsilon=eps, sigma=sigma),
        PairCoeff(i=str(small), j=str(small), epsilon=0.0, sigma=1.0, cutoff=0.0),
        PairCoeff(i=str(min(big, small)), j=str(max(big, small)), epsilon=0.0, sigma=1.0, cutoff=0.0)])
    desc.note("pair", "rules", f"{s.said('lj_cutoff')}; {no_pairs.group(0)}: LJ between big particles only")
    desc.missing = [m for m in desc.missing if "pair cutoff" not in m]
    desc.unsupported = [u for u in desc.unsupported if u not in (SRD_NAME, "several atom types or random placement")]


def _srd_timestep(desc: SimulationDescription, s: StatedNumbers, steps: int, fill) -> float | None:
    """The SRD stage's own timestep: a text retelling the example that states one timestep in the
    sentence of the SRD run's length ('run 5,000 steps with a time step of 0.001') states it for that
    run; the stages before it then run at the example's (it sets none before its SRD run: LAMMPS's
    LJ default). Otherwise (None) one timestep for every stage, as read."""
    dt = s.value("timestep")
    if fill is None or dt is None or len(desc.run_stages()) < 2:
        return None
    said = s.said("timestep")
    start = s.low.find(said)
    before = re.search(rf"{_SENTENCE}*$", s.low[:start]).group(0)
    after = re.match(rf"{_SENTENCE}*", s.low[start:]).group(0)
    counts = {int(n.replace(",", "")) for n in re.findall(_STEPS, before + after)}
    if steps not in counts:
        return None
    first = SRD_EXAMPLE.fills["first_timestep"]
    desc.timestep = first
    desc.note("timestep", "default", f"{first:g} for the stages before the SRD run: the text states its timestep "
              f"{dt:g} for the SRD run ('{(before + after).strip()[:90]}'), none for them; {SRD_EXAMPLE.name}, whose "
              "setup the text states, runs them at LAMMPS's LJ default (it sets its timestep just before the SRD run)")
    desc.note("srd.timestep", "rules", said)
    for stage in desc.stages:  # the SRD run's timestep is srd.timestep's: not also a stage's own
        if stage.timestep is not None and abs(stage.timestep - float(dt)) <= 1e-9 * float(dt):
            stage.timestep = None
            desc.origin.pop(f"{stage.name}.timestep", None)
    return float(dt)


def _fill_grid(desc: SimulationDescription, fill) -> bool:
    """The example's grid, when LAMMPS accepts it at the run's SRD temperature; else the largest grid
    LAMMPS accepts there (it goes with the example's own temperature). False (the gap named) when the
    box edges in sigma are not known."""
    srd = desc.srd
    grid = SRD_EXAMPLE.fills["grid"]
    dt = srd.timestep or desc.timestep
    small_mass = desc.masses.get(srd.atom_type)
    if dt is None or small_mass is None:
        return False
    lamda = mean_free_path(srd.every, dt, srd.temperature, small_mass)
    if lamda >= LAMDA_MIN * grid:
        srd.grid = grid
        fill.note("srd.grid", f"{grid:g}")
        return True
    edges = _box_edges(desc)
    if edges is None:
        desc.missing[desc.missing.index(SRD_GAP)] = (
            f"{SRD_GAP} (not stated; {SRD_EXAMPLE.name}'s {grid:g} goes with its SRD temperature "
            f"{SRD_EXAMPLE.runs['temperature']:g}, and LAMMPS refuses it at the stated {srd.temperature:g})")
        return False
    srd.grid = largest_grid(lamda, edges)
    bins = " x ".join(str(round(e / srd.grid)) for e in edges)
    own_t = SRD_EXAMPLE.runs["temperature"]
    own = mean_free_path(srd.every, SRD_EXAMPLE.runs["timestep"], own_t, small_mass)
    desc.note("srd.grid", "default", f"{srd.grid:.7g}: not stated; {SRD_EXAMPLE.name}'s grid {grid:g} goes with its "
              f"SRD temperature {own_t:g} (mean free path {own:g}); at the stated {srd.temperature:g} the mean free "
              f"path is {srd.every} x {dt:g} x sqrt({srd.temperature:g}/{small_mass:g}) = {lamda:.4g}, and LAMMPS "
              f"refuses a grid wider than that / {LAMDA_MIN} (fix srd: "
              f"'lamda must be >= 0.6 of SRD grid size'), so the example's grid cannot run: the largest grid LAMMPS "
              f"accepts there is taken ({bins} bins across the box)")
    return True


def _fill_run_settings(desc: SimulationDescription, fill) -> None:
    """The example's velocity seed and loop, and its thermo interval (the rows its per-big-particle
    energy is averaged over), where the text states none."""
    fills = SRD_EXAMPLE.fills
    if desc.velocity is not None:
        if desc.origin.get("velocity.seed") is None or desc.origin["velocity.seed"].source == "default":
            desc.velocity.seed = fills["velocity_seed"]
            fill.note("velocity.seed", str(fills["velocity_seed"]))
        desc.velocity.loop = fills["loop"]
        fill.note("velocity.loop", fills["loop"])
    if desc.thermo_every is None:
        desc.thermo_every = fills["thermo_every"]
        fill.note("thermo_every", str(fills["thermo_every"]))
