"""Values a text leaves out, taken from the LAMMPS example whose setup the text states.

Many task texts retell an example shipped with LAMMPS and drop some of its numbers ("a specified
crystallographic orientation", "a constant lateral velocity" with no value). When every number the
text does state matches the example's own input, the text describes that example, and the example's
values fill what it leaves out, as the issue's convention for engine examples asks (the task
follows the example). Each value filled is a listed default naming the example and the stated
numbers that identified it; a text that states a value of its own keeps it, and a text that
matches no example keeps its gaps (missing, never guessed). The mechanism is
simagent.described.example_fill's (the one way); this module holds the examples/shear, friction,
crack and balance signatures and what they fill.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from simagent.described.example_fill import Example, Stated, decimals
from simagent.described.group_reading import LAYOUT_UNSUPPORTED
from simagent.described.groups import Group, GroupForce, GroupVelocity, Region, VelocityRamp
from simagent.described.solids import ShearFlow

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

SHEAR_GAP = "the velocity of the moving layer and the extent of the velocity ramp"  # solids.read_shear's words
# LAMMPS examples/shear (in.shear): the numbers that identify it and the values it adds
SHEAR = Example(
    name="LAMMPS examples/shear",
    signature={"units": "metal", "lattice": ("fcc", 3.52), "box": (16.0, 10.0, 2.828427), "layers": (0.9, 6.1)},
    fills={"orient": ((1, 0, 0), (0, 1, 1), (0, -1, 1)), "origin": (0.5, 0.0, 0.0),
           "flow": {"velocity": 1.0, "axis": "x", "ramp_velocity": (0.0, 1.0), "gradient_axis": "y",
                    "ramp_extent": (1.4, 8.6)}})


def _extents(desc: SimulationDescription, axes: int = 3) -> tuple[float, ...] | None:
    if desc.box is None:
        return None
    return tuple(hi - lo for lo, hi in zip(desc.box.lo[:axes], desc.box.hi[:axes], strict=True))


def _shear_stated(desc: SimulationDescription) -> dict[str, Stated]:
    bounds = (tuple(sorted(v for r in desc.layout.regions for v in r.bounds if v is not None))
              if desc.layout is not None else None)
    return {"units": desc.units, "lattice": (desc.lattice.style, desc.lattice.scale) if desc.lattice else None,
            "box": _extents(desc), "layers": bounds or None}


def _exact_box(desc: SimulationDescription, exact: tuple[float, ...], why: str) -> None:
    """A box edge the text gives rounded (2.83 for the example's 2.828427 = 4 periods of the oriented
    lattice) is the example's exact edge: the rounded one leaves two atom planes a few thousandths of
    an Angstrom apart across the periodic boundary, and the run loses atoms."""
    assert desc.box is not None
    hi = list(desc.box.hi)
    for k, (lo, value) in enumerate(zip(desc.box.lo, desc.box.hi, strict=True)):
        stated = value - lo
        if stated != exact[k] and round(exact[k], decimals(stated)) == stated:
            hi[k] = lo + exact[k]
            desc.note(f"box.{'xyz'[k]}", "default", f"{exact[k]:g}: the stated {stated:g} rounds it; {why}")
    desc.box = desc.box.model_copy(update={"hi": tuple(hi)})


def fill_shear_example(desc: SimulationDescription, low: str) -> None:
    """A shear flow stated without its velocities, in a text that states examples/shear's setup: the
    example's moving-layer velocity and ramp (and its lattice orientation, when the text says the
    crystal is oriented without saying how), each listed as a default."""
    if SHEAR_GAP not in desc.missing or any(s.shear for s in desc.stages):
        return
    stated = _shear_stated(desc)
    fill = SHEAR.fill(desc, SHEAR.compare(stated))
    if fill is None:
        return
    assert desc.layout is not None and desc.lattice is not None
    extents, bounds = stated["box"], stated["layers"]
    fill.describe = (f"{desc.lattice.style} {desc.lattice.scale:g} in metal units, box "
                     f"{' x '.join(f'{e:g}' for e in extents)}, layers at y {bounds[0]:g} and {bounds[1]:g}")
    groups = {g.name: g for g in desc.layout.groups}
    rest = next((g.name for g in desc.layout.groups if g.rest), None)
    flow_at = re.search(r"velocity (?:gradient|ramp|profile)|(?:lateral|constant) velocity to the", low)
    if "upper" not in groups or rest is None or flow_at is None:
        return
    stage = next((s for s in desc.stages if s.kind == "run" and low.find(s.evidence) >= low.rfind(".", 0,
                                                                                                flow_at.start())),
                 None)
    if stage is None:
        return
    if desc.lattice.orient is None and re.search(r"orient", low):
        desc.lattice.orient, desc.lattice.origin = SHEAR.fills["orient"], SHEAR.fills["origin"]
        fill.note("lattice.orient", "x [100], y [011], z [0-11], origin 0.5 0 0: the text names an orientation "
                  "without stating it")
    _exact_box(desc, SHEAR.signature["box"], fill.why)
    flow = SHEAR.fills["flow"]
    stage.shear = ShearFlow(moving="upper", ramp_group=rest, **flow)
    desc.missing.remove(SHEAR_GAP)
    fill.note(f"{stage.name}.shear", f"upper layer at {flow['velocity']:g} along x, ramp 0 to 1 across y 1.4 to 8.6 "
              "(lattice units, the velocity command's default)")
    desc.note(f"{stage.name}.shear.temperature", "default", "temp/partial: the thermostat and the reported "
              "temperature leave out the flow component (x), which is not heat")


# LAMMPS examples/friction (in.friction) and examples/crack (in.crack): 2D LJ solids built from regions
_LJ_2D = {"units": "lj", "dimension": 2, "cutoff": 2.5, "epsilon": 1.0, "sigma": 1.0}
FRICTION = Example(
    name="LAMMPS examples/friction",
    signature={**_LJ_2D, "lattice": ("hex", 0.9), "timestep": 0.0025, "box": (50.0, 22.0),
               "slabs": ((0.0, 7.0), (15.0, 22.0)), "fixed": ((0.0, 1.1), (20.9, 22.0)),
               "spheres": ((32.0, 7.0, 8.0), (18.0, 15.0, 8.0))},
    fills={"seed": 482748, "rescale": (200, 0.02)},  # fix temp/rescale N, window (fraction 1.0, as rendered)
    runs={"steps": 20000})  # the examples' run lengths: a text that states its own keeps it
CRACK = Example(
    name="LAMMPS examples/crack",
    signature={**_LJ_2D, "lattice": ("hex", 0.93), "timestep": 0.003, "types": 5, "excluded": ((2, 3),),
               "boundary": ("s", "s", "p")},
    fills={"box": ((0.0, 0.0, -0.25), (100.0, 40.0, 0.25)),
           "layers": (1.25, 38.75),  # y of the lower and upper boundary layers' inner faces (lattice units)
           "cut": (20.0, 20.0),  # the crack: x <= 20, split at y = 20 into an upper (type 2) and a lower (type 3)
           "velocity": (0.01, 887723),  # temperature of the mobile atoms, seed
           "pull": 0.02},  # vy of the upper boundary, the top of the ramp
    runs={"steps": 50000})


def _one(values: list[float]) -> float | tuple[float, ...] | None:
    distinct = tuple(sorted(set(values)))
    return None if not distinct else distinct[0] if len(distinct) == 1 else distinct


def _lj_2d(desc: SimulationDescription) -> dict[str, Stated]:
    pair = desc.pair
    return {"units": desc.units, "dimension": desc.dimension,
            "lattice": (desc.lattice.style, desc.lattice.scale) if desc.lattice else None,
            "cutoff": pair.cutoff if pair else None, "timestep": desc.timestep,
            "epsilon": _one([c.epsilon for c in pair.coeffs]) if pair else None,
            "sigma": _one([c.sigma for c in pair.coeffs]) if pair else None}


def _run_steps(desc: SimulationDescription) -> dict[str, Stated]:
    runs = [s for s in desc.stages if s.kind == "run"]
    return {"steps": sum(s.steps for s in runs) if runs else None}


def _friction_stated(desc: SimulationDescription) -> dict[str, Stated]:
    layout = desc.layout
    regions = {r.name: r for r in layout.regions} if layout is not None else {}

    def span(name: str) -> tuple[float, float] | None:
        r = regions.get(name)
        return (r.bounds[2], r.bounds[3]) if r is not None and r.bounds is not None else None  # type: ignore[return-value]

    def both(a: str, b: str) -> tuple | None:
        pair = (span(a), span(b))
        return None if None in pair or any(None in p for p in pair) else pair  # type: ignore[operator]

    spheres = tuple((r.center[0], r.center[1], r.radius) for n in ("lower_sphere", "upper_sphere")
                    if (r := regions.get(n)) is not None and r.center is not None)
    return {**_lj_2d(desc), "box": _extents(desc, 2), "slabs": both("lower_slab", "upper_slab"),
            "fixed": both("lower_fixed_region", "upper_fixed_region"), "spheres": spheres or None}


def fill_friction_example(desc: SimulationDescription) -> None:
    """A text stating examples/friction's setup: the example's velocity seed, its drive added to the
    thermal velocities, and its rescaling interval and window fill what the text leaves out."""
    if desc.layout is None:
        return
    fill = FRICTION.fill(desc, FRICTION.compare(_friction_stated(desc)), describe=(
        "hex 0.9, box 50 x 22, slabs y 0-7 and 15-22, fixed layers to 1.1 and from 20.9, asperities of radius 8 "
        "at (32, 7) and (18, 15), LJ cutoff 2.5, timestep 0.0025"))
    if fill is None:
        return
    seed = FRICTION.fills["seed"]
    if desc.velocity is not None and desc.origin.get("velocity.seed") is not None and \
            desc.origin["velocity.seed"].source == "default":
        desc.velocity.seed = seed
        fill.note("velocity.seed", f"{seed}")
    for v in desc.layout.velocities:
        if v.group == "upper" and not v.add:
            v.velocity = tuple(0.0 if c is None else c for c in v.velocity)  # type: ignore[assignment]
            v.add = True
            fill.note("velocity.upper", "added to the thermal velocities (velocity set ... sum yes)")
    if desc.layout.temperature_axes:
        fill.note("velocity.temperature_axes", f"{desc.layout.temperature_axes}: the creation temperature is "
                  "measured on the thermostatted components only (compute temp/partial, as the thermostat)")
    fill.departures(_run_steps(desc))
    every, window = FRICTION.fills["rescale"]
    for stage in desc.stages:
        dyn = stage.dynamics
        if dyn is not None and dyn.thermostat == "velocity-rescale" and \
                desc.origin.get(f"{stage.name}.rescale", None) is not None and \
                desc.origin[f"{stage.name}.rescale"].source == "default":
            dyn.rescale_every, dyn.rescale_window = every, window
            fill.note(f"{stage.name}.rescale", f"every {every} steps, window {window:g}, fraction 1")


CRACK_GAPS = ("box size", "the initial temperature", SHEAR_GAP)


def _crack_stated(desc: SimulationDescription, low: str) -> dict[str, Stated] | None:
    """examples/crack's numbers as the text states them, or None when the text is not about its
    loading (the top boundary pulled, a ramp over the mobile atoms, the bottom held) or already
    builds its own layout or box."""
    layout = desc.layout
    if layout is None or layout.groups or layout.fills or desc.box is not None:
        return None
    if not (re.search(r"\bcrack", low) and re.search(r"velocity ramp|ramp\w* (?:of |in )?(?:the )?velocit", low)
            and re.search(r"\b(?:top|upper) boundary", low) and re.search(r"\b(?:bottom|lower) boundary", low)):
        return None
    return {**_lj_2d(desc), "types": desc.atom_types, "boundary": tuple(desc.boundary),
            "excluded": tuple(tuple(p) for p in layout.excluded_pairs) or None}


def fill_crack_example(desc: SimulationDescription, low: str) -> None:
    """A text stating examples/crack's setup without its geometry or loading numbers: the example's
    box, boundary layers, crack regions, initial temperature, pull velocity and ramp, each listed."""
    from simagent.described.model import Box, Velocity  # model imports this module's neighbours

    stated = _crack_stated(desc, low)
    fill = CRACK.fill(desc, CRACK.compare(stated), describe="hex 0.93, five atom types, exclude type 2 3, LJ cutoff "
                      "2.5, timestep 0.003, boundaries s s p") if stated is not None else None
    if fill is None:
        return
    layout = desc.layout
    assert layout is not None
    lo, hi = CRACK.fills["box"]
    desc.box = Box(lo=lo, hi=hi)
    fill.note("box", "x 0-100, y 0-40, z -0.25-0.25 lattice units")
    bottom, top = CRACK.fills["layers"]
    x_cut, y_cut = CRACK.fills["cut"]
    layout.regions += [Region(name="lower_region", style="block", bounds=(None, None, None, bottom, None, None)),
                       Region(name="upper_region", style="block", bounds=(None, None, top, None, None, None)),
                       Region(name="crack_upper_region", style="block", bounds=(None, x_cut, y_cut, None, None, None)),
                       Region(name="crack_lower_region", style="block", bounds=(None, x_cut, None, y_cut, None, None))]
    layout.groups += [Group(name="lower", region="lower_region"), Group(name="upper", region="upper_region"),
                      Group(name="mobile", rest=True, subtract=["lower", "upper"]),
                      Group(name="crack_upper", region="crack_upper_region"),
                      Group(name="crack_lower", region="crack_lower_region")]
    layout.retype = [("crack_upper", 2), ("crack_lower", 3), ("lower", 4), ("upper", 5)]
    fill.note("layout", f"boundary layers y <= {bottom:g} (type 4) and y >= {top:g} (type 5), the rest mobile; the "
              f"crack: x <= {x_cut:g}, y >= {y_cut:g} type 2 and y <= {y_cut:g} type 3 (types 2 and 3 do not "
              "interact, as stated); lattice units")
    layout.velocity_group = "mobile"
    temperature, seed = CRACK.fills["velocity"]
    desc.velocity = Velocity(temperature=temperature, seed=seed)
    fill.note("velocity", f"{temperature:g} (seed {seed}) on the mobile atoms, the text's 'low temperature'")
    pull = CRACK.fills["pull"]
    layout.velocities.append(GroupVelocity(group="upper", velocity=(0.0, pull, 0.0)))
    layout.ramps.append(VelocityRamp(group="mobile", component="y", v_lo=0.0, v_hi=pull, along="y", lo=bottom, hi=top))
    fill.note("pull", f"the top boundary at vy = {pull:g}, the mobile atoms' vy ramped from 0 at y = {bottom:g} to "
              f"{pull:g} at y = {top:g} (added to their thermal velocities), in lattice units (the velocity "
              "command's default, as the regions')")
    layout.forces += [GroupForce(group=g, style="setforce", force=(None, 0.0, 0.0)) for g in ("lower", "upper")]
    desc.note("held", "default", "the vertical force is zero on both boundary layers (fix setforce NULL 0 0): the "
              "stated constraint on the bottom, and on the top the imposed velocity kept for the whole run, as "
              f"{CRACK.name} does")
    fill.departures(_run_steps(desc))
    desc.missing = [m for m in desc.missing if m not in CRACK_GAPS]
    if LAYOUT_UNSUPPORTED in desc.unsupported:
        desc.unsupported.remove(LAYOUT_UNSUPPORTED)


# LAMMPS examples/balance (in.balance): a 2D LJ disc of particles on a hex lattice moving between LJ 9-3 walls
BALANCE = Example(
    name="LAMMPS examples/balance",
    signature={"units": "lj", "dimension": 2, "cutoff": 2.5, "epsilon": 10.0, "sigma": 1.0, "lattice": ("hex", 0.85),
               "box": (50.0, 20.0), "boundary": ("f", "f", "p"), "diameter": 20.0, "temperature": 0.5,
               "velocity_add": (5.0, 2.0), "walls": (1.0, 1.0, 2.5)},
    optional={"timestep": 0.001, "atoms": 361},  # the disc the example places holds 361 particles
    fills={"centre": (11.0, 20.0 / 2.0 / 3.0**0.5 + 1.0, 0.0),  # $(v_d/2+1) $(v_d/2/sqrt(3.0)+1) 0.0
           "seed": 87287},
    runs={"steps": 10000})


def _balance_stated(desc: SimulationDescription) -> dict[str, Stated] | None:
    """examples/balance's numbers as the text states them, or None when the text builds no disc of
    lattice particles between LJ 9-3 walls."""
    layout = desc.layout
    disc = next((r for r in layout.regions if r.name == layout.create_in), None) if layout is not None else None
    if layout is None or disc is None or disc.style != "sphere" or disc.radius is None or not layout.walls:
        return None
    walls = {(w.epsilon, w.sigma, w.cutoff) for w in layout.walls if w.style == "lj93"}
    velocity_add = layout.velocity_add
    return {**_lj_2d(desc), "box": _extents(desc, 2), "boundary": tuple(desc.boundary), "diameter": 2 * disc.radius,
            "temperature": desc.velocity.temperature if desc.velocity else None,
            "velocity_add": velocity_add[:2] if velocity_add and not velocity_add[2] else velocity_add,
            "walls": next(iter(walls)) if len(walls) == 1 else None, "atoms": desc.stated_atoms}


def fill_balance_example(desc: SimulationDescription) -> None:
    """A text stating examples/balance's setup without saying where the disc sits: the example's
    centre (one lattice spacing in from the lower-left corner, the disc that holds its 361 particles)
    and its velocity seed."""
    stated = _balance_stated(desc)
    if stated is None:
        return
    fill = BALANCE.fill(desc, BALANCE.compare(stated), describe=(
        "hex 0.85, box 50 x 20, a disc of diameter 20, LJ epsilon 10 sigma 1 cutoff 2.5, T 0.5, added velocity (5, 2), "
        "LJ 9-3 walls 1 1 2.5"))
    if fill is None:
        return
    assert desc.layout is not None
    centre = BALANCE.fills["centre"]
    origin = desc.origin.get("cluster.centre")
    if origin is not None and origin.source == "default":
        for region in desc.layout.regions:
            if region.name == desc.layout.create_in:
                region.center = centre
        fill.note("cluster.centre", " ".join(f"{c:.7g}" for c in centre) + " (lattice units)")
    seed = BALANCE.fills["seed"]
    if desc.velocity is not None and desc.origin.get("velocity.seed") is not None and \
            desc.origin["velocity.seed"].source == "default":
        desc.velocity.seed = seed
        fill.note("velocity.seed", f"{seed}")
    fill.departures(_run_steps(desc))
