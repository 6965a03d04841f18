"""Expert-reader domain: porous frameworks (MOFs) for pore geometry (Zeo++), adsorption (RASPA) and
framework MD on LAMMPS (guest self-diffusion, MOF-guest energy and g(r), bulk modulus).

Recognises frameworks by common name, CSD REFCODE, CoRE MOF 2019 entry or CIF path (simagent.materials.structures
does the resolving), and reads the conditions these requests carry: a probe radius ("with a 1.86 A
probe"), guest molecules, a mixture composition ("15:85 CO2/N2") and pressure lists. It runs after
the generic rules and replaces the system they guessed from element-like words ("Cu" in Cu-BTC,
"Mg" in Mg-MOF-74) when a framework is named. A name that fits several structures leaves the
structure open and adds "structure" to `missing`, so the graph asks (simagent.materials.structures.structure_question).
"""

from __future__ import annotations

import re

from simagent.models import Component, PropertyRequest, Quantity, SystemSpec, TaskSpec
from simagent.units import normalize_unit

NUM = r"(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
LENGTH_UNIT = r"(angstrom|a|nm|pm)\b"
PRESSURE_UNIT = r"(kbar|mbar|bar|atm|gpa|mpa|kpa|pa|torr|psi)\b"

GEOMETRY = {"largest_cavity_diameter", "pore_limiting_diameter", "largest_free_sphere", "accessible_surface_area",
            "non_accessible_surface_area", "accessible_volume", "void_fraction", "probe_occupiable_volume",
            "pore_size_distribution", "channel_dimensionality"}
ADSORPTION = {"uptake", "isotherm", "henry_coefficient", "heat_of_adsorption", "selectivity", "interaction_energy"}
# Framework properties answered by LAMMPS (tools/lammps/protocols/framework_md.py): guest MD in a rigid
# framework and the E(V) bulk modulus of the empty, flexible framework.
MD_PROPERTIES = {"self_diffusion_coefficient", "interaction_energy", "bulk_modulus", "rdf", "youngs_modulus",
                 "poisson_ratio"}

# Guest names as they appear in requests -> the keys of forcefields/guests.json.
GUESTS: dict[str, str] = {
    r"\bch4\b|\bmethane\b": "CH4",
    r"\bco2\b|\bcarbon dioxide\b": "CO2",
    r"\bn2\b|\bnitrogen(?: gas)?\b": "N2",
    r"\bo2\b|\boxygen(?: gas)?\b": "O2",
    r"\bh2\b|\bhydrogen(?: gas)?\b": "H2",
    r"\bar\b|\bargon\b": "Ar",
    r"\bkr\b|\bkrypton\b": "Kr",
    r"\bxe\b|\bxenon\b": "Xe",
    r"\bh2o\b|\bwater\b": "H2O",
    r"\bc2h6\b|\bethane\b": "ethane",
    r"\bc3h8\b|\bpropane\b": "propane",
    r"\bn-?c4h10\b|\bn-butane\b|\bbutane\b": "n-butane",
}
# Element-like guest words ("Ar", "Kr", "Xe") are guests only next to an adsorption word.
ADSORPTION_WORDS = r"uptake|adsor|isotherm|loading|henry|selectiv|widom|heat of|capacity|mixture|guest"
# An amount adsorbed asked without a property noun ('How much propane does silicalite-1 adsorb',
# 'what amount of CH4 gets adsorbed by IRMOF-1', 'how many molecules per unit cell'): the uptake.
AMOUNT_ADSORBED = (r"\badsorb(?:s|ed|ing)?\b|\badsorption\b|\btakes? up\b|\btaken up\b|\b(?:hold|store)s?\b|"
                   r"\bmolecules? per (?:unit )?cell\b|\bper unit cell\b|\bmol/kg\b|\bmmol/g\b")
GENERIC_WORDS = {"a mof", "the mof", "mof", "a framework", "the framework", "framework", "this mof", "it",
                 "a metal-organic framework", "the structure", "this structure", "a structure", "the material",
                 "this material", "a porous material", "a zeolite", "the zeolite"}


def _probe_radius(low: str) -> Quantity | None:
    """'1.86 angstrom probe', 'probe radius of 1.86 A', 'probe diameter 3.72 A' (halved)."""
    patterns = [
        (NUM + r"\s*-?\s*" + LENGTH_UNIT + r"[\s-]*(?:radius\s+)?(?:spherical\s+)?probe(?!\s+diameter)", 1),
        (r"probe(?:\s+sphere)?\s+radius\s*(?:of|=|:|is)?\s*" + NUM + r"\s*(?:" + LENGTH_UNIT + r")?", 1),
        (NUM + r"\s*-?\s*" + LENGTH_UNIT + r"[\s-]*(?:diameter\s+probe|probe\s+diameter)", 2),
        (r"probe(?:\s+sphere)?\s+diameter\s*(?:of|=|:|is)?\s*" + NUM + r"\s*(?:" + LENGTH_UNIT + r")?", 2),
        (r"probe\s*(?:of|=|:)\s*" + NUM + r"\s*" + LENGTH_UNIT, 1),
    ]
    for pattern, divisor in patterns:
        match = re.search(pattern, low)
        if match:
            unit = normalize_unit(match.group(2) or "angstrom")
            return Quantity(value=float(match.group(1)) / divisor, unit=unit)
    return None


POINT_PROBE = (r"\bpoint[\s-]+probe\b|\bprobe\s+radius\s*(?:of|=|:)?\s*0(?:\.0*)?\b(?!\.\d)"
               r"|\bradius\s*(?:of|=|:)?\s*0(?:\.0*)?\b(?!\.\d)")


def _property_probes(low: str, spec: TaskSpec) -> None:
    """A probe stated in the parenthesis right after a geometry property applies to that property
    only: 'surface area (probe radius 1.655 A) and void fraction (point probe, radius 0)'."""
    from simagent.backends.expert import vocabulary as vocab

    for request in spec.properties:
        if request.name not in GEOMETRY:
            continue
        for pattern in vocab.PROPERTY_PATTERNS.get(request.name, []):
            match = re.search(pattern + r"[\w\s-]{0,20}?\(([^()]*)\)", low)
            if not match:
                continue
            inside = match.group(match.re.groups)
            if re.search(POINT_PROBE, inside):
                request.probe_radius = Quantity(value=0.0, unit="angstrom")
            elif (probe := _probe_radius(inside)) is not None:
                request.probe_radius = probe
            break


def _mc_cycles(low: str, spec: TaskSpec) -> None:
    """'2000 initialization cycles and 5000 production cycles' (RASPA's run length), as the
    equilibration and production lengths of the controls."""
    init = re.search(r"(\d[\d,]*)\s+(?:initiali[sz]ation|equilibration)\s+(?:mc\s+)?cycles", low)
    prod = re.search(r"(\d[\d,]*)\s+(?:production|sampling)\s+(?:mc\s+)?cycles", low)
    if init and spec.controls.equilibration_steps is None:
        spec.controls.equilibration_steps = int(init.group(1).replace(",", ""))
    if prod and spec.controls.production_steps is None:
        spec.controls.production_steps = int(prod.group(1).replace(",", ""))


def _guests(low: str, adsorption: bool) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for pattern, guest in GUESTS.items():
        for match in re.finditer(pattern, low):
            if guest in ("Ar", "Kr", "Xe", "N2", "O2", "H2") and not adsorption and len(match.group(0)) <= 2:
                continue
            found.append((match.start(), guest))
            break
    return sorted(found)


def _composition(low: str, guests: list[str]) -> dict[str, float]:
    """Mole fractions from '15:85', '15/85 CO2/N2', '15% CO2 and 85% N2', 'equimolar'."""
    if len(guests) < 2:
        return {}
    percent = {}
    for pattern, guest in GUESTS.items():
        match = re.search(NUM + r"\s*(?:%|mol ?%|percent)\s*(?:of\s+)?(?:" + pattern + ")", low)
        if match:
            percent[guest] = float(match.group(1)) / 100
    if len(percent) >= 2:
        total = sum(percent.values())
        return {g: round(v / total, 6) for g, v in percent.items()}
    ratio = re.search(NUM + r"\s*[:/]\s*" + NUM + r"(?:\s*[:/]\s*" + NUM + ")?", low)
    if ratio and re.search(r"mixture|mix\b|blend|binary|" + r"[:/]", low):
        parts = [float(x) for x in ratio.groups() if x is not None]
        if len(parts) == len(guests[: len(parts)]) and sum(parts) > 0 and len(parts) <= len(guests):
            total = sum(parts)
            return {g: round(v / total, 6) for g, v in zip(guests, parts, strict=False)}
    if re.search(r"\bequimolar\b|\b50\s*[:/]\s*50\b", low):
        return {g: round(1 / len(guests), 6) for g in guests}
    return {}


def _pressures(low: str) -> list[Quantity]:
    """'at 0.1, 1 and 10 bar', 'pressures of 1, 5, 10 bar' -> a list (a single value stays in pressure)."""
    match = re.search(r"((?:" + NUM + r"\s*(?:,\s*and|,|and|;)\s*)+" + NUM + r")\s*" + PRESSURE_UNIT, low)
    if not match:
        return []
    unit = normalize_unit(match.group(match.lastindex))
    values = re.findall(NUM, match.group(1))
    return [Quantity(value=float(v), unit=unit) for v in values]


LOADING_UNIT = (r"\b(?:in|as|units? of)\s+(mol/kg|mmol/g|mg/g|cm3\s*\(stp\)\s*/\s*g|cm\^?3\s*\(?stp\)?/g|cm3/g|cc/g|"
                r"cm3\s*\(stp\)\s*/\s*cm3|v/v|g/l|molecules?/(?:uc|unit cell|cell))")


def _loading_units(low: str, spec: TaskSpec) -> None:
    """'uptake ... in cm3(STP)/g' -> the unit of the uptake/isotherm answer (tools.raspa.units reads it)."""
    match = re.search(LOADING_UNIT, low)
    if not match:
        return
    unit = re.sub(r"\s+", "", match.group(1)).replace("unitcell", "uc")
    for prop in spec.properties:
        if prop.name in ("uptake", "isotherm") and not prop.unit:
            prop.unit = unit


def _loading(low: str) -> int | None:
    """Guest loading for framework MD: '8 molecules per unit cell', 'loading of 4 CH4 per cell'."""
    match = re.search(r"(\d+)\s+(?:[a-z0-9]+\s+)?(?:molecules?|guests?)?\s*(?:per|/)\s*(?:unit\s+)?cell", low)
    return int(match.group(1)) if match else None


def _dataset(low: str) -> str | None:
    if re.search(r"\bfsr\b|free[- ]solvent[- ]removed|(?:with|keeping) (?:the )?(?:bound|coordinated) solvent", low):
        return "FSR"
    if re.search(r"\basr\b|all[- ]solvent[- ]removed", low):
        return "ASR"
    return None


# The adsorbent as the subject or agent of an adsorption verb: 'that MFI adsorbs', 'does ZSM-5 take up',
# 'adsorbed by MFI' (read only when the request names a guest)
ADSORBENT = (r"\b(?:does|do|can|could|will|would|that|which)\s+([a-z0-9][\w().+-]*(?:[ -][\w().+-]+){0,2}?)\s+"
             r"(?:adsorbs?|takes? up)\b|\badsorbed\s+(?:by|in|into|on)\s+([a-z0-9][\w().+-]*)")
ADSORB_VERB = r"\badsorb(?:s|ed|ing)?\b|\badsorption\b|\btakes? up\b|\btaken up\b"


def _adsorbent_phrase(low: str) -> str | None:
    for match in re.finditer(ADSORBENT, low):
        phrase = (match.group(1) or match.group(2)).strip()
        if phrase not in GENERIC_WORDS and not any(re.fullmatch(pattern, phrase) for pattern in GUESTS):
            return phrase
    return None


def _material_phrase(low: str) -> str | None:
    """The first phrase after of/for/in that is not a guest molecule or a generic word ('a MOF')."""
    for match in re.finditer(r"\b(?:of|for|in|on)\s+([a-z0-9][\w().+-]*(?:[ -][\w().+-]+){0,3}?)"
                             r"(?=\s+(?:with|using|at|from|by|in|under|and|for|on)\b|[?.,!;]|$)", low):
        phrase = match.group(1).strip()
        if phrase in GENERIC_WORDS or re.search(r"\b(mof|framework|zeolite|structure)s?$", phrase):
            continue
        if any(re.fullmatch(pattern, phrase) for pattern in GUESTS) or re.search(ADSORPTION_WORDS, phrase):
            continue
        if re.match(NUM, phrase):
            continue
        return phrase
    return None


QUALIFIED_VOLUME = r"(?:accessible|occupiable|pore|void|free|specific|micropore|cell)[\s-]+volume"


def _framework_properties(low: str, spec: TaskSpec) -> None:
    """'pore volume' is the accessible pore volume; 'volume' inside 'probe-occupiable volume' or
    'accessible volume' is not a request for the cell volume."""
    names = [p.name for p in spec.properties]
    if re.search(r"\bpore volume\b", low) and "accessible_volume" not in names:
        spec.properties.append(PropertyRequest(name="accessible_volume"))
    if "volume" in names and len(re.findall(r"\bvolume\b", low)) == len(re.findall(QUALIFIED_VOLUME, low)):
        spec.properties = [p for p in spec.properties if p.name != "volume"]


def refine(text: str, low: str, spec: TaskSpec) -> None:
    from simagent.materials.structures import AmbiguousStructure, find_mentions, resolve

    properties = {p.name for p in spec.properties}
    framework_props = properties & (GEOMETRY | ADSORPTION)
    mentions = find_mentions(text)
    adsorbent = None
    if not mentions and re.search(ADSORB_VERB, low) and _guests(low, adsorption=True):
        adsorbent = _adsorbent_phrase(low)
    if not mentions and not framework_props and adsorbent is None:
        return
    dataset = _dataset(low)
    resolved, ambiguous = [], []
    for mention in mentions:
        try:
            resolved.append((mention, resolve(mention.text, dataset=dataset, fetch=False)))
        except AmbiguousStructure as err:
            ambiguous.append((mention, err))
    # a later, specific mention (e.g. the reply to a clarification) settles an ambiguous one
    ambiguous = [(m, err) for m, err in ambiguous
                 if not any(r.id in c or r.ref in c for _m, r in resolved for c in err.candidates)]
    if not mentions:
        phrase = adsorbent or _material_phrase(low)
        if phrase:
            try:
                resolved.append((None, resolve(phrase, dataset=dataset, fetch=False)))
            except AmbiguousStructure as err:
                ambiguous.append((None, err))
            # RequestError (an unknown framework) propagates: a clear message, no guess

    adsorption = bool(properties & ADSORPTION) or re.search(ADSORPTION_WORDS, low) is not None
    guests = list(dict.fromkeys(g for _pos, g in _guests(low, adsorption)))
    seen, refs, names = set(), [], []
    for mention, item in resolved:
        if item.ref in seen:
            continue
        seen.add(item.ref)
        refs.append(item.ref)
        names.append(mention.text if mention is not None else item.query)
    if ambiguous:
        first = ambiguous[0][1]
        spec.system = SystemSpec(name=first.query, kind="framework", structure=None, guests=guests)
        spec.missing.append("structure")
    elif refs:
        spec.system = SystemSpec(name=", ".join(names), kind="framework", structure="; ".join(refs), guests=guests)
    elif framework_props and (spec.system is None or spec.system.kind != "framework"):
        spec.system = SystemSpec(name="framework", kind="framework", structure=None, guests=guests)
        spec.missing.append("structure")
    else:
        return

    spec.units_style = None
    _framework_properties(low, spec)
    if not spec.properties and guests and re.search(AMOUNT_ADSORBED, low):
        spec.properties.append(PropertyRequest(name="uptake"))
        properties = {"uptake"}
    probe = _probe_radius(low)
    if probe is not None:
        spec.conditions.probe_radius = probe
    _property_probes(low, spec)
    _mc_cycles(low, spec)
    composition = _composition(low, guests)
    if composition:
        spec.conditions.composition = [Component(species=g, mole_fraction=x) for g, x in composition.items()]
    pressures = _pressures(low)
    if len(pressures) > 1:
        spec.conditions.pressures = pressures
        spec.conditions.pressure = None
    _loading_units(low, spec)
    if properties & MD_PROPERTIES:
        loading = _loading(low)
        if loading is not None:
            spec.controls.n_atoms = loading  # guests per unit cell (lammps/framework_guest_md reads it so)
        spec.engine = "lammps"
    else:
        spec.engine = "raspa" if properties & ADSORPTION else "zeopp"

