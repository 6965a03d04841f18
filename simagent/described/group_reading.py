"""Rules that read a described simulation's layout (simagent.described.groups) from its text.

Read here: boundaries stated per axis ('periodic in x and shrink-wrapped in y'); layers of atoms
picked by a coordinate ('the bottom layer (y < 1.25)', 'atoms with y above 8.75 form the upper
wall'), the rest of the atoms as one group ('the fluid', 'the mobile atoms'), which layers are
held at rest; forces on a group ('a body force of 1.0 along x on the fluid', 'a downward force of
0.5 on the upper wall'); repulsive indenter obstacles (radius, force constant, centres); the group
a thermostat acts on. Each rule records the words it read. What a literal run needs but the text
leaves out is listed as missing; a layout word in a sentence no rule read keeps the description
unrenderable ('regions, walls and groups of atoms' stays unsupported).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from simagent.backends.expert.protocol_text import NUM
from simagent.described.groups import AXES, Group, GroupForce, Indenter, Layout, Region, Wall
from simagent.described.model import Dynamics, SimulationDescription, Stage

LAYOUT_UNSUPPORTED = "regions, walls and groups of atoms"
BOUNDARY_UNSUPPORTED = "non-periodic boundaries"
_LAYOUT_WORDS = re.compile(r"\bregion|cylind|cluster|obstacle|\bwalls?\b|slabs?\b|\blayers?\b|indent")
_REQUEST = re.compile(r"^(?:compute|calculate|determine|find|estimate|report|what)\b")
# a shear flow imposed by velocities: read by solids.attach_shear (or listed as missing there)
_SHEAR_FLOW = re.compile(r"velocity (?:gradient|ramp|profile)")

# --- boundaries -------------------------------------------------------------------------------
_KIND = re.compile(r"(shrink[- ]?wrap\w*(?:,? non-?periodic)?|non-?periodic(?:,? shrink[- ]?wrap\w*)?|"
                   r"(?<![-\w])periodic|fixed(?= (?:\(f\) )?boundar))(?:[^.;]{0,25}?\bboundar\w*(?: conditions?)?)?")
_AXIS = re.compile(r"\(([xyz])\)|\b([xyz])[- ]?(?:direction|dimension|axis|axes)s?\b|\b([xyz]),? and ([xyz])\b|"
                   r"\b(?:along|in) (?:the )?([xyz])(?:,? and ([xyz]))?\b")


def read_boundary(desc: SimulationDescription, low: str) -> None:
    """Boundaries stated per axis: 'periodic' p, 'shrink-wrapped' s, 'non-periodic' or 'fixed' f
    (LAMMPS's plain non-periodic boundary, whose faces do not move). Axes not named stay periodic
    (LAMMPS's default); a 2D box is periodic in z (LAMMPS requires it). A LAMMPS boundary triple the
    text quotes ('(s s p)') states all three at once and wins."""
    if triple := re.search(r"boundar[^.;]{0,160}?\(\s*([psfm])\s+([psfm])\s+([psfm])\s*\)|\bboundar(?:y|ies)(?: "
                           r"conditions)?(?: are| is)?\s+([psfm])\s+([psfm])\s+([psfm])\b", low):  # '(s s p)' after
        # the word, the command quoted, or 'boundaries are f s p'
        desc.boundary = tuple(g for g in triple.groups() if g)  # type: ignore[assignment]
        desc.note("boundary", "rules", triple.group(0))
        if BOUNDARY_UNSUPPORTED in desc.unsupported:
            desc.unsupported.remove(BOUNDARY_UNSUPPORTED)
        return
    hits = list(_KIND.finditer(low))
    letters: dict[str, str] = {}
    evidence = []
    for n, hit in enumerate(hits):
        end = hits[n + 1].start() if n + 1 < len(hits) else len(low)
        span = re.split(r"[.;]", low[hit.end():end])[0][:80]
        axes = [a for m in _AXIS.finditer(span) for a in m.groups() if a]
        if not axes:
            continue
        kind = hit.group(1)
        letter = "s" if kind.startswith("shrink") else "f" if kind.startswith(("non", "fixed")) else "p"
        for axis in axes:
            letters.setdefault(axis, letter)
        evidence.append((hit.group(0) + span).strip())
    if not letters or set(letters.values()) == {"p"}:
        return
    boundary = [letters.get(a, "p") for a in AXES]
    if desc.dimension == 2:
        boundary[2] = "p"
    desc.boundary = tuple(boundary)  # type: ignore[assignment]
    desc.note("boundary", "rules", "; ".join(evidence))
    unstated = [a for a in AXES[:desc.dimension] if a not in letters]
    if unstated:
        desc.note("boundary.unstated", "default", f"p along {', '.join(unstated)}: LAMMPS's default boundary, "
                  "periodic where the text states none")
    if BOUNDARY_UNSUPPORTED in desc.unsupported:
        desc.unsupported.remove(BOUNDARY_UNSUPPORTED)


# --- layers, forces, obstacles ----------------------------------------------------------------
_LABELS = {"bottom": "lower", "lower": "lower", "top": "upper", "upper": "upper", "left": "left", "right": "right"}
_LABEL = re.compile(r"\b(bottom|top|lower|upper|left|right)\b")
_BELOW = r"<=?|≤|below|under|less than|smaller than|lower than"
_ABOVE = r">=?|≥|above|over|greater than|larger than|higher than"
_INEQ = re.compile(rf"\b([xyz])\s*(?:coordinates? )?(?:(?:is|are|of) )?({_BELOW}|{_ABOVE})\s*{NUM}")
_LAYER_SENTENCE = re.compile(r"\bwalls?\b|\blayers?\b|\bslabs?\b|\bplates?\b|boundary atoms")
_AT_REST = re.compile(r"immobili[sz]|\bfrozen\b|\bfreez|held (?:fixed|in place|still|at rest)|\bfixed\b|"
                      r"\brigid\b|zero forces?|\bconstrained\b|at rest")
_REST_WORDS = (("fluid", r"\bfluid\b"), ("mobile", r"\bmobile\b|all other (?:atoms|particles)|remaining"))
_FORCE = re.compile(rf"\b(downward|upward)?\s*(?:(?:body|external|constant|uniform|driving|additional|"
                    rf"gravitational|pushing|extra) )*force (?:of )?(?:(?:magnitude|strength) )?(?:of |= ?)?{NUM}")
_DIRECTION = re.compile(r"(?:in|along|toward) the ([+-]?[xyz])[- ]?(?:direction|axis)?\b|(?:in|along) ([+-]?[xyz])\b|"
                        r"\b([+-]?[xyz])[- ]direction")
_TARGET = re.compile(r"\b(?:to|on) (?:all |the |each |every )*(fluid|mobile|upper|lower|top|bottom|left|right|"
                     r"(?:atoms|particles))\b")
_GROUP_WORD = re.compile(r"\b(fluid|mobile|upper|lower|top|bottom|left|right)\b")
_THERMOSTAT = re.compile(r"thermostat|rescal|langevin|berendsen")


def read_layout(desc: SimulationDescription, low: str,
                sentence_dynamics: Callable[..., Dynamics | None],
                complete: Callable[[SimulationDescription, Stage, str], None]) -> None:
    """Fill desc.layout from the text (see the module docstring). `sentence_dynamics` and
    `complete` are the stage reader's (simagent.described.reading), to read a group thermostat."""
    if desc.layout is not None and desc.layout.fills:
        return  # a solid built out of parts (region_reading.read_built_solid) laid the system out
    sentences = re.split(r"(?<=[.;])\s+", low)
    layout = Layout()
    used: set[int] = set()
    rest = next((name for name, pattern in _REST_WORDS if re.search(pattern, low)), "mobile")
    for n, sentence in enumerate(sentences):
        if _LAYER_SENTENCE.search(sentence) and _layers(layout, sentence, desc):
            used.add(n)
    walls = [g.name for g in layout.groups]
    if walls:
        layout.groups.append(Group(name=rest, rest=True))
        desc.note(f"group.{rest}", "rules", f"{rest}: every atom outside " + " and ".join(walls))
        held = [n for n, s in enumerate(sentences)
                if _AT_REST.search(s) and re.search(r"\bwalls?\b|layers?|slabs?|boundary atoms", s)]
        if held:
            layout.at_rest = list(walls)
            used.update(held)
            desc.note("at_rest", "rules", ", ".join(walls) + " held at rest (zero velocity and force)")
    mobile = rest if walls else "all"
    thermostat: Dynamics | None = None
    for n, sentence in enumerate(sentences):
        for hit in _FORCE.finditer(sentence):
            if _force(layout, desc, sentence, hit, mobile):
                used.add(n)
        if re.search(r"indent", sentence) or (re.search(r"obstacle", sentence) and re.search(r"force constant",
                                                                                              sentence)):
            _indenters(layout, desc, sentence, mobile)
            used.add(n)
        if walls and _THERMOSTAT.search(sentence) and re.search(rf"\b{rest}\b|{_REST_WORDS[0][1]}", sentence):
            thermostat = sentence_dynamics(sentence, desc.units == "lj", None)
            if thermostat is not None and thermostat.thermostat is not None:
                layout.thermostat_group = rest
                desc.note("thermostat_group", "rules", sentence[:120])
                used.add(n)
    for n, sentence in enumerate(sentences):
        if _cluster(layout, desc, sentence) or _velocity_add(layout, desc, sentence) or _walls(layout, desc, sentence):
            used.add(n)
    if not (layout.groups or layout.indenters or layout.forces or layout.create_in or layout.walls
            or layout.velocity_add):
        return
    desc.layout = layout
    if thermostat is not None and layout.thermostat_group:
        for stage in desc.stages:  # a group thermostat stated once acts during every NVE run
            dyn = stage.dynamics
            if dyn is not None and dyn.ensemble == "nve" and dyn.thermostat is None:
                stage.dynamics = thermostat.model_copy()
                complete(desc, stage, low)
    unread = [s for n, s in enumerate(sentences) if n not in used and _LAYOUT_WORDS.search(s)
              and not (n == 0 and _REQUEST.search(s)) and not _SHEAR_FLOW.search(s)]
    if not unread and LAYOUT_UNSUPPORTED in desc.unsupported:
        desc.unsupported.remove(LAYOUT_UNSUPPORTED)


def _layers(layout: Layout, sentence: str, desc: SimulationDescription) -> bool:
    """'layers at the bottom (y<1.25) and top (y>8.75)': one block region and group per bound."""
    found = False
    for hit in _INEQ.finditer(sentence):
        below = re.fullmatch(_BELOW, hit.group(2)) is not None
        # '15 < y < 16': a slab between two bounds, not everything below 16
        lower = re.search(rf"{NUM}\s*(?:<=?|≤)\s*$", sentence[:hit.start()]) if below else None
        start = lower.start() if lower else hit.start()
        # the label word nearest to the bound, before or after it, not yet given to another layer
        near = sorted(((start - m.end() if m.end() <= start else m.start() - hit.end()), m.group(1))
                      for m in _LABEL.finditer(sentence) if not start < m.end() <= hit.end())
        names = [_LABELS[word] for distance, word in near if distance <= 60 and not layout.group(_LABELS[word])]
        name = names[0] if names else f"layer{len(layout.groups) + 1}"
        axis, value = "xyz".index(hit.group(1)), float(hit.group(3))
        bounds: list[float | None] = [None] * 6
        bounds[2 * axis + (1 if below else 0)] = value
        if lower:
            bounds[2 * axis] = float(lower.group(1))
        layout.regions.append(Region(name=f"{name}_region", style="block", bounds=tuple(bounds)))
        layout.groups.append(Group(name=name, region=f"{name}_region"))
        desc.note(f"group.{name}", "rules", hit.group(0))
        found = True
    return found


def _axis_sign(desc: SimulationDescription, sentence: str, hit: re.Match) -> tuple[int, float] | None:
    if hit.group(1):  # downward / upward: along -y / +y in 2D, -z / +z in 3D
        return (1 if desc.dimension == 2 else 2), (-1.0 if hit.group(1) == "downward" else 1.0)
    direction = _DIRECTION.search(sentence[hit.end():hit.end() + 60])
    if not direction:
        return None
    word = next(g for g in direction.groups() if g)
    return "xyz".index(word[-1]), (-1.0 if word.startswith("-") else 1.0)


def _force(layout: Layout, desc: SimulationDescription, sentence: str, hit: re.Match, mobile: str) -> bool:
    axis_sign = _axis_sign(desc, sentence, hit)
    target = _TARGET.search(sentence[hit.end():hit.end() + 80])
    before = list(_GROUP_WORD.finditer(sentence[max(0, hit.start() - 60):hit.start()]))
    if axis_sign is None or (target is None and not before):
        return False
    word = target.group(1) if target else before[-1].group(1)  # 'to the fluid', else 'each fluid atom feels'
    group = _LABELS.get(word) or (mobile if word in ("fluid", "mobile") else "all")
    if group != "all" and not layout.group(group):
        return False
    axis, sign = axis_sign
    vector: list[float | None] = [0.0, 0.0, 0.0]
    vector[axis] = sign * float(hit.group(2))
    if group in layout.at_rest:  # a held layer that is pushed moves as one body along the push
        layout.forces.append(GroupForce(group=group, style="aveforce", force=tuple(vector)))
        desc.note(f"force.{group}", "rules", f"{hit.group(0)} on the {group} layer: every atom of the layer gets the "
                  "layer's average force plus this value (fix aveforce), so it moves as one body")
    else:
        layout.forces.append(GroupForce(group=group, style="addforce", force=tuple(vector)))
        desc.note(f"force.{group}", "rules", f"{hit.group(0)} added to every atom of {group}")
        if group == mobile and layout.flow_axis is None:
            layout.flow_axis = AXES[axis]
    return True


def _indenters(layout: Layout, desc: SimulationDescription, sentence: str, mobile: str) -> None:
    radius = re.search(r"radi(?:us|i) (?:of )?(?:r ?= ?)?" + NUM, sentence)
    k = re.search(r"(?:force|spring) constant (?:of |k ?= ?|= ?)?" + NUM + r"|\bk ?= ?" + NUM, sentence)
    centres = re.findall(rf"\(\s*{NUM}\s*,\s*{NUM}(?:\s*,\s*{NUM})?\s*\)", sentence)
    if not (radius and k and centres):
        desc.missing.append("the obstacles' radius, force constant and centres")
        return
    if desc.dimension != 2 and any(not c[2] for c in centres):
        desc.missing.append("the obstacles' z coordinates")
        return
    stiffness = float(k.group(1) or k.group(2))
    for c in centres:
        centre = (float(c[0]), float(c[1]), float(c[2]) if c[2] else 0.0)
        layout.indenters.append(Indenter(name=f"obstacle{len(layout.indenters) + 1}", group=mobile, k=stiffness,
                                         center=centre, radius=float(radius.group(1))))
    desc.note("indenters", "rules", f"{radius.group(0)}; {k.group(0)}; centres " + ", ".join(
        "(" + ", ".join(x for x in c if x) + ")" for c in centres))
    for ind in layout.indenters[-len(centres):]:
        layout.regions.append(Region(name=f"{ind.name}_region", style="sphere", center=ind.center, radius=ind.radius))
        layout.cleared.append(f"{ind.name}_region")
    desc.note("indenters.cleared", "default", "atoms inside each obstacle are deleted at the start: an obstacle "
              "occupies its disc, and an atom at an indenter's centre gets no defined force (not stated)")
    if mobile != "all":
        desc.note("indenters.group", "default", f"{mobile}: the obstacles push the moving atoms; the held layers "
                  "are not pushed (none stated)")


_CLUSTER = re.compile(r"\b(circular|spherical|round|disc|disk)[- ]?(?:shaped )?(?:cluster|region|droplet|blob|domain|"
                      r"patch)(?: of (?:particles|atoms))?[^.;]{0,30}?\b(diameter|radius) (?:of |= ?)?" + NUM)
_CENTRE = re.compile(rf"cent(?:er|re)d? (?:at|on) \(\s*{NUM}\s*,\s*{NUM}(?:\s*,\s*{NUM})?\s*\)")


def _cluster(layout: Layout, desc: SimulationDescription, sentence: str) -> bool:
    """'a circular cluster of particles with diameter 20 was created': the lattice atoms are made
    inside that circle (sphere) only; centred where stated, else at the box centre (listed)."""
    hit = _CLUSTER.search(sentence)
    if not hit or not re.search(r"creat|fill|made|built|placed|generat|form", sentence) or desc.box is None:
        return False
    size = float(hit.group(3))
    radius = size / 2 if hit.group(2) == "diameter" else size
    centre = _CENTRE.search(sentence)
    if centre:
        c = (float(centre.group(1)), float(centre.group(2)), float(centre.group(3) or 0.0))
    else:
        c = tuple((lo + hi) / 2 for lo, hi in zip(desc.box.lo, desc.box.hi, strict=True))
        desc.note("cluster.centre", "default", f"{c[0]:g} {c[1]:g} {c[2]:g}: the centre of the box (the text states "
                  "no centre for the cluster)")
    layout.regions.append(Region(name="cluster_region", style="sphere", center=c, radius=radius))
    layout.create_in = "cluster_region"
    desc.note("create_in", "rules", hit.group(0) + f": atoms created inside radius {radius:g} only")
    return True


_VXYZ = re.compile(rf"\bv_?x ?= ?{NUM}(?:,? (?:and )?v_?y ?= ?{NUM})?(?:,? (?:and )?v_?z ?= ?{NUM})?")
_VTUPLE = re.compile(rf"velocity (?:of |vector )?\(\s*{NUM}\s*,\s*{NUM}(?:\s*,\s*{NUM})?\s*\)")


def _velocity_add(layout: Layout, desc: SimulationDescription, sentence: str) -> bool:
    """'a uniform velocity component v_x = 5 and v_y = 2 imposed on all particles' / 'a uniform
    velocity (5, 2) added to every atom': added to the thermal velocities (velocity set ... sum yes)."""
    if not re.search(r"uniform velocit|velocity (?:component|offset|shift)|streaming velocit|drift velocit", sentence):
        return False
    hit = _VXYZ.search(sentence) or _VTUPLE.search(sentence)
    if not hit or not re.search(r"\b(?:all|every|each) (?:the )?(?:particles?|atoms?)\b", sentence):
        return False
    layout.velocity_add = tuple(float(v) if v else 0.0 for v in hit.groups())  # type: ignore[assignment]
    desc.note("velocity_add", "rules", hit.group(0) + ": added to every atom's velocity after its creation")
    return True


_WALL_STYLE = re.compile(r"9-3|9/3|lj93|lj 9-3|reflect")


def _walls(layout: Layout, desc: SimulationDescription, sentence: str) -> bool:
    """'walls along the x and y directions using 9-3 LJ potentials (epsilon = 1, sigma = 1, cutoff =
    2.5)': a wall at both faces of each named axis; 'reflecting walls at the x faces'."""
    if not (re.search(r"\bwalls?\b", sentence) and _WALL_STYLE.search(sentence)):
        return False
    axes = []
    for m in _AXIS.finditer(sentence):
        axes += [a for a in m.groups() if a and a not in axes]
    faces = [f"{a}{side}" for a in axes for side in ("lo", "hi")]
    if not faces and re.search(r"\b(?:region|cube|block|sphere|cylinder)\b", sentence):
        return False  # a wall on a region's surface (simagent.described.confinement)
    if not faces:
        desc.missing.append("which faces the walls stand at")
        return True
    if re.search(r"reflect", sentence):
        layout.walls.append(Wall(style="reflect", faces=faces))
        desc.note("walls", "rules", f"reflecting walls at {', '.join(faces)}")
        return True
    values = {}
    for name, pattern in (("epsilon", r"epsilon ?(?:=|of)? ?"), ("sigma", r"sigma ?(?:=|of)? ?"),
                          ("cutoff", r"cut-?off(?: distance| radius)? ?(?:=|of)? ?")):
        hit = re.search(pattern + NUM, sentence)
        if hit:
            values[name] = float(hit.group(1))
    if len(values) < 3:
        desc.missing.append("the LJ 9-3 walls' epsilon, sigma and cutoff")
        return True
    layout.walls.append(Wall(style="lj93", faces=faces, **values))
    desc.note("walls", "rules", f"LJ 9-3 walls at {', '.join(faces)}: epsilon {values['epsilon']:g}, sigma "
              f"{values['sigma']:g}, cutoff {values['cutoff']:g} (at the box faces)")
    return True
