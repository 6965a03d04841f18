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
