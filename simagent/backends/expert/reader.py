"""The expert backend's request reader: deterministic rules from text to a TaskSpec.

It extracts what is stated, leaves defaults to the protocols (which record them), and lists the
critical gaps in `missing` so the graph asks instead of guessing. Units stay as written; the
planner converts them (simagent.units)."""

from __future__ import annotations

import re

from simagent.backends.expert import domains, method_words
from simagent.backends.expert import vocabulary as vocab
from simagent.backends.expert.ensemble_words import evolution_words, text_ensemble
from simagent.backends.expert.numbers import plain_numbers
from simagent.backends.expert.wording import conditions_text, correct_typos, drop_negated
from simagent.errors import RequestError
from simagent.models import (
    Conditions,
    PotentialSpec,
    PropertyRequest,
    Quantity,
    SimulationControls,
    SystemSpec,
    TaskSpec,
)
from simagent.units import dimension, normalize_unit, to_canonical

NUM = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
TEMP_UNIT = r"(k|kelvin|°c|ºc|degc|celsius|°f|degf)\b"
DENS_UNIT = r"(g/cm\^?3|g/cc|g cm-3|g/ml|kg/m\^?3|kg m-3)"
PRES_UNIT = r"(kbar|mbar|bar|atm|gpa|mpa|kpa|pa|torr|psi)\b"


def normalise(text: str) -> str:
    """Unicode and spelling normalisation shared by all rules (keeps case)."""
    table = {
        "σ": " sigma ", "ε": " epsilon ", "ρ": "rho", "Å": " angstrom ", "–": "-", "—": "-",
        "−": "-", "³": "3", "²": "2", "·": " ", "\u00a0": " ", "k_b": "kB", "k_B": "kB",
    }
    for old, new in table.items():
        text = text.replace(old, new)
    text = plain_numbers(text)  # 1,000 and 1,00,000 -> 1000, 100000; 2 x 10^-4 -> 2e-4
    return re.sub(r"[ \t]+", " ", text).strip()


def read_request(request: str) -> TaskSpec:
    if not request or not request.strip():
        raise RequestError("the request is empty; ask a question such as "
                           "'Cohesive energy of fcc nickel with the Foiles EAM potential'")
    text = normalise(request)
    spec = TaskSpec(request=request)
    # Method and scope words simagent cannot honour: the request is refused or routed (never
    # answered with another method), so the rest of the reading is best effort and asks nothing.
    spec.unsupported = method_words.find(text)
    text = correct_typos(text)
    low = conditions_text(text.lower())
    try:
        _read(text, low, spec)
    except RequestError:
        if not spec.unsupported:
            raise
    spec.unparsed = _unparsed(text)
    if spec.properties:  # 'lattice constant and magnetic moment': the rest is computed, that one is named
        for item in [u for u in spec.unsupported if method_words.property_only(u)]:
            spec.unsupported.remove(item)
            spec.unparsed.append(f"{item.words} (an electronic-structure property no protocol computes)")
    if spec.unsupported:
        spec.missing = []
    spec.confidence = _confidence(spec)
    return spec


def _read(text: str, low: str, spec: TaskSpec) -> None:
    affirmed = drop_negated(low)  # what the request negates is neither asked nor a condition
    spec.properties = _properties(affirmed)
    _answer_unit(affirmed, spec.properties)
    spec.conditions = _conditions(affirmed)
    spec.potential = _potential(low)
    spec.system = _system(text, low, spec)
    spec.controls = _controls(low)
    spec.units_style = _units_style(spec)
    if spec.system is not None and spec.system.kind == "lj_fluid" and spec.potential is None:
        spec.potential = PotentialSpec(family="lj")  # reduced units name the Lennard-Jones model
    domains.refine(text, low, spec)
    from simagent.backends.expert.protocol_text import complete_conditions

    complete_conditions(spec)  # e.g. "thermostat at T = 1.2" gives the temperature
    _check_physical(spec)
    spec.missing = list(dict.fromkeys([*spec.missing, *_missing(spec), *_unread_ensemble(low, spec.controls)]))


# ---------------------------------------------------------------------------------------------


def _properties(low: str) -> list[PropertyRequest]:
    at = "average"
    step = None
    if re.search(r"\b(?:at|of) the (?:last|final) (?:step|frame|timestep)\b|\bfinal (?:value|step)\b", low):
        at = "last_step"
    match = re.search(r"\bat (?:time)?step (\d+)\b", low)
    if match:
        at, step = "step", int(match.group(1))
    found: list[PropertyRequest] = []
    for name, patterns in vocab.PROPERTY_PATTERNS.items():
        for pattern in patterns:
            hits = [m for m in re.finditer(pattern, low) if not _is_condition(low, m.start(), m.end(), name)]
            if hits:
                found.append(PropertyRequest(name=name, at=at, step=step, unit=_requested_unit(low, hits[0].end())))
                break
    names = {p.name for p in found}
    if names & {"melting_point", "glass_transition_temperature"}:  # 'at what temperature does it melt'
        found = [p for p in found if p.name != "temperature"]
        names.discard("temperature")
    # "energy per particle/atom" without a qualifier, in an MD context, means potential energy.
    if not names & {"potential_energy_per_atom", "kinetic_energy_per_atom", "total_energy_per_atom",
                    "cohesive_energy"} and re.search(r"\benergy per (?:particle|atom)\b", low):
        found.append(PropertyRequest(name="potential_energy_per_atom", at=at, step=step))
    return found


def property_evidence(name: str, request: str) -> str | None:
    """The words of the request that name property `name` by the rules' vocabulary (after the
    reader's own typo repair; negated phrases and conditions such as 'at a density of 1.3 g/cc'
    do not count), or None. What another reader (an LLM) proposes is kept only with such words."""
    low = drop_negated(conditions_text(correct_typos(normalise(request)).lower()))
    patterns = [*vocab.PROPERTY_PATTERNS.get(name, []), r"\b" + name.replace("_", r"[ _-]") + r"\b"]
    if name == "potential_energy_per_atom":
        patterns.append(r"\benergy per (?:particle|atom)\b")  # the reader's rule (_properties)
    for pattern in patterns:
        for hit in re.finditer(pattern, low):
            if not _is_condition(low, hit.start(), hit.end(), name):
                return hit.group(0).strip()
    # the property's own name, each word spelt with up to two slips ('lattis konstant'); not a condition
    from simagent.backends.spec_checks import edit_distance

    wanted = [w for w in name.split("_") if w not in ("per", "atom")]
    words = list(re.finditer(r"[a-z0-9']+", low))
    for i in range(len(words) - len(wanted) + 1):
        got = words[i:i + len(wanted)]
        start, end = got[0].start(), got[-1].end()
        if all(edit_distance(g.group(0), w) <= (0 if len(w) <= 3 else 1 if len(w) <= 5 else 2)
               for g, w in zip(got, wanted, strict=True)) and not _is_condition(low, start, end, name):
            return low[start:end]
    return None


def _is_condition(low: str, start: int, end: int, name: str) -> bool:
    """'at a temperature of 300 K', 'density 1.374 g/cm3', '1.3 g/cm3 density', 'at room
    temperature' are conditions, not questions ('density 300K' is not: the number is a temperature)."""
    if name not in ("temperature", "pressure", "density", "volume"):
        return False
    if re.search(vocab.CONDITION_BEFORE, low[max(0, start - 40):end]):
        return True  # 'at room temperature', 'at a density of', 'at constant pressure'
    own = {"temperature": TEMP_UNIT, "pressure": PRES_UNIT, "density": DENS_UNIT}.get(name)
    if own and re.search(NUM + r"\s*" + own + r"\s*$", low[max(0, start - 30):start]):
        return True  # '1.3 g/cm3 density'
    if re.match(vocab.CONDITION_AFTER, low[end:end + 24]) is None:
        return False
    unit = re.match(r"\s*(?:of|=|:|is|at|to)?\s*(?:about\s*)?" + NUM + r"\s*([^\s,;]*)", low[end:end + 40])
    others = [u for n, u in (("temperature", TEMP_UNIT), ("pressure", PRES_UNIT), ("density", DENS_UNIT)) if n != name]
    return not (unit and any(re.match(u, unit.group(2)) for u in others))


def _requested_unit(low: str, end: int) -> str | None:
    match = re.match(r"\s*(?:in|\[|\()\s*(" + DENS_UNIT[1:-1] + r"|" + PRES_UNIT[1:-4] +
                     r"|cm\^?2/s|m\^?2/s|ev|kj/mol|kcal/mol|angstrom|nm)", low[end:end + 30])
    return match.group(1) if match else None


# The dimension of each property's answer, for a unit asked apart from the property's name
PROPERTY_DIMENSION: dict[str, str] = {
    "density": "density", "pressure": "pressure", "bulk_modulus": "pressure", "shear_modulus": "pressure",
    "youngs_modulus": "pressure", "elastic_constants": "pressure", "self_diffusion_coefficient": "diffusion",
    "lattice_constant": "length", "radius_of_gyration": "length", "end_to_end_distance": "length",
    "largest_cavity_diameter": "length", "pore_limiting_diameter": "length", "largest_free_sphere": "length",
    "cohesive_energy": "energy", "potential_energy_per_atom": "energy", "kinetic_energy_per_atom": "energy",
    "total_energy_per_atom": "energy", "minimized_energy": "energy", "vacancy_formation_energy": "energy",
    "vacancy_migration_energy": "energy", "interstitial_formation_energy": "energy",
    "surface_energy": "energy_per_area", "stacking_fault_energy": "energy_per_area",
    "melting_point": "temperature", "glass_transition_temperature": "temperature", "temperature": "temperature",
}
# A temperature unit asked for the answer ('in °C', 'in degrees Celsius', 'in Fahrenheit', 'in kelvin'),
# never a bare 'C' or 'F' (carbon, fluorine)
TEMPERATURE_ANSWER_UNIT = (r"°c|°f|deg(?:rees?)?\.? ?(?:c|f)\b|(?:deg(?:rees?)? )?(?:celsius|centigrade|fahrenheit)"
                           r"|kelvins?|k")
ANSWER_UNIT = (r"\b(?:in|as|expressed in|reported in|given in|in units of|units?:?)\s+(" + DENS_UNIT[1:-1] + "|"
               + PRES_UNIT[1:-4] + r"|cm\^?2/s|m\^?2/s|a\^?2/ps|nm\^?2/ns|mev|ev|kj/mol|kcal/mol|angstroms?|nm|pm"
               r"|mj/m\^?2|j/m\^?2|" + TEMPERATURE_ANSWER_UNIT + r")(?![\w/^])")


def _answer_unit(low: str, properties: list[PropertyRequest]) -> None:
    """'density of hexane at 298 K in kg/m3': a unit asked after the conditions is the unit of the one
    requested property of that dimension (none is set when two properties share it)."""
    for match in re.finditer(ANSWER_UNIT, low):
        said = match.group(1)
        if re.fullmatch(TEMPERATURE_ANSWER_UNIT, said):
            said = "degF" if "f" in said.replace("deg", "") else "degC" if re.search(r"c|centigrade", said) else "K"
        unit = normalize_unit(said.rstrip("s") if said == "angstroms" else said)
        dim = dimension(unit)
        owners = [p for p in properties if PROPERTY_DIMENSION.get(p.name) == dim]
        if len(owners) == 1 and owners[0].unit is None:
            owners[0].unit = unit


def _conditions(low: str) -> Conditions:
    cond = Conditions()
    reduced_t = re.search(r"\b(?:t\*|reduced temperature(?: of)?)\s*(?:=|of|:|is)?\s*" + NUM, low)
    if reduced_t:
        cond.temperature = Quantity(value=float(reduced_t.group(1)), unit="reduced")
    else:
        match = re.search(NUM + r"\s*" + TEMP_UNIT, low) or re.search(
            r"\btemperature(?: of)?\s*(?:=|:)?\s*" + NUM + r"\s*" + TEMP_UNIT, low)
        if match:
            cond.temperature = Quantity(value=float(match.group(1)), unit=normalize_unit(match.group(2)))
        elif re.search(r"\broom temperature\b|\bambient\b", low):
            cond.temperature = Quantity(value=vocab.ROOM_TEMPERATURE_K, unit="K")
    reduced_rho = re.search(r"\b(?:rho\*|rho|reduced density(?: of)?|number density(?: of)?)\s*(?:=|of|:|is)?\s*"
                            + NUM, low)
    dens = re.search(NUM + r"\s*" + DENS_UNIT, low)
    if dens:
        cond.density = Quantity(value=float(dens.group(1)), unit=normalize_unit(dens.group(2)))
    elif reduced_rho:
        cond.density = Quantity(value=float(reduced_rho.group(1)), unit="reduced")
    elif cond.temperature is not None and cond.temperature.unit == "reduced":
        # 'T* = 0.85 and density 0.86': with a reduced temperature, a density without a unit is reduced too
        bare = re.search(r"\bdensity(?: of)?\s*(?:=|:)?\s*" + NUM, low)
        if bare:
            cond.density = Quantity(value=float(bare.group(1)), unit="reduced")
    pres = re.search(NUM + r"\s*" + PRES_UNIT, low)
    reduced_p = re.search(r"\bp\*\s*(?:=|of|:)\s*" + NUM, low)
    if pres:
        cond.pressure = Quantity(value=float(pres.group(1)), unit=normalize_unit(pres.group(2)))
    elif reduced_p:
        cond.pressure = Quantity(value=float(reduced_p.group(1)), unit="reduced")
    return cond


def _potential(low: str) -> PotentialSpec | None:
    pot = PotentialSpec()
    for pattern, family in vocab.compile_map(vocab.POTENTIAL_FAMILIES):
        if pattern.search(low):
            pot.family = family
            break
    if re.search(vocab.LJ_SYSTEM, low) and pot.family is None:
        pot.family = "lj"
    for hint in vocab.NAME_HINTS:
        if re.search(rf"\b{hint}\b", low):
            pot.name_hint = hint
            break
    if pot.family is None and pot.name_hint in vocab.EAM_AUTHORS:
        pot.family = "eam"  # 'the Mendelev potential': the library's Mendelev files are EAM
    match = re.search(r"\b([\w.-]+\.(?:eam(?:\.alloy|\.fs)?|tersoff|sw|meam))\b", low)
    if match:
        pot.file = match.group(1)
    eps = re.search(r"epsilon\s*(/\s*kb?)?\s*(?:=|of|:)?\s*" + NUM + r"\s*(k\b|ev|mev|kj/mol|kcal/mol)?", low)
    if eps:
        unit = "K" if eps.group(1) else (eps.group(3) or "reduced")
        pot.lj_epsilon = Quantity(value=float(eps.group(2)), unit="K" if unit == "k" else unit)
        pot.family = pot.family or "lj"
    sig = re.search(r"sigma\s*(?:=|of|:)\s*" + NUM + r"\s*(angstrom|a\b|nm|pm)?", low)
    if sig:
        pot.lj_sigma = Quantity(value=float(sig.group(1)), unit=normalize_unit(sig.group(2) or "reduced"))
        pot.family = pot.family or "lj"
    cut = re.search(NUM + r"\s*-?\s*sigma\s+cut-?off", low) or re.search(
        r"cut-?off(?: radius| distance)?(?: of| at|=|:)?\s*" + NUM + r"\s*(sigma|angstrom|a\b|nm)?", low)
    if cut:
        unit = cut.group(2) if cut.lastindex and cut.lastindex >= 2 and cut.group(2) else "sigma"
        pot.cutoff = Quantity(value=float(cut.group(1)), unit=unit)
    pot.tail_correction = bool(re.search(r"tail[- ]correct|long[- ]range correct|\blrc\b|pair_modify tail", low))
    pot.shifted = bool(re.search(r"\b(?:truncated and )?shifted\b", low))
    if pot == PotentialSpec():
        return None
    return pot


def _elements(text: str, low: str) -> list[str]:
    found: list[str] = []
    for word in re.findall(r"[a-z]+", low):
        symbol = vocab.element_from_word(word)
        if symbol and symbol not in found:
            found.append(symbol)
    for token in re.findall(r"\b([A-Z][a-z]?)\b", text):
        lattice_before = re.search(rf"\b(?:fcc|bcc|hcp|diamond|bulk|crystalline|solid|liquid)\s+{token}\b", text) or \
            re.search(rf"\b{token}\s+(?:fcc|bcc|hcp|diamond|crystal|solid|liquid)\b", text)
        if token in vocab.SYMBOLS and (token not in vocab.AMBIGUOUS_SYMBOLS or lattice_before):
            if token not in found:
                found.append(token)
    return found


def _system(text: str, low: str, spec: TaskSpec) -> SystemSpec | None:
    elements = _elements(text, low)
    phase = None
    for pattern, value in vocab.compile_map(vocab.PHASES):
        if pattern.search(low):
            phase = value
            break
    lattice = None
    for pattern, value in vocab.compile_map(vocab.LATTICES):
        if pattern.search(low):
            lattice = value
            break
    lj = re.search(vocab.LJ_SYSTEM, low) is not None
    reduced = any(q is not None and q.unit == "reduced"
                  for q in (spec.conditions.temperature, spec.conditions.density))
    crystal_props = {p.name for p in spec.properties} & {"lattice_constant", "cohesive_energy"}
    if elements:
        name = " ".join(w for w in [lattice or phase, _element_word(text, elements)] if w)
        if phase in ("liquid", "fluid", "gas") and not lattice:
            return SystemSpec(name=name, kind="atomic_fluid", elements=elements[:1], phase=phase)
        if lattice or crystal_props or phase == "solid":
            return SystemSpec(name=name, kind="crystal", elements=elements, lattice=lattice, phase="solid")
        if spec.potential and spec.potential.family == "lj":
            return SystemSpec(name=name, kind="atomic_fluid", elements=elements[:1], phase=phase or "fluid")
        if _noble_gas_fluid(elements, spec.conditions.temperature):
            return SystemSpec(name=name, kind="atomic_fluid", elements=elements[:1], phase="fluid")
        return SystemSpec(name=name, kind="crystal", elements=elements, lattice=lattice, phase="solid")
    if lj or reduced:
        return SystemSpec(name="Lennard-Jones " + (phase or "fluid"), kind="lj_fluid",
                          phase=phase or "fluid", lattice=lattice if phase == "solid" else None)
    return None


def _noble_gas_fluid(elements: list[str], temperature: Quantity | None) -> bool:
    """A noble gas named without a phase or lattice word ('specific heat of argon') is the fluid,
    unless the stated temperature is below its triple point (then it can only be the solid)."""
    if len(elements) != 1 or elements[0] not in vocab.NOBLE_GAS_TRIPLE_POINT_K:
        return False
    if temperature is None or temperature.unit == "reduced":
        return True
    try:
        kelvin = to_canonical(temperature, "temperature").value
    except RequestError:
        return True
    return kelvin >= vocab.NOBLE_GAS_TRIPLE_POINT_K[elements[0]]


def _element_word(text: str, elements: list[str]) -> str:
    for word in re.findall(r"[A-Za-z]+", text):
        if vocab.element_from_word(word) == elements[0]:
            return word.lower()
    return elements[0]


def _controls(low: str) -> SimulationControls:
    ctl = SimulationControls()
    atoms = re.search(r"\b(\d+)\s*(?:atoms|particles|molecules)\b", low)
    if atoms:
        ctl.n_atoms = int(atoms.group(1))
    dt = re.search(r"time ?step(?: of|=|:)?\s*" + NUM + r"\s*(fs|ps|tau|reduced)?", low)
    if dt:
        ctl.timestep = Quantity(value=float(dt.group(1)), unit=dt.group(2) or "reduced")
    seed = re.search(r"\bseed(?: of|=|:)?\s*(\d+)", low)
    if seed:
        ctl.seed = int(seed.group(1))
    stated = text_ensemble(low)  # NVE, NVT, NPT in any words ('at constant energy'); NPH: _unread_ensemble
    if stated is not None and stated.ensemble != "nph":
        ctl.ensemble = stated.ensemble
    from simagent.backends.expert.protocol_text import merge_controls  # detailed protocol text

    return merge_controls(ctl, low)


def _unread_ensemble(low: str, ctl: SimulationControls) -> list[str]:
    """The request prescribes how the system evolves in words no ensemble is read from ('under
    stochastic dynamics', 'in the NPH ensemble', which no protocol for free requests runs): asked
    about, so that no protocol's default ensemble runs in its place (simagent.backends.expert.ensemble_words)."""
    if ctl.ensemble is not None or ctl.thermostat is not None:
        return []
    stated = text_ensemble(low)
    if stated is not None:  # NPH
        return [f"ensemble (the request states NPH, '{stated.words}'; simagent's protocols for free requests run "
                "NVE, NVT or NPT)"]
    words = evolution_words(low)
    if words is None:
        return []
    return [f"ensemble (the request says '{words}' of how the system evolves: stated, not understood; say NVE, "
            "NVT or NPT)"]


def _units_style(spec: TaskSpec) -> str | None:
    if spec.system is None:
        return None
    return "lj" if spec.system.kind == "lj_fluid" else "metal"


def _check_physical(spec: TaskSpec) -> None:
    t = spec.conditions.temperature
    static = {"lattice_constant", "cohesive_energy", "elastic_constants", "bulk_modulus", "shear_modulus",
              "youngs_modulus", "poisson_ratio", "vacancy_formation_energy", "interstitial_formation_energy",
              "surface_energy", "stacking_fault_energy", "generalized_stacking_fault_energy", "minimized_energy"}
    if t is not None:
        kelvin = {"degC": t.value + 273.15, "degF": (t.value - 32) * 5 / 9 + 273.15}.get(t.unit, t.value)
        if kelvin == 0 and t.unit == "K" and spec.properties and {p.name for p in spec.properties} <= static:
            spec.conditions.temperature = None  # "at 0 K" for a static property means a minimisation
            return _check_physical(spec)
        if kelvin < 0 or (kelvin == 0 and t.unit != "reduced"):
            raise RequestError(f"impossible condition: temperature {t.value:g} {t.unit} is not above "
                               "absolute zero")
        if t.unit == "reduced" and t.value <= 0:
            raise RequestError(f"impossible condition: reduced temperature T* = {t.value:g} must be > 0")
    d = spec.conditions.density
    if d is not None and d.value <= 0:
        raise RequestError(f"impossible condition: density {d.value:g} {d.unit} must be positive")


def _missing(spec: TaskSpec) -> list[str]:
    missing = []
    if not spec.properties:
        missing.append("property")
    if spec.system is None:
        missing.append("system")
    elif spec.system.kind in ("lj_fluid", "atomic_fluid"):
        if spec.conditions.temperature is None:
            missing.append("temperature")
        if spec.conditions.density is None and spec.conditions.pressure is None:
            missing.append("density")
    return missing


def _unparsed(text: str) -> list[str]:
    """Sentences with none of the words the reader acts on (reported, never silently dropped)."""
    unparsed = []
    for sentence in re.split(r"(?<=[.;!?])\s+", text):
        low = sentence.lower()
        if not low.strip():
            continue
        spec = TaskSpec(request=sentence)
        spec.properties = _properties(low)
        spec.conditions = _conditions(low)
        spec.potential = _potential(low)
        spec.system = _system(sentence, low, spec)
        if not (spec.properties or spec.potential or spec.system or spec.conditions != Conditions()
                or _controls(low) != SimulationControls()):
            unparsed.append(sentence.strip())
    return unparsed


def _confidence(spec: TaskSpec) -> float:
    """1 - 0.2 per unparsed sentence - 0.3 per missing item - 0.3 when the request has words
    that look like misspellings of words the rules act on ('latice', 'tersof'): the rules then
    may have read only part of it. The hybrid backend sends readings below its threshold (0.75)
    to an LLM."""
    from simagent.backends.spec_checks import suspected_typos  # spec_checks imports the vocabulary

    score = 1.0
    if spec.unparsed:
        score -= 0.2 * len(spec.unparsed)
    score -= 0.3 * len(spec.missing)
    if suspected_typos(spec.request):
        score -= 0.3
    return max(0.0, min(1.0, score))


def unknown_material(request: str) -> str | None:
    """The noun phrase after 'of/for' when it names nothing the reader knows (for the message)."""
    low = normalise(request).lower()
    match = re.search(r"\b(?:of|for)\s+(?:an?\s+|the\s+)?([a-z][a-z0-9 -]*?)"
                      r"(?:\s+(?:with|using|at|from|by|in|under)\b|[?.,!]|$)", low)
    if not match:
        return None
    phrase = match.group(1).strip()
    words = [w for w in re.split(r"[\s-]+", phrase) if w]
    if any(vocab.element_from_word(w) or w in vocab.KNOWN_MATERIAL_WORDS for w in words):
        return None
    return phrase or None
