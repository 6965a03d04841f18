"""Detailed protocol descriptions -> SimulationControls (expert backend).

Benchmark-style task texts spell out the whole run: "Place 2048 particles on an fcc lattice at
reduced density 0.80 ... Nose-Hoover thermostat at T = 1.2 with damping 0.5, timestep 0.005, for
5000 steps of equilibration followed by 10000 production steps; average over the production run
only." This module reads such sentences: lattice and box in unit cells, 2D/3D, masses, atom types
and mixing rule, integrator, thermostat/barostat with set point and damping, initial velocities,
step counts, averaging window, output interval and minimiser settings.

The reader calls `merge_controls` from `_controls`; values the generic rules already found win.
`complete_conditions` fills the state-point temperature from the thermostat set point when the
text gives it only there ("thermostat at T = 1.2"). Rules work on the normalised, lower-case text
(simagent.backends.expert.reader.normalise), and a rule only fires on an explicit statement.
"""

from __future__ import annotations

import math
import re
from typing import Any

from simagent.backends.expert.ensemble_words import text_ensemble
from simagent.backends.expert.numbers import plain_numbers
from simagent.models import Quantity, SimulationControls, TaskSpec

NUM = r"(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)"
COUNT = r"(\d+(?:\.\d+)?(?:e\+?\d+)?)"  # step counts: 5000, 1e4, 2.5e4
STEP_WORD = r"(?:md |integration |time ?)?steps?"
TIME_UNIT = r"(fs|ps|ns|tau|time units|reduced time units|lj time units|timesteps|time steps|steps|dt)\b"

# Words that mark reduced Lennard-Jones units (a number without a unit is then reduced).
REDUCED_CONTEXT = r"\blj units\b|\(lj\)|units lj|\breduced\b|lennard[- ]jones|\blj\b|\bt\*|\brho\*"

LATTICE_WORDS: list[tuple[str, str]] = [
    (r"fcc|face[- ]cent(?:er|re)d[- ]cubic", "fcc"),
    (r"bcc|body[- ]cent(?:er|re)d[- ]cubic", "bcc"),
    (r"simple[- ]cubic|primitive cubic|\bsc", "sc"),
    (r"sq2|cent(?:er|re)d[- ]square", "sq2"),  # LAMMPS sq2: square cell with a second atom at its centre
    (r"square|\bsq\b", "sq"),
    (r"hexagonal|triangular|\bhex", "hex"),
]
THERMOSTATS: list[tuple[str, str]] = [
    (r"nos[eé][- ]?hoover|\bnh thermostat|nose[- ]hoover chain", "nose-hoover"),
    (r"langevin (?:thermostat|dynamics|heat bath)|langevin\b(?= .*thermostat)|\bfix langevin", "langevin"),
    (r"berendsen (?:thermostat|temperature)|berendsen\b(?! barostat)", "berendsen"),
    (r"bussi|csvr|canonical sampling (?:through|by) velocity rescaling|stochastic velocity rescal|v-rescale",
     "csvr"),
    (r"velocity rescal", "velocity-rescale"),
    (r"andersen thermostat", "andersen"),
]
BAROSTATS: list[tuple[str, str]] = [
    (r"parrinello[- ]rahman", "parrinello-rahman"),
    (r"berendsen barostat|berendsen pressure", "berendsen"),
    (r"c-rescale|stochastic cell rescal", "c-rescale"),
    (r"nos[eé][- ]?hoover barostat|mttk|martyna[- ]tobias[- ]klein", "nose-hoover"),
]
MINIMIZERS: list[tuple[str, str]] = [
    (r"conjugate[- ]gradients?|\bcg\b", "cg"),
    (r"steepest[- ]descents?|\bsd\b", "sd"),
    (r"\bfire\b", "fire"),
    (r"\bhftn\b|hessian[- ]free", "hftn"),
    (r"\bquickmin\b", "quickmin"),
]
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "single": 1, "binary": 2, "ternary": 3}
EQUILIBRATION = r"eq\w{1,6}brat\w*|relaxation|pre-?equilibrat\w*|warm[- ]?up|burn[- ]?in"
PRODUCTION = r"production|sampling|data collection|measurement|averaging|statistics|analysis"


def merge_controls(ctl: SimulationControls, low: str) -> SimulationControls:
    """`ctl` (from the generic rules) completed by what the protocol text states."""
    found = read_controls(low)
    update = {k: v for k, v in found.items() if getattr(ctl, k) in (None, [])}
    return ctl.model_copy(update=update) if update else ctl


def read_controls(low: str) -> dict[str, Any]:
    """Field name -> value for every SimulationControls field the text states explicitly."""
    low = plain_numbers(low)
    reduced = re.search(REDUCED_CONTEXT, low) is not None
    out: dict[str, Any] = {}
    out.update(_box(low))
    out.update(_dimension(low))
    out.update(_particles(low, reduced))
    out.update(_dynamics(low, reduced))
    out.update(_steps(low, out.get("timestep"), reduced))
    out.update(_averaging(low))
    out.update(_minimizer(low))
    return {k: v for k, v in out.items() if v not in (None, [])}


def complete_conditions(spec: TaskSpec) -> TaskSpec:
    """Fill the state point from what the text states elsewhere; returns the same spec.

    Temperature: the thermostat set point; under a thermostat, the velocity temperature; in a
    described NVE run (no thermostat), the temperature the velocities are drawn at, which starts
    the run but is no target (SimulationControls.holds_temperature). Density and temperature written
    in prose in reduced units ('at a density of 0.8', 'a fixed reduced density (0.8)', 'a
    temperature of 1.2 (in reduced units)') count when the text is in LJ units. Clears what was
    found from `missing`."""
    ctl = spec.controls
    low = plain_numbers(re.sub(r"\s+", " ", spec.request.lower()))
    reduced = re.search(REDUCED_CONTEXT, low) is not None
    if spec.conditions.temperature is None:
        source = ctl.thermostat_temperature or (ctl.velocity_temperature if ctl.holds_temperature or
                                                ctl.ensemble == "nve" else None)
        if source is None and reduced:
            source = prose_temperature(low)
        if source is not None:
            spec.conditions.temperature = source
    if spec.conditions.density is None and spec.conditions.pressure is None and reduced:
        spec.conditions.density = prose_density(low) or lattice_scale_density(low)
    for name in ("temperature", "density"):
        if getattr(spec.conditions, name) is not None and name in spec.missing:
            spec.missing.remove(name)
    return spec


_WHOLE = r"(?!\d|\.\d|e[-+]?\d)"  # the whole number (no backtracking into '1' of '1.4 g/cm3')
# "at a density of 0.8", "reduced number density 0.8442", "a fixed reduced density (0.8)", "density rho = 0.8"
_PROSE_DENSITY = re.compile(r"\b(?:reduced |number |particle |fixed |lj |scaled )*density\s*"
                            r"(?:of|=|:|is|at|equal to|set to)?\s*\(?\s*(?:rho\*?\s*=\s*)?" + NUM + _WHOLE +
                            r"(?!\s*(?:g|kg|mol|atoms? ?/|/ ?(?:a|nm|cm|m)\b|particles? ?/))")
# "a temperature of 1.5 (in reduced units)", "reduced temperature 0.9", "temperature equal to 2"
_PROSE_TEMPERATURE = re.compile(r"\b(?:reduced |fixed |target |lj )*temperature\s*(?:of|=|:|is|at|equal to|set to)?"
                                r"\s*\(?\s*" + NUM + _WHOLE + r"(?!\s*(?:k\b|kelvin|°|deg))")


def prose_density(low: str) -> Quantity | None:
    """A reduced density stated in words (the text is known to be in LJ units)."""
    match = _PROSE_DENSITY.search(low)
    return Quantity(value=float(match.group(1)), unit="reduced") if match else None


# "an fcc lattice with lattice constant 0.65", "a square lattice of spacing 0.9", "lattice fcc 0.8442"
_LATTICE_SCALE = re.compile(
    r"\blattice(?: (?:" + "|".join(p for p, _ in LATTICE_WORDS) + r"))?"
    r"(?:,? (?:with|of|having|whose|at|using))?(?: an?| the| its)?(?: lattice)?"
    r" (?:constant|spacing|parameter|scale(?: factor)?)?\s*(?:of|=|:|is|equal to|set to)?\s*(?:a_?0? ?= ?)?\(?\s*" +
    NUM + _WHOLE +
    r"(?!\s*(?:σ|sigma|\*?\s*σ|a\b|å|nm|angstrom|lattice|x\b|×|\*|by\b|(?:unit |conventional )?cells?\b"
    r"|atoms|particles|sites|points|layers|planes|times|steps|k\b))")


def lattice_scale_density(low: str) -> Quantity | None:
    """The number a lattice is given with, in reduced LJ units: LAMMPS's `lattice style scale`, whose
    scale is the reduced number density in LJ units (LAMMPS lattice command). Descriptions written
    from such inputs call it the lattice constant or spacing; a number with a length unit (sigma) is a
    real edge length and is not read here."""
    match = _LATTICE_SCALE.search(low)
    return Quantity(value=float(match.group(1)), unit="reduced") if match else None


def prose_temperature(low: str) -> Quantity | None:
    """A reduced temperature stated in words that is neither a velocity nor a thermostat
    temperature (those are read by `_temperatures`)."""
    match = _PROSE_TEMPERATURE.search(low)
    return Quantity(value=float(match.group(1)), unit="reduced") if match else None


# ---------------------------------------------------------------------------------------------
# Lattice, box, dimension
# ---------------------------------------------------------------------------------------------


def lattice_word(text: str) -> str | None:
    for pattern, value in LATTICE_WORDS:
        if re.fullmatch(rf"(?:{pattern})", text.strip()):
            return value
    return None


def _box(low: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    words = "|".join(p for p, _ in LATTICE_WORDS)
    match = re.search(rf"\b({words})(?:\s+crystal)?\s+lattice\b", low) or re.search(
        rf"\blattice(?: style| type)?(?: of| =|:)?\s+(?:type\s+)?({words})\b", low)
    if match:
        out["lattice"] = lattice_word(match.group(1))
    times = r"\s*(?:x|×|\*|by)\s*"
    cell_word = r"(?:\s*(?:" + words + r"))?\s*(?:(?:unit |lattice |conventional )?cells?|lattice)\b"
    grid = re.search(rf"\b(\d+){times}(\d+)(?:{times}(\d+))?(?:{cell_word}|(?=[^.;]{{0,40}}\bunit cells?\b))", low)
    if grid:
        out["cells"] = [int(g) for g in grid.groups() if g]
    else:
        per_edge = re.search(
            r"\b(\d+)\s*(?:unit |lattice |conventional )?cells? (?:per|along each|along every|in each|in every|on each)"
            r" (?:side|edge|direction|dimension|axis)", low) or re.search(
            r"\b(?:replicated|repeated)\s+(\d+)\s+times\s+(?:along|in) (?:each|every|all)", low)
        if per_edge:
            out["cells"] = [int(per_edge.group(1))]  # expanded to the dimension by the protocol
        elif out.get("lattice"):
            edge = _LATTICE_UNIT_EDGE.search(low)
            if edge:
                out["cells"] = [int(edge.group(1))]
    return out


# A box edge given as a bare number, in lattice units or "LJ units", once a lattice is stated:
# LAMMPS region extents are in lattice spacings by default (`region box block 0 20 0 20 0 20`),
# so "a cubic box of 20 (LJ unit)" on an fcc lattice is 20 unit cells per edge (32,000 atoms),
# not 20 sigma. An edge with a length unit (sigma, Å, nm) is absolute and not read here.
_LATTICE_UNIT_EDGE = re.compile(
    r"\b(?:cubic |cube-shaped |square |simulation |periodic )*(?:box|cube|cell|domain|region)"
    r"(?: with (?:an? )?(?:edge|side)(?: length)?| of (?:edge|side)(?: length)?| of length| of size| of"
    r"|,?(?: which| that)? (?:spans|spanning|extends|extending|measures|measuring)(?: over)?)?"
    r"\s*(?:=|:)?\s*(\d+)(?!\.\d|\s*(?:x|×|\*|by)\s*\d)"
    r"\s*(?:\(?\s*(?:in\s+)?(?:lj|reduced|lattice)[ -]?(?:units?|spacings?|constants?)\s*\)?"
    r"|(?=\s*(?:[,.;]|and\b|on\b|with\b|in each\b|along\b|per\b|$)))")


def _dimension(low: str) -> dict[str, Any]:
    if re.search(r"\btwo[- ]dimension|\b2-?d\b|\bin two dimensions\b|\bdimension\s*(?:=\s*)?2\b|\bmonolayer\b", low):
        return {"dimension": 2}
    if re.search(r"\bthree[- ]dimension|\b3-?d\b|\bin three dimensions\b|\bdimension\s*(?:=\s*)?3\b", low):
        return {"dimension": 3}
    return {}


# ---------------------------------------------------------------------------------------------
# Particles: number, masses, types and mixing
# ---------------------------------------------------------------------------------------------


def _particles(low: str, reduced: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    n = re.search(r"\bn\s*=\s*(\d+)\b(?!\s*(?:steps|k\b))", low) or re.search(
        r"\b(?:number of (?:atoms|particles)|particle number)(?: is| of| =|:)?\s*(\d+)\b", low)
    if n:
        out["n_atoms"] = int(n.group(1))
    mass_unit = r"\s*(g/mol|amu|da\b|u\b|atomic mass units)?"
    values: list[tuple[float, str | None]] = []
    listed = re.search(r"\bmasses\s*(?:of|=|:|are)?\s*(" + NUM + r"(?:\s*(?:,|and|, and)\s*" + NUM + r")+)" + mass_unit,
                       low)
    if listed:
        values = [(float(v), listed.group(4)) for v in re.findall(NUM, listed.group(1))]
    else:
        typed = re.findall(r"\bm_?([1-9ab])\s*=\s*" + NUM + mass_unit, low)
        if typed:
            values = [(float(v), unit or None) for _, v, unit in typed]
        else:
            single = re.search(r"\b(?:particle |atomic |atom )?mass(?: (?:of|for|to) (?:each|every|all)(?: the)? "
                               r"(?:particles?|atoms?))?\s*(?:=|of|:|is)\s*"
                               + NUM + mass_unit, low) or re.search(
                r"\bmass\s+" + NUM + r"\s*(g/mol|amu|da\b|u\b)", low)
            if single:
                values = [(float(single.group(1)), single.group(2) or None)]
    if values:
        default_unit = "reduced" if reduced else "g/mol"
        out["masses"] = [Quantity(value=v, unit="g/mol" if u in ("amu", "da", "u", "atomic mass units")
                                  else (u or default_unit)) for v, u in values]
    types = re.search(r"\b(\d+|one|two|three|four|five|single)[- ](?:atom |particle )?(?:types|species|components)\b",
                      low) or re.search(r"\b(binary|ternary) (?:lennard[- ]jones |lj )?(?:mixture|alloy|system)\b", low)
    if types:
        word = types.group(1)
        out["atom_types"] = int(word) if word.isdigit() else NUMBER_WORDS[word]
    counts = re.findall(r"\b(\d+)\s+(?:particles |atoms )?(?:of )?(?:type|species)\s+(?:[1-9ab])\b", low) or re.findall(
        r"\b(\d+)\s+([ab])\b(?=[^.]*\b(?:particles|atoms)\b)", low)
    if len(counts) >= 2:
        out["type_counts"] = [int(c[0] if isinstance(c, tuple) else c) for c in counts]
        out.setdefault("atom_types", len(counts))
    cutoff = re.search(r"\b(?:cut(?:-| )?off(?: radius| distance)?|cut|truncated|r_?c|r_?cut)\s*(?:of|at|=|:|is)?\s*"
                       + NUM + r"\s*(sigma|angstrom|a\b|nm)?", low)
    if cutoff:
        unit = cutoff.group(2) or ("sigma" if reduced else None)
        if unit:
            out["pair_cutoff"] = Quantity(value=float(cutoff.group(1)), unit="angstrom" if unit == "a" else unit)
    if re.search(r"geometric (?:mean |mixing|combination)|mixing rule[^.]{0,20}geometric", low):
        out["mixing_rule"] = "geometric"
    elif re.search(r"lorentz[- ]berthelot|arithmetic (?:mean |mixing|combination)|"
                   r"mixing rule[^.]{0,20}arithmetic", low):
        out["mixing_rule"] = "arithmetic"
    elif re.search(r"sixth[- ]?power", low):
        out["mixing_rule"] = "sixthpower"
    return out


# ---------------------------------------------------------------------------------------------
# Dynamics: integrator, ensemble, thermostat and barostat, velocities, timestep
# ---------------------------------------------------------------------------------------------


def _first(pairs: list[tuple[str, str]], low: str) -> str | None:
    for pattern, value in pairs:
        if re.search(pattern, low):
            return value
    return None


def _temperature_unit(unit: str | None, reduced: bool) -> str:
    if unit in ("k", "kelvin"):
        return "K"
    if unit in ("°c", "degc", "celsius"):
        return "degC"
    return "reduced" if reduced else "K"


def _time(value: float, unit: str | None, reduced: bool) -> Quantity:
    """A time as written: tau/'reduced', fs, ps, ns, or a number of steps."""
    unit = (unit or "").strip()
    if unit in ("timesteps", "time steps", "steps", "dt"):
        return Quantity(value=value, unit="steps")
    if unit in ("tau", "time units", "reduced time units", "lj time units"):
        return Quantity(value=value, unit="reduced")
    if unit in ("fs", "ps", "ns"):
        return Quantity(value=value, unit=unit)
    # no unit: the engine's time unit (tau in reduced units, ps in LAMMPS metal units)
    return Quantity(value=value, unit="reduced" if reduced else "ps")


_T_VALUE = re.compile(r"(?:\bt(?:\*|_?target|_?0|_?set)?|\btemperatures?|\bset[- ]?point)\s*(?:=|of|:|is|to|at)?\s*"
                      r"(?:an? (?:reduced |target )?value of\s*)?"
                      r"(?:(?:about|approximately|around|roughly|nearly|~|≈)\s*)?" + NUM
                      + r"\s*(k\b|kelvin\b|°c|degc)?")
_T_BARE = re.compile(r"\b(?:at|to)\s+(?:(?:about|approximately|around|roughly|nearly|~|≈)\s*)?" + NUM
                     + r"\s*(k\b|kelvin\b)")
_T_REDUCED_AT = re.compile(r"(?:thermostat|heat bath|\bnvt\b)[^.;,()]{0,30}?\b(?:at|to)\s+" + NUM
                           + r"(?!\d|\.\d)(?!\s*(?:k\b|kelvin|°|deg|bar|atm|tau|fs|ps|steps?\b|timesteps?\b))")
_VELOCITY = r"velocit\w*+(?![- ]verlet)(?![- ]rescal)|initial (?:kinetic|velocit|temperature)|maxwell[- ]boltzmann"
_THERMOSTAT = (r"thermostat|heat bath|thermal reservoir|\bnvt\b|nos[eé][- ]?hoover|langevin|berendsen|bussi|csvr|"
               r"canonical|constant[- ]temperature|isothermal|\brescal\w*")


def _temperatures(low: str, reduced: bool) -> dict[str, Quantity]:
    """Thermostat and initial-velocity temperatures: each number goes with the nearest keyword
    before it in the same sentence (or, failing that, after it)."""
    out: dict[str, Quantity] = {}
    for sentence in re.split(r"(?<=[.;])\s+", low):
        hits = [(m.start(), m.group(1), m.group(2)) for m in _T_VALUE.finditer(sentence)]
        hits += [(m.start(), m.group(1), m.group(2)) for m in _T_BARE.finditer(sentence)]
        if reduced:  # "a Langevin thermostat at 1.1": in reduced units a set point needs no unit
            hits += [(m.start(1), m.group(1), None) for m in _T_REDUCED_AT.finditer(sentence)]
        for start, value, unit in sorted(hits):
            kind = _nearest_kind(sentence, start)
            if kind and kind not in out:
                out[kind] = Quantity(value=float(value), unit=_temperature_unit(unit, reduced))
    return out


def _nearest_kind(sentence: str, at: int) -> str | None:
    kinds = {"velocity_temperature": _VELOCITY, "thermostat_temperature": _THERMOSTAT}
    before = {k: max((m.end() for m in re.finditer(p, sentence[:at])), default=-1) for k, p in kinds.items()}
    if max(before.values()) >= 0:
        return max(before, key=lambda k: before[k])
    after = {k: min((m.start() for m in re.finditer(p, sentence[at:])), default=10**9) for k, p in kinds.items()}
    best = min(after, key=lambda k: after[k])
    return best if after[best] < 10**9 else None


_ROLE = r"(?:the )?(thermostat|barostat|temperature(?: coupling)?|pressure(?: coupling)?)"
_ROLE_AFTER = r"\s*(?:" + TIME_UNIT + r")?\s*(?:\(\s*(?:for )?" + _ROLE + r"\s*\)|for " + _ROLE + ")"
_PAIRED_DAMPING = re.compile(r"\b(?:damping|relaxation|coupling)(?: times?| constants?| parameters?| factors?)?"
                             r"(?: of| =|:| are| were)?\s*" + NUM + _ROLE_AFTER + r",? and (?:of )?" + NUM
                             + _ROLE_AFTER)


def _paired_damping(low: str) -> list[tuple[str, float, str | None]]:
    """'damping parameters of 100 fs (thermostat) and 1000 fs (barostat)', 'relaxation times of 0.1 ps for the
    barostat and 0.05 ps for the thermostat': two numbers, each followed by the coupling it belongs to (the words
    before the numbers do not say which is which). Returns (key, value, unit) pairs; a unit stated once, after
    the second number or after its coupling, holds for both."""
    out = []
    for m in _PAIRED_DAMPING.finditer(low):
        first = (m.group(1), m.group(2), m.group(3) or m.group(4))
        second = (m.group(5), m.group(6), m.group(7) or m.group(8))
        trailing = re.match(r"\s*(fs|ps|ns)\b", low[m.end():])  # '50 (thermostat) and 500 (barostat) fs'
        shared = second[1] or (trailing.group(1) if trailing else None)
        for value, unit, role in (first, second):
            key = "barostat_damping" if role.startswith(("barostat", "pressure")) else "thermostat_damping"
            out.append((key, float(value), unit or shared))
    return out


def read_dynamics(low: str, reduced: bool) -> dict[str, Any]:
    """Integrator, ensemble, thermostat/barostat with set points and damping, velocity temperature,
    timestep and seed that a (normalised, lower-case) text states; also used sentence by sentence
    by simagent.described.reading."""
    return _dynamics(plain_numbers(low), reduced)


def _dynamics(low: str, reduced: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if re.search(r"velocity[- ]verlet|\bverlet\b", low):
        out["integrator"] = "verlet"
    elif re.search(r"\br-?respa\b", low):
        out["integrator"] = "respa"
    elif re.search(r"brownian dynamics", low):
        out["integrator"] = "brownian"
    stated = text_ensemble(low)
    if stated is not None and stated.ensemble != "nph":
        out["ensemble"] = stated.ensemble
    out["thermostat"] = _first(THERMOSTATS, low)
    out["barostat"] = _first(BAROSTATS, low)
    out.update(_temperatures(low, reduced))
    damping = re.compile(r"\b(?:damping(?: time| constant| parameter| factor)?|relaxation time|"
                         r"coupling (?:time|constant)|"
                         r"time constant|[tp]damp|tau_?[tp])\s*(?:of|=|:|is)?\s*" + NUM + r"\s*(?:" + TIME_UNIT + ")?")
    baro_words = r"barostat|pdamp|tau_?p\b|pressure (?:coupling|damping|relaxation)|parrinello"
    thermo_words = r"thermostat|tdamp|tau_?t\b|temperature (?:coupling|damping)|nos[eé]|langevin|berendsen|\bnvt\b"
    for key, value, unit in _paired_damping(low):  # each number followed by the coupling it belongs to
        out.setdefault(key, _time(value, unit, reduced))
    for match in damping.finditer(low):
        # the nearest thermostat or barostat word before the number, in the same sentence
        start = max((m.end() for m in re.finditer(r"[.;!?]\s", low[:match.start()])), default=0)
        before = low[start:match.start() + 12]
        baro = max((m.end() for m in re.finditer(baro_words, before)), default=-1)
        thermo = max((m.end() for m in re.finditer(thermo_words, before)), default=-1)
        key = "barostat_damping" if baro > thermo else "thermostat_damping"
        out.setdefault(key, _time(float(match.group(1)), match.group(2), reduced))
    dt = re.search(r"\b(?:dt|delta ?t|time[- ]?step(?: size)?|integration step)\s*(?:of|=|:|is|(?:should|must|will) be|"
                   r"(?:is |was )?set to)?\s*" + NUM +
                   r"\s*(?:(fs|ps|tau|reduced|lj)\b)?", low)
    if dt:
        unit = dt.group(2)
        out["timestep"] = Quantity(value=float(dt.group(1)),
                                   unit="reduced" if unit in (None, "tau", "lj", "reduced") else unit)
    seed = re.search(r"\b(?:random (?:number )?seed|seed)\s*(?:of|=|:|is)?\s*(\d+)", low)
    if seed:
        out["seed"] = int(seed.group(1))
    return out


# ---------------------------------------------------------------------------------------------
# Step counts and averaging
# ---------------------------------------------------------------------------------------------


def _count(text: str) -> int:
    return int(round(float(text)))


def _phase_length(low: str, phase: str) -> tuple[int | None, Quantity | None]:
    """Steps (or a time) of a run phase: '5000 steps of equilibration', 'equilibrate for 5000
    steps', '10000 production steps', 'a production run of 50 tau'."""
    steps = [
        rf"\b{COUNT}[- ]{STEP_WORD}(?: of| for)?(?: nvt| npt| nve| md)? (?:{phase})",
        rf"\b{COUNT}(?: md)? (?:{phase})(?: run)? {STEP_WORD}",
        rf"\b(?:{phase})(?: run| period| phase| stage| segment)?(?: (?:should|must|will|shall|is|was) be"
        rf"(?: carried out| performed| run| done)?)?(?: in (?:the |an? )?\w+ ensemble)?"
        rf"(?: of| for| over| lasting| with|:|=)?\s*{COUNT}"
        rf"(?: more| additional)?[- ]{STEP_WORD}",
        rf"\b{COUNT}[- ]{STEP_WORD}(?: long)? (?:run )?(?:for|of|in) (?:the )?(?:{phase})",
    ]
    for pattern in steps:
        match = re.search(pattern, low)
        if match:
            return _count(match.group(1)), None
    time = re.search(rf"\b(?:{phase})(?: run| period| phase)?(?: of| for| over| lasting)?\s*{NUM}\s*"
                     r"(fs|ps|ns|tau|time units|reduced time units|lj time units)\b", low)
    if time:
        return None, _time(float(time.group(1)), time.group(2), True)
    return None, None


def _steps_from_time(time: Quantity, timestep: Quantity | None) -> int | None:
    if timestep is None:
        return None
    seconds = {"fs": 1e-15, "ps": 1e-12, "ns": 1e-9}
    if time.unit == "reduced" and timestep.unit == "reduced":
        return int(round(time.value / timestep.value))
    if time.unit in seconds and timestep.unit in seconds:
        return int(round(time.value * seconds[time.unit] / (timestep.value * seconds[timestep.unit])))
    return None


# a clause about trajectory frames alone ('positions are dumped every 30 steps'), not thermodynamic output
_TRAJECTORY_ONLY = re.compile(r"^(?!.*(?:thermo(?!stat)|energ|temperature|pressure|print)).*(?:dump|trajector|snapshot|"
                              r"frames?\b|coordinates|positions)")


_CLAUSE_BREAK = re.compile(r"[;,]|\.(?!\d)|\b(?:and|while|whereas)\b")


def _clause(low: str, start: int, end: int) -> str:
    """The part of its sentence (between '.', ';' or ',') that holds low[start:end]."""
    lefts = [m.end() for m in _CLAUSE_BREAK.finditer(low, 0, start)]
    right = _CLAUSE_BREAK.search(low, end)
    return low[lefts[-1] if lefts else 0:right.start() if right else len(low)]


def _steps(low: str, timestep: Quantity | None, reduced: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, phase in (("equilibration_steps", EQUILIBRATION), ("production_steps", PRODUCTION)):
        steps, time = _phase_length(low, phase)
        if steps is None and time is not None:
            steps = _steps_from_time(time, timestep)
        if steps is not None:
            out[key] = steps
    if "production_steps" not in out:
        # "5000 steps of equilibration followed by 10000 steps"
        after = re.search(rf"(?:{EQUILIBRATION})[^.;]*?\b(?:followed by|then|and then|after which|before)\s+"
                          rf"(?:a |an |another |further )?{COUNT}[- ]{STEP_WORD}", low)
        if after and "equilibration_steps" in out:
            out["production_steps"] = _count(after.group(1))
    if "production_steps" not in out and "equilibration_steps" not in out:
        # one run and nothing said about equilibration: the whole run is what is analysed
        run = re.search(rf"\b(?:run|integrate|simulate|propagate|evolve)\w*(?: the system| it)?(?: for| over)?"
                        rf"(?: a total of)?\s+{COUNT}[- ]{STEP_WORD}", low) or re.search(
            rf"\bfor (?:a total of )?{COUNT}[- ]{STEP_WORD}\b", low) or re.search(
            rf"\b{COUNT}[- ]{STEP_WORD}(?: long)? (?:(?:nve|nvt|npt|nph) )?(?:md )?(?:run|simulation|trajectory)\b",
            low)
        if run:
            out["production_steps"] = _count(run.group(1))
            out["equilibration_steps"] = 0
    about_output = []  # intervals near output words ('the neighbour list is rebuilt every 10 steps' is not)
    for every in re.finditer(rf"\b(?:every|each)\s+{COUNT}\s*{STEP_WORD}", low):
        if re.search(r"thermo(?!stat)|output|print|sampl|record|write|averag|dump|log", low[max(0, every.start() - 60):
                                                                                   every.end() + 30]):
            about_output.append(every)
    if about_output:  # the first not about trajectory frames, which a text gives apart from the thermo output
        thermo = [e for e in about_output if not _TRAJECTORY_ONLY.search(_clause(low, e.start(), e.end()))]
        out["thermo_every"] = _count((thermo or about_output)[0].group(1))
    thermo = re.search(r"\bthermo(?: output| interval)?\s*(?:=|:)?\s*(\d+)\b", low)
    if thermo and "thermo_every" not in out:
        out["thermo_every"] = int(thermo.group(1))
    return out


# "N steps" that set no run length: intervals, damping, averaging windows, counts at a step
_NOT_A_RUN = re.compile(r"\b(?:every|each|damp\w*|tdamp|pdamp|last|final|first|interval|frequency|period|"
                        r"window|correlation|sample|up to|within)\b[^.;,]{0,12}$")


def unplaced_run_lengths(request: str, ctl: SimulationControls) -> list[int]:
    """Run lengths the text states ('50000 steps') that are neither the equilibration nor the
    production nor their sum: a stage (a melt, a second equilibration) the controls do not hold.
    A described run read without it would not be the run described."""
    low = plain_numbers(re.sub(r"\s+", " ", request.lower()))
    placed = {ctl.equilibration_steps, ctl.production_steps}
    if ctl.equilibration_steps is not None and ctl.production_steps is not None:
        placed.add(ctl.equilibration_steps + ctl.production_steps)
    found = []
    for match in re.finditer(rf"\b{COUNT}[- ]{STEP_WORD}\b", low):
        if _NOT_A_RUN.search(low[max(0, match.start() - 40):match.start()]):
            continue
        steps = _count(match.group(1))
        if steps not in placed and steps not in found:
            found.append(steps)
    return found


def _averaging(low: str) -> dict[str, Any]:
    last = re.search(rf"\b(?:averag\w*|mean)[^.;]{{0,40}}?\blast\s+{COUNT}\s*{STEP_WORD}", low)
    if last:
        return {"average_window": f"last {_count(last.group(1))} steps"}
    if re.search(r"\b(?:averag\w*|mean\w*|statistics|sampl\w*)[^.;]{0,50}?\b(?:production|after (?:the )?equilibration)"
                 r"|\b(?:discard\w*|exclud\w*|ignor\w*|drop\w*|skip\w*)[^.;]{0,30}?\bequilibration\b"
                 r"|\bproduction (?:run|phase|stage)?\s*only\b", low):
        return {"average_window": "production"}
    if re.search(r"\b(?:averag\w*|mean)[^.;]{0,40}?\b(?:entire|whole|full|complete) (?:run|simulation|trajectory)"
                 r"|\b(?:averag\w*|mean)[^.;]{0,40}?\ball (?:time ?)?steps\b", low):
        return {"average_window": "all"}
    return {}


# ---------------------------------------------------------------------------------------------
# Energy minimisation
# ---------------------------------------------------------------------------------------------


def _minimizer(low: str) -> dict[str, Any]:
    if not re.search(r"minimi[sz]|relax(?:ation|ed)? (?:of )?(?:the )?(?:structure|atoms|positions|geometry)|"
                     r"\betol\b|\bftol\b", low):
        return {}
    out: dict[str, Any] = {"minimizer": _first(MINIMIZERS, low)}
    etol = re.search(r"\b(?:etol|energy (?:convergence )?(?:tolerance|criterion))\s*(?:of|=|:|is)?\s*" + NUM, low)
    ftol = re.search(r"\b(?:ftol|force (?:convergence )?(?:tolerance|criterion))\s*(?:of|=|:|is)?\s*" + NUM, low)
    if etol:
        out["etol"] = abs(float(etol.group(1)))
    if ftol:
        out["ftol"] = abs(float(ftol.group(1)))
    maxiter = re.search(r"\b(?:maxiter|max(?:imum)?(?: number of)? iterations?)\s*(?:of|=|:|is)?\s*(\d+)", low) or \
        re.search(r"\b(\d+)\s+(?:minimi[sz]ation )?iterations\b", low)
    maxeval = re.search(r"\b(?:maxeval|max(?:imum)?(?: number of)? (?:force )?evaluations?)\s*(?:of|=|:|is)?\s*(\d+)",
                        low) or re.search(r"\b(\d+)\s+(?:force )?evaluations\b", low)
    if maxiter:
        out["max_iterations"] = int(maxiter.group(1))
    if maxeval:
        out["max_evaluations"] = int(maxeval.group(1))
    return out


def expected_atoms(lattice: str | None, cells: list[int], dimension: int | None) -> int | None:
    """Atoms in a box of `cells` unit cells of `lattice` (LAMMPS basis: fcc 4, bcc 2, sc 1, sq 1,
    hex 2), or None when either is unknown."""
    basis = {"fcc": 4, "bcc": 2, "sc": 1, "sq": 1, "sq2": 2, "hex": 2}
    if lattice not in basis or not cells:
        return None
    dims = dimension or (2 if lattice in ("sq", "sq2", "hex") else 3)
    counts = cells * dims if len(cells) == 1 else cells[:dims]
    return basis[lattice] * math.prod(counts)
