"""Single prescribed LAMMPS features of a described simulation: a contact tracker overlaid on the pair
potential (pair_style tracker) and a feedback (PID) controller on a thermostat's set point (fix
controller). Each is read from the text into a typed field, rendered by
tools.lammps.described_special, and, when read, no longer refused; what the text leaves open gets
a default with its reason (report.md lists them).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from simagent.backends.expert.protocol_text import NUM

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

TRACKER_NAME = "pair_style tracker"  # the name reading.UNSUPPORTED gives the tracker
CONTROLLER_NAME = "fix controller (feedback temperature control)"
TRACKER_EVERY = 1000  # steps between the tracker's contact records (output only; no metric reads them)
# fix controller's gains when the text states none: the first example of the LAMMPS manual's fix
# controller page (`fix 1 all controller 100 1.0 0.5 0.0 0.0 c_thermo_temp 1.5 tcontrol`), which
# controls a temperature through a thermostat's target, as these tasks do
CONTROLLER_DEFAULTS = {"every": 100, "alpha": 1.0, "kp": 0.5, "ki": 0.0, "kd": 0.0}
VARIABLE_THERMOSTATS = ("langevin", "berendsen", "velocity-rescale")  # take a variable set point (v_name)


class ContactTracker(BaseModel):
    """Pairwise contacts recorded by pair_style tracker, overlaid on the pair potential (hybrid/overlay).
    It computes no forces and no energy: the dynamics are those of the pair potential alone."""

    cutoff: float = Field(gt=0, description="a contact: two atoms closer than this distance")
    time_min: float | None = Field(default=None, ge=0, description="contacts shorter-lived than this are dropped")
    every: int = Field(default=TRACKER_EVERY, gt=0)


class Controller(BaseModel):
    """fix controller: a PID loop every `every` steps drives the temperature to `setpoint` by setting
    the target of the stage's thermostat (an internal variable the thermostat reads)."""

    setpoint: float = Field(gt=0)
    every: int = Field(default=CONTROLLER_DEFAULTS["every"], gt=0)
    alpha: float = CONTROLLER_DEFAULTS["alpha"]
    kp: float = CONTROLLER_DEFAULTS["kp"]
    ki: float = CONTROLLER_DEFAULTS["ki"]
    kd: float = CONTROLLER_DEFAULTS["kd"]


def read_tracker(desc: SimulationDescription, low: str) -> None:
    """'a contact-tracking pair style overlaid on the LJ potential; contacts closer than the cutoff;
    minimum lifetime 0.5': the tracker, read and no longer refused. Needs the pair potential it
    overlays."""
    if TRACKER_NAME not in desc.unsupported or desc.pair is None or desc.pair.three_body is not None:
        return
    stated = re.search(r"contacts?\b[^.;]{0,80}?(?:distance|separation|closer|less|smaller|within)[^.;0-9]{0,30}?"
                       + NUM, low)
    if stated:
        cutoff, evidence = float(stated.group(1)), stated.group(0)
        desc.note("pair.tracker.cutoff", "rules", evidence)
    else:
        cutoff = desc.pair.cutoff
        said = re.search(r"contacts?\b[^.;]{0,80}?(?:less|smaller|closer|within)[^.;]{0,20}cut-?off", low)
        desc.note("pair.tracker.cutoff", "rules" if said else "default",
                  said.group(0) if said else f"{cutoff:g}: the pair cutoff (no contact distance stated)")
    lifetime = re.search(r"(?:minimum|min\.?|shortest) (?:contact )?(?:life ?time|duration)(?: threshold)?"
                         r"[^.;0-9]{0,20}?" + NUM + r"|(?:life ?time|duration)s? (?:longer|exceeding|greater|above|"
                         r"more) (?:than )?" + NUM, low)
    time_min = float(lifetime.group(1) or lifetime.group(2)) if lifetime else None
    if lifetime:
        desc.note("pair.tracker.time_min", "rules", lifetime.group(0))
    desc.pair.tracker = ContactTracker(cutoff=cutoff, time_min=time_min)
    desc.note("pair.tracker.every", "default", f"{TRACKER_EVERY}: steps between contact records (output only)")
    desc.unsupported.remove(TRACKER_NAME)


_SETPOINT = re.compile(r"(?:temperature|set ?point|target)[^.;]{0,40}?(?:from " + NUM + r" )?to " + NUM +
                       r"|set ?point(?: temperature)?\s*(?:of|=|:|at)?\s*" + NUM)
_GAINS = {"kp": r"(?:proportional gain|\bk_?p\b)", "ki": r"(?:integral gain|\bk_?i\b)",
          "kd": r"(?:derivative gain|\bk_?d\b)", "alpha": r"(?:\balpha\b|coupling constant)"}


def read_controller(desc: SimulationDescription, low: str) -> None:
    """'a feedback controller (fix controller) drives the temperature to 1.5': every run stage stated
    from that sentence on gets the controller, which adjusts its thermostat's set point. Refused
    (kept unsupported, with the reason) without a set point or without a thermostat that takes a
    variable target."""
    if CONTROLLER_NAME not in desc.unsupported:
        return
    sentences = re.split(r"(?<=[.;])\s+", low)
    # the first sentence naming the controller with its set point (there, or in the next sentence)
    start, setpoint, text = None, None, ""
    for i, sentence in enumerate(sentences):
        text = " ".join(sentences[i:i + 2])
        if re.search(r"controller", sentence) and (setpoint := _SETPOINT.search(text)):
            start = i
            break
    if start is None or setpoint is None:
        return
    target = float(setpoint.group(2) or setpoint.group(3))
    offset = low.find(sentences[start])
    controlled = [s for s in desc.stages if s.kind == "run" and low.find(s.evidence) >= offset]
    if not controlled:
        return
    if any(s.dynamics is None or s.dynamics.ensemble != "nve" or s.dynamics.thermostat not in VARIABLE_THERMOSTATS
           for s in controlled):
        desc.unsupported.append("a feedback controller without a Langevin, Berendsen or rescaling thermostat "
                                "whose target it sets")
        return
    values = dict(CONTROLLER_DEFAULTS)
    for name, pattern in _GAINS.items():
        if hit := re.search(pattern + r"\s*(?:of|=|:)?\s*" + NUM, text):
            values[name] = float(hit.group(1))
            desc.note(f"controller.{name}", "rules", hit.group(0))
        else:
            desc.note(f"controller.{name}", "default", f"{values[name]:g}: not stated; the LAMMPS manual's fix "
                      "controller example")
    if hit := re.search(r"every\s*" + NUM + r"\s*(?:time ?)?steps?", sentences[start]):
        values["every"] = int(float(hit.group(1)))
        desc.note("controller.every", "rules", hit.group(0))
    else:
        desc.note("controller.every", "default", f"{values['every']}: steps between corrections, not stated; the "
                  "LAMMPS manual's fix controller example")
    for stage in controlled:
        stage.controller = Controller(setpoint=target, **values)
    desc.note("controller.setpoint", "rules", setpoint.group(0))
    desc.unsupported.remove(CONTROLLER_NAME)
