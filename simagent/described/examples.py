"""Values a text leaves out, taken from the LAMMPS example whose setup the text states.

Many task texts retell an example shipped with LAMMPS and drop some of its numbers ("a specified
crystallographic orientation", "a constant lateral velocity" with no value). When every number the
text does state matches the example's own input, the text describes that example, and the example's
values fill what it leaves out, as the issue's convention for engine examples asks (the task
follows the example). Each value filled is a listed default naming the example and the stated
numbers that identified it; a text that states a value of its own keeps it, and a text that
matches no example keeps its gaps (missing, never guessed).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from simagent.described.group_reading import LAYOUT_UNSUPPORTED
from simagent.described.groups import Group, GroupForce, GroupVelocity, Region, VelocityRamp
from simagent.described.solids import ShearFlow

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

SHEAR_GAP = "the velocity of the moving layer and the extent of the velocity ramp"  # solids.read_shear's words
# LAMMPS examples/shear (in.shear): the numbers that identify it and the values it adds
SHEAR_EXAMPLE = "LAMMPS examples/shear"
SHEAR_SIGNATURE = {"units": "metal", "lattice": ("fcc", 3.52), "box": (16.0, 10.0, 2.828427),
                   "layers": (0.9, 6.1)}
SHEAR_ORIENT = ((1, 0, 0), (0, 1, 1), (0, -1, 1))
SHEAR_ORIGIN = (0.5, 0.0, 0.0)
SHEAR_FLOW = {"velocity": 1.0, "axis": "x", "ramp_velocity": (0.0, 1.0), "gradient_axis": "y",
              "ramp_extent": (1.4, 8.6)}


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 0.01 * max(abs(b), 1e-9) + 0.005  # the texts round (2.83 for 2.828427)


def _is_shear_example(desc: SimulationDescription) -> str | None:
    """The stated numbers that identify examples/shear, or None when any differs."""
    sig = SHEAR_SIGNATURE
    if desc.units != sig["units"] or desc.lattice is None or desc.box is None or desc.layout is None:
        return None
    if desc.lattice.style != sig["lattice"][0] or not _close(desc.lattice.scale, sig["lattice"][1]):
        return None
    extents = [hi - lo for lo, hi in zip(desc.box.lo, desc.box.hi, strict=True)]
    if not all(_close(e, s) for e, s in zip(extents, sig["box"], strict=True)):
        return None
    bounds = sorted(v for r in desc.layout.regions for v in r.bounds if v is not None)
    if len(bounds) != 2 or not all(_close(v, s) for v, s in zip(bounds, sig["layers"], strict=True)):
        return None
    return (f"{sig['lattice'][0]} {sig['lattice'][1]} in metal units, box {' x '.join(f'{e:g}' for e in extents)}, "
            f"layers at y {bounds[0]:g} and {bounds[1]:g}")


def _decimals(x: float) -> int:
    text = repr(float(x))
    return len(text.split(".")[1].rstrip("0")) if "." in text else 0


def _exact_box(desc: SimulationDescription, exact: tuple[float, ...], why: str) -> None:
    """A box edge the text gives rounded (2.83 for the example's 2.828427 = 4 periods of the oriented
    lattice) is the example's exact edge: the rounded one leaves two atom planes a few thousandths of
    an Angstrom apart across the periodic boundary, and the run loses atoms."""
    assert desc.box is not None
    hi = list(desc.box.hi)
    for k, (lo, value) in enumerate(zip(desc.box.lo, desc.box.hi, strict=True)):
        stated = value - lo
        if stated != exact[k] and round(exact[k], _decimals(stated)) == stated:
            hi[k] = lo + exact[k]
            desc.note(f"box.{'xyz'[k]}", "default", f"{exact[k]:g}: the stated {stated:g} rounds it; {why}")
    desc.box = desc.box.model_copy(update={"hi": tuple(hi)})


def fill_shear_example(desc: SimulationDescription, low: str) -> None:
    """A shear flow stated without its velocities, in a text that states examples/shear's setup: the
    example's moving-layer velocity and ramp (and its lattice orientation, when the text says the
    crystal is oriented without saying how), each listed as a default."""
    if SHEAR_GAP not in desc.missing or any(s.shear for s in desc.stages):
        return
    identified = _is_shear_example(desc)
    assert desc.layout is not None or identified is None
    if identified is None:
        return
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
    why = f"not stated; {SHEAR_EXAMPLE}'s, whose setup the text states ({identified})"
    if desc.lattice is not None and desc.lattice.orient is None and re.search(r"orient", low):
        desc.lattice.orient, desc.lattice.origin = SHEAR_ORIENT, SHEAR_ORIGIN
        desc.note("lattice.orient", "default", f"x [100], y [011], z [0-11], origin 0.5 0 0: the text names an "
                  f"orientation without stating it; {why}")
    _exact_box(desc, SHEAR_SIGNATURE["box"], why)
    stage.shear = ShearFlow(moving="upper", ramp_group=rest, **SHEAR_FLOW)  # type: ignore[arg-type]
    desc.missing.remove(SHEAR_GAP)
    desc.note(f"{stage.name}.shear", "default", f"upper layer at {SHEAR_FLOW['velocity']:g} along x, ramp 0 to 1 "
              f"across y 1.4 to 8.6 (lattice units, the velocity command's default): {why}")
    desc.note(f"{stage.name}.shear.temperature", "default", "temp/partial: the thermostat and the reported "
              "temperature leave out the flow component (x), which is not heat")


# LAMMPS examples/friction (in.friction) and examples/crack (in.crack): 2D LJ solids built from regions
FRICTION_EXAMPLE = "LAMMPS examples/friction"
FRICTION_SIGNATURE = {"lattice": ("hex", 0.9), "box": (50.0, 22.0), "slabs": ((0.0, 7.0), (15.0, 22.0)),
                      "fixed": ((0.0, 1.1), (20.9, 22.0)), "spheres": ((32.0, 7.0, 8.0), (18.0, 15.0, 8.0)),
                      "cutoff": 2.5, "timestep": 0.0025}
FRICTION_SEED = 482748
FRICTION_RESCALE = (200, 0.02)  # fix temp/rescale N, window (fraction 1.0, as the renderer writes)
CRACK_EXAMPLE = "LAMMPS examples/crack"
CRACK_SIGNATURE = {"lattice": ("hex", 0.93), "types": 5, "cutoff": 2.5, "timestep": 0.003, "excluded": (2, 3),
                   "boundary": ("s", "s", "p")}
CRACK_BOX = ((0.0, 0.0, -0.25), (100.0, 40.0, 0.25))
CRACK_LAYERS = (1.25, 38.75)  # y of the lower and upper boundary layers' inner faces (lattice units)
CRACK_CUT = (20.0, 20.0)  # the crack: x <= 20, split at y = 20 into an upper (type 2) and a lower (type 3) part
CRACK_VELOCITY = (0.01, 887723)  # temperature of the mobile atoms, seed
CRACK_PULL = 0.02  # vy of the upper boundary, the top of the ramp


FRICTION_STEPS = 20000  # the examples' run lengths: a text that states its own keeps it
CRACK_STEPS = 50000


def _departures(desc: SimulationDescription, example: str, steps: int) -> None:
    """A stated number that is not the example's wins; report.md says so."""
    runs = [s for s in desc.stages if s.kind == "run"]
    if runs and sum(s.steps for s in runs) != steps:
        desc.note("example.departures", "rules", f"the stated run of {sum(s.steps for s in runs)} steps is run, not "
                  f"{example}'s {steps} (a stated number wins over the example's)")


def _lj_2d(desc: SimulationDescription, lattice: tuple[str, float], cutoff: float, timestep: float) -> bool:
    return (desc.dimension == 2 and desc.units == "lj" and desc.lattice is not None
            and desc.lattice.style == lattice[0] and _close(desc.lattice.scale, lattice[1])
            and desc.pair is not None and _close(desc.pair.cutoff, cutoff)
            and all(_close(c.epsilon, 1.0) and _close(c.sigma, 1.0) for c in desc.pair.coeffs)
            and desc.timestep is not None and _close(desc.timestep, timestep))


def _is_friction_example(desc: SimulationDescription) -> str | None:
    sig = FRICTION_SIGNATURE
    layout = desc.layout
    if layout is None or desc.box is None or not _lj_2d(desc, sig["lattice"], sig["cutoff"], sig["timestep"]):
        return None
    regions = {r.name: r for r in layout.regions}
    extents = tuple(hi - lo for lo, hi in zip(desc.box.lo[:2], desc.box.hi[:2], strict=True))

    def span(name: str) -> tuple[float, float] | None:
        r = regions.get(name)
        return (r.bounds[2], r.bounds[3]) if r is not None and r.bounds is not None else None  # type: ignore[return-value]

    spheres = tuple((r.center[0], r.center[1], r.radius) for n in ("lower_sphere", "upper_sphere")
                    if (r := regions.get(n)) is not None and r.center is not None)
    found = {"box": extents, "slabs": (span("lower_slab"), span("upper_slab")),
             "fixed": (span("lower_fixed_region"), span("upper_fixed_region")), "spheres": spheres}
    for key, value in found.items():
        flat = [x for part in value for x in (part if isinstance(part, tuple) else (part,))] if value else []
        want = [x for part in sig[key] for x in (part if isinstance(part, tuple) else (part,))]
        if None in flat or len(flat) != len(want) or not all(_close(a, b) for a, b in zip(flat, want, strict=True)):
            return None
    return ("hex 0.9, box 50 x 22, slabs y 0-7 and 15-22, fixed layers to 1.1 and from 20.9, asperities of radius 8 "
            "at (32, 7) and (18, 15), LJ cutoff 2.5, timestep 0.0025")


def fill_friction_example(desc: SimulationDescription) -> None:
    """A text stating examples/friction's setup: the example's velocity seed, its drive added to the
    thermal velocities, and its rescaling interval and window fill what the text leaves out."""
    identified = _is_friction_example(desc)
    if identified is None:
        return
    assert desc.layout is not None
    why = f"not stated; {FRICTION_EXAMPLE}'s, whose setup the text states ({identified})"
    if desc.velocity is not None and desc.origin.get("velocity.seed") is not None and \
            desc.origin["velocity.seed"].source == "default":
        desc.velocity.seed = FRICTION_SEED
        desc.note("velocity.seed", "default", f"{FRICTION_SEED}: {why}")
    for v in desc.layout.velocities:
        if v.group == "upper" and not v.add:
            v.velocity = tuple(0.0 if c is None else c for c in v.velocity)  # type: ignore[assignment]
            v.add = True
            desc.note("velocity.upper", "default", "added to the thermal velocities (velocity set ... sum yes): " + why)
    if desc.layout.temperature_axes:
        desc.note("velocity.temperature_axes", "default", f"{desc.layout.temperature_axes}: the creation temperature "
                  f"is measured on the thermostatted components only (compute temp/partial, as the thermostat); {why}")
    _departures(desc, FRICTION_EXAMPLE, FRICTION_STEPS)
    for stage in desc.stages:
        dyn = stage.dynamics
        if dyn is not None and dyn.thermostat == "velocity-rescale" and \
                desc.origin.get(f"{stage.name}.rescale", None) is not None and \
                desc.origin[f"{stage.name}.rescale"].source == "default":
            dyn.rescale_every, dyn.rescale_window = FRICTION_RESCALE
            desc.note(f"{stage.name}.rescale", "default", f"every {FRICTION_RESCALE[0]} steps, window "
                      f"{FRICTION_RESCALE[1]:g}, fraction 1: {why}")


CRACK_GAPS = ("box size", "the initial temperature", SHEAR_GAP)


def _is_crack_example(desc: SimulationDescription, low: str) -> str | None:
    sig = CRACK_SIGNATURE
    layout = desc.layout
    if not _lj_2d(desc, sig["lattice"], sig["cutoff"], sig["timestep"]) or desc.atom_types != sig["types"] or \
            tuple(desc.boundary) != sig["boundary"] or layout is None or layout.excluded_pairs != [sig["excluded"]] \
            or layout.groups or layout.fills or desc.box is not None:
        return None
    # the example's loading, in words: the top boundary pulled, a ramp over the mobile atoms, the bottom held
    if not (re.search(r"\bcrack", low) and re.search(r"velocity ramp|ramp\w* (?:of |in )?(?:the )?velocit", low)
            and re.search(r"\b(?:top|upper) boundary", low) and re.search(r"\b(?:bottom|lower) boundary", low)):
        return None
    return "hex 0.93, five atom types, exclude type 2 3, LJ cutoff 2.5, timestep 0.003, boundaries s s p"


def fill_crack_example(desc: SimulationDescription, low: str) -> None:
    """A text stating examples/crack's setup without its geometry or loading numbers: the example's
    box, boundary layers, crack regions, initial temperature, pull velocity and ramp, each listed."""
    from simagent.described.model import Box, Velocity  # model imports this module's neighbours

    identified = _is_crack_example(desc, low)
    if identified is None:
        return
    layout = desc.layout
    assert layout is not None
    why = f"not stated; {CRACK_EXAMPLE}'s, whose setup the text states ({identified})"
    lo, hi = CRACK_BOX
    desc.box = Box(lo=lo, hi=hi)
    desc.note("box", "default", f"x 0-100, y 0-40, z -0.25-0.25 lattice units: {why}")
    bottom, top = CRACK_LAYERS
    x_cut, y_cut = CRACK_CUT
    layout.regions += [Region(name="lower_region", style="block", bounds=(None, None, None, bottom, None, None)),
                       Region(name="upper_region", style="block", bounds=(None, None, top, None, None, None)),
                       Region(name="crack_upper_region", style="block", bounds=(None, x_cut, y_cut, None, None, None)),
                       Region(name="crack_lower_region", style="block", bounds=(None, x_cut, None, y_cut, None, None))]
    layout.groups += [Group(name="lower", region="lower_region"), Group(name="upper", region="upper_region"),
                      Group(name="mobile", rest=True, subtract=["lower", "upper"]),
                      Group(name="crack_upper", region="crack_upper_region"),
                      Group(name="crack_lower", region="crack_lower_region")]
    layout.retype = [("crack_upper", 2), ("crack_lower", 3), ("lower", 4), ("upper", 5)]
    desc.note("layout", "default", f"boundary layers y <= {bottom:g} (type 4) and y >= {top:g} (type 5), the rest "
              f"mobile; the crack: x <= {x_cut:g}, y >= {y_cut:g} type 2 and y <= {y_cut:g} type 3 (types 2 and 3 do "
              f"not interact, as stated); lattice units: {why}")
    layout.velocity_group = "mobile"
    desc.velocity = Velocity(temperature=CRACK_VELOCITY[0], seed=CRACK_VELOCITY[1])
    desc.note("velocity", "default", f"{CRACK_VELOCITY[0]:g} (seed {CRACK_VELOCITY[1]}) on the mobile atoms, the "
              f"text's 'low temperature': {why}")
    layout.velocities.append(GroupVelocity(group="upper", velocity=(0.0, CRACK_PULL, 0.0)))
    layout.ramps.append(VelocityRamp(group="mobile", component="y", v_lo=0.0, v_hi=CRACK_PULL, along="y", lo=bottom,
                                     hi=top))
    desc.note("pull", "default", f"the top boundary at vy = {CRACK_PULL:g}, the mobile atoms' vy ramped from 0 at "
              f"y = {bottom:g} to {CRACK_PULL:g} at y = {top:g} (added to their thermal velocities), in lattice "
              f"units (the velocity command's default, as the regions'): {why}")
    layout.forces += [GroupForce(group=g, style="setforce", force=(None, 0.0, 0.0)) for g in ("lower", "upper")]
    desc.note("held", "default", "the vertical force is zero on both boundary layers (fix setforce NULL 0 0): the "
              "stated constraint on the bottom, and on the top the imposed velocity kept for the whole run, as "
              f"{CRACK_EXAMPLE} does")
    _departures(desc, CRACK_EXAMPLE, CRACK_STEPS)
    desc.missing = [m for m in desc.missing if m not in CRACK_GAPS]
    if LAYOUT_UNSUPPORTED in desc.unsupported:
        desc.unsupported.remove(LAYOUT_UNSUPPORTED)
