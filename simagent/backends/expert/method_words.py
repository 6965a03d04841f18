"""Words of method and scope that simagent cannot honour (simagent.capabilities).

Each pattern names a capability; `find(text)` returns what the request asks for that needs one,
with the request's own words, so the answer can say exactly what is not possible. Patterns are
applied to the normalised lower-case request, except acronyms that are ordinary words in lower
case ('GAP', 'ACE', 'SNAP'), which must be written in capitals.
"""

from __future__ import annotations

import re

from simagent.models import Unsupported

_DFT_METHOD = (
    r"\bdft\b|density[- ]functional(?: theory)?|first[- ]principles?|\bab[- ]?initio\b|\bpbe(?:sol)?\b"
    r"|\blda\b|\bgga\b|\bhse ?(?:06)?\b|\bb3lyp\b|hybrid functional|\bscan functional|\bvasp\b"
    r"|quantum[- ]?espresso|\bpw\.x\b|\bcp2k\b|\bcastep\b|\bsiesta\b|\babinit\b|\bgpaw\b|\bdftb\+?"
    r"|hartree[- ]fock|\bcoupled[- ]cluster\b|\bccsd|\bmp2\b|\bgaussian ?(?:09|16)\b|\borca\b"
)
# properties only an electronic-structure method gives
_DFT_PROPERTY = (
    r"band ?gaps?\b|band structure|(?:electronic )?density of states|\bp?dos\b|homo[- ]?lumo|\bwork function"
    r"|fermi (?:level|energy|surface)|electronic structure|charge density|\bbader\b|magnetic moment"
)
_ML = (
    r"machine[- ]learn\w*(?: interatomic)? (?:potential|force field|model)|\bml[- ]?(?:ip|ff)s?\b"
    r"|\bml (?:interatomic )?potential|\bmlips?\b|neural[- ]network (?:interatomic )?potential|\bnnps?\b"
    r"|\bmace(?:-mp(?:-0)?)?\b|\bnequip\b|\ballegro\b|\bdeep ?md\b|\bdeep ?potential|\bchgnet\b|\bm3gnet\b"
    r"|\bschnet\b|\bpainn\b|\bani-?(?:1x|1ccx|2x)\b|\bsevennet\b|\bmattersim\b|moment tensor potential"
    r"|gaussian approximation potential|\bfoundation model"
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
    r"\bliterature\b|\bpapers\b|\bcite\b|\bciting\b|\bcitations?\b|\breferences?\b(?! (?:state|data|temperature))"
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
