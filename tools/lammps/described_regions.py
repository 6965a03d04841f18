"""Measurements of solids built from regions (simagent.described.groups): the friction coefficient
of a sliding body and the tensile stress along the pull axis, from a described run's thermo output.

Friction: the tangential and normal force on the sliding body from every other atom (compute
group/group, which by Newton's third law is the total force on the body: its internal forces
cancel), each averaged over every step of the run (interval means of fix ave/time), and
|<F_t>| / |<F_n>| of those time averages. Tensile stress: -P_aa along the pull axis (the axis along
which a velocity ramp pulls the solid apart), LAMMPS's virial pressure tensor over the box volume
(in 2D the area) that thermo prints; positive when the solid is stretched.
"""

from __future__ import annotations

import numpy as np

from simagent.described.model import SimulationDescription
from simagent.errors import ReadError
from simagent.models import Result
from simagent.stats import block_average
from tools.lammps.described_groups import FRICTION as FRICTION_FIX

FRICTION = "friction_coefficient"
TENSILE = "tensile_stress"


def pull_axis(desc: SimulationDescription) -> str | None:
    """The axis a velocity ramp pulls along (its velocity component along its own coordinate)."""
    layout = desc.layout
    ramps = [r for r in layout.ramps if r.component == r.along] if layout is not None else []
    return ramps[0].component if ramps else None


def _series(block: dict[str, np.ndarray], column: str) -> np.ndarray:
    if column not in block:
        raise ReadError(f"thermo column {column} missing")
    return np.asarray(block[column], dtype=float)


def friction_coefficient(block: dict[str, np.ndarray], desc: SimulationDescription, job: str, where: str) -> Result:
    """abs(<F_t> / <F_n>) over the stage (the first row, step 0, holds no interval and is left out);
    the uncertainty propagates the block-average standard errors of both means."""
    layout = desc.layout
    if layout is None or layout.friction is None:
        raise ReadError("the description names no sliding body whose friction could be measured")
    f = layout.friction
    tangential = _series(block, f"f_{FRICTION_FIX}[1]")[1:]
    normal = _series(block, f"f_{FRICTION_FIX}[2]")[1:]
    (ft, et), (fn, en) = block_average(tangential), block_average(normal)
    if fn == 0.0:
        raise ReadError("the mean normal force on the sliding body is zero: no friction coefficient")
    mu = abs(ft / fn)
    err = mu * float(np.hypot(et / ft if ft else 0.0, en / fn))
    warnings = []
    if abs(fn) < 2 * en:  # the denominator is not resolved: the ratio is noise over noise
        warnings.append(f"the mean normal force on the {f.body} slab, {fn:.3g} +/- {en:.2g}, is within two standard "
                        "errors of zero (nothing presses the bodies together): the ratio is not determined by this "
                        "run, and another trajectory can give a very different value")
    return Result(quantity=FRICTION, value=mu, unit="dimensionless", uncertainty=err, job=job, log="log.lammps",
                  warnings=warnings,
                  method=f"abs(<F_{f.sliding}> / <F_{f.normal}>) with F the total force on the {f.body} slab from "
                         f"every other atom (compute group/group; the slab's internal forces cancel, its held "
                         f"layer's share counted before fix setforce zeroes it): <F_{f.sliding}> = {ft:.6g}, "
                         f"<F_{f.normal}> = {fn:.6g}, averages over every step of {where} ({tangential.size} "
                         "interval means); uncertainty from the block-average standard errors of both")


def tensile_stress(block: dict[str, np.ndarray], desc: SimulationDescription, job: str, where: str) -> Result:
    """The mean of -P_aa over the stage's thermo rows, a the pull axis; block-average standard error."""
    axis = pull_axis(desc)
    if axis is None:
        raise ReadError("the description pulls along no axis whose tensile stress could be measured")
    name = f"P{axis}{axis}"
    series = -_series(block, name)
    mean, err = block_average(series)
    unit = {"metal": "bar", "real": "atm"}.get(desc.units or "lj", "reduced")
    return Result(quantity=TENSILE, value=mean, unit=unit, uncertainty=err, job=job, log="log.lammps",
                  method=f"average of -{name} (LAMMPS's virial pressure tensor along the pull axis {axis}, over the "
                         f"box {'area' if desc.dimension == 2 else 'volume'}; stress = -pressure, positive in "
                         f"tension) over {where}, {series.size} thermo rows; standard error by block averaging")
