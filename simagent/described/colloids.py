"""Colloid/solvent mixtures in a described simulation, following the LAMMPS example a text retells.

Task texts about big colloids in a bath of small particles retell LAMMPS examples/colloid (900
particles on a sq lattice, 96 % turned small, pair colloid) or examples/multi (small particles of
four types, two spheres cleared and a colloid put at each centre) and leave the pair colloid
coefficients out ("distinct parameters for each pair type", "appropriate parameters"). When the
setup numbers the text states (lattice scale, box, composition, masses, cutoff, cleared regions)
are exactly the example's, the text describes that example and the example's input fills what the
text leaves out (simagent.described.example_fill, the one way to fill from an example); each filled
value is a listed default naming the example. The run settings the text states (velocity
temperature, thermostat and barostat set points and damping, timestep, steps, output interval) are
the text's and always win.

Every number in the text must be read by one of the rules here; a number none of them reads means
the text says something this reading does not understand, and nothing is filled (the task stays
refused with the colloid coefficients named as missing).

Models: `NeighborMulti` (neighbor/comm per size class) and `Cavity` (a sphere cleared of lattice
atoms with one particle put at its centre).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from simagent.described.example_fill import NUM, Example, StatedNumbers

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription


class NeighborMulti(BaseModel):
    """LAMMPS `neighbor SKIN multi` with `neigh_modify delay 0` and `comm_modify mode multi`: binning
    and ghost cutoffs per size class, for mixtures of very different particle sizes. `collections`:
    the type ranges that share a class (neigh_modify collection/type); `reduce`: comm reduce/multi."""

    skin: float = Field(gt=0)
    collections: list[str] = Field(default_factory=list)
    reduce: bool = False


class Cavity(BaseModel):
    """A sphere (a disc in 2D) whose lattice atoms are deleted, one atom of `atom_type` then put at
    its centre. Coordinates and radius in distance units (sigma), not lattice spacings."""

    center: tuple[float, float, float]
    radius: float = Field(gt=0)
    atom_type: int = Field(ge=1)


COLLOID_NAME = "pair_style colloid"  # reading.UNSUPPORTED's name for it
_NPT = {"t": 2.0, "t_damp": 1.0, "p": (0.0, 1.0), "p_damp": 10.0, "drag": 1.0, "mtk": False, "pchain": 0, "tchain": 1}
# LAMMPS examples/colloid/in.colloid (current version: atom_style sphere, fix npt ... mtk no pchain 0 tchain 1)
COLLOID_EXAMPLE = Example(
    name="LAMMPS examples/colloid (in.colloid)",
    signature={"lattice": 0.01, "box": (30.0, 30.0), "small_fraction": 0.96, "mass_big": 9.0, "mass_small": 1.0,
               "cutoff": 12.5},
    fills={"types": {"big": [1], "small": [2]},
           # (i, j, A, sigma, d1, d2, cutoff)
           "coeffs": [("1", "1", 1.0, 1.0, 5.0, 5.0, 12.5), ("1", "2", 5.0, 1.0, 5.0, 0.0, 7.0),
                      ("2", "2", 10.0, 1.0, 0.0, 0.0, 2.5)],
           "fraction_seeds": [23984], "neighbor": NeighborMulti(skin=1.0)},
    runs=_NPT)
# LAMMPS examples/multi/in.colloid
MULTI_EXAMPLE = Example(
    name="LAMMPS examples/multi (in.colloid)",
    signature={"lattice": 0.1, "box": (60.0, 60.0), "species": 4, "regions": 2, "radius": 30.0, "mass_big": 400.0},
    fills={"types": {"small": [1, 2, 3, 4], "big": [5]},
           "coeffs": [("*", "*", 144.0, 1.0, 0.0, 0.0, 3.0)] + [(str(i), "5", 75.4, 1.0, 0.0, 20.0, 14.0)
                                                               for i in range(1, 5)]
           + [("5", "5", 39.5, 1.0, 20.0, 20.0, 30.0)],
           "cutoff": 20.0, "centres": [(60.0, 60.0, 0.0), (130.0, 130.0, 0.0)],
           "fractions": [(2, 0.5, 23984), (3, 0.333, 43684), (4, 0.25, 87811)],
           "neighbor": NeighborMulti(skin=1.0, collections=["1*4", "5"], reduce=True)},
    runs=_NPT)
EXAMPLES = (COLLOID_EXAMPLE, MULTI_EXAMPLE)

# a barostat target said loosely ('near zero', 'close to 0', 'near-zero pressure') or exactly ('at zero
# pressure', 'pressure of 0', 'zero external pressure')
_APPROX = r"(?:near|around|close to|about|approximately|roughly|nearly|almost)"
_HELD = r"pressure(?: control| coupling)?(?: (?:held|kept|maintained|set))?"
_LOOSE_ZERO = re.compile(rf"{_HELD} {_APPROX} (zero|0(?:\.0+)?)(?![\w.])|\b{_APPROX}[- ](zero) (?:external )?pressure")
_ZERO = re.compile(rf"{_HELD} (?:at|of|to|equal to) zero\b|\bzero (?:external )?pressure")
_BIG = r"(?:large|big|colloid)\w*"
_SMALL = r"(?:small|solvent|bath)\w*"

def _read(low: str) -> StatedNumbers:
    s = StatedNumbers(low)
    for axis in "xyz":
        s.take(f"extent_{axis}", rf"\b(?:from )?{axis}\s*(?:=|:|from|between)?\s*{NUM}\s*(?:to|-|and)\s*{NUM}",
               groups=(1, 2))
    s.take("box_dims", rf"\bbox (?:is |measures |of |with )?(?:a )?(?:size|dimensions?|edges?)?\s*(?:of )?{NUM}\s*"
           rf"(?:x|\*|by)\s*{NUM}|\b{NUM}\s*(?:x|\*|by)\s*{NUM} (?:\(?(?:lj|lattice|reduced)[a-z ]*\)? )?"
           rf"(?:simulation )?box", groups=(1, 2, 3, 4))
    s.take("lattice", rf"\b(?:square|sq) lattice (?:with |at |of )?(?:a |an )?(?:fine |coarse )?(?:lattice |reduced |"
           rf"number )?(?:spacing|density|scale|constant)\s*(?:of |= ?|: ?|is )?{NUM}")
    s.take("small_fraction", rf"{NUM}\s*(?:%|percent) of (?:the |all )?(?:particles|atoms)[^.;]{{0,60}}?\b{_SMALL}")
    s.count("species", r"\b(two|three|four|five|\d) (?:different |distinct )?(?:species|types|kinds)[^.;]{0,40}?"
            r"(?:equal|same) (?:populations?|numbers?|shares?|fractions?)")
    for sentence in re.finditer(r"[^.;]+", low):
        text = sentence.group(0)
        for role, words in (("big", _BIG), ("small", _SMALL)):
            hit = re.search(rf"\b{words}\b(?:(?!\b(?:large|big|colloid|small|solvent|bath)\w*)[^.;,]){{0,40}}?\bmass"
                            rf"(?:es)?\s*(?:of|=|:|is)?\s*{NUM}", text)
            if hit and f"mass_{role}" not in s.read:
                s.spans.append((sentence.start() + hit.start(1), sentence.start() + hit.end(1)))
                s.read[f"mass_{role}"] = (float(hit.group(1)), hit.group(0))
            elif re.search(rf"\b{words}\b[^.;]*\bunit mass", text) and f"mass_{role}" not in s.read:
                s.read[f"mass_{role}"] = (1.0, "unit mass")
    s.take("cutoff", rf"(?:global )?cut-?off(?: distance| radius)?(?: of| =| is|:)?\s*{NUM}")
    s.take("velocity", rf"(?:velocit|initiali)[^.;]{{0,60}}?temperature (?:of |= ?)?{NUM}|temperature (?:of |= ?)?"
           rf"{NUM}[^.;]{{0,40}}?(?:velocit)", groups=(1, 2))
    s.take("pressure", rf"pressure(?: control| coupling)?[^.;]{{0,20}}?from {NUM} to {NUM}", groups=(1, 2))
    loose = _LOOSE_ZERO.search(low)
    if loose:  # 'near zero' names no number: the example's set points fill (_pressure)
        if loose.group(1) and loose.group(1)[0].isdigit():
            s.spans.append(loose.span(1))
        s.read["pressure_near"] = (0.0, loose.group(0))
    elif _ZERO.search(low):
        s.read["pressure"] = ((0.0, 0.0), _ZERO.search(low).group(0))
    s.take("pchain", rf"\bpchain\s*{NUM}", convert=int)
    s.take("tchain", rf"\btchain\s*{NUM}", convert=int)
    s.take("t_target", rf"target temperature (?:should be |is |of |will be )?(?:maintained |held |kept |set )?"
           rf"(?:at |to |= ?)?{NUM}")
    s.take("p_damp", rf"(?:pressure|barostat) damping (?:parameter|constant|time)?\s*(?:should be |of |= ?|is )?{NUM}")
    s.take("t_damp", rf"(?<!pressure )(?<!barostat )(?:temperature |thermostat )?damping (?:parameter|constant|time)"
           rf"?\s*(?:should be |of |= ?|is )?{NUM}")
    s.take("drag", rf"drag(?: factor| coefficient)?\s*(?:should be |of |= ?|is )?{NUM}")
    s.take("timestep", rf"time ?step (?:size )?(?:of |= ?|is )?{NUM}")
    s.take("steps", rf"\brun (?:for )?{NUM}\s*(?:time ?)?steps\b|\bfor {NUM}\s*(?:time ?)?steps\b",
           convert=lambda x: int(float(x)), groups=(1, 2))
    s.take("thermo_every", rf"(?:thermo\w*|monitor\w*|print\w*|output)[^.;]{{0,160}}?every {NUM}\s*(?:time ?)?steps",
           convert=lambda x: int(float(x)))
    s.mark("dump", rf"\bdump[^.;]{{0,40}}?every {NUM}")
    regions = s.count("regions", rf"\b(two|three|four|\d) (?:circular|spherical|round) regions? (?:of |with )?(?:a )?"
                      rf"radius (?:of )?{NUM}")
    if regions:
        s.spans.append(regions.span(2))
        s.read["radius"] = (float(regions.group(2)), regions.group(0))
    return s


def _box(s: StatedNumbers) -> tuple[float, float] | None:
    x, y = s.value("extent_x"), s.value("extent_y")
    if x is not None and y is not None:
        return (x[1] - x[0], y[1] - y[0]) if x[0] == 0 and y[0] == 0 else None
    dims = s.value("box_dims")
    return tuple(dims) if dims is not None else None


def _stated(s: StatedNumbers) -> dict:
    """The setup numbers an example's signature may hold (a stated one no signature has stops a fill)."""
    fraction = s.value("small_fraction")
    return {"lattice": s.value("lattice"), "box": _box(s), "small_fraction": fraction / 100 if fraction else fraction,
            "mass_big": s.value("mass_big"), "mass_small": s.value("mass_small"), "cutoff": s.value("cutoff"),
            "species": s.value("species"), "regions": s.value("regions"), "radius": s.value("radius")}


def read_colloid(desc: SimulationDescription, low: str) -> None:
    """A colloid mixture retelling examples/colloid or examples/multi: the description as stated,
    the example filling what is left out (module docstring). Anything else stays as read."""
    if COLLOID_NAME not in desc.unsupported or "srd" in low:
        return
    s = _read(low)
    stated, unread = _stated(s), s.unread()
    fill = None
    for example in EXAMPLES:
        comparison = example.compare(stated, unread=unread, extra_ok=("mass_small",))
        fill = example.fill(desc, comparison, describe="")
        if comparison.signature_agrees:
            break
    if fill is None:
        return
    if len([st for st in desc.stages if st.kind == "run"]) != 1 or desc.stages[0].steps != s.value("steps"):
        return  # one run, the one stated
    _build(desc, s, example, fill.why)


def _build(desc: SimulationDescription, s: StatedNumbers, example: Example, why: str) -> None:
    from simagent.described.mixtures import AtomType
    from simagent.described.model import Box, Dynamics, Lattice, Pair, PairCoeff, Velocity
    from simagent.described.solids import Substitution

    name = example.name
    said = {k: v[1] for k, v in s.read.items()}
    desc.units, desc.dimension = "lj", 2
    for stale in ("pair.epsilon", "pair.sigma"):  # the one-type LJ reading's, replaced by the colloid pairs
        desc.origin.pop(stale, None)
    desc.atom_style = "sphere"
    if re.search(r"finite[- ]size (?:spheres|particles)", s.low):
        desc.note("atom_style", "rules", "finite-size spheres")
    else:
        desc.note("atom_style", "default", f"sphere (per-particle masses): {why}")
    scale = float(s.value("lattice"))
    desc.lattice = Lattice(style="sq", scale=scale, scale_is="density")
    desc.note("lattice", "rules", said["lattice"] + f": LAMMPS's lattice scale, in LJ units the reduced density "
              f"(spacing {(1 / scale) ** 0.5:g} sigma); a literal spacing of {scale:g} sigma would overlap the "
              f"particles, and {name} uses this number as the scale")
    lx, ly = _box(s)
    z = s.value("extent_z") or (-0.5, 0.5)
    desc.box = Box(lo=(0.0, 0.0, z[0]), hi=(lx, ly, z[1]), lattice_units=True)
    desc.note("box", "rules", f"{lx:g} x {ly:g} lattice spacings (LAMMPS's region default)")
    big, small = example.fills["types"]["big"], example.fills["types"]["small"]
    desc.atom_types = len(big) + len(small)
    desc.types = [AtomType(index=i, name="big" if i in big else "small") for i in range(1, desc.atom_types + 1)]
    desc.masses = {i: float(s.value("mass_big")) if i in big else float(s.value("mass_small") or 1.0)
                   for i in range(1, desc.atom_types + 1)}
    desc.note("masses", "rules" if s.value("mass_small") else "default",
              f"big (type {', '.join(map(str, big))}): {s.value('mass_big'):g}; small (type "
              f"{', '.join(map(str, small))}): {desc.masses[small[0]]:g}")
    desc.note("atom_types", "default", f"big particles type {', '.join(map(str, big))}, small type "
              f"{', '.join(map(str, small))}: {name}'s numbering")
    if "small_fraction" in example.signature:  # all made big on the lattice, a share turned small
        seed = example.fills["fraction_seeds"][0]
        desc.lattice_type = big[0]
        desc.substitutions = [Substitution(from_type=big[0], to_type=small[0], fraction=s.value("small_fraction") / 100,
                                           seed=seed, among="all")]
        desc.note("substitution1", "rules", said["small_fraction"])
        desc.note("substitution1.seed", "default", f"{seed}: {why}")
    else:  # small particles of several types in equal shares, colloids in cleared spheres
        desc.lattice_type = small[0]
        desc.substitutions = [Substitution(from_type=small[0], to_type=t, fraction=f, seed=seed, among="all")
                              for t, f, seed in example.fills["fractions"]]
        desc.note("substitution1", "rules", said["species"])
        desc.note("substitution1.seed", "default", f"fractions 1/2, 1/3, 1/4 of all atoms to types 2, 3, 4 "
                  f"(equal shares) and their seeds: {why}")
        radius = float(s.value("radius"))
        desc.cavities = [Cavity(center=c, radius=radius, atom_type=big[0]) for c in example.fills["centres"]]
        desc.note("cavities", "rules", said["regions"])
        centres = "; ".join(" ".join(f"{v:g}" for v in c) for c in example.fills["centres"])
        desc.note("cavities.center", "default", f"{centres} and the radius in sigma (units box), not lattice "
                  f"spacings: {why}")
    cutoff = float(s.value("cutoff") or example.fills.get("cutoff"))
    desc.note("pair.cutoff", "rules" if s.value("cutoff") else "default", said.get("cutoff", f"{cutoff:g}: {why}"))
    desc.pair = Pair(style="colloid", cutoff=cutoff, coeffs=[PairCoeff(i=i, j=j, epsilon=a, sigma=sg, d1=d1, d2=d2,
                                                                       cutoff=c)
                                                             for i, j, a, sg, d1, d2, c in example.fills["coeffs"]])
    coeffs = example.fills["coeffs"]
    desc.note("pair.coeffs", "default", "pair colloid (A, sigma, d1, d2, cutoff) per pair: " + "; ".join(
        f"{i}-{j}: {a:g} {sg:g} {d1:g} {d2:g} {c:g}" for i, j, a, sg, d1, d2, c in coeffs) + f": {why}")
    desc.neighbor_multi = example.fills["neighbor"].model_copy()
    desc.note("neighbor_multi", "default", f"neighbor {desc.neighbor_multi.skin:g} multi, delay 0, comm mode multi"
              + (f", collections {' '.join(desc.neighbor_multi.collections)}" if desc.neighbor_multi.collections
                 else "") + f": {why}" + ("" if not re.search(r"multi", s.low) else " (the text asks for multi lists)"))
    t_velocity = s.value("velocity")
    if t_velocity is not None:
        t_velocity = float(t_velocity if not isinstance(t_velocity, tuple) else t_velocity[0])
        v = desc.velocity or Velocity(temperature=t_velocity, seed=87287)
        desc.velocity = v.model_copy(update={"temperature": t_velocity})
    npt = example.runs
    dyn = Dynamics(ensemble="npt", thermostat="nose-hoover", p_coupling="iso", mtk=npt["mtk"])
    for field, key, default in (("t_stop", "t_target", npt["t"]), ("t_damp", "t_damp", npt["t_damp"]),
                                ("p_damp", "p_damp", npt["p_damp"]), ("drag", "drag", npt["drag"]),
                                ("pchain", "pchain", npt["pchain"]), ("tchain", "tchain", npt["tchain"])):
        stated = s.value(key)
        setattr(dyn, field, stated if stated is not None else default)
        desc.note(f"run1.{field}", "rules" if stated is not None else "default",
                  said[key] if stated is not None else f"{default:g}: {why}")
    dyn.t_start = dyn.t_stop
    dyn.p_start, dyn.p_stop = _pressure(desc, s, example, why)
    desc.note("run1.mtk", "default", f"mtk no: {why}")
    stage = desc.stages[0]
    stage.dynamics = dyn
    if s.value("timestep") is not None:
        desc.timestep = float(s.value("timestep"))
    if "dump" in s.read:
        desc.note_dump(s.read['dump'][1])
    if s.value("thermo_every") is not None:
        desc.thermo_every = s.value("thermo_every")
        desc.note("thermo_every", "rules", said["thermo_every"][:80])
    solved = ("lattice", "colloid", "mass", "pair cutoff", "barostat", "thermostat", "radius", "region")
    desc.missing = [m for m in desc.missing if not any(w in m for w in solved)]
    desc.unsupported = [u for u in desc.unsupported if u not in (COLLOID_NAME, "several atom types or random placement",
                                                                 "regions, walls and groups of atoms")]


def _pressure(desc: SimulationDescription, s: StatedNumbers, example: Example, why: str) -> tuple[float, float]:
    """The barostat's start and stop set points. Stated ones ('from 0 to 0.5', 'at zero pressure') are
    run. A target said only loosely ('near zero') names no number: when the example's barostat starts
    there, its set points fill, listed with why (a gas held at exactly zero pressure has no finite
    volume, so 'exactly 0' would be a choice of ours that answers nothing); otherwise the loose value
    is held. Unstated: the example's."""
    npt = example.runs
    pressure, near = s.value("pressure"), s.value("pressure_near")
    if pressure is not None:
        desc.note("run1.pressure", "rules", s.said("pressure"))
        return pressure
    p0, p1 = npt["p"]
    if near is not None and p0 == near:
        desc.note("run1.pressure", "default", f"{p0:g} -> {p1:g} over the run (the example's barostat, which starts at "
                  f"{p0:g}): the text says '{s.said('pressure_near')}', which names no number; {why}. A target held at "
                  f"exactly {near:g} is not stated either, and there a gas has no finite volume (the box grows "
                  "without bound)")
        return p0, p1
    if near is not None:
        desc.note("run1.pressure", "rules", f"{s.said('pressure_near')}: held at {near:g}")
        return near, near
    desc.note("run1.pressure", "default", f"{npt['p']}: {why}")
    return p0, p1
