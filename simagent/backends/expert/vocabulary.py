"""Words the expert backend understands: properties, materials, lattices, potentials.

Each entry maps a regular expression (applied to the normalised, lower-case request) to a value.
Adding a synonym is a one-line change here."""

from __future__ import annotations

import re

from ase.data import atomic_names, chemical_symbols

# 'kinetic, potential and total energy': each word of the list names its energy
_LISTED_ENERGY = (r"(?=(?:\s*,\s*|\s+and\s+|\s+or\s+)(?:(?:kinetic|potential|total)(?:\s*,\s*|\s+and\s+|\s+or\s+))*"
                  r"(?:kinetic|potential|total) energ)")

# property name -> patterns. Order matters only for reading; all matches are collected.
PROPERTY_PATTERNS: dict[str, list[str]] = {
    "lattice_constant": [r"lattice (?:constant|parameter|spacing|const)s?", r"equilibrium lattice", r"\ba_?0\b",
                         r"(?:edge length|size|length|edge) of the (?:conventional )?(?:cubic )?(?:unit )?cell",
                         r"(?:cubic|unit|conventional) cell (?:size|edge|length)", r"spacing of the cubic lattice"],
    "cohesive_energy": [r"cohesive energ", r"cohesive e\b", r"binding energy per atom", r"\be_?coh\b",
                        r"relative to (?:the )?(?:isolated|free|separated) atoms",
                        r"apart into (?:free|isolated) atoms"],
    "potential_energy_per_atom": [
        r"potential energ", r"\bpotential" + _LISTED_ENERGY, r"configurational energ", r"\bu\s*/\s*n\b",
        r"\bpe\b(?! ?=)",
    ],
    "kinetic_energy_per_atom": [r"kinetic energ", r"\bkinetic" + _LISTED_ENERGY],
    "total_energy_per_atom": [r"total energ", r"\btotal" + _LISTED_ENERGY],
    "pressure": [r"\bpressures?\b", r"\bp\*"],
    "temperature": [r"(?<!melting )(?<!fusion )\btemperatures?\b"],
    "melting_point": [r"melting (?:point|temperature)", r"\btemperature of (?:melting|fusion)\b",
                      r"\b(?:do|does|did|will|would|can|could) \w+ melt\b",
                      # the verb 'melts at' ('a/the melt at', 'polymer melt with': the noun)
                      r"(?<!\ba )(?<!\bthe )(?<!\bof )\bmelts (?:at|with|under)\b",
                      # 'Tm' unless it is thulium next to a lattice or phase word ('hcp Tm', 'Tm crystal';
                      # the words expert.reader._elements takes as naming an element)
                      r"(?<!fcc )(?<!bcc )(?<!hcp )(?<!diamond )(?<!bulk )(?<!crystalline )(?<!solid )(?<!liquid )"
                      r"\bt_?m\b(?!\s+(?:fcc|bcc|hcp|diamond|crystal|solid|liquid)\b)",
                      r"solid[- ]liquid coexistence"],
    "heat_capacity": [r"heat capacit", r"specific heat", r"\bc_?[vp]\b"],
    "density": [r"\bdensity\b(?! functional)(?! of states)", r"\bdensities\b", r"\bhow dense\b"],
    "volume": [r"\bvolume\b"],
    "rdf": [r"radial distribution", r"\brdf\b", r"\bg\s*\(\s*r\s*\)", r"pair (?:distribution|correlation) function"],
    "coordination_number": [r"coordination (?:numbers?|no\b)", r"how many (?:nearest )?neighbou?rs",
                            r"first[- ]shell neighbou?rs"],
    "self_diffusion_coefficient": [r"diffusi(?:on|vity)", r"\bdiffuses?\b", r"\bmsd\b",
                                   r"mean[- ]squared? displacement", r"(?<![\w/.*-])d\*?(?=\s*(?:[,;@]|\d|$))"],
    "glass_transition_temperature": [r"glass[- ]transition", r"\bt_?g\b"],
    "elastic_constants": [r"elastic (?:constants?|tensor|stiffness)", r"\bc_?ij\b", r"\bc11\b"],
    "bulk_modulus": [r"bulk modul"],
    "shear_modulus": [r"shear modul"],
    "youngs_modulus": [r"young'?s? ?modul", r"elastic modulus", r"tensile modul"],
    "poisson_ratio": [r"poisson'?s? ratio"],
    "vacancy_formation_energy": [r"vacancy formation", r"vacancy energ"],
    "vacancy_migration_energy": [r"vacancy (?:migration|hopping|hop|jump|motion)",
                                 r"(?:migration|hopping|hop|jump|diffusion) (?:energy |barrier )?(?:of|for) "
                                 r"(?:an? |the )?(?:\w+ )?vacanc",
                                 r"\bbarrier\b[^.?;]{0,40}\bvacanc", r"\bvacanc\w*\b[^.?;]{0,40}\bbarrier\b"],
    "interstitial_formation_energy": [r"interstitial formation", r"interstitial energ"],
    "surface_energy": [r"surface (?:free )?energ"],
    "stacking_fault_energy": [r"(?<!generalized )(?<!generalised )stacking[- ]fault energ", r"\bsfe\b"],
    "generalized_stacking_fault_energy": [r"generali[sz]ed stacking[- ]fault", r"\bgsfe?\b", r"gamma[- ]surface"],
    "thermal_expansion_coefficient": [r"thermal expansion", r"expansion coefficient", r"\bcte\b"],
    "shear_viscosity": [r"viscosit"],
    "thermal_conductivity": [r"thermal conductiv", r"heat conductiv"],
    "radius_of_gyration": [r"radius of gyration", r"\br_?g\b"],
    "end_to_end_distance": [r"end[- ]to[- ]end"],
    "energy_components": [r"energy (?:components|terms|decomposition|breakdown)"],
    "minimized_energy": [r"minimi[sz]ed energy", r"inherent[- ]structure energ", r"energy after minimi[sz]ation"],
    "largest_cavity_diameter": [r"largest cavity diameter", r"\blcd\b", r"\bdi\b"],
    "pore_limiting_diameter": [r"pore[- ]limiting diameter", r"\bpld\b", r"\bdf\b"],
    "largest_free_sphere": [r"largest free sphere", r"\blfpd\b", r"\bdif\b"],
    "accessible_surface_area": [r"(?<!non-)(?<!non )accessible surface area", r"\basa\b",
                                r"(?<!non-)(?<!non )(?<!accessible )\bsurface area"],
    "non_accessible_surface_area": [r"non-? ?accessible surface area", r"\bnasa\b"],
    "accessible_volume": [r"(?<!non-)(?<!non )accessible (?:pore )?volume", r"\bav\b"],
    "void_fraction": [r"void fraction", r"\bporosity\b"],
    "probe_occupiable_volume": [r"probe[- ]occupiable volume", r"\bpov\b"],
    "pore_size_distribution": [r"pore[- ]size distribution", r"\bpsd\b"],
    "channel_dimensionality": [r"channel dimensionality", r"dimensionality of (?:the )?(?:channels|pores)"],
    "uptake": [r"\buptake\b", r"\bloading\b", r"adsorbed amount", r"amount adsorbed", r"adsorption capacity",
               r"how much\b[^.?;]{0,60}?\b(?:adsorb\w*|hold|store|take up)\b"],
    "isotherm": [r"\bisotherms?\b"],
    "henry_coefficient": [r"henry'?s? (?:coefficient|constant|coeff?\b)", r"\bwidom\b"],
    "heat_of_adsorption": [r"heats? of adsorption", r"isosteric heat", r"adsorption enthalp", r"\bq_?st\b"],
    "selectivity": [r"\bselectivit"],
    "interaction_energy": [r"interaction energ", r"host[- ]guest energ",
                           r"(?:binding|adsorption) energ\w* (?:of|for) (?:an? |the )?(?:co2|ch4|methane|n2|h2o?|water|"
                           r"xe|kr|ar|guests?|molecules?)\b",
                           r"\b(?:co2|ch4|methane|n2|h2o?|water|xe|kr|ar|guest) (?:binding|adsorption) energ"],
}

# A property word that carries a value in the request is a condition, not a property to compute.
CONDITION_AFTER = r"\s*(?:of|=|:|is|at|to)?\s*(?:about\s*)?-?\d"
# ... and so is one after 'at' ('at room temperature', 'at zero temperature', 'at constant pressure').
CONDITION_BEFORE = (r"\b(?:at|under|constant|fixed|given|same|zero|finite|room|ambient|elevated)\s+"
                    r"(?:a\s+|the\s+|\w+\s+)?\w*$")

LATTICES: dict[str, str] = {
    r"\bfcc\b|face[- ]centered cubic": "fcc",
    r"\bbcc\b|body[- ]centered cubic": "bcc",
    r"\bhcp\b|hexagonal close[- ]packed": "hcp",
    r"\bdiamond\b|diamond[- ]cubic|\bdc\b": "diamond",
    r"simple cubic|\bsc\b": "sc",
}

PHASES: dict[str, str] = {
    r"\bliquid\b|\bliq\b|\bmolten\b": "liquid",
    r"\bfluid\b": "fluid",
    r"\bgas\b|\bvapou?r\b": "gas",
    r"\bcrystal(?:line)?\b|\bsolid\b|\blattice\b": "solid",
}

# Lennard-Jones model system in reduced units.
LJ_SYSTEM = r"lennard[- ]jones|\blj\b"

# Potential families and name hints (name hints are matched against the potential library).
POTENTIAL_FAMILIES: dict[str, str] = {
    r"stillinger[- ]?weber|\bsw\b": "sw",
    r"\btersoff\b": "tersoff",
    r"\bmeam\b|modified embedded": "meam",
    r"eam/alloy|setfl": "eam/alloy",
    r"eam/fs|finnis[- ]sinclair": "eam/fs",
    r"\beam\b|embedded[- ]atom": "eam",
}
# Authors of potentials that are EAM in the library: a named one says the family.
EAM_AUTHORS = {"foiles", "u3", "u6", "mishin", "zhou", "mendelev", "ackland", "johnson", "adams", "bonny", "daw"}
NAME_HINTS = [
    "foiles", "u3", "u6", "mishin", "zhou", "mendelev", "ackland", "johnson", "adams", "bonny",
    "stillinger", "tersoff", "baskes", "daw", "jacobsen", "voter", "smf7", "jnp", "mm",
]

# Words that look like element symbols but are ordinary English in a request.
# Symbols that are also common words or abbreviations ("Tm" is the usual symbol of a melting
# temperature): an element only next to a lattice or phase word ("hcp Tm") or by name ("thulium").
AMBIGUOUS_SYMBOLS = {"In", "At", "As", "Be", "He", "No", "Am", "I", "S", "C", "P", "K", "B", "U",
                     "V", "W", "Y", "O", "N", "F", "H", "Es", "Pm", "Ti", "Tm"}

# Triple-point temperatures of the noble gases, K (Ne and Ar: ITS-90 defining fixed points, Preston-Thomas,
# Metrologia 27, 3 (1990); Kr and Xe: CRC Handbook of Chemistry and Physics). Helium has none at
# ordinary pressure (it stays liquid down to 0 K). Below it, a noble gas named without a phase is a solid.
NOBLE_GAS_TRIPLE_POINT_K: dict[str, float] = {"He": 0.0, "Ne": 24.5561, "Ar": 83.8058, "Kr": 115.78, "Xe": 161.40}

ELEMENT_NAMES: dict[str, str] = {
    name.lower(): symbol for symbol, name in zip(chemical_symbols, atomic_names, strict=True) if name
}
ELEMENT_NAMES.update({"aluminum": "Al", "caesium": "Cs", "sulphur": "S"})
SYMBOLS = set(chemical_symbols[1:])

# Material nouns that are not elements but that the expert backend knows.
KNOWN_MATERIAL_WORDS = {
    "lennard-jones", "lj", "fluid", "liquid", "gas", "crystal", "solid", "metal", "particles",
    "system", "argon", "model", "atoms", "bulk", "lattice", "silicon", "nickel",
}

ROOM_TEMPERATURE_K = 298.15  # "room temperature" / "ambient", recorded as a default when used


def element_from_word(word: str) -> str | None:
    return ELEMENT_NAMES.get(word.lower())


def compile_map(mapping: dict[str, str]) -> list[tuple[re.Pattern[str], str]]:
    return [(re.compile(pattern), value) for pattern, value in mapping.items()]
