"""Ellipsoidal particles with the Gay-Berne potential in a described simulation.

A text about aspherical particles ("atom_style ellipsoid", "Gay-Berne", "fix npt/asphere") states
per atom type a shape (three diameters along the body axes) and a mass, which share of the lattice
particles becomes the ellipsoidal type, that orientations (quaternions) start at random, and which
temperature compute reports the rotation (compute temp/asphere, with its degrees of freedom
corrected for particles that never rotate). Read here, each value recording its words:
- per type: shape and mass, as '(mass; a,b,c)' tuples after 'mass and shape of type N', or in the
  clause naming the type ('type 2 ellipsoids have shape 3 1 1 and mass 1.5');
- the share converted: '10 % of the particles ... to type 2' (LAMMPS set group all type/fraction);
- random orientations: 'quaternions ... randomi[sz]ed', 'random orientations' (set quat/random);
- the rotational temperature: 'temp/asphere', with 'correction to the degrees of freedom';
- what the rotational kinetic energy is averaged over: 'of the ellipsoidal particles', 'per
  ellipsoid', 'of the type 2 particles' (the ellipsoid types), else all particles.
The Gay-Berne coefficients (gamma, upsilon, mu, cutoff; per pair epsilon, sigma, relative well
depths), the seeds, the barostat damping and the neighbor skin are filled from LAMMPS
examples/ellipse (in.ellipse.gayberne) only when the text states that example's setup
(simagent.described.example_fill); otherwise they are named missing.

Particles that never rotate: a Gay-Berne type with equal diameters and equal well depths is a
sphere, and pair gayberne exerts no torque on a sphere (sphere-sphere pairs are LJ; in a
sphere-ellipsoid pair only the ellipsoid is torqued), so its rotational degrees of freedom stay
unexcited. The LAMMPS manual (compute temp/asphere) says such particles' rotational degrees of
freedom must be removed with compute_modify extra/dof; LAMMPS examples/ellipse does exactly that for
the printed temperature and for the barostat's own temperature compute.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from simagent.described.example_fill import NUM, Example, StatedNumbers

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

ELLIPSOID_NAME = "ellipsoidal particles (Gay-Berne, asphere)"  # reading.UNSUPPORTED's names
ATOM_STYLE_NAME = "an atom style other than atomic"
MIXTURE_NAME = "several atom types or random placement"
COEFF_GAP = ("the Gay-Berne coefficients (gamma, upsilon, mu, cutoff; per pair of types epsilon, sigma and the "
             "relative well depths)")
DEFAULT_QUAT_SEED = 18238  # none stated and no example identified: a listed default
Triple = tuple[float, float, float]


class GayBernePair(BaseModel):
    """One pair_coeff of pair_style gayberne: epsilon, sigma, the relative well depths of type i
    and of type j along the body axes (all zero: given by another pair_coeff), optional cutoff."""

    i: int = Field(ge=1)
    j: int = Field(ge=1)
    epsilon: float = Field(ge=0)
    sigma: float = Field(gt=0)
    well_i: Triple
    well_j: Triple
    cutoff: float | None = Field(default=None, gt=0)


class Ellipsoids(BaseModel):
    """Aspherical particles (atom_style ellipsoid) under pair_style gayberne, integrated by the
    /asphere fixes. `shapes`: type -> diameters along the body axes (set shape); `quat_seed`: random
    initial orientations (set quat/random); `rotation_temperature`: compute temp/asphere printed;
    `dof_corrected`: that compute and the barostat's temperature leave out the rotational degrees
    of freedom of the types that never rotate (`still_types`); `measured`: the types whose
    rotational kinetic energy a metric averages per particle."""

    shapes: dict[int, Triple]
    quat_seed: int = Field(gt=0)
    gamma: float = Field(gt=0)
    upsilon: float
    mu: float
    cutoff: float = Field(gt=0)
    pairs: list[GayBernePair] = Field(min_length=1)
    rotation_temperature: bool = False
    dof_corrected: bool = False
    measured: list[int] = Field(default_factory=list)

    def wells(self) -> dict[int, Triple]:
        """type -> its relative well depths (the first non-zero triple a pair gives it)."""
        out: dict[int, Triple] = {}
        for p in self.pairs:
            for t, w in ((p.i, p.well_i), (p.j, p.well_j)):
                if any(w) and t not in out:
                    out[t] = w
        return out

    @property
    def still_types(self) -> list[int]:
        """Types pair gayberne never torques: equal diameters and equal well depths (spheres)."""
        wells = self.wells()
        return sorted(t for t, s in self.shapes.items()
                      if len(set(s)) == 1 and t in wells and len(set(wells[t])) == 1)


# LAMMPS examples/ellipse/in.ellipse.gayberne (the version with the degrees-of-freedom correction)
ELLIPSE_EXAMPLE = Example(
    name="LAMMPS examples/ellipse (in.ellipse.gayberne)",
    signature={"dimension": 2, "lattice": ("sq", 0.02), "box": (20.0, 20.0, 1.0), "fraction": (0.1, 2),
               "masses": (1.0, 1.5), "shapes": ((1.0, 1.0, 1.0), (3.0, 1.0, 1.0))},
    optional={"gamma": 1.0, "upsilon": 3.0, "mu": 1.0, "cutoff": 4.0},
    fills={"pair": (1.0, 3.0, 1.0, 4.0),  # gamma upsilon mu cutoff
           "pairs": [GayBernePair(i=1, j=1, epsilon=3.0, sigma=1.0, well_i=(1, 1, 1), well_j=(1, 1, 1), cutoff=2.5),
                     GayBernePair(i=1, j=2, epsilon=3.0, sigma=1.0, well_i=(1, 1, 1), well_j=(0, 0, 0)),
                     GayBernePair(i=2, j=2, epsilon=1.0, sigma=1.0, well_i=(1, 1, 0.2), well_j=(0, 0, 0))],
           "fraction_seed": 95392, "quat_seed": 18238, "velocity_seed": 87287, "velocity_loop": "geom",
           "neighbor_skin": 0.8,
           "npt": {"t_damp": 0.1, "p_damp": 1.0, "p_coupling": "iso", "mtk": False, "pchain": 0, "tchain": 1}},
    runs={"velocity": 2.4, "t": 2.0, "p": (0.0, 1.0), "steps": (2000, 2000), "timestep": 0.002})

_TRIPLE = rf"\(?\s*{NUM}\s*(?:,|x|\*|:)?\s*{NUM}\s*(?:,|x|\*|:)?\s*{NUM}\s*\)?"
_TUPLE = re.compile(rf"\(\s*{NUM}\s*;\s*{NUM}\s*,\s*{NUM}\s*,\s*{NUM}\s*\)|\(\s*{NUM}\s*,\s*{NUM}\s*,\s*{NUM}\s*;\s*"
                    rf"{NUM}\s*\)")
_TYPE = re.compile(r"\btyp(?:e)?[- ]?(\d+)\b")
_SQUARE = r"\b(?:square|sq)(?: \((?:sq|square)\))? lattice"  # 'a square (sq) lattice'
_QUAT = re.compile(r"quaternion\w*[^.;]{0,80}?random|random\w*[^.;]{0,40}?(?:orientation|quaternion)")
_DOF = re.compile(r"(?:correct|adjust)\w*[^.;]{0,40}?degrees? of freedom|degrees? of freedom[^.;]{0,40}?(?:correct|"
                  r"adjust|remov|exclud)|extra/dof")
_MEASURED = re.compile(r"rotational (?:kinetic )?energy (?:of|per|for|among) (?:the |each |an? |all )?(?:(ellipsoid\w*|"
                       r"aspherical|elongated)|type[- ]?(\d+))(?: (?:particles|bodies|ones|atoms))?")


def _type_shapes(s: StatedNumbers) -> tuple[dict[int, float], dict[int, Triple]]:
    """Per type: mass and shape, from '(m; a,b,c)' tuples after the type ('mass and shape of type 1 is
    (1; 1,1,1)') or the type's clause ('type 2 ... shape 3 1 1 ... mass 1.5')."""
    masses: dict[int, float] = {}
    shapes: dict[int, Triple] = {}
    low = s.low
    for sentence in re.finditer(r"(?:[^.]|(?<=\d)\.(?=\d))+", low):  # a ';' inside '(1; 1,1,1)' ends no sentence
        text, at = sentence.group(0), sentence.start()
        hits = list(_TYPE.finditer(text))
        for n, hit in enumerate(hits):
            t = int(hit.group(1))
            end = hits[n + 1].start() if n + 1 < len(hits) else len(text)
            clause = text[hit.end():end]
            if re.match(r"\s*(?:-|and|/)\s*typ", clause):
                continue  # 'type 1-type 1': a pair, not one type
            tup = _TUPLE.search(clause)
            if tup and t not in shapes:
                g = [float(x) if x is not None else None for x in tup.groups()]
                mass, shape = (g[0], tuple(g[1:4])) if g[0] is not None else (g[7], tuple(g[4:7]))
                masses[t], shapes[t] = mass, shape  # type: ignore[assignment]
                s.spans.append((at + hit.end() + tup.start(), at + hit.end() + tup.end()))
                s.read[f"type{t}"] = ((mass, shape), hit.group(0) + clause[:tup.end()])
                continue
            shape_hit = re.search(rf"\bshapes?\s*(?:of |= ?|: ?|is |are )?{_TRIPLE}", clause)
            mass_hit = re.search(rf"\bmass(?:es)?\s*(?:of |= ?|: ?|is )?{NUM}", clause)
            if shape_hit and t not in shapes:
                shapes[t] = tuple(float(x) for x in shape_hit.groups())  # type: ignore[assignment]
                s.spans.append((at + hit.end() + shape_hit.start(), at + hit.end() + shape_hit.end()))
                s.read[f"type{t}.shape"] = (shapes[t], hit.group(0) + clause[:shape_hit.end()])
            if mass_hit and t not in masses:
                masses[t] = float(mass_hit.group(1))
                s.spans.append((at + hit.end() + mass_hit.start(1), at + hit.end() + mass_hit.end(1)))
                s.read[f"type{t}.mass"] = (masses[t], hit.group(0) + clause[:mass_hit.end()])
    return masses, shapes


def _read(low: str) -> StatedNumbers:
    s = StatedNumbers(low)
    s.take("dimension", rf"\bdimension\s*(?:=|of|is)?\s*{NUM}", convert=lambda x: int(float(x)))
    s.take("box", rf"\b{NUM}\s*(?:x|\*|by)\s*{NUM}(?:\s*(?:x|\*|by)\s*{NUM})?", groups=(1, 2, 3))
    s.take("lattice", rf"{_SQUARE}[^.;]{{0,40}}?(?:spacing|density|scale|constant)\s*(?:of |= ?|: ?|is )?"
           rf"{NUM}")
    s.take("fraction", rf"{NUM}\s*(?:%|percent) of (?:all )?(?:the )?(?:lattice )?(?:particles|atoms)\b[^.;]{{0,60}}?"
           rf"\b(?:to|into|as|become|becomes) (?:an? )?(?:[a-z]+ of |[a-z]+ \()?type[- ]?{NUM}", groups=(1, 2))
    s.take("velocity", rf"velocit[^.;]{{0,60}}?temperature (?:of |= ?|is )?{NUM}|temperature (?:of |= ?)?{NUM}"
           rf"[^.;]{{0,40}}?velocit", groups=(1, 2))
    s.take("t", rf"(?:target|set[- ]?point) temperature (?:of |= ?|is |at )?{NUM}")
    s.take("p", rf"pressure[^.;]{{0,30}}?from {NUM} to {NUM}", groups=(1, 2))
    s.take("timestep", rf"time ?step (?:size )?(?:of |= ?|is )?{NUM}")
    for key, word in (("gamma", "gamma"), ("upsilon", "upsilon"), ("mu", "mu"), ("cutoff", r"cut-?off")):
        s.take(key, rf"\b{word}\s*(?:of |= ?|: ?|is )?{NUM}")
    s.take("quat_seed", r"(?:quaternion|orientation)[^.;]{0,80}?\bseed\s*(?:of |= ?|: ?|is )?(\d+)")
    s.take("fraction_seed", r"(?:%|percent)[^.;]{0,80}?\bseed\s*(?:of |= ?|: ?|is )?(\d+)")
    s.mark("output", rf"every {NUM}\s*(?:time ?)?steps")
    s.mark("damping", rf"(?:damping|relaxation|tdamp|pdamp)[^.;]{{0,30}}?{NUM}")  # the text's own, read with its stage
    counts = re.finditer(rf"(?<!every )(?<![\d.]){NUM}\s*(?:time ?)?steps\b", low)
    steps = [(m.span(1), int(float(m.group(1)))) for m in counts]
    if steps:
        s.spans += [span for span, _ in steps]
        s.read["steps"] = (tuple(n for _, n in steps), "; ".join(f"{n} steps" for _, n in steps))
    s.mark("types", r"\btyp(?:e)?[- ]?(\d+)\b")
    return s


def _stated(s: StatedNumbers, masses: dict[int, float], shapes: dict[int, Triple]) -> dict:
    box = s.value("box")
    lattice = re.search(_SQUARE, s.low)
    types = sorted(set(masses) | set(shapes))
    return {"dimension": s.value("dimension") or (2 if re.search(r"\b(?:two dimensions|2d)\b", s.low) else None),
            "lattice": ("sq", s.value("lattice")) if lattice and s.value("lattice") is not None else None,
            "box": tuple(float(x) for x in box) if box is not None and len(box) == 3 else None,
            "fraction": (s.value("fraction")[0] / 100, int(s.value("fraction")[1])) if s.value("fraction") else None,
            "masses": tuple(masses[t] for t in types) if types and all(t in masses for t in types) else None,
            "shapes": tuple(shapes[t] for t in types) if types and all(t in shapes for t in types) else None,
            **{k: s.value(k) for k in ("gamma", "upsilon", "mu", "cutoff")}}


def read_ellipsoids(desc: SimulationDescription, low: str) -> None:
    """Gay-Berne ellipsoids (module docstring): the description as the text states it, the example
    filling what it leaves out, or the gaps named."""
    if ELLIPSOID_NAME not in desc.unsupported or not re.search(r"gay[- ]berne|gayberne", low):
        return
    if re.search(r"resquared|re-squared|\bbody\b|\bline\b|\btri\b", low):
        return  # another aspherical model: stays unsupported
    s = _read(low)
    masses, shapes = _type_shapes(s)
    stated = _stated(s, masses, shapes)
    comparison = ELLIPSE_EXAMPLE.compare(stated, unread=s.unread())
    fill = ELLIPSE_EXAMPLE.fill(desc, comparison)
    lacking = [f"the shape of atom type {t}" for t in sorted(masses) if t not in shapes]
    if desc.lattice is None or desc.box is None or not shapes or lacking:
        desc.missing += lacking or ["the shapes of the ellipsoidal types"]
        return
    if fill is None:
        desc.missing.append(COEFF_GAP)
        return
    _build(desc, s, masses, shapes, fill)


def _build(desc: SimulationDescription, s: StatedNumbers, masses: dict[int, float], shapes: dict[int, Triple],
           fill) -> None:
    from simagent.described.mixtures import AtomType
    from simagent.described.solids import Substitution

    ex = ELLIPSE_EXAMPLE.fills
    gamma, upsilon, mu, cutoff = ex["pair"]
    measured = _measured(s.low, shapes)
    desc.ellipsoids = Ellipsoids(shapes=shapes, quat_seed=s.value("quat_seed") or ex["quat_seed"], gamma=gamma,
                                 upsilon=upsilon, mu=mu, cutoff=cutoff, pairs=list(ex["pairs"]),
                                 rotation_temperature=bool(re.search(r"temp/asphere", s.low)),
                                 dof_corrected=bool(_DOF.search(s.low)), measured=measured)
    for k, v in s.read.items():
        if k.startswith("type") and k != "types":
            desc.note(f"ellipsoids.{k}", "rules", v[1])
    desc.atom_style = "ellipsoid"
    desc.note("atom_style", "rules", "atom_style ellipsoid")
    desc.atom_types = max(shapes)
    desc.types = [AtomType(index=t, name="sphere" if len(set(sh)) == 1 else "ellipsoid", mass=masses.get(t))
                  for t, sh in sorted(shapes.items())]
    desc.masses = {t: masses[t] for t in sorted(masses)}
    desc.note("masses", "rules", ", ".join(f"type {t}: {m:g}" for t, m in desc.masses.items()))
    fraction, to_type = s.value("fraction")
    desc.lattice_type = min(t for t in shapes if t != int(to_type))
    seed = s.value("fraction_seed")
    desc.substitutions = [Substitution(from_type=desc.lattice_type, to_type=int(to_type), fraction=fraction / 100,
                                       seed=seed or ex["fraction_seed"], among="all")]
    desc.note("substitution1", "rules", s.said("fraction"))
    if seed is None:
        fill.note("substitution1.seed", str(ex["fraction_seed"]))
    random_start = _QUAT.search(s.low)
    if random_start:
        desc.note("ellipsoids.orientations", "rules", f"{random_start.group(0)}: set group all quat/random")
    else:
        fill.note("ellipsoids.orientations", "random (set group all quat/random)")
    if s.value("quat_seed") is None:
        fill.note("ellipsoids.quat_seed", str(ex["quat_seed"]))
    fill.note("ellipsoids.pair", _pair_words(desc.ellipsoids))
    for stale in ("pair.epsilon", "pair.sigma", "pair.cutoff"):  # the one-type LJ reading's
        desc.origin.pop(stale, None)
    if desc.neighbor_skin is None:
        desc.neighbor_skin = ex["neighbor_skin"]
        fill.note("neighbor_skin", f"{ex['neighbor_skin']:g} bin")
    if desc.velocity is not None and desc.origin.get("velocity.seed") and \
            desc.origin["velocity.seed"].source == "default":
        desc.velocity.seed = ex["velocity_seed"]
        fill.note("velocity.seed", str(ex["velocity_seed"]))
    if desc.velocity is not None and desc.velocity.loop is None:  # which atom gets which random velocity
        desc.velocity.loop = ex["velocity_loop"]
        fill.note("velocity.loop", ex["velocity_loop"])
    npt = ex["npt"]
    for stage in desc.stages:
        dyn = stage.dynamics
        if dyn is None or dyn.ensemble != "npt":
            continue
        for field in ("t_damp", "p_damp"):
            origin = desc.origin.get(f"{stage.name}.{field}")
            if origin is not None and origin.source == "default":
                setattr(dyn, field, npt[field])
                fill.note(f"{stage.name}.{field}", f"{npt[field]:g}")
        dyn.p_coupling, dyn.mtk, dyn.pchain, dyn.tchain = npt["p_coupling"], npt["mtk"], npt["pchain"], npt["tchain"]
        fill.note(f"{stage.name}.npt", "iso, mtk no, pchain 0, tchain 1")
    if desc.ellipsoids.dof_corrected:
        still = desc.ellipsoids.still_types
        said = _DOF.search(s.low).group(0)
        desc.note("ellipsoids.dof", "rules", f"{said}: the rotational degrees of freedom of type "
                  f"{', '.join(map(str, still))} (spheres, which pair gayberne never torques) are removed from "
                  "compute temp/asphere and from the barostat's temperature (compute_modify extra/dof, as the LAMMPS "
                  "manual's compute temp/asphere asks and examples/ellipse does)")
    fill.departures({"velocity": s.value("velocity"), "t": s.value("t"), "p": s.value("p"),
                     "steps": s.value("steps"), "timestep": s.value("timestep")})
    if re.search(r"(?:record|dump|writ|sav)\w*[^.;]{0,40}?(?:forces?|positions?|trajector)", s.low):
        desc.note_dump()
    desc.note("ellipsoids.measured", "rules" if _MEASURED.search(s.low) else "default",
              f"{_MEASURED.search(s.low).group(0)}: types {', '.join(map(str, measured))}" if _MEASURED.search(s.low)
              else "all particles: the text names no kind of particle for the rotational kinetic energy")
    desc.missing = [m for m in desc.missing if m != "pair cutoff"]
    desc.unsupported = [u for u in desc.unsupported if u not in (ELLIPSOID_NAME, ATOM_STYLE_NAME, MIXTURE_NAME)]


def _pair_words(e: Ellipsoids) -> str:
    def triple(w: Triple) -> str:
        return " ".join(f"{x:g}" for x in w)

    pairs = "; ".join(f"{p.i}-{p.j}: epsilon {p.epsilon:g} sigma {p.sigma:g} wells {triple(p.well_i)} / "
                      f"{triple(p.well_j)}" + (f" cutoff {p.cutoff:g}" if p.cutoff else "") for p in e.pairs)
    return f"gayberne gamma {e.gamma:g} upsilon {e.upsilon:g} mu {e.mu:g} cutoff {e.cutoff:g}; {pairs}"


def _measured(low: str, shapes: dict[int, Triple]) -> list[int]:
    """The types a rotational kinetic energy is averaged over: the ellipsoids (or a type by number)
    when the text says so, else all."""
    hit = _MEASURED.search(low)
    if hit and hit.group(2):
        return [int(hit.group(2))]
    if hit:
        return sorted(t for t, s in shapes.items() if len(set(s)) > 1)
    return sorted(shapes)
