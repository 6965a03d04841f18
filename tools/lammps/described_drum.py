"""A rotating drum (simagent.described.drum.GranularDrum) as LAMMPS commands: two sphere types poured
into a cylinder with a plane bottom (pair granular, fix wall/gran/region, fix pour) under gravity
along one direction, then, with the drum closed by a lid and gravity turned, the walls rotate by the
angle variable theta, which the rotating stage prints in its thermo output (v_theta)."""

from __future__ import annotations

import numpy as np

from simagent.described.drum import THETA, GranularDrum, GranularModel
from simagent.described.model import SimulationDescription
from simagent.errors import CalculationFailed, ReadError
from simagent.models import Result

THETA_COLUMN = f"v_{THETA}"
ROTATION_ANGLE = "rotation_angle"  # simagent.models.PropertyName


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def model_words(m: GranularModel) -> str:
    """LAMMPS granular model keywords: normal, damping, tangential, rolling, twisting."""
    null = lambda v: "NULL" if v is None else _fmt(v)  # noqa: E731
    words = [m.normal, *map(_fmt, m.normal_coefficients)]
    if m.damping is not None:
        words += ["damping", m.damping]
    words += ["tangential", m.tangential, *map(null, m.tangential_coefficients)]
    if m.rolling is not None:
        words += ["rolling", m.rolling, *map(_fmt, m.rolling_coefficients)]
    if m.twisting is not None:
        words += ["twisting", m.twisting]
    return " ".join(words)


def _drum(desc: SimulationDescription) -> GranularDrum:
    assert desc.drum is not None and desc.box is not None
    return desc.drum


def _rotating(d: GranularDrum, name: str, shape: str) -> str:
    x, y = map(_fmt, d.centre)
    return f"region          {name} {shape} side in rotate v_{THETA} {x} {y} 0 0 0 1 units box"


def _wall(d: GranularDrum, fix_id: str, region: str) -> str:
    return f"fix             {fix_id} all wall/gran/region granular {model_words(d.wall)} region {region}"


def system_lines(desc: SimulationDescription) -> list[str]:
    """The empty box, theta (0 until the rotating stage), the drum's walls, the pair models and the
    integrator; these persist through both stages (the stage fixes come and go around them)."""
    d = _drum(desc)
    assert desc.box is not None
    box = " ".join(f"{_fmt(lo)} {_fmt(hi)}" for lo, hi in zip(desc.box.lo, desc.box.hi, strict=True))
    x, y = map(_fmt, d.centre)
    lines = [f"units           {desc.units}", f"boundary        {' '.join(desc.boundary)}", "atom_style      sphere",
             "comm_modify     vel yes", f"region          box block {box} units box", "create_box      2 box",
             f"neighbor        {_fmt(d.neighbor_skin)} bin", "neigh_modify    delay 0 every 1 check yes",
             "pair_style      granular"]
    lines += [f"pair_coeff      {types} {model_words(m)}" for types, m in d.pairs.items()]
    lines += [f"variable        {THETA} equal 0",
              _rotating(d, "drum_side", f"cylinder z {x} {y} {_fmt(d.radius)} 0 {_fmt(d.height)}"),
              _rotating(d, "drum_bottom", f"plane {x} {y} 0 0 0 1"),
              "fix             drum_nve all nve/sphere", _wall(d, "drum_side", "drum_side"),
              _wall(d, "drum_bottom", "drum_bottom"), "compute_modify  thermo_temp dynamic/dof yes",
              "compute         drum_radius all property/atom radius",
              f"variable        drum_above atom z+c_drum_radius>{_fmt(d.delete_above)}",
              f"group           drum_above dynamic all var drum_above every {d.delete_every}"]
    return lines


def stage_lines(desc: SimulationDescription, index: int) -> list[str]:
    """Before a stage's fixes: in the rotating (last) stage, delete the particles above the cut, close
    the lid and start theta turning."""
    d = _drum(desc)
    if index != desc.run_stages()[-1]:
        return []
    x, y = map(_fmt, d.centre)
    return ["delete_atoms    group drum_above",
            _rotating(d, "drum_lid", f"plane {x} {y} {_fmt(d.height)} 0 0 -1"), _wall(d, "drum_lid", "drum_lid"),
            f"variable        {THETA} equal 2*PI*elapsed/{_fmt(d.period)}"]


def stage_fixes(desc: SimulationDescription, index: int) -> list[str]:
    """Gravity (settling: along settle_direction, with the two pours; rotating: along rotate_direction)."""
    d = _drum(desc)
    assert desc.box is not None
    rotating = index == desc.run_stages()[-1]
    along = " ".join(map(_fmt, d.rotate_direction if rotating else d.settle_direction))
    gravity = f"fix             gravity all gravity {_fmt(d.gravity)} vector {along}"
    if rotating:
        return [gravity]
    x, y = map(_fmt, d.centre)
    lines = [gravity,
             f"region          drum_pour cylinder z {x} {y} {_fmt(d.insertion_radius)} {_fmt(d.height)} "
             f"{_fmt(desc.box.hi[2])} units box"]
    dens = f"dens {_fmt(d.density)} {_fmt(d.density)}"
    for kind, count in enumerate(d.counts, start=1):
        lines.append(f"fix             pour{kind} all pour {count} {kind} {d.seed} region drum_pour diam range "
                     f"{_fmt(d.diameters[0])} {_fmt(d.diameters[1])} {dens}")
    return lines


def angle_result(block: dict[str, np.ndarray], job: str, where: str) -> Result:
    """The mean of v_theta over the rotating stage's thermo rows, as LAMMPS printed them (radians).
    theta is a prescribed function of the step, not a fluctuating quantity: no statistical error."""
    if THETA_COLUMN not in block:
        raise ReadError(f"thermo column {THETA_COLUMN} missing")
    series = block[THETA_COLUMN]
    if series.size == 0 or not np.all(np.isfinite(series)):
        raise CalculationFailed(f"no finite {THETA_COLUMN} in {where}")
    return Result(quantity=ROTATION_ANGLE, property=ROTATION_ANGLE, value=float(series.mean()), unit="rad",
                  uncertainty=None, job=job, log="log.lammps",
                  method=f"mean of the drum angle {THETA_COLUMN} (the walls' rotation variable, thermo output) over "
                         f"{where}, {series.size} rows from {series[0]:.6g} to {series[-1]:.6g} rad; a prescribed "
                         "function of the step, so no statistical uncertainty")
