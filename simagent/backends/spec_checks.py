"""Code-side checks of a TaskSpec that did not come from the expert rules (an LLM's reading).

An LLM answer that fits the pydantic schema can still be wrong in ways code can see: a unit of
the wrong dimension, a temperature below absolute zero, an element that does not exist, or a
value that appears nowhere in the request (a small model "helpfully" fills in 1.0 g/cm3 for
water). `validate_spec` lists such problems as short sentences a model can act on when re-asked;
an empty list means the spec may be used. `required_gaps` recomputes, in code, the critical
information a spec lacks, so that an LLM's (often noisy) `missing` list never decides whether
the user is asked.
"""

from __future__ import annotations

import re

from simagent.backends.expert import vocabulary as vocab
from simagent.models import PotentialSpec, Quantity, SimulationControls, SystemSpec, TaskSpec
from simagent.units import REDUCED, dimension, normalize_unit, to_canonical

# Plausibility ranges in canonical units (K, bar, g/cm^3, angstrom). Wide on purpose: they catch
# misread units and sign slips, not unusual science (shock pressures of a few TPa, hot plasmas).
TEMPERATURE_K = (0.0, 1.0e5)  # exclusive lower bound: absolute zero is not a simulation state
PRESSURE_BAR = (-1.0e5, 1.0e8)  # negative pressures are legitimate (stretched liquids, LJ states)
DENSITY_G_CM3 = (0.0, 30.0)  # exclusive lower bound; osmium is 22.6 g/cm^3
PROBE_RADIUS_A = (0.0, 10.0)
REDUCED_TEMPERATURE = (0.0, 100.0)
REDUCED_DENSITY = (0.0, 3.0)  # close packing of LJ spheres is rho* ~ 1.4
ROOM_TEMPERATURE_VALUES = {(298.15, "K"), (298.0, "K"), (300.0, "K"), (293.15, "K"), (293.0, "K"),
                           (25.0, "degC"), (20.0, "degC")}

NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|(?<![\w.])[-+]?\.\d+")
ATOMIC_KINDS = ("crystal", "atomic_fluid")  # kinds whose elements must be named in the request
PORE_GEOMETRY = {"largest_cavity_diameter", "pore_limiting_diameter", "largest_free_sphere",
                 "accessible_surface_area", "non_accessible_surface_area", "accessible_volume",
                 "void_fraction", "probe_occupiable_volume", "pore_size_distribution", "channel_dimensionality"}
LATTICE_PATTERNS = vocab.compile_map(vocab.LATTICES)
# Words that state a potential family (typo-tolerant stems); a family is knowledge about a named
# potential only when the request names the family itself.
FAMILY_WORDS = {
    "eam": r"\beam|embedded", "eam/alloy": r"\beam|embedded|setfl", "eam/fs": r"\beam|finnis",
    "tersoff": r"\bters", "sw": r"stilling|weber|\bsw\b", "meam": r"meam|modified embedded",
    "lj": r"lennard|lenard|\blj\b|12-6|epsilon|sigma",
}
ADSORPTION = {"uptake", "isotherm", "henry_coefficient", "heat_of_adsorption", "selectivity", "interaction_energy"}


LJ_WORDS = r"lennard|lenard|\blj\b|reduced|\*|12-6"
GENERIC_MATERIAL_WORDS = {"mof", "mofs", "framework", "frameworks", "metal", "organic", "zeolite", "porous",
                          "material", "liquid", "fluid", "the", "a", "an", "model", "water", "system"}


def system_mentioned(system: SystemSpec, text: str) -> bool:
    """The request names the system: its elements (crystals, atomic fluids), Lennard-Jones words or
    reduced units (LJ fluids), or a word of its name (molecular fluids, frameworks, polymers)."""
    low = text.lower()
    if system.kind in ATOMIC_KINDS:
        return True  # checked element by element
    if system.kind == "lj_fluid":
        return re.search(LJ_WORDS, low) is not None
    squashed = re.sub(r"[^a-z0-9]", "", low)
    words = re.findall(r"[a-z0-9]+", " ".join(filter(None, [system.name, system.structure, system.molecule])).lower())
    if system.kind == "molecular_fluid" and re.search(r"\bwater\b|\bh2o\b|\btip\d|\bspc", low):
        return True
    return any(len(w) >= 3 and (w in squashed) for w in words if w not in GENERIC_MATERIAL_WORDS) or (
        system.kind == "framework" and re.search(r"\bmofs?\b|framework|zeolite", low) is not None)


def request_numbers(text: str) -> list[float]:
    """Every number written in the request ('1,000' counts as 1000)."""
    text = re.sub(r"(\d),(\d{3})\b", r"\1\2", text)
    values = []
    for token in NUMBER.findall(text):
        try:
            values.append(float(token))
        except ValueError:
            continue
    return values


def _written(value: float, numbers: list[float]) -> bool:
    return any(abs(value - n) <= 1e-9 * max(1.0, abs(n)) or abs(abs(value) - abs(n)) <= 1e-9 for n in numbers)


def element_mentioned(symbol: str, text: str) -> bool:
    """The element is named in the text: its symbol as a word, its name, or a near-miss spelling
    of its name ('nikel', 'alumium'); typos are what the LLM route is for."""
    if re.search(rf"(?<![A-Za-z]){re.escape(symbol)}(?![a-z])", text):
        return True
    names = [name for name, sym in vocab.ELEMENT_NAMES.items() if sym == symbol]
    words = re.findall(r"[a-z]+", text.lower())
    for name in names:
        if name in text.lower():
            return True
        allowed = 1 if len(name) <= 5 else 2  # one slip in 'iorn', two in 'alumnum'
        if any(len(w) >= 4 and abs(len(w) - len(name)) <= allowed and edit_distance(w, name) <= allowed
               for w in words):
            return True
    return False


# Words the expert reader acts on, for spotting misspellings of them (suspected_typos).
TYPO_TARGETS = {name for name in vocab.ELEMENT_NAMES if len(name) >= 4} | {
    "lattice", "constant", "parameter", "cohesive", "energy", "potential", "kinetic", "pressure",
    "temperature", "density", "volume", "radial", "distribution", "function", "coordination",
    "diffusion", "diffusivity", "coefficient", "viscosity", "conductivity", "elastic", "modulus",
    "vacancy", "surface", "liquid", "crystal", "diamond", "lennard", "jones", "tersoff", "stillinger",
    "weber", "embedded", "foiles", "mishin", "mendelev", "adsorption", "uptake", "isotherm", "water",
}
# Ordinary words one letter away from a target ('read' ~ lead, 'later' ~ water).
COMMON_WORDS = {"read", "good", "hold", "cold", "bold", "gold", "later", "eater", "wafer", "since",
                "icon", "noon", "lumber", "junction", "carton", "hopper", "sliver", "bound", "round",
                "found", "sound", "pound", "wound", "tension", "mention", "seen", "been", "then",
                "than", "energies", "volumes", "pressures", "densities", "temperatures", "constants",
                "liquids", "crystals", "potentials", "functions", "lattices", "parameters", "fraction",
                "fractions", "friction", "action", "section", "reaction", "relation", "potassium"}


def suspected_typos(text: str) -> list[str]:
    """Words that look like misspellings of a word the expert reader acts on: one slip away
    (two for words of 8+ letters) from a target and not an ordinary word. Used to lower the
    expert's confidence, so the hybrid asks the LLM to read such requests too."""
    found = []
    for word in dict.fromkeys(re.findall(r"[a-z]+", text.lower())):
        if len(word) < 4 or word in TYPO_TARGETS or word in COMMON_WORDS:
            continue
        allowed = 2 if len(word) >= 8 else 1
        if any(abs(len(word) - len(t)) <= allowed and edit_distance(word, t) <= allowed for t in TYPO_TARGETS):
            found.append(word)
    return found


def edit_distance(a: str, b: str) -> int:
    """Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two
    neighbouring letters each count 1 (the usual typing slips)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[-1]


def _check_quantity(label: str, q: Quantity, expected: str, bounds: tuple[float, float],
                    reduced_bounds: tuple[float, float] | None, numbers: list[float],
                    room_temperature: bool, static: bool = False) -> list[str]:
    problems: list[str] = []
    unit = normalize_unit(q.unit)
    if unit == REDUCED:
        if reduced_bounds is None:
            return [f"{label}: a reduced (Lennard-Jones) unit is not possible for this quantity"]
        low, high = reduced_bounds
        if not low < q.value <= high:
            problems.append(f"{label}: reduced value {q.value:g} is outside ({low:g}, {high:g}]")
    elif dimension(unit) != expected:
        return [f"{label}: '{q.unit}' is not a unit of {expected}; copy the unit as written"]
    else:
        canonical = to_canonical(Quantity(value=q.value, unit=unit), expected)
        low, high = bounds
        if label == "temperature" and static and canonical.value == 0.0:
            pass  # "0 K" of a crystal names a static (energy-minimisation) calculation
        elif not low < canonical.value <= high:
            problems.append(f"{label}: {q.value:g} {q.unit} is outside the physical range "
                            f"({low:g}, {high:g}] {canonical.unit}")
    written = _written(q.value, numbers) or (
        label == "temperature" and room_temperature and (q.value, unit) in ROOM_TEMPERATURE_VALUES)
    if not written:
        problems.append(f"{label}: the value {q.value:g} does not appear in the request; "
                        "copy numbers as written or use null")
    return problems


def validate_spec(spec: TaskSpec) -> list[str]:
    """Problems that make a TaskSpec unusable (empty: it passes). See the module docstring."""
    problems: list[str] = []
    text = spec.request
    low = text.lower()
    numbers = request_numbers(text)
    room = re.search(r"\broom temperature\b|\bambient\b", low) is not None
    system = spec.system
    reduced_ok = system is not None and system.kind == "lj_fluid"

    if system is not None:
        for symbol in system.elements:
            if symbol not in vocab.SYMBOLS:
                problems.append(f"elements: '{symbol}' is not a chemical symbol")
            elif system.kind in ATOMIC_KINDS and not element_mentioned(symbol, text):
                problems.append(f"elements: '{symbol}' is not named in the request")
        if not system_mentioned(system, text):
            problems.append(f"system: '{system.name}' ({system.kind}) is not named in the request; "
                            "use null when the request names no material")
        fluid_words = re.search(r"\bliquid|\bfluid|\bgas\b|\bmelt|\bmolten|\bvapou?r", low) is not None
        if system.kind == "crystal" and fluid_words and not re.search(r"\bsolid|\bcrystal", low):
            problems.append("system: the request describes a liquid or gas, not a crystal")
        if system.kind == "atomic_fluid" and not (
                fluid_words or re.search(LJ_WORDS, low) or spec.conditions.density or spec.conditions.temperature):
            problems.append("system: nothing in the request says it is a fluid; an element with no "
                            "liquid, gas or fluid conditions is a crystal")
        if system.kind == "crystal" and not system.elements:
            problems.append("system: a crystal needs its chemical elements")
        if system.kind == "atomic_fluid" and len(system.elements) != 1:
            problems.append("system: an atomic fluid has exactly one element (e.g. ['Ar'])")
        if system.kind == "lj_fluid" and system.elements:
            problems.append("system: a reduced-unit Lennard-Jones fluid has no elements; "
                            "a real liquid such as argon is an atomic_fluid")
        if system.kind == "lj_fluid" and any(
                q is not None and normalize_unit(q.unit) != REDUCED
                for q in (spec.conditions.temperature, spec.conditions.density)):
            problems.append("system: conditions in real units mean a real substance (e.g. argon is an "
                            "atomic_fluid); a lj_fluid takes reduced values")
        if system.lattice and system.kind != "crystal":
            problems.append(f"system: lattice '{system.lattice}' given for a {system.kind}")
        if system.lattice and not any(value == system.lattice and pattern.search(low)
                                      for pattern, value in LATTICE_PATTERNS):
            problems.append(f"system: lattice '{system.lattice}' is not stated in the request")

    cond = spec.conditions
    checks = [
        ("temperature", cond.temperature, "temperature", TEMPERATURE_K,
         REDUCED_TEMPERATURE if reduced_ok else None),
        ("pressure", cond.pressure, "pressure", PRESSURE_BAR, (-100.0, 100.0) if reduced_ok else None),
        ("density", cond.density, "density", DENSITY_G_CM3, REDUCED_DENSITY if reduced_ok else None),
        ("probe radius", cond.probe_radius, "length", PROBE_RADIUS_A, None),
    ]
    checks += [("pressure", q, "pressure", PRESSURE_BAR, None) for q in cond.pressures]
    checks += [("temperature", q, "temperature", TEMPERATURE_K, None) for q in cond.temperatures]
    for label, quantity, expected, bounds, reduced_bounds in checks:
        if quantity is not None:
            problems += _check_quantity(label, quantity, expected, bounds, reduced_bounds, numbers, room,
                                        static=system is not None and system.kind == "crystal")

    names = [p.name for p in spec.properties]
    if len(set(names)) != len(names):
        problems.append("properties: a property is listed twice")
    for prop in spec.properties:
        if prop.at == "last_step" and not re.search(r"\b(?:last|final)\b", low):
            problems.append(f"properties: '{prop.name}' at the last step, but the request says "
                            "nothing about a last or final step")
        if prop.unit and dimension(prop.unit) is None and prop.unit.strip().lower() not in low:
            problems.append(f"properties: unit '{prop.unit}' for '{prop.name}' is not a known unit")
    return problems


def strip_unstated(spec: TaskSpec) -> list[str]:
    """Remove what an LLM reading says that the request does not state, in place, and say what was
    removed (with the reason). Nothing is kept without its evidence in the request:
    - a condition whose number is not written there (small models write 0 or 1.0 for null);
    - a property the request does not name: each needs words of the request that name it by the
      rules' vocabulary (expert.reader.property_evidence: typo-repaired, not negated, not a
      condition), so "simulate water please" names none and the user is asked;
    - a lattice, a potential family, a potential or force-field name, a potential file, LJ
      parameters, a tail correction or shift, a last-step flag the request does not write;
    - the run controls (ensemble, thermostat, steps, ...): only the rules read those.
    Removing them means "not stated": the gaps check asks the user, or the protocol applies its
    documented default and reports it (defaults_applied). Elements, units and ranges are checked by
    validate_spec."""
    from simagent.backends.expert.reader import property_evidence  # the reader imports this module

    removed: list[str] = []
    text = spec.request
    low = text.lower()
    numbers = request_numbers(text)
    room = re.search(r"\broom temperature\b|\bambient\b", low) is not None
    cond = spec.conditions
    available = list(numbers)  # each written number can be the value of one condition only
    for label in ("temperature", "pressure", "density", "probe_radius"):
        q = getattr(cond, label)
        if q is None:
            continue
        match = next((n for n in available if _written(q.value, [n])), None)
        if match is not None:
            available.remove(match)
            continue
        if label == "temperature" and room and (q.value, normalize_unit(q.unit)) in ROOM_TEMPERATURE_VALUES:
            continue
        setattr(cond, label, None)
        removed.append(f"{label} {q.value:g} {q.unit} (not in the request, or already used)")
    system = spec.system
    if system is not None and system.lattice and not any(
            value == system.lattice and pattern.search(low) for pattern, value in LATTICE_PATTERNS):
        removed.append(f"lattice {system.lattice} (not in the request)")
        system.lattice = None
    unnamed = [p.name for p in spec.properties if property_evidence(p.name, text) is None]
    if unnamed:
        removed.append(f"properties {', '.join(unnamed)} (no words of the request name them)")
        spec.properties = [p for p in spec.properties if p.name not in unnamed]
    if spec.potential is not None:
        removed += _strip_potential(spec, numbers)
    if spec.controls != SimulationControls():
        removed.append("run controls (only the rules read them)")
        spec.controls = SimulationControls()
    if not re.search(r"\b(?:last|final)\b", low):
        for prop in spec.properties:
            if prop.at == "last_step":
                prop.at = "average"
                removed.append(f"last step of {prop.name} (not in the request)")
    return removed


# A potential "name" that only repeats a family or a generic word names no potential.
GENERIC_POTENTIAL_NAMES = {"eam", "meam", "lj", "lennardjones", "embeddedatom", "embeddedatommethod", "eamalloy",
                           "eamfs", "setfl", "potential", "interatomicpotential", "forcefield", "ff", "classical",
                           "default", "standard", "none", "null"}


def named_in_request(name: str, text: str) -> bool:
    """`name` (a potential, force field or file as an LLM wrote it) is written in the request:
    letters and digits alike, case and punctuation aside ('TIP4P/2005' ~ 'tip4p 2005'), or one
    slip away from a word of the request for names of five letters or more ('Mishn')."""
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    if not key:
        return False
    if key in re.sub(r"[^a-z0-9]", "", text.lower()):
        return True
    return len(key) >= 5 and any(abs(len(w) - len(key)) <= 1 and edit_distance(w, key) <= 1
                                 for w in re.findall(r"[a-z0-9]+", text.lower()))


def _strip_potential(spec: TaskSpec, numbers: list[float]) -> list[str]:
    """The potential fields of an LLM reading the request does not state (see strip_unstated)."""
    removed: list[str] = []
    pot, system, text = spec.potential, spec.system, spec.request
    assert pot is not None
    low = text.lower()
    materials = set()
    if system is not None:
        materials = {re.sub(r"[^a-z0-9]", "", w.lower()) for w in
                     [system.name, system.molecule or "", system.structure or "", *system.elements, *system.guests]}
        materials |= {name for name, symbol in vocab.ELEMENT_NAMES.items() if symbol in system.elements}
    if pot.family and not (pot.family == "lj" and system is not None and system.kind == "lj_fluid"):
        author = pot.name_hint is not None and pot.family == "eam" and pot.name_hint.lower() in vocab.EAM_AUTHORS \
            and named_in_request(pot.name_hint, text)
        if not re.search(FAMILY_WORDS[pot.family], low) and not author:
            removed.append(f"potential family {pot.family} (not in the request)")
            pot.family = None
    for field in ("name_hint", "force_field", "file"):
        value = getattr(pot, field)
        if value is None:
            continue
        key = re.sub(r"[^a-z0-9]", "", value.lower())
        if key in GENERIC_POTENTIAL_NAMES or key in materials or key in vocab.ELEMENT_NAMES \
                or value.strip().capitalize() in vocab.SYMBOLS:
            removed.append(f"potential {field.replace('_', ' ')} {value!r} (names no potential)")
            setattr(pot, field, None)
        elif not named_in_request(value, text):
            removed.append(f"potential {field.replace('_', ' ')} {value!r} (not in the request)")
            setattr(pot, field, None)
    for field in ("lj_epsilon", "lj_sigma", "cutoff"):
        q = getattr(pot, field)
        if q is not None and not _written(q.value, numbers):
            removed.append(f"{field.replace('_', ' ')} {q.value:g} {q.unit} (not in the request)")
            setattr(pot, field, None)
    for field, words in (("tail_correction", r"\btail"), ("shifted", r"\bshift")):
        if getattr(pot, field) and not re.search(words, low):
            removed.append(f"{field.replace('_', ' ')} (not in the request)")
            setattr(pot, field, False)
    if pot == PotentialSpec():
        spec.potential = None
    return removed


def units_style_for(spec: TaskSpec) -> str | None:
    """The units style a reading's system implies, by the rules (never an LLM's choice): reduced
    units for an LJ fluid, metal for crystals and atomic fluids, real for an atomistic polymer
    (lj for a bead-spring one named by Lennard-Jones or reduced words), none otherwise (GROMACS,
    RASPA and Zeo++ have no units style)."""
    kind = spec.system.kind if spec.system is not None else None
    if kind == "polymer":
        return "lj" if re.search(LJ_WORDS, spec.request.lower()) else "real"
    return {"lj_fluid": "lj", "crystal": "metal", "atomic_fluid": "metal"}.get(kind or "")


def required_gaps(spec: TaskSpec) -> list[str]:
    """Critical information a spec lacks (the graph asks for these): the same items the expert
    reader and its domain modules report, computed from the spec alone."""
    gaps: list[str] = []
    if not spec.properties:
        gaps.append("property")
    system = spec.system
    if system is None:
        gaps.append("system")
        return gaps
    cond = spec.conditions
    if system.kind in ("lj_fluid", "atomic_fluid"):
        if cond.temperature is None:
            gaps.append("temperature")
        if cond.density is None and cond.pressure is None:
            gaps.append("density")
    elif system.kind == "molecular_fluid":
        if cond.temperature is None:
            gaps.append("temperature")
    elif system.kind == "framework" and not system.structure:
        gaps.append("structure")
    return gaps


def engine_for(spec: TaskSpec) -> str:
    """The engine a spec implies, by the same rules the expert domain modules apply."""
    system = spec.system
    names = {p.name for p in spec.properties}
    if re.search(r"\bgromacs\b|\bgmx\b", spec.request.lower()):
        return "gromacs"  # named by the user (the expert's molecular domain does the same)
    if system is not None and system.kind == "framework":
        return "raspa" if names & ADSORPTION else "zeopp"
    if system is not None and system.kind == "molecular_fluid":
        return "gromacs"
    return "lammps"
