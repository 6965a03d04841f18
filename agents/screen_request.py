"""Recognizing a screening request in plain language ("Screen the CoRE MOF database and give me the
10 MOFs with the highest methane uptake at 65 bar and 298 K").

Kept apart from the request reader (simagent.backends.expert.reader): a screen is not a property of
one material, so it never becomes a TaskSpec; `simagent ask` hands a recognized screen to the funnel
(agents.screening). A request is a screen when it names a database of many structures (CoRE MOF, "all
MOFs") or asks for the N best/top materials, and names an uptake or adsorption of a gas. Conditions
that are missing are not guessed: the reply says what to add.
"""

from __future__ import annotations

import re

from agents.screening import ScreenSpec
from simagent.errors import RequestError
from simagent.models import Quantity
from simagent.units import to_canonical

_GASES = {"methane": "CH4", "ch4": "CH4", "krypton": "Kr", "kr": "Kr", "xenon": "Xe", "xe": "Xe",
          "argon": "Ar", "ar": "Ar", "co2": "CO2", "carbon dioxide": "CO2", "n2": "N2", "nitrogen": "N2",
          "hydrogen": "H2", "h2": "H2"}
_MANY = re.compile(r"\b(core[\s-]?mofs?|database|all (?:the )?(?:mofs|frameworks|structures)|screen(?:ing)?|"
                   r"high[\s-]throughput|(?:these|those|the following)\s+(?:\w+\s+){0,3}(?:mofs|frameworks|"
                   r"structures|materials|candidates))\b", re.I)
_NUMBER_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "ten": 10, "twenty": 20}
_COUNT = r"(\d+|two|three|four|five|ten|twenty)"
_TOP = re.compile(rf"\b(?:top|best|first)[\s-]+{_COUNT}\b|\b{_COUNT}\s+(?:best\s+|top\s+)?(?:mofs|frameworks|"
                  rf"materials|structures|candidates)\b|\bwhich\s+{_COUNT}\s+of\b|\bthe\s+{_COUNT}\s+best\b", re.I)
_RANK = re.compile(r"\b(rank\w*|top|best|highest|most|largest|screen\w*)\b", re.I)
_UPTAKE = re.compile(r"\b(uptakes?|adsorption|adsorb\w*|loadings?|capacity|capacities|storage)\b", re.I)
_NUMBER = r"(\d+(?:\.\d+)?)"
_PRESSURE = re.compile(_NUMBER + r"\s*(bar|kpa|mpa|pa|atm)\b", re.I)
_TEMPERATURE = re.compile(_NUMBER + r"\s*(k|kelvin|°c|degc|c)\b(?!\w)", re.I)
# Rankings the funnel does not compute (it ranks by the absolute uptake at one pressure): refused by name.
_OTHER_RANKING = re.compile(r"\b(deliverable|working capacity|selectivit\w*|heats? of adsorption|isosteric|"
                            r"henry|diffusi\w*|isotherms?)\b", re.I)
_FSR = re.compile(r"\bfsr\b|free solvent removed|bound solvent", re.I)
# A CoRE MOF 2019 entry as people write it: the file name (ABETAE_clean, ic502725y_si_004_clean) or a
# bare CSD refcode in capitals (ABETAE), which names the entry <refcode>_clean (ASR) / _freeONLY (FSR).
_ENTRY_TOKEN = re.compile(r"(?<![\w-])([A-Za-z0-9][A-Za-z0-9_\-]{3,})(?![\w-])")
_SUFFIX = {"2019-ASR": "_clean", "2019-FSR": "_freeONLY"}


def _guest(request: str) -> str | None:
    low = request.lower()
    return next((key for word, key in sorted(_GASES.items(), key=lambda kv: -len(kv[0]))
                 if re.search(rf"(?<![a-z0-9]){re.escape(word)}(?![a-z0-9])", low)), None)


def named_entries(request: str, dataset: str = "2019-ASR") -> list[str]:
    """CoRE MOF 2019 entries the request names, in its order: exact entry names, or refcodes in capitals
    (6+ letters/digits with a letter) that have a `<refcode>_clean` (ASR) / `_freeONLY` (FSR) entry."""
    from simagent.materials.structures import core_table

    table = core_table(dataset)
    found = []
    for token in _ENTRY_TOKEN.findall(request):
        if token in table:
            found.append(token)
        elif re.fullmatch(r"[A-Z][A-Z0-9]{5,9}", token) and token + _SUFFIX[dataset] in table:
            found.append(token + _SUFFIX[dataset])
    return list(dict.fromkeys(found))


def _dataset(request: str) -> str:
    return "2019-FSR" if _FSR.search(request) else "2019-ASR"


def looks_like_screen(request: str) -> bool:
    """True when the request asks to rank several structures of a database (or several it names) by the
    uptake of a gas: a database or a set of structures, a ranking, and an uptake or a gas at a pressure."""
    adsorption = bool(_UPTAKE.search(request) or (_guest(request) and _PRESSURE.search(request)))
    if not adsorption or not _RANK.search(request):
        return False
    many = _MANY.search(request) or re.search(r"\b(mofs|frameworks|structures|materials)\b", request, re.I)
    if many and (_TOP.search(request) or re.search(r"\b(screen|rank)", request, re.I)
                                  or named_entries(request, _dataset(request))):
        return True
    return len(named_entries(request, _dataset(request))) >= 2


def _count(top: re.Match) -> int:
    word = next(g for g in top.groups() if g)
    return int(word) if word.isdigit() else _NUMBER_WORDS[word.lower()]


def read_screen(request: str) -> ScreenSpec:
    """The ScreenSpec a screening request states; RequestError naming what is missing."""
    guest = _guest(request)
    missing = []
    if guest is None:
        missing.append("the gas (e.g. methane)")
    pressure = _PRESSURE.search(request)
    temperature = _TEMPERATURE.search(request)
    if pressure is None:
        missing.append("the pressure (e.g. 65 bar)")
    if temperature is None:
        missing.append("the temperature (e.g. 298 K)")
    if missing:
        raise RequestError("to screen, say " + ", ".join(missing))
    other = _OTHER_RANKING.search(request)
    pressures = {m.group(0).lower() for m in _PRESSURE.finditer(request)}
    if other or len(pressures) > 1:
        what = f"'{other.group(0)}'" if other else "several pressures (" + ", ".join(sorted(pressures)) + ")"
        raise RequestError(f"the request asks for {what}: the screening funnel ranks by the absolute uptake at one "
                           "pressure and temperature only, and does not answer with that instead. Ask for the "
                           "uptake at one pressure (e.g. 'top 10 CoRE MOFs for methane uptake at 65 bar and "
                           "298 K'), or for one named framework's isotherm")
    dataset = _dataset(request)
    entries = named_entries(request, dataset) or None
    top = _TOP.search(request)
    count = _count(top) if top else (len(entries) if entries else 10)
    if count < 1:
        raise RequestError("to screen, ask for at least one structure (e.g. 'the top 3')")
    bar = to_canonical(Quantity(value=float(pressure.group(1)), unit=pressure.group(2)), "pressure").value
    unit = temperature.group(2)
    kelvin = to_canonical(Quantity(value=float(temperature.group(1)), unit="K" if unit.lower() in ("k", "kelvin")
                                   else "degC"), "temperature").value
    return ScreenSpec(guest=guest, pressure_bar=bar, temperature_K=kelvin, top_n=count, dataset=dataset,
                      entries=entries)
