"""Words of method and scope that simagent cannot honour (simagent.capabilities).

Each pattern names a capability; `find(text)` returns what the request asks for that needs one,
with the request's own words, so the answer can say exactly what is not possible. Patterns are
applied to the normalised lower-case request, except acronyms that are ordinary words in lower
case ('GAP', 'ACE', 'SNAP'), which must be written in capitals.
"""

from __future__ import annotations

import re

from simagent.models import Unsupported

# DFT words the Quantum ESPRESSO / VASP engines honour (domains/electronic.py routes them: DFT, PBE,
# LDA, PBEsol, Quantum ESPRESSO, VASP, band gaps) are not here; these are methods and codes no engine
# of simagent runs, which must not be answered with PBE or a classical potential.
_DFT_METHOD = (
    r"\bhse ?(?:0?6)?\b|hybrid functional|\bb3lyp\b|\bpbe0\b|\bscan (?:meta-gga|functional)|\bmeta-gga\b|\bdft ?\+ ?u\b"
    r"|\bcp2k\b|\bcastep\b|\bsiesta\b|\babinit\b|\bgpaw\b|\bdftb\+?|hartree[- ]fock|\bcoupled[- ]cluster\b"
    r"|\bccsd|\bmp2\b|\bgaussian ?(?:09|16)\b|\borca\b|\bgw approximation|\bgw\b(?= (?:calculation|band))"
)
# properties only an electronic-structure method gives, and no protocol computes (the band gap has one)
_DFT_PROPERTY = (
    r"band structure|(?:electronic )?density of states|\bp?dos\b|homo[- ]?lumo|\bwork function"
    r"|fermi (?:level|energy|surface)|electronic structure|charge density|\bbader\b|magnetic moment"
)
# ML potentials: a generic "machine-learned potential", CHGNet and SevenNet run on the mlp engine
# (domains/electronic.py); a request naming another model must not get one of those instead.
_ML = (
    r"neural[- ]network (?:interatomic )?potential|\bnnps?\b|\bmace(?:-mp(?:-0)?)?\b|\bnequip\b|\ballegro\b"
    r"|\bdeep ?md\b|\bdeep ?potential|\bm3gnet\b|\bschnet\b|\bpainn\b|\bani-?(?:1x|1ccx|2x)\b|\bmattersim\b"
    r"|moment tensor potential|gaussian approximation potential"
)
_ML_CAPS = r"\bGAP(?:-\d+)?\b|\bSNAP\b|\bACE\b|\bPACE\b|\bMTP\b|\bORB\b|\bUMA\b"
_POTENTIAL = (
    r"\bairebo\b|\brebo\b|\breax ?ff\b|\breax\b|\bcomb3?\b|\bbop\b|\bbuckingham\b|\bmorse potential"
    r"|\bborn[- ]mayer\b|\bbks\b|\bvashishta\b|\bedip\b|\bpolarizable\b|\bcore[- ]shell\b"
)
_ENGINE = (
    r"\bopenmm\b|\bhoomd(?:-blue)?\b|\bnamd\b|\bdl_?poly\b|\bdesmond\b|\bcassandra\b|\btowhee\b"
    r"|\bacemd\b|\bespresso\+\+|\bgulp\b|\bmusic\b(?= (?:code|software|package))"
)
_LITERATURE = (
    r"\bliterature\b|\bpapers\b|\bcite\b|\bciting\b|\bcitations?\b"
    # not a run or system kept for comparison ('the final reference run', 'a reference simulation with lj/cut')
    r"|\breferences?\b(?! (?:state|data|temperature|density|pressure|frame|configuration|point|length|energy|"
    r"runs?|phases?|simulations?|systems?|stages?|trajector(?:y|ies)|calculations?)\b)"
    r"|\bpublished (?:values?|data|results?|numbers?)\b|\breported values?\b|\bvalues? reported\b"
    r"|\bexperimental (?:values?|data|measurements?|melting|lattice|density|densit|results?)\w*"
    r"|\bwhat is known about\b|\bstate of the art\b"
)
# a literature word used to compare a computed number ("compare with published values") does not
# make the request a literature question
_COMPARE = r"compar\w*\s+(?:\w+\s+){0,4}$|against\s+(?:\w+\s+){0,2}$|check\w*\s+(?:\w+\s+){0,4}$"
_SCREENING = (
    r"\bscreen(?:s|ing|ed)?\b|high[- ]throughput|\btop[- ]?\d+\b|\b\d+ (?:best )?(?:mofs|frameworks|zeolites|"
    r"materials|structures|cofs)\b|\brank(?:ing|ed)?\b|\bdatabase\b|\bbest (?:mof|framework|zeolite|material|"
    r"structure)s?\b|\ball (?:the )?(?:core ?mof )?(?:mofs|frameworks|zeolites|structures)\b"
    r"|\b(?:mofs|frameworks|zeolites) (?:with|having) the (?:highest|largest|lowest|smallest|most|best)\b"
)

PATTERNS: list[tuple[str, str, int]] = [  # (capability, pattern, flags)
    ("literature", _LITERATURE, 0),
    ("screening", _SCREENING, 0),
    ("dft", _DFT_METHOD, 0),
    ("dft", _DFT_PROPERTY, 0),
    ("ml_potential", _ML, 0),
    ("ml_potential", _ML_CAPS, re.ASCII),
    ("potential", _POTENTIAL, 0),
    ("engine", _ENGINE, 0),
]


def find(text: str) -> list[Unsupported]:
    """What the request asks for that needs a capability simagent lacks (first words per capability)."""
    low = text.lower()
    found: list[Unsupported] = []
    for capability, pattern, flags in PATTERNS:
        if any(u.capability == capability for u in found):
            continue
        source = text if flags & re.ASCII else low
        for match in re.finditer(pattern, source):
            if capability == "literature" and re.search(_COMPARE, low[max(0, match.start() - 40):match.start()]):
                continue
            found.append(Unsupported(capability=capability, words=text[match.start():match.end()]))
            break
    return found


def property_only(item: Unsupported) -> bool:
    """Is this a property only electronic structure gives (not a method)? A request asking for it
    next to properties simagent computes gets those, and the answer names this one as not computed."""
    return item.capability == "dft" and re.fullmatch(_DFT_PROPERTY, item.words.lower()) is not None
