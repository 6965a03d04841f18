"""Rules that read a solid built out of regions: slabs, asperities, fixed boundary layers, each of
its own atom type, and what the text does to them (simagent.described.groups).

Read here: atom types by role ('slab atoms (type 1), asperity atoms (type 2 & 3), fixed boundary
atoms (type 4)'); slabs by their extent along one axis ('a lower slab occupying y = 0 to 7');
rigid boundary layers inside them ('fixed at the bottom (y = 0 to 1.1)'), whose forces are set to
zero; (hemi)spherical asperities on the slabs with their radius and centres, only the part facing
the other slab; velocities created on the mobile atoms; a slab driven at a velocity; a
thermostat on the mobile atoms' non-sliding components; the friction force on a slab (tangential
over normal); pairs of types that do not interact ('exclude type 2 3'); neighbor-list settings.
Each rule records the words it read; what a literal build needs but the text leaves out is listed
as missing.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from simagent.backends.expert.protocol_text import NUM, NUMBER_WORDS
from simagent.described.group_reading import LAYOUT_UNSUPPORTED
from simagent.described.groups import AXES, FrictionForce, Group, GroupForce, GroupVelocity, Layout, Region, RegionFill
from simagent.described.model import Dynamics, SimulationDescription, Stage

_SIDE = {"lower": "lower", "bottom": "lower", "upper": "upper", "top": "upper"}
_N = r"-?\d+(?:\.\d+)?"
# an extent along one axis: 'y = 0 to 7', 'y from 0 to 7', 'between y = 0 and 7', 'y in [0, 7]', '0 < y < 7'
_RANGE = (rf"(\b[xyz]\s*(?:=|from|between|in)\s*\[?\s*{_N}\s*(?:to|-|and|,)\s*{_N}\s*\]?|"
          rf"{_N}\s*(?:<=?|≤)\s*[xyz]\s*(?:<=?|≤)\s*{_N})")
_SLAB = re.compile(r"\b(lower|upper|bottom|top) (?:crystalline )?(?:slab|block|plate|substrate)\b[^.;()]{0,50}?"
                   + _RANGE)
_HELD = re.compile(r"\bfixed\b|\brigid\b|\bfrozen\b|immobil|forces?[^.;]{0,40}\bzero|zero forces?|setforce")
_LAYER = re.compile(rf"\b(bottom|top|lower|upper)\b[^.;()]{{0,30}}\(\s*{_RANGE}\s*\)")
_ROLE = re.compile(r"\b([a-z]+) atoms \(types? (\d+)((?:\s*(?:&|and|,)\s*\d+)*)\)|"
                   r"\btypes? (\d+)((?:\s*(?:&|and|,)\s*\d+)*) (?:for|is|are|=|:|marks?|labels?) (?:the |all )?"
                   r"([a-z]+) atoms")
_ASPERITY = re.compile(r"\b(hemi-?spher\w*|half-?spher\w*|spherical|circular|semi-?circular|round) "
                       r"(asperit\w*|bumps?|protrusions?|humps?)")
_CENTRE_FOR = re.compile(rf"\(\s*{NUM}\s*,\s*{NUM}(?:\s*,\s*{NUM})?\s*\)[^(]{{0,25}}?\b(lower|upper|bottom|top)\b")
_MOBILE = re.compile(r"\b(?:all |the )*(?:mobile|free|non-?fixed|unfixed|moving) atoms\b")
_EXCLUDE = re.compile(r"exclud\w*[^.;]{0,60}?\btypes? (\d+),? (?:and |& )?(?:type )?(\d+)|"
                      r"\btypes? (\d+),? (?:and |& )(?:type )?(\d+)[^.;]{0,40}?\bexclud")


def _span(text: str) -> tuple[int, float, float]:
    """(axis index, lo, hi) of an extent _RANGE matched."""
    axis = re.search(r"[xyz]", text)
    assert axis is not None
    lo, hi = (float(v) for v in re.findall(_N, text)[:2])
    return "xyz".index(axis.group(0)), lo, hi


def _types(text: str) -> list[int]:
    return [int(t) for t in re.findall(r"\d+", text)]


def read_neighbor(desc: SimulationDescription, low: str) -> None:
    """'a neighbor list skin (distance) of 0.3', 'rebuilt/updated every five timesteps'."""
    skin = re.search(rf"\bskin(?: distance)?(?: of| =|:)? ?{NUM}|{NUM} (?:sigma |angstroms? )?(?:neighbou?r )?skin",
                     low)
    if skin and re.search(r"neighbou?r", low):
        desc.neighbor_skin = float(skin.group(1) or skin.group(2))
        desc.note("neighbor_skin", "rules", skin.group(0))
    every = re.search(r"neighbou?r(?:[^.;]|\.(?=\d)){0,120}?\b(?:updated|rebuilt|built|checked|refreshed) every (\d+|"
                      + "|".join(NUMBER_WORDS) + r") (?:time ?)?steps", low)
    if every:
        word = every.group(1)
        desc.neighbor_every = int(word) if word.isdigit() else NUMBER_WORDS[word]
        desc.note("neighbor_every", "rules", every.group(0))


def read_exclusions(desc: SimulationDescription, low: str) -> None:
    """'excluding interactions between those types (exclude type 2 3)': the pair does not interact."""
    pairs = [(int(m[0] or m[2]), int(m[1] or m[3])) for m in _EXCLUDE.findall(low)]
    if not pairs:
        return
    desc.layout = desc.layout or Layout()
    desc.layout.excluded_pairs = list(dict.fromkeys(pairs))
    desc.note("excluded_pairs", "rules", "; ".join(m.group(0) for m in _EXCLUDE.finditer(low)))


def read_built_solid(desc: SimulationDescription, low: str,
                     sentence_dynamics: Callable[..., Dynamics | None],
                     complete: Callable[[SimulationDescription, Stage, str], None]) -> None:
    """Slabs with asperities and fixed boundary layers, each part of its stated type (see the module
    docstring). Nothing is built unless the text states two slabs' extents. `sentence_dynamics` and
    `complete` are the stage reader's (simagent.described.reading), to read the group thermostat."""
    if desc.layout is not None and (desc.layout.groups or desc.layout.fills):
        return  # another reading already laid the system out
    sentences = re.split(r"(?<=[.;])\s+", low)
    slabs = {_SIDE[m.group(1)]: m for m in _SLAB.finditer(low)}
    if len(slabs) < 2:
        return
    used = {n for n, s in enumerate(sentences) if _SLAB.search(s)}
    roles: dict[str, list[int]] = {}
    for n, s in enumerate(sentences):
        for m in _ROLE.finditer(s):
            role, first, more = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(6), m.group(4),
                                                                                         m.group(5))
            roles[role] = [int(first)] + _types(more)
            used.add(n)
    layout = desc.layout or Layout()
    nouns = [re.search(r"slab|block|plate|substrate", m.group(0)).group(0) for m in slabs.values()]  # type: ignore
    slab_type = next((roles[w][0] for w in (*nouns, "slab", "substrate", "bulk", "solid") if w in roles), None)
    if slab_type is None:
        desc.missing.append("the atom type of the slabs")
        return
    for side in ("lower", "upper"):
        m = slabs[side]
        k, lo, hi = _span(m.group(2))
        bounds: list[float | None] = [None] * 6
        bounds[2 * k], bounds[2 * k + 1] = lo, hi
        layout.regions.append(Region(name=f"{side}_slab", style="block", bounds=tuple(bounds)))
        layout.fills.append(RegionFill(atom_type=slab_type, region=f"{side}_slab"))
        desc.note(f"slab.{side}", "rules", f"{m.group(0)}: type {slab_type} atoms")
    normal = AXES[_span(slabs["lower"].group(2))[0]]
    _asperities(desc, layout, sentences, used, roles, normal)
    layout.groups += [Group(name=side, region=f"{side}_slab",
                            types=[f.atom_type for f in layout.fills if f.region == f"{side}_asperity"])
                      for side in ("lower", "upper")]
    held = _held_layers(desc, layout, sentences, used, roles)
    if held:
        layout.groups.append(Group(name="mobile", rest=True, subtract=held))
        desc.note("group.mobile", "rules", "mobile: every atom outside " + " and ".join(held))
    thermostat = _motion(desc, layout, sentences, used, normal, held, sentence_dynamics)
    desc.layout = layout
    if thermostat is not None:  # a group thermostat stated on its own acts during every NVE run
        for stage in desc.stages:
            if stage.dynamics is not None and stage.dynamics.ensemble == "nve" and stage.dynamics.thermostat is None:
                stage.dynamics = thermostat.model_copy()
                complete(desc, stage, low)
    unread = [s for n, s in enumerate(sentences) if n not in used and re.search(
        r"\bregion|\bslabs?\b|\blayers?\b|asperit", s) and not (n == 0 and re.match(r"(?:compute|calculate|"
                                                                                  r"determine|find)\b", s))]
    if not unread and LAYOUT_UNSUPPORTED in desc.unsupported:
        desc.unsupported.remove(LAYOUT_UNSUPPORTED)


def _asperities(desc: SimulationDescription, layout: Layout, sentences: list[str], used: set[int],
                roles: dict[str, list[int]], normal: str) -> None:
    """'hemispherical asperities of radius 8 on each slab, centred at (32, 7, 0) for the lower slab
    and (18, 15, 0) for the upper slab': a sphere per slab cut to the part beyond its slab's surface
    (the half facing the other slab); types in the order the centres are named."""
    for n, s in enumerate(sentences):
        kind = _ASPERITY.search(s)
        if not kind:
            continue
        used.add(n)
        radius = re.search(rf"radi(?:us|i) (?:of )?(?:r ?= ?)?{NUM}", s)
        centres = list(_CENTRE_FOR.finditer(s))
        types = roles.get("asperity") or roles.get(kind.group(2).rstrip("s")) or []
        if radius is None or not centres:
            desc.missing.append("the asperities' radius and centres")
            return
        if len(types) != len(centres):
            desc.missing.append(f"the atom type of each of the {len(centres)} asperities")
            return
        k = AXES.index(normal)
        for c, atom_type in zip(centres, types, strict=True):
            side = _SIDE[c.group(4)]
            slab = next(r for r in layout.regions if r.name == f"{side}_slab")
            assert slab.bounds is not None
            centre = (float(c.group(1)), float(c.group(2)), float(c.group(3) or 0.0))
            layout.regions.append(Region(name=f"{side}_sphere", style="sphere", center=centre,
                                         radius=float(radius.group(1))))
            # the side of the slab's surface facing the other slab: strictly beyond it (the surface
            # plane's atoms are the slab's)
            beyond: list[float | None] = [None] * 6
            surface = slab.bounds[2 * k + 1] if side == "lower" else slab.bounds[2 * k]
            beyond[2 * k + (1 if side == "lower" else 0)] = surface
            layout.regions.append(Region(name=f"{side}_beyond", style="block", bounds=tuple(beyond), side="out"))
            layout.regions.append(Region(name=f"{side}_asperity", style="intersect",
                                         members=[f"{side}_sphere", f"{side}_beyond"]))
            layout.fills.append(RegionFill(atom_type=atom_type, region=f"{side}_asperity"))
            desc.note(f"asperity.{side}", "rules", f"{kind.group(0)}, {radius.group(0)}, {c.group(0)}: type "
                      f"{atom_type} (the asperity types in the order the text names the centres), only the part "
                      f"beyond the slab's surface at {normal} = {surface:g}"
                      + ("" if re.search(r"hemi|half|semi|facing", s) else " (the part inside the slab is the slab's)"))
        return


def _held_layers(desc: SimulationDescription, layout: Layout, sentences: list[str], used: set[int],
                 roles: dict[str, list[int]]) -> list[str]:
    """Rigid boundary layers '(y = 0 to 1.1)' in a sentence that fixes them: their forces are set to
    zero (fix setforce) and they get the boundary type."""
    held = []
    for n, s in enumerate(sentences):
        if not (_HELD.search(s) and re.search(r"boundar|layer|edge", s)):
            continue
        for m in _LAYER.finditer(s):
            side = _SIDE[m.group(1)]
            k, lo, hi = _span(m.group(2))
            bounds: list[float | None] = [None] * 6
            bounds[2 * k], bounds[2 * k + 1] = lo, hi
            name = f"{side}_fixed"
            layout.regions.append(Region(name=f"{name}_region", style="block", bounds=tuple(bounds)))
            layout.groups.append(Group(name=name, region=f"{name}_region"))
            layout.forces.append(GroupForce(group=name, style="setforce", force=(0.0, 0.0, 0.0)))
            desc.note(f"group.{name}", "rules", f"{m.group(0)}: held, its forces set to zero (fix setforce 0 0 0)")
            held.append(name)
            used.add(n)
    types = next((roles[w] for w in ("boundary", "fixed", "edge", "frozen") if w in roles), [])
    if held and types:
        for name, t in zip(held, types if len(types) == len(held) else [types[0]] * len(held), strict=True):
            layout.retype.append((name, t))
        desc.note("retype", "rules", ", ".join(f"{g} type {t}" for g, t in layout.retype))
    elif held:
        desc.missing.append("the atom type of the fixed boundary layers")
    return held


def _motion(desc: SimulationDescription, layout: Layout, sentences: list[str], used: set[int], normal: str,
            held: list[str], sentence_dynamics: Callable[..., Dynamics | None]) -> Dynamics | None:
    """Velocities created on the mobile atoms, a slab driven at a velocity, a thermostat on the
    mobile atoms' non-sliding components (returned), the friction force on a slab."""
    drive = None
    thermostat = None
    for n, s in enumerate(sentences):
        if held and re.search(r"velocit", s) and _MOBILE.search(s) and re.search(
                r"initial|creat|assign|given|drawn|thermal|random", s):
            layout.velocity_group = "mobile"
            desc.note("velocity_group", "rules", _MOBILE.search(s).group(0))  # type: ignore[union-attr]
            used.add(n)
        hit = re.search(rf"\b(upper|lower|top|bottom) (?:slab|block|plate|layer)[^.;]{{0,40}}?\b(?:driven|moved|"
                        rf"moving|pulled|slid\w*) (?:at|with) (?:a )?(?:constant )?(?:velocity|speed) (?:of )?{NUM}"
                        rf"[^.;]{{0,20}}?\b(?:along|in) the ([xyz])", s)
        if hit:
            side, k = _SIDE[hit.group(1)], AXES.index(hit.group(3))
            v: list[float | None] = [None, None, None]
            v[k] = float(hit.group(2))
            layout.velocities.append(GroupVelocity(group=side, velocity=tuple(v)))
            desc.note(f"velocity.{side}", "rules", hit.group(0) + f": {hit.group(3)} velocity of every {side} atom "
                      "set to it after the creation (its fixed layer, whose forces are zero, keeps it)")
            desc.note("velocity.units", "default", "lattice units: the velocity command's default, as the regions' "
                      "(a velocity of 1 moves one lattice spacing per unit time)")
            drive = hit.group(3)
            used.add(n)
        if held and re.search(r"thermostat|rescal", s) and _MOBILE.search(s):
            layout.thermostat_group = "mobile"
            thermostat = sentence_dynamics(s, desc.units == "lj", None)
            note = "mobile atoms"
            if drive and re.search(r"non-?sliding|perpendicular to (?:the )?slid|normal (?:degrees|direction)", s):
                layout.temperature_axes = "".join(a for a in AXES[:desc.dimension] if a != drive)
                note += f", components {layout.temperature_axes} only (compute temp/partial)"
            desc.note("thermostat_group", "rules", s[:120] + f": {note}")
            used.add(n)
        force = re.search(r"force[^.;]{0,40}? on the (upper|lower|top|bottom) (?:slab|block|plate|layer)[^.;]{0,30}?"
                          r"\b(?:in|along) the ([xyz])", s)
        if force and re.search(r"normal force", s):
            side = _SIDE[force.group(1)]
            normal_hit = re.search(r"normal force[^.;]*?\b(?:in|along) the ([xyz])", s)
            layout.friction = FrictionForce(body=side, sliding=force.group(2),  # type: ignore[arg-type]
                                            normal=normal_hit.group(1) if normal_hit else normal)  # type: ignore[arg-type]
            used.add(n)
            desc.note("friction", "rules", f"{force.group(0)}: F_t = the total force on the {side} slab along "
                      f"{force.group(2)}, F_n along {layout.friction.normal}; |F_t / F_n| of the time averages")
    return thermostat if thermostat is not None and thermostat.thermostat is not None else None


def read_unstated_temperature(desc: SimulationDescription, low: str) -> None:
    """'initialised at a low temperature' with no value: the initial temperature is missing (the
    atoms do not start at rest, as a text that creates no velocities would have them)."""
    hit = re.search(r"\b(?:initiali[sz]ed|start(?:s|ed|ing)?|prepared|equilibrated) at an? (?:low|small|finite|"
                    r"given|certain) temperature", low)
    if hit and desc.velocity is None:
        desc.origin.pop("velocity", None)
        desc.missing.append("the initial temperature")
