"""Which molecules simagent models with TraPPE-UA: linear alkanes and polyethylene, from a name,
a formula or a simple SMILES; a clear refusal for molecules outside that model.

TraPPE-UA (Martin & Siepmann, J. Phys. Chem. B 102, 2569 (1998)) describes n-alkanes with CH4,
CH3 and CH2 pseudo-atoms; polyethylene is the same chain, long. Branched alkanes (CH, C pseudo-atoms,
Martin & Siepmann 1999), rings, double bonds and heteroatoms need other TraPPE families that
simagent does not build, so they are refused by name, never replaced by a linear alkane.
"""

from __future__ import annotations

import re

# IUPAC names of the linear alkanes C1..C20 (the liquids this model answers for)
ALKANE_NAMES: dict[int, str] = {
    1: "methane", 2: "ethane", 3: "propane", 4: "butane", 5: "pentane", 6: "hexane", 7: "heptane",
    8: "octane", 9: "nonane", 10: "decane", 11: "undecane", 12: "dodecane", 13: "tridecane",
    14: "tetradecane", 15: "pentadecane", 16: "hexadecane", 17: "heptadecane", 18: "octadecane",
    19: "nonadecane", 20: "eicosane",
}  # fmt: skip
MAX_LIQUID_CARBONS = 20  # beyond n-eicosane the 'alkane' is a wax or an oligomer: ask for polyethylene
# 'PE' alone is also 'potential energy': only with a polymer word next to it
POLYETHYLENE = (
    r"\bpoly\s?\(?ethylene\)?(?!\s*(?:oxide|glycol|terephthalate))|\bpolyethene\b|\bpolymethylene\b|"
    r"\b(?:hd|ld|lld|uhmw)pe\b|\bpe\s+(?:c\d{2,4}\s+)?(?:melts?|chains?|polymer)\b|\bpe[- ]c\d{2,4}\b|"
    r"\b(?:amorphous|molten|linear)\s+pe\b"
)

SCOPE = (
    "simagent's molecular models are: linear alkanes methane to n-eicosane (C1-C20, by name, formula "
    "CnH2n+2 or SMILES such as CCCCCC) and polyethylene chains, both with TraPPE-UA in LAMMPS; water "
    "(SPC, SPC/E, TIP3P, TIP4P, TIP4P/2005), methanol and ethanol with GROMACS"
)

# Organic molecules people ask about that this model does not cover, with what they are
OUTSIDE: list[tuple[str, str]] = [
    (r"\bcyclo(?:propane|butane|pentane|hexane|heptane|octane)\b", "a ring (cycloalkane)"),
    (r"\b(?:iso|neo)(?:butane|pentane|hexane|heptane|octane)\b|\b\d+(?:,\d+)*-(?:di|tri)?methyl\w*ane\b",
     "a branched alkane"),
    (r"\b(?:benzene|toluene|xylenes?|styrene|naphthalene|phenol|aniline|pyridine|mesitylene)\b",
     "an aromatic molecule"),
    (r"\b(?:ethylene|ethene|propylene|propene|butenes?|pentenes?|hexenes?|octenes?|acetylene|butadiene|"
     r"isoprene)\b", "an unsaturated hydrocarbon (double or triple bond)"),
    (r"\b(?:acetone|acetonitrile|chloroform|dichloromethane|carbon tetrachloride|dmso|dimethyl sulfoxide|dmf|"
     r"thf|tetrahydrofuran|diethyl ether|ethylene glycol|glycerol|acetic acid|formic acid|propanol|"
     r"isopropanol|butanol|pentanol|hexanol|octanol|ethyl acetate|urea|ammonia|hexanoic acid)\b",
     "a molecule with heteroatoms (O, N, S, Cl ...)"),
]

SMILES_TOKEN = re.compile(r"(?<![\w/])([CcNnOoSsPFIBrl()=#\[\]@+\-0-9]{2,})(?![\w/])")
FORMULA = re.compile(r"\bC(\d{0,3})H(\d{1,3})\b")


def alkane_name(n_carbons: int) -> str:
    """'methane', 'ethane', 'propane', then 'n-butane' ... 'n-eicosane' (n- where isomers exist)."""
    name = ALKANE_NAMES[n_carbons]
    return name if n_carbons <= 3 else f"n-{name}"


def smiles_tokens(text: str) -> list[str]:
    """Tokens of the original-case text that are SMILES beyond doubt: SMILES characters only, at least
    two carbons, and either only 'C' (an n-alkane), a plain chain of C with O or N ('CCO', 'OCC',
    'CCCN'), or SMILES syntax (branches, bonds, ring digits, brackets). Upper-case words such as FCC,
    BCC or NVT and the 'cc' of 'g/cc' are no SMILES."""
    found = []
    for match in SMILES_TOKEN.finditer(text):
        token = match.group(1)
        if token.count("C") + token.count("c") < 2:
            continue
        if re.fullmatch(r"C+", token) or re.fullmatch(r"[CNO]{3,}", token) and re.search(r"[NO]", token) \
                or (re.search(r"[()=#\[\]]|\d", token) and re.search(r"[Cc]", token)
                    and not re.fullmatch(r"[\d.\-+]+", token)):
            found.append(token)
    return found


def linear_alkane(text: str) -> tuple[int, str] | None:
    """(carbon count, the words that named it) for a linear alkane named in the request."""
    low = text.lower()
    for n, name in ALKANE_NAMES.items():
        # 'hexane', 'n-hexane', 'normal hexane'; not 'cyclohexane', 'isohexane', '2-methylhexane'
        match = re.search(rf"(?<![\w-])((?:n-|normal[ -])?{name})\b", low)
        if match and not re.search(rf"(?:cyclo|iso|neo|methyl|ethyl){name}", low):
            return n, match.group(1)
        if n == 20:
            match = re.search(r"(?<![\w-])((?:n-)?icosane)\b", low)
            if match:
                return 20, match.group(1)
    formula = FORMULA.search(text)
    if formula:
        n, h = int(formula.group(1) or 1), int(formula.group(2))
        if h == 2 * n + 2 and 1 <= n <= MAX_LIQUID_CARBONS:
            return n, formula.group(0)
    nc = re.search(r"(?<![\w-])n-C(\d{1,2})\b", text)
    if nc and 1 <= int(nc.group(1)) <= MAX_LIQUID_CARBONS:
        return int(nc.group(1)), nc.group(0)
    for token in smiles_tokens(text):
        if re.fullmatch(r"C+", token) and len(token) <= MAX_LIQUID_CARBONS:
            return len(token), token
    return None


def outside_model(text: str) -> tuple[str, str] | None:
    """(the words, what they are) when the request names a molecule TraPPE-UA alkanes do not cover."""
    low = text.lower()
    for pattern, what in OUTSIDE:
        match = re.search(pattern, low)
        if match and not re.search(r"\bpoly\s?\(?" + re.escape(match.group(0)), low):
            return match.group(0), what
    for token in smiles_tokens(text):
        if re.fullmatch(r"C+", token):
            if len(token) > MAX_LIQUID_CARBONS:
                return token, f"a C{len(token)} chain (a wax: ask for polyethylene with a chain length)"
            continue
        if re.fullmatch(r"[C()]+", token):
            return token, "a branched alkane (SMILES)"
        return token, "a molecule with rings, multiple bonds or heteroatoms (SMILES)"
    formula = FORMULA.search(text)
    if formula:
        n, h = int(formula.group(1) or 1), int(formula.group(2))
        if h != 2 * n + 2:
            return formula.group(0), "not a saturated acyclic alkane CnH2n+2"
        if n > MAX_LIQUID_CARBONS:
            return formula.group(0), f"a C{n} chain (a wax: ask for polyethylene with a chain length)"
    return None


def refusal(words: str, what: str) -> str:
    """The 'not supported' message for a molecule outside the model (names what is possible)."""
    return (f"'{words}' is {what}: not supported. {SCOPE}. simagent does not substitute another molecule; "
            "ask for one of these instead")


def polyethylene(text: str) -> str | None:
    """The words naming polyethylene (PE, HDPE, poly(ethylene) ...), or None."""
    match = re.search(POLYETHYLENE, text.lower())
    return match.group(0) if match else None


# Polyethylene chain length: carbons per chain ('C100', 'C100H202', '100 carbons', '100 CH2 units',
# '100 backbone carbons', '100 united atoms'), or ethylene repeat units ('50 monomers', 'DP 50',
# '50 repeat units', '50 ethylene units': two carbons each)
PE_CARBONS = [
    r"(?<![\w-])C(\d{2,4})(?:H\d{2,4})?\b",
    r"\b(\d{1,4})\s*(?:backbone\s+)?(?:carbons?|carbon atoms|ch2(?: units| groups)?|methylene(?: units| groups)?|"
    r"united[- ]atoms|pseudo-?atoms|sites)\b",
    r"\bchain length(?: of|=|:)?\s*(\d{1,4})\b",
    r"\b(\d{1,4})-carbon\b",
]
PE_REPEAT_UNITS = [
    r"\b(\d{1,4})\s*(?:monomers?|repeat(?:ing)? units?|ethylene units?|mers)\b",
    r"\b(\d{1,4})-mers?\b",
    r"\b(?:dp|degree of polymeri[sz]ation)(?: of|=|:)?\s*(\d{1,4})\b",
]


def polyethylene_carbons(text: str) -> tuple[int, str] | None:
    """(carbons per chain, how the request said it) for polyethylene, or None when not stated."""
    for pattern in PE_CARBONS:
        match = re.search(pattern, text if pattern.startswith("(?<![\\w-])C") else text.lower())
        if match:
            return int(match.group(1)), match.group(0)
    for pattern in PE_REPEAT_UNITS:
        match = re.search(pattern, text.lower())
        if match:
            return 2 * int(match.group(1)), f"{match.group(0)} (ethylene units, 2 carbons each)"
    return None
