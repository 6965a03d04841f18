"""Shock compression by the Multi-Scale Shock Technique (LAMMPS fix msst), read from a task text.

A text that prescribes an MSST run ("a shock wave along z by the Multi-Scale Shock Technique, shock
velocity 28 Å/ps, q = 200, mu = 300, temperature scaling 0.01, for 10000 steps") states the fix's
arguments: the shock direction, the shock velocity and the keywords q (cell mass-like parameter),
mu (artificial viscosity), tscale (fraction of the thermal energy turned into compression at the
start), and optionally p0, v0, e0 (the reference state; LAMMPS computes them on the first step when
they are not given) and beta. The stage whose run the text ties to the shock integrates with fix
msst (which moves the atoms and the cell itself: no other integrator). A keyword the text leaves out
gets LAMMPS's documented default (q 10, mu 0, tscale 0.01), listed in report.md; a missing direction
or shock velocity is listed as missing.

The fix reports four global values (LAMMPS fix msst documentation): the departure from the Hugoniot
(temperature units), the departure from the Rayleigh line (pressure units), the Lagrangian speed of
the cell (velocity units) and its Lagrangian position behind the shock front (distance units).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from simagent.backends.expert.protocol_text import NUM
from simagent.errors import SimagentError
from simagent.units import convert

if TYPE_CHECKING:
    from simagent.described.model import SimulationDescription

NAME = "shock methods (fix msst)"  # the refusal reading.UNSUPPORTED gives until the MSST is read
MENTION = re.compile(r"\bmsst\b|multi-?scale shock|shock (?:wave|compression|simulation|velocity|speed|front)|\bshock"
                     r"(?:ed|ing)?\b")
# LAMMPS fix msst keyword defaults (fix msst documentation, "Default")
DEFAULTS = {"q": 10.0, "mu": 0.0, "tscale": 0.01}
# the unit of a shock velocity in each unit style (LAMMPS units command: distance/time)
VELOCITY_UNIT = {"metal": "angstrom/ps", "real": "angstrom/fs"}
_VELOCITY_WORDS = [(r"(?:angstroms?|a)\s*(?:/|per)\s*ps\b|angstroms? per picosecond", "angstrom/ps"),
                   (r"(?:angstroms?|a)\s*(?:/|per)\s*fs\b|angstroms? per femtosecond", "angstrom/fs"),
                   (r"km\s*(?:/|per)\s*s\b|kilomet(?:er|re)s? per second", "km/s"),
                   (r"nm\s*(?:/|per)\s*ps\b", "nm/ps"),
                   (r"\bm\s*(?:/|per)\s*s\b|met(?:er|re)s? per second", "m/s")]
_IS = r"\s*(?:=|of|:|is|to|as|at)?\s*(?:(?:set|prescribed|chosen|taken|given) (?:as|to|at)\s*)?"


class MSST(BaseModel):
    """fix msst's arguments (LAMMPS units of the description's unit style)."""

    axis: Literal["x", "y", "z"]
    shock_velocity: float = Field(gt=0, description="distance/time units")
    q: float = Field(default=DEFAULTS["q"], gt=0, description="cell mass-like parameter (mass^2/distance^4)")
    mu: float = Field(default=DEFAULTS["mu"], ge=0, description="artificial viscosity (mass/distance/time)")
    tscale: float = Field(default=DEFAULTS["tscale"], ge=0, lt=1, description="fraction of thermal energy turned "
                          "into compression at the start")
    p0: float | None = Field(default=None, description="reference pressure (None: LAMMPS computes it on step 1)")
    v0: float | None = Field(default=None, description="reference volume (None: LAMMPS computes it on step 1)")
    e0: float | None = Field(default=None, description="reference total energy (None: LAMMPS computes it on step 1)")
    beta: float | None = Field(default=None, ge=0, le=1, description="energy-conservation scale factor")


def _sentences(low: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.;])\s+", low) if s]


def _value(window: str, patterns: list[str]) -> tuple[float, str] | None:
    for pattern in patterns:
        hit = re.search(pattern + _IS + NUM, window)
        if hit:
            return float(hit.group(hit.lastindex or 1)), hit.group(0)
    return None


def _axis(window: str) -> tuple[str, str] | None:
    hit = re.search(r"\b(?:along|in|into|towards?|propagat\w* (?:along|in))\s+(?:the\s+)?(?:positive\s+|\+)?([xyz])"
                    r"(?:[- ]?(?:direction|axis|dir)\b|\b)", window) or re.search(
        r"\bshock (?:direction|axis)(?: is)?\s*(?:=|:)?\s*(?:the\s+)?([xyz])\b", window)
    return (hit.group(1), hit.group(0)) if hit else None


def _shock_velocity(window: str, units: str | None) -> tuple[float, str] | str:
    """(value in the unit style's distance/time, the words read), or why it cannot be used."""
    hit = re.search(r"shock (?:wave )?(?:velocity|speed)(?: \(?(?:u_?s|v_?s|shockvel)\)?)?[^.;0-9]{0,40}?" + NUM
                    + r"\s*([^,;]{0,25})", window)
    if not hit:
        return "the shock velocity of fix msst"
    value, tail = float(hit.group(1)), hit.group(2)
    words = hit.group(0)[: len(hit.group(0)) - len(tail)].strip()
    unit = next(((u, m.group(0)) for p, u in _VELOCITY_WORDS if (m := re.match(r"\s*(?:" + p + ")", tail))), None)
    if unit is None:
        if units == "lj":
            return value, words
        return f"the unit of the shock velocity {value:g} (for {units or 'these'} units)"
    words += " " + unit[1].strip()
    if units not in VELOCITY_UNIT:
        return f"the shock velocity in reduced units (the text gives {unit[1].strip()})"
    try:
        return convert(value, unit[0], VELOCITY_UNIT[units]), words
    except SimagentError:
        return f"the shock velocity in {VELOCITY_UNIT[units]}"


def read_msst(desc: SimulationDescription, low: str) -> None:
    """Attach fix msst to the run stage the text ties to the shock (see the module docstring). The
    refusal NAME is lifted only when the fix is read and its stage found."""
    first = MENTION.search(low)
    if first is None or NAME not in desc.unsupported:
        return
    window = low[first.start():]  # the fix's arguments follow the first mention of the shock
    runs = [s for s in desc.stages if s.kind == "run"]
    named = [s for s in runs if MENTION.search(s.evidence)]
    later = [s for s in runs if s.evidence and low.find(s.evidence) >= first.start()]
    stage = named[-1] if named else (later[0] if later else None)
    if stage is None:
        desc.missing.append("the run length of the MSST shock stage")
        return
    gaps = []
    axis = _axis(window)
    velocity = _shock_velocity(window, desc.units)
    if axis is None:
        gaps.append("the shock direction of fix msst")
    if isinstance(velocity, str):
        gaps.append(velocity)
    if re.search(r"\bdftb\b", window):
        desc.unsupported.append("fix msst with DFTB+ (dftb yes)")
    dyn = stage.dynamics
    if dyn is not None and (dyn.ensemble != "nve" or dyn.thermostat is not None):
        desc.unsupported.append("fix msst together with a thermostat or barostat")
    if gaps or axis is None or isinstance(velocity, str):
        desc.missing += gaps
        return
    values: dict[str, float] = {}
    found = {
        "q": _value(window, [r"\bq\b", r"(?:cell )?mass[- ]like parameter(?: \(?q\)?)?",
                             r"rayleigh[- ]line parameter(?: \(?q\)?)?"]),
        "mu": _value(window, [r"(?:\bmu\b|μ)", r"(?:artificial )?viscosity(?: coefficient| parameter)?(?: \(?(?:mu|μ)"
                                              r"\)?)?"]),
        "tscale": _value(window, [r"\btscale\b", r"temperature[- ]scal\w*(?: factor| parameter)?(?: \(?tscale\)?)?"]),
        "p0": _value(window, [r"\bp_?0\b"]), "v0": _value(window, [r"\bv_?0\b"]), "e0": _value(window, [r"\be_?0\b"]),
        "beta": _value(window, [r"\bbeta\b"]),
    }
    prefix = f"{stage.name}.msst"
    for key, hit in found.items():
        if hit is not None:
            values[key] = hit[0]
            desc.note(f"{prefix}.{key}", "rules", hit[1])
        elif key in DEFAULTS:
            desc.note(f"{prefix}.{key}", "default", f"{DEFAULTS[key]:g}: LAMMPS's fix msst default (none stated)")
    stage.msst = MSST(axis=axis[0], shock_velocity=velocity[0], **values)  # type: ignore[arg-type]
    desc.note(f"{prefix}.axis", "rules", axis[1])
    desc.note(f"{prefix}.shock_velocity", "rules", velocity[1])
    desc.unsupported = [u for u in desc.unsupported if u != NAME]
    if dump := re.search(r"\bdump\w*[^.;]{0,60}?every " + NUM + r" (?:time)?steps?(?: to (?:a |the )?file(?: named| "
                         r"called)? ?['\"]?[\w.\-]+['\"]?)?", low):
        desc.note_dump(dump.group(0))


def mentions_msst_viscosity(desc: SimulationDescription, low: str) -> bool:
    """The text's 'viscosity' is fix msst's artificial viscosity (mu) of a stage read here, and it
    asks for no Green-Kubo viscosity."""
    return any(s.msst is not None for s in desc.stages) and not re.search(r"green[- ]kubo", low)
