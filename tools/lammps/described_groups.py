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
    elif r.style == "sphere":
        assert r.center is not None
        shape = "sphere " + " ".join(_fmt(c) for c in r.center) + f" {_fmt(r.radius)}"
    else:
        assert r.center is not None and r.axis is not None
        k = AXES.index(r.axis)
        c1, c2 = (r.center[i] for i in range(3) if i != k)
        shape = f"cylinder {r.axis} {_fmt(c1)} {_fmt(c2)} {_fmt(r.radius)} INF INF"
    return f"region          {r.name} {shape}" + (" side out" if r.side == "out" else "")


def setup(layout: Layout, made: set[str] | None = None) -> list[str]:
    """Regions (but those in `made`, already defined with the atoms), the atoms deleted from
    cleared regions, groups (the rest group last: all minus the others)."""
    made = made or set()
    lines = [region_line(r) for r in layout.regions if r.name != layout.create_in and r.name not in made]
    lines += [f"delete_atoms    region {r}" for r in layout.cleared]
    named = [g.name for g in layout.groups if not g.rest]
    for g in layout.groups:
        if g.rest:
            lines.append(f"group           {g.name} subtract all {' '.join(named)}")
        else:
            lines.append(f"group           {g.name} region {g.region}")
    if layout.thermostat_group:
        lines.append(f"compute         {temperature_compute(layout)} {layout.thermostat_group} temp")
    return lines


def temperature_compute(layout: Layout | None) -> str | None:
    """The id of the thermostatted group's temperature compute (made by `setup`), if any."""
    return "temp_group" if layout is not None and layout.thermostat_group else None


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
