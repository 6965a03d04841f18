"""The layout of a described simulation (simagent.described.groups) as LAMMPS commands.

Regions and groups are made right after the atoms; held groups get zero velocities after the
velocity creation; in every run stage the group fixes come after the integrator and thermostat
and before enforce2d (post-force fixes act in the order they are defined): setforce on held
groups (a component pushed by an aveforce is left to it), aveforce, addforce, the indenters (ids
ind_<name>), then the walls.
"""

from __future__ import annotations

from simagent.described.groups import AXES, Layout, Region

INDENT_PREFIX = "ind_"


def _fmt(x: float | None) -> str:
    return "NULL" if x is None else f"{x:.10g}"


def _bound(x: float | None) -> str:
    return "INF" if x is None else f"{x:.10g}"


def region_line(r: Region) -> str:
    if r.style == "block":
        assert r.bounds is not None
        shape = "block " + " ".join(_bound(b) for b in r.bounds)
    elif r.style == "intersect":
        shape = f"intersect {len(r.members)} {' '.join(r.members)}"
    elif r.style == "sphere":
        assert r.center is not None
        shape = "sphere " + " ".join(_fmt(c) for c in r.center) + f" {_fmt(r.radius)}"
    else:
        assert r.center is not None and r.axis is not None
        k = AXES.index(r.axis)
        c1, c2 = (r.center[i] for i in range(3) if i != k)
        shape = f"cylinder {r.axis} {_fmt(c1)} {_fmt(c2)} {_fmt(r.radius)} INF INF"
    return f"region          {r.name} {shape}" + (" side out" if r.side == "out" else "") + (" units box" if r.box_units
                                                                                          else "")


def setup(layout: Layout, made: set[str] | None = None) -> list[str]:
    """Regions (but those in `made`, already defined with the atoms), the atoms deleted from
    cleared regions, groups (a region's atoms and/or types' atoms; the rest group: all minus the
    others, or minus those it names), the types groups are given, the group temperature."""
    made = made or set()
    lines = [region_line(r) for r in layout.regions if r.name != layout.create_in and r.name not in made]
    lines += [f"delete_atoms    region {r}" for r in layout.cleared]
    named = [g.name for g in layout.groups if not g.rest]
    for g in layout.groups:
        if g.rest:
            lines.append(f"group           {g.name} subtract all {' '.join(g.subtract or named)}")
            continue
        if g.region is not None:
            lines.append(f"group           {g.name} region {g.region}")
        if g.types:  # a second group command on the same id adds to it (a union)
            lines.append(f"group           {g.name} type {' '.join(str(t) for t in g.types)}")
    lines += [f"set             group {g} type {t}" for g, t in layout.retype]
    lines += region_wall_lines(layout)
    group = layout.thermostat_group or layout.velocity_group
    if group:
        axes = layout.temperature_axes
        style = "temp" if not axes else "temp/partial " + " ".join("1" if a in axes else "0" for a in AXES)
        lines.append(f"compute         {temperature_compute(layout)} {group} {style}")
    return lines


def region_wall_lines(layout: Layout) -> list[str]:
    """Walls on regions' surfaces (ids rwall<N>), defined once for the whole run, with their energy in
    the potential energy where the description counts it."""
    lines = []
    for n, w in enumerate(layout.region_walls):
        assert w.epsilon is not None and w.sigma is not None and w.cutoff is not None
        lines.append(f"fix             rwall{n + 1} {w.group} wall/region {w.region} {w.style} {_fmt(w.epsilon)} "
                     f"{_fmt(w.sigma)} {_fmt(w.cutoff)}")
        if w.energy:
            lines.append(f"fix_modify      rwall{n + 1} energy yes")
    return lines


def displacement_lines(layout: Layout | None) -> list[str]:
    """Rigid shifts of groups, in order (displace_atoms ... move)."""
    if layout is None:
        return []
    return [f"displace_atoms  {d.group} move {' '.join(_fmt(c) for c in d.move)} units "
            f"{'box' if d.box_units else 'lattice'}" for d in layout.displacements]


def temperature_compute(layout: Layout | None) -> str | None:
    """The id of the temperature compute of the thermostatted group, or of the group velocities are
    created on (made by `setup`), if any."""
    return "temp_group" if layout is not None and (layout.thermostat_group or layout.velocity_group) else None


def fill_lines(layout: Layout) -> list[str]:
    """A solid built out of parts: every region the fills use (with the regions they are made of),
    then create_atoms per fill, in order."""
    needed: list[str] = []

    def need(name: str) -> None:
        region = next(r for r in layout.regions if r.name == name)
        for member in region.members:
            need(member)
        if name not in needed:
            needed.append(name)

    for fill in layout.fills:
        need(fill.region)
    regions = {r.name: r for r in layout.regions}
    lines = [region_line(regions[n]) for n in needed]
    for f in layout.fills:  # a fill with a lattice of its own sets it first
        if f.lattice_style is not None:
            lines.append(f"lattice         {f.lattice_style} {_fmt(f.lattice_scale or 1.0)}")
        lines.append(f"create_atoms    {f.atom_type} region {f.region}")
    return lines


def velocity_lines(layout: Layout) -> list[str]:
    """After the creation: velocities set on groups (replacing or added), then the ramps (added)."""
    lines = []
    for v in layout.velocities:
        lines.append(f"velocity        {v.group} set {' '.join(_fmt(c) for c in v.velocity)}" + (" sum yes" if v.add
                                                                                                    else ""))
    for r in layout.ramps:
        lines.append(f"velocity        {r.group} ramp v{r.component} {_fmt(r.v_lo)} {_fmt(r.v_hi)} {r.along} "
                     f"{_fmt(r.lo)} {_fmt(r.hi)} sum yes")
    return lines


def partial_thermostat(layout: Layout | None, fixes: list[str]) -> list[str]:
    """A thermostat that regulates only some velocity components (the group temperature is partial)
    reads that temperature (fix_modify temp)."""
    if layout is None or not layout.temperature_axes or not layout.thermostat_group:
        return []
    return [f"fix_modify      {f.split()[1]} temp {temperature_compute(layout)}" for f in fixes
            if f.startswith("fix ") and f.split()[3] in ("temp/rescale", "temp/berendsen", "langevin")]


FRICTION = "friction"  # compute id: the force on the sliding body from every other atom
FRICTION_OTHER = "friction_other"  # group id: every atom outside the sliding body


def friction_lines(layout: Layout, every: int) -> tuple[list[str], list[str]]:
    """(lines, thermo columns): the force on the sliding body from all other atoms (compute
    group/group: the body's own forces cancel, so this is the total force on the body as the
    interactions give it, before any fix zeroes a held layer's share), its tangential and normal
    components averaged over every step of each thermo interval (fix ave/time 1 N N)."""
    f = layout.friction
    assert f is not None
    t, n = AXES.index(f.sliding) + 1, AXES.index(f.normal) + 1
    return [f"group           {FRICTION_OTHER} subtract all {f.body}",
            f"compute         {FRICTION} {f.body} group/group {FRICTION_OTHER}",
            f"fix             {FRICTION} all ave/time 1 {every} {every} c_{FRICTION}[{t}] c_{FRICTION}[{n}]"], [
        f"f_{FRICTION}[1]", f"f_{FRICTION}[2]"]


def at_rest(layout: Layout) -> list[str]:
    """After the velocity creation: a uniform velocity added to every atom, held groups at rest."""
    lines = []
    if layout.velocity_add is not None:
        lines.append(f"velocity        all set {' '.join(_fmt(v) for v in layout.velocity_add)} sum yes")
    return lines + [f"velocity        {g} set 0.0 0.0 0.0" for g in layout.at_rest]


def thermostat_group(layout: Layout | None) -> str:
    return layout.thermostat_group if layout is not None and layout.thermostat_group else "all"


def integrated_group(layout: Layout | None) -> str:
    return layout.integrated if layout is not None and layout.integrated else "all"


def fixes(layout: Layout) -> list[str]:
    """The group fixes of one run stage (see the module docstring)."""
    lines = []
    for g in layout.at_rest:
        pushed = {i for f in layout.forces if f.group == g and f.style == "aveforce"
                  for i, v in enumerate(f.force) if v}
        zero = [None if i in pushed else 0.0 for i in range(3)]
        lines.append(f"fix             rest_{g} {g} setforce {' '.join(_fmt(v) for v in zero)}")
    for n, f in enumerate(sorted(layout.forces, key=lambda f: f.style != "aveforce")):
        lines.append(f"fix             force{n + 1} {f.group} {f.style} {' '.join(_fmt(v) for v in f.force)}")
    for ind in layout.indenters:
        x, y, z = (_fmt(c) for c in ind.center)
        lines.append(f"fix             {INDENT_PREFIX}{ind.name} {ind.group} indent {_fmt(ind.k)} sphere {x} {y} {z} "
                     f"{_fmt(ind.radius)}")
    for n, w in enumerate(layout.walls):
        if w.style == "lj93":
            faces = " ".join(f"{f} EDGE {_fmt(w.epsilon)} {_fmt(w.sigma)} {_fmt(w.cutoff)}" for f in w.faces)
            lines.append(f"fix             wall{n + 1} all wall/lj93 {faces}")
        else:
            lines.append(f"fix             wall{n + 1} all wall/reflect {' '.join(f + ' EDGE' for f in w.faces)}")
    return lines


def drag_value(layout: Layout, name: str) -> str:
    """The force on indenter `name` along the flow (the indenter fix's vector holds the force on the
    indenter, the reaction to what it applies to the atoms)."""
    axis = AXES.index(layout.flow_axis or "x")
    return f"f_{INDENT_PREFIX}{name}[{axis + 1}]"


FORCE_AVERAGE = "forceavg"


def averaged_forces(layout: Layout, drag: bool, wall_force: bool) -> list[tuple[str, str, str]]:
    """(property, label, instantaneous value) of every force measured, in column order: the drag
    on each indenter, then the force on the walls per axis."""
    out = [("drag_force", i.name, drag_value(layout, i.name)) for i in layout.indenters] if drag else []
    if wall_force:
        out += [("wall_force", axis, f"v_{WALL_FORCE_PREFIX}{axis}") for axis in wall_force_variables(layout)]
    return out


def force_averages(layout: Layout, drag: bool, wall_force: bool, every: int) -> list[str]:
    """Forces averaged over every step of each thermo interval (fix ave/time 1 N N): a thermo row
    then holds the mean of the interval before it, not one spiky sample (its first row is 0)."""
    lines = [line for lines in wall_force_variables(layout).values() for line in lines] if wall_force else []
    values = " ".join(v for _, _, v in averaged_forces(layout, drag, wall_force))
    return lines + [f"fix             {FORCE_AVERAGE} all ave/time 1 {every} {every} {values}"]


def force_columns(layout: Layout, drag: bool, wall_force: bool) -> list[str]:
    n = len(averaged_forces(layout, drag, wall_force))
    return [f"f_{FORCE_AVERAGE}"] if n == 1 else [f"f_{FORCE_AVERAGE}[{k + 1}]" for k in range(n)]  # one: a scalar


def wall_force_variables(layout: Layout) -> dict[str, list[str]]:
    """axis -> the variable lines summing, over every wall normal to that axis, the force the atoms
    exert on it (a fix wall's vector holds that force per face: the reaction to what the wall
    applies to the atoms)."""
    terms: dict[str, list[str]] = {}
    for n, w in enumerate(layout.walls):
        if w.style != "lj93":  # wall/reflect records no force
            continue
        for k, face in enumerate(w.faces):
            terms.setdefault(face[0], []).append(f"f_wall{n + 1}[{k + 1}]")
    return {axis: [f"variable        {WALL_FORCE_PREFIX}{axis} equal {'+'.join(t)}"] for axis, t in terms.items()}


WALL_FORCE_PREFIX = "wallforce_"
