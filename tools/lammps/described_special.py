"""LAMMPS lines for the single prescribed features of a described simulation
(simagent.described.special): the contact tracker overlaid on the pair potential and the feedback
controller on a thermostat's set point."""

from __future__ import annotations

from simagent.described.model import Pair, Stage

TRACKER_FIX = "contacts"  # the fix pair tracker creates to store its contact records
SET_POINT = "tset"  # the internal variable the controller sets and the thermostat reads


def _fmt(x: float) -> str:
    return f"{x:.10g}"


def tracker_lines(pair: Pair) -> list[str]:
    """`pair_style hybrid/overlay <pair> tracker`: the pair potential's coefficients, then the tracker's
    contact distance (the tracker adds no force or energy)."""
    tracker = pair.tracker
    assert tracker is not None
    keywords = f" time/min {_fmt(tracker.time_min)}" if tracker.time_min is not None else ""
    lines = [f"pair_style      hybrid/overlay {pair.style} {_fmt(pair.cutoff)} tracker {TRACKER_FIX} "
             f"{tracker.every} id1 id2{keywords}"]
    lines += [f"pair_coeff      {c.i} {c.j} {pair.style} {_fmt(c.epsilon)} {_fmt(c.sigma)}"
              + (f" {_fmt(c.cutoff)}" if c.cutoff else "") for c in pair.coeffs]
    lines.append(f"pair_coeff      * * tracker {_fmt(tracker.cutoff)}")
    return lines


def set_point_variable(stage: Stage) -> list[str]:
    """Before a controlled stage: the thermostat's set point as an internal variable, starting at the
    stage's stated target (the controller changes it from there)."""
    if stage.controller is None or stage.dynamics is None or stage.dynamics.t_start is None:
        return []
    return [f"variable        {SET_POINT} internal {_fmt(stage.dynamics.t_start)}"]


def controller_lines(stage: Stage) -> list[str]:
    """fix controller on the thermo temperature, setting the thermostat's variable target."""
    c = stage.controller
    if c is None:
        return []
    return [f"fix             ctl all controller {c.every} {_fmt(c.alpha)} {_fmt(c.kp)} {_fmt(c.ki)} {_fmt(c.kd)} "
            f"c_thermo_temp {_fmt(c.setpoint)} {SET_POINT}"]
