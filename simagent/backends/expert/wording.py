"""Wording the expert reader evens out before its rules run: misspellings of the words it acts on,
spellings of 0 K and of Celsius, and negated phrases ("not at 0 K", "no need for the RDF").

Each rewrite is general (a kind of wording, not one request's words) and is tested on paraphrases
(tests/test_reading_scope.py)."""

from __future__ import annotations

import re

# Extra words worth correcting besides spec_checks.TYPO_TARGETS (the words the rules act on).
EXTRA_TARGETS = {"distribution", "limiting", "cavity", "fraction", "coefficient", "constant", "henry",
                 "germanium", "molybdenum", "platinum", "aluminium", "aluminum", "silicon", "copper",
                 "nickel", "tungsten", "argon", "krypton", "xenon", "carbon", "gold", "silver", "iron",
                 "tersoff", "stillinger", "embedded", "parameter", "cohesive", "lattice", "kinetic",
                 "energy", "pressure", "density", "diffusion", "diffusivity", "elastic", "constants",
                 "modulus", "potential", "coordination", "radial", "function", "largest", "water",
                 "uptake", "void", "surface", "vacancy"}
# Ordinary words near a target that must stay as they are.
KEEP = {"cavities", "lattices", "density", "functions", "ironic", "nickels", "potentials", "energies",
        "waters", "later", "gold", "cold", "hold", "bold", "told", "fold", "carbonate",
        "constants", "pressures", "modulus", "moduli", "coordinate", "coordinates", "surfaces",
        "diffuse", "diffuses", "diffusive", "fractions", "limited", "limiting", "parameters",
        "silicone", "argonne", "void", "avoid", "voids", "energetic", "kinetics", "elasticity",
        "radius", "radial", "platinum", "largest", "larger", "constantly", "function", "iron",
        "irons", "copper", "nickel", "henry", "uptake", "vacancy", "vacancies", "functional", "functionals",
        "fractional", "distributions", "potentially", "densities", "constraint", "constraints",
        # ordinary and domain words one slip from an element or a potential's name
        "bead", "beads", "load", "loads", "chloride", "chlorides", "files", "modules", "ones",
        "isothermal"}


def correct_typos(text: str) -> str:
    """Misspelt words the rules act on, replaced by the one word they are a slip away from
    ('latice' -> 'lattice', 'nikel' -> 'nickel'); ambiguous slips are left alone."""
    from simagent.backends.expert import vocabulary as vocab
    from simagent.backends.spec_checks import COMMON_WORDS, TYPO_TARGETS, edit_distance

    targets = TYPO_TARGETS | EXTRA_TARGETS

    def fix(match: re.Match[str]) -> str:
        word = match.group(0)
        low = word.lower()
        if len(low) < 4 or low in targets or low in COMMON_WORDS or low in KEEP:
            return word
        allowed = 2 if len(low) >= 8 else 1
        near = {t for t in targets if abs(len(t) - len(low)) <= allowed and edit_distance(low, t) <= allowed}
        if len(near) > 1:
            best = sorted(near, key=lambda t: (edit_distance(low, t), t))
            same_element = len({vocab.element_from_word(t) for t in best[:2]} - {None}) == 1 and all(
                vocab.element_from_word(t) for t in best[:2])  # 'alumnium': aluminium or aluminum
            if edit_distance(low, best[0]) == edit_distance(low, best[1]) and not same_element:
                return word
            near = {best[0]}
        return near.pop() if near else word

    def fix_token(match: re.Match[str]) -> str:
        token = match.group(0)
        if "/" in token or "\\" in token:
            return token  # a file path is the user's, letter for letter
        return re.sub(r"[A-Za-z]+", fix, token)

    return re.sub(r"\S+", fix_token, text)


ZERO_KELVIN = [
    r"\babsolute zero\b", r"\bzero[- ](?:temperature|kelvin|k)\b", r"\b0\s*(?:°|º|deg(?:rees?)?)\s*k(?:elvin)?\b",
    r"\bt\s*=\s*0(?:\.0+)?(?![\d.*])(?:\s*k\b)?",
]
NEGATION = (
    r"(?:\bnot\b|\bno need (?:for|to compute)\b|\bwithout\b|\bexcluding\b|\bexcept\b|\bskip\b|"
    r"\b(?:i )?(?:don'?t|do not) need\b|\brather than\b|\binstead of\b|\bother than\b)"
    r"(?:(?!\b(?:and|but|then|so|report|compute|calculate|give|print|output)\b)[^,.;:!?()])*"
)


def conditions_text(low: str) -> str:
    """The lower-case request with 0 K and Celsius/Fahrenheit spelled one way ('zero temperature',
    'absolute zero', 'T = 0', '0 °K' -> '0 k'; '25 degrees C', '-190 C' -> '25 °c'; 'atmospheric pressure'
    -> '1 atm')."""
    for pattern in ZERO_KELVIN:
        low = re.sub(pattern, " 0 k ", low)
    low = re.sub(r"(\d)\s*(?:°|º)?\s*(?:deg(?:rees?)?\.?\s*)(c|f)\b", r"\1 °\2", low)
    low = re.sub(r"(\d)\s*(?:degrees? )?(celsius|centigrade)\b", r"\1 °c", low)
    low = re.sub(r"(\d)\s*(?:degrees? )?fahrenheit\b", r"\1 °f", low)
    low = re.sub(r"(-?\d+(?:\.\d+)?)\s+c\b(?![-/+])", r"\1 °c", low)  # '-190 C' (no degree sign)
    # a named pressure is a condition, not a property to compute: atmospheric = 1 atm; standard = 1 bar (IUPAC)
    low = re.sub(r"\b(?:atmospheric|ambient|normal)\s+pressure\b", "1 atm", low)
    low = re.sub(r"\bstandard\s+pressure\b", "1 bar", low)
    return re.sub(r"[ \t]+", " ", low)


def drop_negated(low: str) -> str:
    """The request without the phrases it negates ('not at 0 K', 'no need for the RDF', 'without
    the surface area', 'excluding the kinetic energy'): what is negated is neither a property
    to compute nor a condition."""
    return re.sub(NEGATION, " ", low)
